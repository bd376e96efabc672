/*
 * t_stage_list.c - the layout's stage list (layout.h gp_stage_list) held
 * as a count and a pointer into a store its caller owns
 * (gp_stage_store): each list in the store it was read into, none NULL,
 * a refused list leaving none and its store as it was, and two lists
 * compared by their entries (layout_stage_list_same, as the phase memo
 * compares them: train_prep.c phase_key), wherever each is stored.
 */
#include "layout.h"
#include "tap.h"

#include <stdio.h>
#include <string.h>

int main(void)
{
	gp_stage_store sa, sb, sc, sd;
	gp_stage_list a, b, c, d;
	gp_error e;

	plan(13);

	/* Equal lists, read into two stores or given as numbers: each in
	 * its own store, the same list. */
	MUST(layout_stage_list_parse("9,9,8,6", &sa, &a, &e));
	MUST(layout_stage_list_parse("9,9,8,6", &sb, &b, &e));
	ok(a.n == 4 && b.n == 4 && a.v == sa.v && b.v == sb.v &&
	   layout_stage_list_same(&a, &b),
	   "9,9,8,6 read into two stores: each its own, the same list");
	{
		static const int v[4] = { 9, 9, 8, 6 };

		MUST(layout_stage_list_set(v, 4, &sc, &c, &e));
		ok(c.n == 4 && c.v == sc.v && c.v != v &&
		   layout_stage_list_same(&c, &a),
		   "the numbers 9, 9, 8, 6: copied into the store, the same "
		   "list");
	}
	/* Different lists, a prefix included: not the same. */
	MUST(layout_stage_list_parse("9,9,8,7", &sc, &c, &e));
	MUST(layout_stage_list_parse("9,9,8", &sd, &d, &e));
	ok(!layout_stage_list_same(&c, &a) && !layout_stage_list_same(&d, &a) &&
	   !layout_stage_list_same(&d, &c) && d.n == 3 && c.v[3] == 7 &&
	   a.v[3] == 6, "9,9,8,7 and 9,9,8: lists of their own");

	/* None: n 0 and no pointer, given empty (no store needed) or
	 * refused, so a layout without a list is the same as any other
	 * without one. */
	b.n = 5;
	b.v = a.v;
	ok(layout_stage_list_parse("", NULL, &b, &e) == GP_OK && b.n == 0 &&
	   b.v == NULL, "none given: n 0, v NULL");
	b.v = a.v;
	ok(layout_stage_list_parse("9,0,8", &sa, &b, &e) == GP_EINVAL &&
	   b.n == 0 && b.v == NULL && sa.v[1] == 9 && sa.v[2] == 8,
	   "a refused list leaves none, and its store as it was");
	ok(layout_stage_list_set(a.v, GP_STAGE_LIST_MAX + 1, &sb, &b, &e) ==
	   GP_EINVAL && strstr(e.msg, "at most 128 stages") && b.n == 0,
	   "129 entries given as numbers: refused");
	ok(layout_stage_list_set(NULL, 0, NULL, &b, &e) == GP_OK && b.n == 0 &&
	   b.v == NULL, "0 entries given as numbers: none");
	ok(layout_stage_list_set(a.v, 4, NULL, &b, &e) == GP_EINVAL &&
	   strstr(e.msg, "no store") && b.n == 0,
	   "a list without a store: refused");

	/* Two layouts with equal lists read into stores apart: their
	 * pointers differ, their lists are the same (the phase memo's key
	 * compares the entries, train_prep.c); unequal lists are not. */
	{
		gp_layout y, z;

		memset(&y, 0, sizeof y);
		memset(&z, 0, sizeof z);
		y.pp = z.pp = 4;
		MUST(layout_stage_list_parse("10,8,8,6", &sc, &y.stages, &e));
		MUST(layout_stage_list_parse("10,8,8,6", &sd, &z.stages, &e));
		ok(y.stages.v != z.stages.v &&
		   layout_stage_list_same(&y.stages, &z.stages),
		   "layouts with 10,8,8,6 read apart: the same list");
		MUST(layout_stage_list_parse("10,8,7,7", &sd, &z.stages, &e));
		ok(!layout_stage_list_same(&y.stages, &z.stages),
		   "10,8,8,6 and 10,8,7,7: different lists");
	}

	/* GP_STAGE_LIST_MAX (128) entries: accepted, each in the store. */
	{
		char s[2 * GP_STAGE_LIST_MAX + 1];
		int i, kept = 1;

		for (i = 0; i < GP_STAGE_LIST_MAX; i++) {
			s[2 * i] = (char)('1' + i % 9);
			s[2 * i + 1] = ',';
		}
		s[2 * GP_STAGE_LIST_MAX - 1] = '\0';
		MUST(layout_stage_list_parse(s, &sb, &b, &e));
		for (i = 0; i < GP_STAGE_LIST_MAX; i++)
			if (b.v[i] != 1 + i % 9)
				kept = 0;
		ok(b.n == GP_STAGE_LIST_MAX && b.v == sb.v && kept,
		   "128 entries read, each as written");
		/* a list set from its own store: as it was */
		MUST(layout_stage_list_set(b.v, b.n, &sb, &c, &e));
		ok(c.v == sb.v && c.n == GP_STAGE_LIST_MAX && c.v[127] == 2,
		   "a list set from its own store: unchanged");
	}
	/* The other stores refilled since: a's still reads 9,9,8,6. */
	ok(a.v == sa.v && a.v[0] == 9 && a.v[1] == 9 && a.v[2] == 8 &&
	   a.v[3] == 6, "the first store still reads 9,9,8,6");
	return done();
}
