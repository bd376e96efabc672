/*
 * tap.h - a small TAP producer for the C unit tests (header-only).
 *
 *   plan(3);
 *   ok(x > 0, "x is positive");
 *   is_num(got, want, 1e-9, "formula");   relative tolerance; NaN fails
 *   is_int(got, want, "count");
 *   return done();
 */
#ifndef GP_TAP_H
#define GP_TAP_H

#include <math.h>
#include <stdio.h>

static int tap_n, tap_failed, tap_planned;

static inline void plan(int n)
{
	tap_planned = n;
	printf("1..%d\n", n);
}

static inline int ok(int cond, const char *name)
{
	tap_n++;
	if (!cond)
		tap_failed++;
	printf("%s %d - %s\n", cond ? "ok" : "not ok", tap_n, name);
	return cond;
}

/* |got - want| <= reltol * |want| (absolute reltol when want == 0). */
static inline int is_num(double got, double want, double reltol, const char *name)
{
	double scale = want == 0.0 ? 1.0 : fabs(want);
	int good = isfinite(got) && fabs(got - want) <= reltol * scale;

	if (!ok(good, name))
		printf("#   got %.9g, want %.9g (reltol %g)\n", got, want,
		       reltol);
	return good;
}

static inline int is_int(long long got, long long want, const char *name)
{
	int good = got == want;

	if (!ok(good, name))
		printf("#   got %lld, want %lld\n", got, want);
	return good;
}

/* A kernel call whose results the test goes on to read must succeed:
 * MUST(mem_train(...)).  Silent when it returns 0 (GP_OK), so plans stay
 * as they are; otherwise a failed test naming the call and its line (and
 * done() then reports the count the plan did not expect). */
#define MUST(call) must_ok((call), #call, __FILE__, __LINE__)

static inline int must_ok(int rc, const char *call, const char *file,
			  int line)
{
	if (rc == 0)
		return 1;
	tap_n++;
	tap_failed++;
	printf("not ok %d - %s:%d: returned %d: %.60s\n", tap_n, file, line,
	       rc, call);
	return 0;
}

static inline int done(void)
{
	if (tap_planned != tap_n)
		printf("# planned %d tests, ran %d\n", tap_planned, tap_n);
	return tap_failed != 0 || tap_planned != tap_n;
}

#endif
