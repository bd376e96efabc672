/*
 * t_stage_list.c - the layout's stage list (layout.h gp_stage_list) held
 * as a count and a pointer to an interned copy: equal lists share one
 * copy (the memos compare a layout byte by byte, the pointer with it, so
 * two equal lists must compare equal and two different ones not), none
 * is NULL, and a copy handed out stays where it is, unchanged, however
 * many lists come after it.
 */
#include "layout.h"
#include "tap.h"

#include <stdio.h>
#include <string.h>

int main(void)
{
	gp_stage_list a, b, c, d;
	gp_error e;
	const int *first;

	plan(13);

	/* Equal lists, read twice or given as numbers: one copy. */
	MUST(layout_stage_list_parse("9,9,8,6", &a, &e));
	MUST(layout_stage_list_parse("9,9,8,6", &b, &e));
	ok(a.n == 4 && b.n == 4 && a.v == b.v,
	   "9,9,8,6 read twice: one copy");
	{
		static const int v[4] = { 9, 9, 8, 6 };

		MUST(layout_stage_list_intern(v, 4, &c, &e));
		ok(c.n == 4 && c.v == a.v && c.v != v,
		   "the numbers 9, 9, 8, 6: the same copy, not the caller's");
	}
	/* Different lists, a prefix included: different copies. */
	MUST(layout_stage_list_parse("9,9,8,7", &c, &e));
	MUST(layout_stage_list_parse("9,9,8", &d, &e));
	ok(c.v != a.v && d.v != a.v && d.v != c.v && d.n == 3 &&
	   c.v[3] == 7 && a.v[3] == 6,
	   "9,9,8,7 and 9,9,8: copies of their own");

	/* None: n 0 and no pointer, given empty or refused, so a layout
	 * without a list compares equal to any other without one. */
	b.n = 5;
	b.v = a.v;
	ok(layout_stage_list_parse("", &b, &e) == GP_OK && b.n == 0 &&
	   b.v == NULL, "none given: n 0, v NULL");
	b.v = a.v;
	ok(layout_stage_list_parse("9,0,8", &b, &e) == GP_EINVAL &&
	   b.n == 0 && b.v == NULL, "a refused list leaves none");
	ok(layout_stage_list_intern(a.v, GP_STAGE_LIST_MAX + 1, &b, &e) ==
	   GP_EINVAL && strstr(e.msg, "at most 128 stages") && b.n == 0,
	   "129 entries given as numbers: refused");
	ok(layout_stage_list_intern(NULL, 0, &b, &e) == GP_OK && b.n == 0 &&
	   b.v == NULL, "0 entries given as numbers: none");

	/* Two layouts with equal lists read apart compare equal byte for
	 * byte (the phase memo's key, train_prep.c phase_key), and unequal
	 * lists unequal. */
	{
		gp_layout y, z;

		memset(&y, 0, sizeof y);
		memset(&z, 0, sizeof z);
		y.pp = z.pp = 4;
		MUST(layout_stage_list_parse("10,8,8,6", &y.stages, &e));
		MUST(layout_stage_list_parse("10,8,8,6", &z.stages, &e));
		ok(memcmp(&y, &z, sizeof y) == 0,
		   "layouts with 10,8,8,6 read apart: the same bytes");
		MUST(layout_stage_list_parse("10,8,7,7", &z.stages, &e));
		ok(memcmp(&y, &z, sizeof y) != 0,
		   "10,8,8,6 and 10,8,7,7: different bytes");
	}

	/* 3000 lists more (the table doubles from 16 slots to 8192): the
	 * first copy stays where it was with its entries, and is found
	 * again. */
	first = a.v;
	{
		char s[64];
		int i, kept = 1;

		for (i = 0; i < 3000; i++) {
			snprintf(s, sizeof s, "%d,%d,%d", i + 1, i % 7 + 1, 3);
			if (layout_stage_list_parse(s, &b, &e) != GP_OK ||
			    b.n != 3 || b.v[0] != i + 1 || b.v[2] != 3)
				kept = 0;
		}
		ok(kept, "3000 distinct lists read, each as written");
		/* the same 3000 again: each its first copy */
		snprintf(s, sizeof s, "%d,%d,%d", 1, 1, 3);
		MUST(layout_stage_list_parse(s, &c, &e));
		MUST(layout_stage_list_parse(s, &d, &e));
		ok(c.v == d.v && c.v[0] == 1, "1,1,3 found again: one copy");
	}
	ok(first[0] == 9 && first[1] == 9 && first[2] == 8 && first[3] == 6,
	   "the first copy still reads 9,9,8,6 where it was");
	MUST(layout_stage_list_parse("9,9,8,6", &b, &e));
	ok(b.v == first, "9,9,8,6 read after them: the first copy");
	return done();
}
