-- Megatron-Core's grouped MLP pads each expert's rows for its fp8 GEMMs
-- when the dispatcher hands them over unaligned: Transformer Engine's
-- Fp8Padding copies the received rows into a buffer of counts rounded up
-- to 16 before the experts (and the router probabilities with them),
-- Fp8Unpadding copies the output back, and the backward runs the reverse
-- copies (engine/train_layer.c moe_fp8_pad_costs: two kernels of 2 ur
-- bytes and the probabilities' copy a pass, ur the received rows' bytes).
-- gp.train's moe_fp8_pad: copy (the default with fp8 on the alltoall and
-- allgather dispatchers of the megatron stack) or none (the counts arrive
-- aligned: moe_router_padding_for_quantization, a token-drop dispatch
-- padded to a capacity that is a multiple of 16, HybridEP).
-- Run with ./gpuplan run tests/lua/moe_fp8_pad.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(14)

local op = t.op
-- H100 SXM streams at 3.35e12 B/s x 0.84 (the hopper arch's hbm).
local bw = 3.35e12 * 0.84
-- Qwen3-30B-A3B: hidden 2048, top 8; one sequence a micro-batch on each
-- GPU (tp 1), bf16 rows (A = 2 B) before the cast.
local h, k = 2048, 8
local job = { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 8, ep = 8, batch = 1,
              global_batch = 8, stack = "megatron", zero = 1, precision = "fp8",
              fp8_scaling = "current" }
-- capacity_factor 1: every rank runs the mean rows (the padded buffer), which the counts
-- here take; the dropless default's chance skew is tests/lua/moe_balance.t's
local function run(x) return gp.train(t.with(t.with(job, { capacity_factor = 1 }), x)) end
-- the same job in bf16
local job16 = t.with(job, {})
job16.precision, job16.fp8_scaling = "bf16", nil

local s4, s8 = run { seq = 4096 }, run { seq = 8192 }
-- A balanced router at capacity factor 1: ur = k Tn h A.  Doubling the
-- tokens adds 4096 x 8 rows: ur grows by 4096 x 8 x 2048 x 2 = 134.2 MB,
-- the two row copies (read and write each, 2 ur apiece) by 4 x 134.2 =
-- 536.9 MB and the probabilities' copy by 32768 x 2 x 4 B = 0.26 MB:
-- 537.1 MB / 2.814e12 B/s = 190.9 us.  The kernels' fixed fill cancels
-- in the difference: float rounding only, 1e-6.
local dur = 4096 * k * h * 2
local dprobs = 4096 * k * 2 * 4
t.near(op(s8, "moe_fp8_pad").fwd - op(s4, "moe_fp8_pad").fwd, (4 * dur + dprobs) / bw, 1e-6,
       "fp8 on alltoall: the rows copied to padded counts and back, 4 ur bytes a forward")
t.near(op(s4, "moe_fp8_pad").bwd, op(s4, "moe_fp8_pad").fwd, 1e-12,
       "the backward's reverse copies move the same bytes")
t.like(table.concat(s4.defaults, "; "), "moe_fp8_pad=copy",
       "the copy is a default, said on the defaults line")
-- Where the counts arrive aligned nothing is copied.
t.is(op(run { seq = 4096, moe_fp8_pad = "none" }, "moe_fp8_pad"), nil,
     "moe_fp8_pad none: no copies")
t.is(op(run { seq = 4096, moe_dispatcher = "flex", moe_flex_backend = "hybridep" },
        "moe_fp8_pad"), nil, "HybridEP pads in its dispatch")
-- DeepEP's local permute pads nothing: the grouped MLP copies, as with
-- the alltoall dispatcher (the same rows: k u each way, balanced).
t.near(op(run { seq = 4096, moe_dispatcher = "flex" }, "moe_fp8_pad").fwd,
       op(s4, "moe_fp8_pad").fwd, 1e-12, "DeepEP: the grouped MLP's copies, the alltoall's")
t.is(op(gp.train(t.with(job16, { seq = 4096 })), "moe_fp8_pad"), nil,
     "bf16: no fp8 GEMMs to pad for")
-- The copies only add time: the same job without them is faster.
t.ok(run({ seq = 4096, moe_fp8_pad = "none" }).step_s < s4.step_s,
     "the copies make the step longer")

-- The padded rows in the expert GEMMs (gemm_costs' pad): current
-- scaling pads each expert's count to 16 rows.  The forward's rows sit on
-- M, where the padding ends inside the 64- or 128-row tile the last rows
-- take anyway: the same time to the bit.  The wgrad's sit on K: 4096
-- tokens x top 8 over 16 local experts is 2048 rows an expert, Poisson
-- with sd 45 > 2 x 16, so the remainder is uniform and the padded count
-- is 2048 + 15/2 (roofline.c poisson_tiles): the wgrad's FLOPs grow by
-- 7.5 / 2048 = 0.37%; the deeper K fills its pipeline no worse, and the
-- wgrad is one part of the backward, so the backward grows by more than
-- nothing and less than 7.5 / 2048 of itself.
local none4 = run { seq = 4096, moe_fp8_pad = "none" }
t.is(op(s4, "moe_up").fwd, op(none4, "moe_up").fwd,
     "16-row padding inside the forward's tile: fc1's forward unchanged")
local dup = op(s4, "moe_up").bwd - op(none4, "moe_up").bwd
t.ok(dup > 0 and dup < 7.5 / 2048 * op(none4, "moe_up").bwd,
     "fc1's wgrad runs over the padded rows: 0 < delta < 0.37% of the backward")

local function err(x, base)
  local ok, e = pcall(gp.train, t.with(base or job, x))
  return not ok and tostring(e) or ""
end
t.like(err({ moe_fp8_pad = "copy" }, job16),
       "moe_fp8_pad copy pads the experts' rows for fp8 GEMMs: it needs precision = fp8",
       "copy without fp8: refused, named")
t.like(err { moe_fp8_pad = "copy", moe_dispatcher = "flex", moe_flex_backend = "hybridep" },
       "moe_fp8_pad copy with moe_flex_backend hybridep: HybridEP pads",
       "copy with HybridEP: refused, named")
t.like(err { model = "llama3-8b", ep = 1, moe_fp8_pad = "none" },
       "moe_fp8_pad none is how fp8 experts get their row counts; llama3%-8b has no experts",
       "a dense model: refused, named")
t.like(err { moe_fp8_pad = "always" }, "moe_fp8_pad must be copy or none",
       "an unknown value: refused, named")
