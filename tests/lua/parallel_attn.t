-- A parallel-attention layer (Falcon's parallel_attn / new_decoder_
-- architecture) adds the attention's and the MLP's row-parallel partial
-- sums and all-reduces them once a layer under TP, where a sequential
-- layer reduces twice (after o_proj and after the MLP): TensorRT-LLM's
-- FalconDecoderLayer ("Not to apply allreduce inside the Attention/MLP
-- layers. allreduce applies after those layer.") and vLLM's
-- ("reduce_row_parallel_results = not (config.new_decoder_architecture
-- or config.parallel_attn)").  engine/infer.c step_comm; model field
-- parallel_attn.
-- Run with ./gpuplan run tests/lua/parallel_attn.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(8)

-- 32 layers of hidden 4096 (Llama-3.1-8B's shapes) on 8 H100s under vLLM:
-- a decode step of batch 16 all-reduces 16 x 4096 x 2 = 131,072 B a call,
-- below vLLM's one-stage limit (256 KiB at n = 8): 5.15 us + 7 x 131072 /
-- (0.720 x 450e9) = 7.982 us a call (tests/lua/custom_ar.t derives it).
local function model(par)
  return { id = "par-test", layers = 32, hidden = 4096, heads = 32, kv_heads = 8,
           ffn_hidden = 14336, ffn_gated = true, vocab = 128256, parallel_attn = par }
end
local function decode(par, x)
  local a = { model = model(par), gpu = "h100-sxm", gpus = 8, tp = 8, batch = 16,
              runtime = "vllm", input = 128, output = 128 }
  for k, v in pairs(x or {}) do a[k] = v end
  return gp.infer(a).decode
end
local call = 5.15e-6 + 7 * 131072 / (0.720 * 450e9)

-- Sequential: 2 calls a layer, 64 a step: 510.8 us.  Float rounding: 1e-9.
t.near(decode(nil).comm_time, 64 * call, 1e-9, "sequential layer: two all-reduces a layer")
t.near(decode(false).comm_time, 64 * call, 1e-9, "parallel_attn = false: the same")
-- Parallel: 1 call a layer, 32 a step: 255.4 us.
t.near(decode(true).comm_time, 32 * call, 1e-9, "parallel_attn: one all-reduce a layer")
-- The GEMMs are the same (the same projections side by side): the step's
-- GPU time does not move.  Exact: the same ops priced.
t.is(decode(true).gpu_time, decode(nil).gpu_time, "the same GPU time")
-- One GPU: no all-reduce either way.
t.is(decode(true, { gpus = 1, tp = 1 }).comm_time, 0, "TP 1: no all-reduce")

-- A value that is not a boolean is refused, naming the field.
local ok, err = pcall(decode, "yes")
t.ok(not ok and tostring(err):find("parallel_attn", 1, true) ~= nil,
     "parallel_attn = 'yes' is refused by name: " .. tostring(err))

-- Training prices the layer as a sequential one (its TP collectives
-- twice a layer) and says so under TP; at TP 1 there is nothing to say.
local function said(tp)
  local r = gp.train { model = model(true), gpu = "h100-sxm", gpus = 8, tp = tp, seq = 4096,
                       global_batch = 8, batch = 1 }
  for _, d in ipairs(r.defaults) do
    if d:find("parallel_attn: the layer priced as a sequential one", 1, true) then return true end
  end
  return false
end
t.ok(said(8), "train at TP 8: the sequential pricing said among the defaults")
t.ok(not said(1), "train at TP 1: nothing said")
