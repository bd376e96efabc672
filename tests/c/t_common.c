/* Engine conventions: error buffer and dtype table. */
#include <string.h>

#include "common.h"
#include "tap.h"

int main(void)
{
	gp_error err;
	gp_dtype t;

	plan(9);
	ok(gp_fail(&err, "tp=%d does not divide heads=%d", 3, 32) == GP_EINVAL,
	   "gp_fail returns GP_EINVAL");
	ok(strcmp(err.msg, "tp=3 does not divide heads=32") == 0,
	   "gp_fail formats the message");
	/* bf16 is 2 bytes; nf4/int4/fp4 pack two elements per byte. */
	is_num(gp_dtype_bytes(GP_BF16), 2.0, 0, "bf16 is 2 bytes");
	is_num(gp_dtype_bytes(GP_NF4), 0.5, 0, "nf4 is half a byte");
	/* fp6 packs 4 elements in 3 bytes. */
	is_num(gp_dtype_bytes(GP_FP6), 0.75, 0, "fp6 is 0.75 bytes");
	ok(gp_dtype_parse("fp8", &t) == GP_OK && t == GP_FP8, "parse fp8");
	ok(gp_dtype_parse("fp12", &t) == GP_EINVAL, "unknown dtype refused");
	ok(strcmp(gp_dtype_name((gp_dtype)99), "?") == 0,
	   "out-of-range dtype has no name");
	ok(!gp_finite(NAN) && gp_finite(1.0), "gp_finite rejects NaN");
	return done();
}
