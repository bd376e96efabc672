-- gp.infer's wo_split_k (engine infer.c splitk_sum): a weight-only GEMM
-- that writes its K slices' partial outputs apart, summed by a kernel of
-- its own after every linear -- vLLM's awq_gemm before awq_marlin (0.5.3):
-- split_k_iters 8 and "return _out_feats.sum(0);".  validate sets it for a
-- vLLM case of AWQ weights (workload.quant_method) before 0.5.3.
-- Run with ./gpuplan run tests/lua/wo_split_k.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(12)

-- Qwen2-0.5B's shape (config.json: hidden 896, 14 heads of 64, 2 KV
-- heads, intermediate 4864, 24 layers) on one A100, batch 1.
local model = { id = "qwen2-0.5b-test", layers = 24, hidden = 896, heads = 14, kv_heads = 2,
  head_dim = 64, ffn_hidden = 4864, ffn_gated = true, vocab = 151936, norm = "rms",
  tied_embeddings = true }
local q = { model = model, gpu = "a100-sxm-80gb", runtime = "vllm", weights = "int4-g128-fp16",
  input = 1, output = 128, batch = 1 }

local base, split = gp.infer(q), gp.infer(t.with(q, { wo_split_k = 8 }))
local sums = {}
for _, o in ipairs(split.ops) do
  if o.name == "wo_splitk_sum" then sums[#sums + 1] = o end
end
-- One sum after each of the layer's four linears (qkv, o_proj, mlp_up,
-- mlp_down), each once a layer: 24.
t.is(#sums, 4, "four split-K sums a layer, one after each linear")
t.ok(sums[1].count == 24 and sums[4].count == 24, "each once a layer: count 24")
-- After qkv: n = (14 + 2 x 2) x 64 = 1152 outputs at T = 1; it reads the 8
-- slices and writes the output, (8 + 1) x 1152 x 2 B = 20736 B, and adds
-- 7 x 1152 = 8064 times.  Exact: integers in doubles.
t.is(sums[1].bytes, 9 * 1152 * 2, "qkv's sum: (8 + 1) x 1152 x 2 B = 20736 B")
t.is(sums[1].flop, 7 * 1152, "qkv's sum: 7 adds an output, 8064")
-- After mlp_up (gate and up together): n = 2 x 4864 = 9728: 175104 B.
t.is(sums[3].bytes, 9 * 9728 * 2, "mlp_up's sum: (8 + 1) x 9728 x 2 B = 175104 B")
-- Each is a small kernel: at least the graph launch (1 us) and the fill
-- (roofline.c ROOF_MEM_FILL 3.9 us), 4.9 us.
t.ok(sums[1].time >= 4.9e-6 - 1e-12, "a sum costs at least launch + fill, 4.9 us")
-- The step is the GPU's ops one after another at batch 1 (no host part
-- with async scheduling, today's default): it grows by the four sums'
-- totals.  Tolerance 1e-9 relative: sums of doubles in another order.
local added = 0
for _, o in ipairs(sums) do added = added + o.total end
t.near(split.itl_s - base.itl_s, added, 1e-9, "the step grows by the four sums' time")

t.raises(function() gp.infer(t.with(q, { weights = "bf16", wo_split_k = 8 })) end,
  "wo_split_k splits weight-only GEMMs", "refused with 16-bit weights", true)
t.raises(function() gp.infer(t.with(q, { wo_split_k = 1 })) end, "wo_split_k",
  "wo_split_k = 1 (no split): refused")
t.raises(function() gp.infer(t.with(q, { wo_split_k = 65 })) end, "2..64",
  "wo_split_k = 65: refused", true)

-- validate: a vLLM case naming AWQ takes wo_split_k = 8 before 0.5.3 only.
do
  local predict = require "gpuplan.predict.infer"
  local function said(id)
    local r, why = predict(t.shipped_case(id), gp.catalog())
    assert(r, why)
    for _, d in ipairs(r.defaults) do
      if d:find("wo_split_k=8 (vLLM before awq_marlin", 1, true) then return true end
    end
    return false
  end
  t.ok(said("qwen2-speedbench-vllm042-7b-a100-awq-tp1-in1"), "vLLM 0.4.2, AWQ: wo_split_k=8 said")
  t.ok(not said("qwen25-speedbench-vllm063-7b-a100-awq-tp1-in1")
       and not said("qwen2-speedbench-vllm042-7b-a100-bf16-tp1-in1"),
    "vLLM 0.6.3 AWQ (awq_marlin) and 0.4.2 BF16: no split-K sum")
end
