-- SGLang's dense block-fp8 linears before DeepGEMM (gpuplan.infer
-- M.block_fp8_triton, the MoE serving model's serve_cfg.linear_fp8_bf16_x,
-- engine/serve_row.c sx_lin_x): with block_fp8_triton the attention,
-- shared-expert and dense-MLP fp8 linears compute at no more than the
-- Triton fused MoE's multiple of the card's bf16 rate (M.moe_fp8_bf16_x_of:
-- 0.594 on the H200), not at its fp8 rate; the routed experts keep the
-- cap they had, and the bytes the linears read do not change.
-- Run: ./gpuplan run tests/lua/block_fp8_triton.t
local t = require "tap"
local gp = require "gpuplan"
t.plan(21)

-- DeepSeek-V3 on 8 H200, DP attention, SGLang, fp8: one sequence a GPU.
local sv = { gpu = "h200-sxm", gpus = 8, tp = 8, dp_attention = true, weights = "fp8",
             runtime = "sglang", input = 3200, output = 800, concurrency = 8,
             model = "deepseek-v3" }
local sop = t.op
local off = gp.infer(sv)
local on = gp.infer(t.with(sv, { block_fp8_triton = true }))

-- The compute side of a dense fp8 linear: fp8 rate peak x GEMM fraction x
-- shape efficiency, against the cap 0.594 x bf16 peak x its fraction x
-- the same shape efficiency (catalog h200-sxm: fp8 1.979e15 x 0.5986,
-- bf16 9.89e14 x 0.656): (1.979e15 x 0.5986) / (0.594 x 9.89e14 x 0.656)
-- = 3.0738x the seconds.  1e-6 relative: the catalog's figures are
-- exact, the rest float products.
local RATIO = (1.979e15 * 0.5986) / (0.594 * 9.89e14 * 0.656)
for _, name in ipairs({ "o_proj", "q_b", "q_kv_a", "shared_up", "shared_down" }) do
  t.near(sop(on, name).t_compute / sop(off, name).t_compute, RATIO, 1e-6,
         name .. ": compute 3.074x longer (fp8 rate -> 0.594 x bf16)")
end
-- DeepSeek-V3's checkpoint is released in fp8 (the catalog's dtype): left
-- to its default weights it is served in fp8 and takes the flag the same
-- (it was refused as "weights bf16", the flag read a.weights, not the
-- weights served).  The same run, so the same figure: exact.
local plain = t.with(sv, { block_fp8_triton = true })
plain.weights = nil
t.is(sop(gp.infer(plain), "o_proj").t_compute, sop(on, "o_proj").t_compute,
     "fp8 as released (no weights given): the Triton cap too")
-- The bytes are the same, so the memory side is (exact).
t.is(sop(on, "o_proj").t_memory, sop(off, "o_proj").t_memory, "o_proj: the same memory time")
-- o_proj of one token reads its whole 7168 x 16384 fp8 weight and is
-- memory-bound at the fp8 rate (33.2 us against 15.0 us of compute); at
-- the cap the compute, 15.0 x 3.074 = 46.0 us, binds.
t.is(sop(off, "o_proj").bound, "memory", "o_proj at the fp8 rate: memory-bound")
t.is(sop(on, "o_proj").bound, "compute", "o_proj at the Triton cap: compute-bound")
-- The routed experts keep their own cap (the fused MoE's, at ep 1):
-- unchanged to the bit.
t.is(sop(on, "experts_up").time, sop(off, "experts_up").time, "experts_up unchanged")
t.ok(on.tokens_per_s < off.tokens_per_s, "the step is longer, the rate lower")

-- Refused where nothing prices it: another runtime, 16-bit weights, and a
-- job the MoE serving model does not take (one replica at TP 8).
t.raises(function() gp.infer(t.with(sv, { runtime = "vllm", block_fp8_triton = true })) end,
         "block_fp8_triton is SGLang's dense block-fp8 GEMM", "runtime vllm: refused", true)
t.raises(function() gp.infer(t.with(sv, { weights = "bf16", block_fp8_triton = true })) end,
         "weights bf16", "bf16 weights: refused", true)
t.raises(function()
  gp.infer({ gpu = "h200-sxm", gpus = 8, tp = 8, weights = "fp8", runtime = "sglang",
             input = 1024, output = 1024, concurrency = 8, model = "deepseek-v3",
             block_fp8_triton = true })
end, "priced by the MoE serving model", "not the MoE serving model: refused", true)
-- A card without the Triton fused MoE's measured multiple (Hopper only,
-- M.moe_fp8_bf16_x): the flag priced nothing there, the same rate to the
-- bit, in silence; now refused naming the card.
t.raises(function() gp.infer(t.with(sv, { gpu = "mi300x", block_fp8_triton = true })) end,
         "gpu mi300x (cdna3)", "MI300X: refused, naming the card", true)
t.raises(function() gp.infer(t.with(sv, { gpu = "b200", block_fp8_triton = true })) end,
         "gpu b200 (blackwell)", "B200: refused, naming the card", true)

-- The predictor's release rule (predict/infer.lua's sglang profile): a
-- case of SGLang before 0.4.6 (DeepGEMM by default from sglang PR #5628,
-- 2025-04-22) with fp8 weights on the MoE serving model takes it; the
-- same row stated as 0.4.6 does not.
local predict = require "gpuplan.predict.infer"
local all = require("gpuplan.validate").read("validation/cases.json")
local dstack
for _, c in ipairs(all) do
  if c.id == "dstack-dsr1-h200-sglang-tp8-3200in-800out-c64" then dstack = c end
end
t.is(assert(predict(dstack, gp.catalog())).job.block_fp8_triton, true,
     "dstack's SGLang 0.4.3 serving row: the Triton linears")
t.is(assert(predict(t.with(dstack, { source = t.with(dstack.source, { version = "0.4.6" }) }),
     gp.catalog())).job.block_fp8_triton, nil, "the same row as 0.4.6: DeepGEMM's rate")

-- The engine's own check (serve.c serve_check): the captured config run
-- again with the cap out of roof_op.bf16_x's bounds (0 or 0.01..4) is
-- refused by name; as captured it carries 0.594 (the H200's multiple).
do
  local cfg, rerun = t.serve_capture(function()
    gp.infer(t.with(sv, { block_fp8_triton = true }))
  end)
  local function with_x(x) return rerun { linear_fp8_bf16_x = x } end
  t.near(cfg.linear_fp8_bf16_x, 0.594, 1e-12, "the captured config: 0.594 on the H200")
  t.raises(function() with_x(0.001) end, "linear_fp8_bf16_x", "serve: 0.001 refused by name", true)
  t.raises(function() with_x(5) end, "linear_fp8_bf16_x", "serve: 5 refused by name", true)
end
