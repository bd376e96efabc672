/*
 * common.h - shared conventions of the gpuplan engine.
 *
 * Units inside the engine are SI doubles: bytes, seconds, FLOP, FLOP/s,
 * bytes/s.  Link bandwidth is per direction, per GPU (or per NIC).
 *
 * Errors: a kernel that can refuse its input returns GP_OK (0) or GP_EINVAL
 * and writes a one-line reason into a caller-owned gp_error.  Kernels never
 * allocate, never print and never touch global state.
 */
#ifndef GP_COMMON_H
#define GP_COMMON_H

#include <math.h>
#include <stddef.h>

#define GP_OK 0
#define GP_EINVAL (-1)

/* Caller-owned error buffer; msg is always NUL-terminated.  usage is 1
 * when the reason is a usage refusal (gp_usage): options that do not go
 * together whatever the model and the card, which the command line
 * answers with exit 2; 0 for every other refusal (gp_fail). */
typedef struct gp_error {
	char msg[256];
	int usage;
} gp_error;

/* Format a reason into err (if not NULL); returns GP_EINVAL so a kernel can
 * write `return gp_fail(err, "...", ...);`. */
int gp_fail(gp_error *err, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

/* gp_fail for a usage refusal: the same message, err->usage set. */
int gp_usage(gp_error *err, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

/* 1 when x is a finite number, 0 for NaN or +-inf. */
int gp_finite(double x);

/* A 64-bit hash of n bytes (FNV-1a over 8 bytes at a time, the rest a
 * byte at a time, each word's high bits folded in): the memos' keys. */
unsigned long long gp_hash(const void *p, size_t n);

/* Largest count a kernel accepts for a size of the model (layers, widths,
 * heads, experts, vocabulary) or of a layout (GPUs, parallel degrees):
 * 2^24.  The largest published models are far below it (vocabularies of
 * 256k, 1M experts in PEER, He 2024), and it keeps the sum of two counts
 * (ceil divisions like (layers + pp - 1) / pp) inside an int and loops
 * over layers short.  A product of two counts must still be formed in
 * double or long long. */
#define GP_COUNT_MAX (1 << 24)

/* Largest amount of a double input that counts things (tokens,
 * sequences, parameters, bytes of capacity): 1e15.  With every factor
 * bounded so, the products the kernels form (tokens x widths x layers x
 * bytes) stay far below DBL_MAX and every result is finite. */
#define GP_AMOUNT_MAX 1e15
/* Widest element a cache or activation holds: fp64. */
#define GP_ELEM_BYTES_MAX 8.0

/* gp_check_count's message for a count out of range (common.c). */
int gp_count_fail(int v, int lo, const char *name, gp_error *err);

/* The checks below are inline: a sweep checks each layout's config and
 * layout with a few dozen of them, and the passing case is two compares.
 *
 * A count field: lo <= v <= GP_COUNT_MAX, else GP_EINVAL with
 * "<name> must be positive (got v)" (lo 1), "must not be negative"
 * (lo 0) or "must be at most 16777216" in err. */
static inline int gp_check_count(int v, int lo, const char *name,
				 gp_error *err)
{
	if (v >= lo && v <= GP_COUNT_MAX)
		return GP_OK;
	return gp_count_fail(v, lo, name, err);
}

/* A number field: finite and lo <= v <= hi, else GP_EINVAL with
 * "<name> must be a number in [lo, hi] (got v)" in err. */
static inline int gp_check_num(double v, double lo, double hi,
			       const char *name, gp_error *err)
{
	if (isfinite(v) && v >= lo && v <= hi)
		return GP_OK;
	return gp_fail(err, "%s must be a number in [%g, %g] (got %g)", name,
		       lo, hi, v);
}

/* An amount (tokens, sequences, bytes): finite, > 0 and <= GP_AMOUNT_MAX,
 * so that products of amounts and model widths stay finite; else
 * GP_EINVAL with "<name> must be a positive number up to 1e+15". */
static inline int gp_check_pos(double v, const char *name,
			       gp_error *err)
{
	if (!isfinite(v) || v <= 0 || v > GP_AMOUNT_MAX)
		return gp_fail(err, "%s must be a positive number up to %g "
			       "(got %g)", name, GP_AMOUNT_MAX, v);
	return GP_OK;
}

/* As gp_check_pos with 0 allowed (0 = default or none). */
static inline int gp_check_nonneg(double v, const char *name,
				  gp_error *err)
{
	return gp_check_num(v, 0, GP_AMOUNT_MAX, name, err);
}

/* Tokens of one sequence: 0 (none) up to GP_COUNT_MAX, the longest
 * context the model kernels size (model_kv_bytes). */
static inline int gp_check_tokens(double v, const char *name,
				  gp_error *err)
{
	if (!isfinite(v) || v < 0 || v > GP_COUNT_MAX)
		return gp_fail(err, "%s must be 0 to %d tokens (got %g)", name,
			       GP_COUNT_MAX, v);
	return GP_OK;
}

/* The price of 1e6 tokens served at tps tokens/s by gpus GPUs at price
 * per GPU-hour: price x gpus / 3600 / tps x 1e6, in that order (one
 * rounding for gp.infer's deployment, the serving plan and gpuplan.infer
 * gpus_for, through core.cost_per_mtok). */
static inline double gp_cost_per_mtok(double price, double gpus, double tps)
{
	return price * gpus / 3600.0 / tps * 1e6;
}

/* The price of running gpus GPUs for seconds at price per GPU-hour:
 * seconds / 3600 x gpus x price, in that order.  A searched layout's run
 * (sweep.c) and an RL step (rl_sched.c) are priced by it. */
static inline double gp_gpu_hours_cost(double seconds, double gpus,
				       double price)
{
	return seconds / 3600.0 * gpus * price;
}

/* Bytes per cached KV element: 0 = the default, else one bit (1/8 B) to
 * 16 B.  Below a bit no format exists, and the sequences that fit are
 * free bytes / KV bytes: a denormal width made that count inf. */
int gp_check_elem(double v, const char *name, gp_error *err);

/* Find s in names[0..n) and set *out to its index; else GP_EINVAL with
 * "unknown <what> 's' (expected a, b, c)" in err (names ", "-separated,
 * since a name may itself hold '|'). */
int gp_parse_name(const char *s, const char *const *names, int n, int *out,
		  const char *what, gp_error *err);

/* names[v] when 0 <= v < n, else "?". */
#define GP_NAME_OF(arr, n, v) \
	((int)(v) >= 0 && (int)(v) < (n) ? (arr)[v] : "?")

/* Host seconds eager PyTorch spends on one op that launches a kernel
 * (Python, the dispatcher, the launch; views and slices touch metadata
 * only and launch nothing), when no CUDA graph replays the step.  From
 * the PyTorch blog "Accelerating Generative AI with PyTorch II: GPT,
 * Fast" (2023): its eager Llama-2-7B decodes 25.5 tok/s at batch 1 on
 * A100-80GB and is CPU-overhead bound; gpt-fast's model.py launches 49
 * ops per TransformerBlock (RMSNorm 8 (float, x*x, mean, +eps, rsqrt,
 * mul, type_as, *weight) x 2, wqkv 1, rotary 9 x 2 (float, 4 mul, sub,
 * add, stack, type_as), KV index_put 2, repeat_interleave 2, SDPA 1,
 * contiguous 1, wo 1, SwiGLU 5 (w1, silu, w3, mul, w2), residual adds
 * 2) and 10 outside the 32 blocks: 39.2 ms / (32 x 49 + 10) = 24.84 us
 * per op.  Inference, no autograd: a training forward, which also
 * records the autograd graph, spends at least this. */
#define GP_EAGER_OP_TIME 24.84e-6

/* The least host_op_time / GP_EAGER_OP_TIME of a Grace host: the
 * catalog's Grace racks charge 2.75 unbound and 2.0 bound to the GPU's
 * NUMA node (host_op_scale, host_op_scale_bound: gb200-nvl72 and
 * gb300-nvl72, catalog/systems/nvidia-hgx.lua), its x86 hosts 1 (Ampere
 * and Hopper GPUs) or 1.118 (a Blackwell GPU's launches on an x86 core:
 * dgx-b200, dgx-b300).  Not a measured quantity: the bound Grace
 * factor, the lowest of its class, so that the rules that hold for a
 * Grace core (train_ep_hides) take no x86 host for one. */
#define GP_GRACE_HOST_MIN 2.0

/* Host seconds of one bare tensor op that launches a kernel, called from
 * a plain Python function (no nn.Module call, no view between launches)
 * on CUDA tensors, autograd off (torch.no_grad: an optimizer's step) --
 * the op's own dispatch and launch.  FlagGems issue #4558 (2026-07-08,
 * on an A100), "Benchmark (bfloat16, us per call)" of torch.add on
 * (1, 4096) and (16, 4096), "torch.add: 7.1 us"; Torch-FL PR #27
 * (2026-07-28, A100), which times "issue N ops back-to-back, sync once
 * at the end ... this isolates host cost", has add on 512 x 512 at 8 us
 * an op.  A tight loop's figure: a lower bound. */
#define GP_EAGER_NOGRAD_OP_TIME 7.1e-6

/* The same op on tensors that record autograd -- the part of
 * GP_EAGER_OP_TIME that is the op's own dispatch and launch.  Autograd's
 * recording: PyTorch issue #122029 (2024-03-16) times "x + 1" on a
 * one-element tensor, "eager 4.6us", and with requires_grad=True "eager
 * 5.6us" ("not calling backward, just triggering extra wrapper code"):
 * 1.0 us more.  7.1 + 1.0 = 8.1 us, a third of gpt-fast's 24.84 us an
 * op, whose decode spends the rest on its modules' calls and views.  A
 * tight loop's figure: a lower bound on the same op in a layer's code. */
#define GP_EAGER_BARE_OP_TIME (GP_EAGER_NOGRAD_OP_TIME + 1.0e-6)

/* Precisions the engine knows.  Bytes per element are in gp_dtype_bytes. */
typedef enum gp_dtype {
	GP_FP32 = 0, GP_TF32, GP_BF16, GP_FP16, GP_FP8, GP_INT8, GP_FP6,
	GP_INT4, GP_FP4, GP_NF4, GP_DTYPE_COUNT
} gp_dtype;

/* Storage bytes per element of a dtype (int4/nf4/fp4: 0.5, fp6: 0.75);
 * excludes quantisation scales, which the callers add. */
double gp_dtype_bytes(gp_dtype t);

/* Canonical lower-case name ("bf16"); "?" for an out-of-range value. */
const char *gp_dtype_name(gp_dtype t);

/* Parse a canonical name; returns GP_OK and sets *out, or GP_EINVAL. */
int gp_dtype_parse(const char *name, gp_dtype *out);

#endif
