-- Per-tensor fp8 on Blackwell runs its backward GEMMs non-TN: Transformer
-- Engine writes no fp8 transposes where the part takes NN / NT fp8 GEMMs
-- (non_tn_fp8_gemm_supported: compute capability 10.0 and up), and those
-- layouts run at the catalog's achievable.non_tn.fp8 share of the TN rate
-- (catalog/archs.lua blackwell: 0.966, TE's GEMM profiling guide on a
-- B300; engine/train_layer.c gemm_costs).
-- Run with ./gpuplan run tests/lua/fp8_non_tn.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(10)

local op = t.op
local cat = gp.catalog()
local job = { model = "llama3-8b", gpu = "gb200", gpus = 8, seq = 4096,
              global_batch = 8, method = "pretrain", precision = "fp8",
              fp8_scaling = "delayed", stack = "megatron", zero = 1, cat = cat }

local arch = cat.archs.blackwell.achievable
t.is(arch.non_tn.fp8, 0.966, "blackwell: non-TN fp8 GEMMs at 0.966 of the TN rate")

local saved = arch.non_tn
local function at(f, j)
  arch.non_tn = f and { fp8 = f, reason = saved.reason, source = saved.source } or nil
  local r = gp.train(j or job)
  arch.non_tn = saved
  return r
end
local none, one, ntn = at(nil), at(1.0), at(0.966)

-- The transposes: with any share set, the casts write the 1 B copy alone.
-- GB200 streams at 8e12 x 0.85 B/s; one micro-batch of 4096 tokens, tp 1.
-- mlp_down's input (T x ffn) is cast by a kernel of its own: 1 B an
-- element less, T ffn / bw = 8.64 us; the transfers differ by that alone
-- (same kernels, same fills): 1e-6, rounding.
local bw = 8e12 * 0.85
local T, h, ffn = 4096, 4096, 14336
t.near(op(none, "mlp_down").fwd - op(one, "mlp_down").fwd, T * ffn / bw, 1e-6,
       "mlp_down forward: its input's cast writes no transpose")
-- Its dY (T x h) is cast the same way in the backward.
t.near(op(none, "mlp_down").bwd - op(one, "mlp_down").bwd, T * h / bw, 1e-6,
       "mlp_down backward: dY's cast writes no transpose")
-- mlp_up's input is the norm's delayed-scaling fp8 output: no transpose
-- was priced there, so its forward does not move.
t.is(op(one, "mlp_up").fwd, op(none, "mlp_up").fwd,
     "mlp_up forward: the fused norm's 1 B output, as before")

-- The backward GEMMs: dgrad and wgrad take 1 / 0.966 their FLOPs at the
-- TN rate, which the engine prices over peak x the gemm fraction: the same
-- backward as a part with every fp8 GEMM at 0.72 x 0.966 of its peak and
-- no non-TN share (the casts alike: a share set in both).  Exact, 1e-9.
local g = cat.gpus.gb200.achievable.gemm
t.is(g.fp8, 0.72, "gb200: per-tensor fp8 GEMMs at 0.72 of peak")
g.fp8 = 0.72 * 0.966
local slow = at(1.0)
g.fp8 = 0.72
t.near(op(ntn, "mlp_up").bwd, op(slow, "mlp_up").bwd, 1e-9,
       "mlp_up backward: dgrad and wgrad at 0.966 of the TN rate")
-- The forward GEMM stays TN.
t.is(op(ntn, "mlp_up").fwd, op(one, "mlp_up").fwd, "the forward GEMM keeps its TN rate")

-- MXFP8 keeps both scaled copies and every GEMM TN: nothing moves; nor in
-- bf16.
local mx = t.with(job, { fp8_scaling = "block" })
t.is(at(0.5, mx).step_s, at(nil, mx).step_s, "MXFP8: its GEMMs TN, the share unread")
local bf = t.copy(job)
bf.precision, bf.fp8_scaling = "bf16", nil
t.is(at(0.5, bf).step_s, at(nil, bf).step_s, "bf16: the share unread")

-- A share outside (0, 1] is refused by the catalog check.
local schema = require "gpuplan.schema"
local bad = { id = "blackwell-bad", name = "x", launch_overhead = "4us",
              achievable = { gemm = { bf16 = 0.78 }, hbm = 0.85, reason = "x", source = "y",
                             non_tn = { fp8 = 1.5, reason = "x", source = "y" } } }
local v, e = schema.check(bad, schema.arch)
t.ok(v == nil and e and e.path:find("non_tn.fp8", 1, true), "non_tn.fp8 1.5: refused at achievable.non_tn.fp8")
