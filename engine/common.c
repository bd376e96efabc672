/* common.c - error buffer and dtype helpers shared by the kernels. */
#include "common.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* gp_fail and gp_usage differ only in the mark: one body writes both */
static int gp_vset(gp_error *err, int usage, const char *fmt, va_list ap)
{
	if (err) {
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		err->usage = usage;
	}
	return GP_EINVAL;
}

int gp_fail(gp_error *err, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = gp_vset(err, 0, fmt, ap);
	va_end(ap);
	return rc;
}

int gp_usage(gp_error *err, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = gp_vset(err, 1, fmt, ap);
	va_end(ap);
	return rc;
}

int gp_finite(double x)
{
	return isfinite(x) ? 1 : 0;
}

unsigned long long gp_hash(const void *p, size_t n)
{
	const unsigned char *k = p;
	unsigned long long h = 1469598103934665603ULL, u;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&u, k + i, sizeof u);
		h = (h ^ u) * 1099511628211ULL;
		h ^= h >> 29;
	}
	for (; i < n; i++)
		h = (h ^ k[i]) * 1099511628211ULL;
	return h;
}

int gp_count_fail(int v, int lo, const char *name, gp_error *err)
{
	if (v > GP_COUNT_MAX)
		return gp_fail(err, "%s must be at most %d (got %d)", name,
			       GP_COUNT_MAX, v);
	if (lo == 1)
		return gp_fail(err, "%s must be positive (got %d)", name, v);
	if (lo == 0)
		return gp_fail(err, "%s must not be negative (got %d)", name,
			       v);
	return gp_fail(err, "%s must be at least %d (got %d)", name, lo, v);
}

int gp_check_elem(double v, const char *name, gp_error *err)
{
	if (v == 0.0)
		return GP_OK;
	if (!gp_finite(v) || v < 0.125 || v > 16.0)
		return gp_fail(err, "%s must be 0 (default) or 0.125..16 "
			       "bytes per element (got %g)", name, v);
	return GP_OK;
}

int gp_parse_name(const char *s, const char *const *names, int n, int *out,
		  const char *what, gp_error *err)
{
	char list[160];
	size_t used = 0;
	int i;

	for (i = 0; i < n; i++)
		if (s && strcmp(s, names[i]) == 0) {
			*out = i;
			return GP_OK;
		}
	/* The choices, ", "-separated (a name may itself hold '|'); a name
	 * that would not fit whole with its separator and the NUL ends the
	 * list instead of overflowing it. */
	list[0] = '\0';
	for (i = 0; i < n; i++) {
		size_t k = strlen(names[i]);
		if (used + k + 3 > sizeof list)
			break;
		if (i > 0) {
			list[used++] = ',';
			list[used++] = ' ';
		}
		memcpy(list + used, names[i], k);
		used += k;
		list[used] = '\0';
	}
	return gp_fail(err, "unknown %s '%s' (expected %s)", what,
		       s ? s : "(null)", list);
}

#define NAME_OF(arr, n, v) ((int)(v) >= 0 && (int)(v) < (n) ? arr[v] : "?")

static const struct {
	const char *name;
	double bytes;
} dtypes[GP_DTYPE_COUNT] = {
	[GP_FP32] = {"fp32", 4.0},
	/* TF32 is a compute mode: operands are stored as fp32. */
	[GP_TF32] = {"tf32", 4.0},
	[GP_BF16] = {"bf16", 2.0},
	[GP_FP16] = {"fp16", 2.0},
	[GP_FP8] = {"fp8", 1.0},
	[GP_INT8] = {"int8", 1.0},
	[GP_FP6] = {"fp6", 0.75},
	[GP_INT4] = {"int4", 0.5},
	[GP_FP4] = {"fp4", 0.5},
	[GP_NF4] = {"nf4", 0.5},
};

double gp_dtype_bytes(gp_dtype t)
{
	if ((int)t < 0 || t >= GP_DTYPE_COUNT)
		return 0.0;
	return dtypes[t].bytes;
}

const char *gp_dtype_name(gp_dtype t)
{
	if ((int)t < 0 || t >= GP_DTYPE_COUNT)
		return "?";
	return dtypes[t].name;
}

int gp_dtype_parse(const char *name, gp_dtype *out)
{
	int i;

	for (i = 0; i < GP_DTYPE_COUNT; i++) {
		if (name && strcmp(name, dtypes[i].name) == 0) {
			*out = (gp_dtype)i;
			return GP_OK;
		}
	}
	return GP_EINVAL;
}
