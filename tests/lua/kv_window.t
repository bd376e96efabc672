-- The keys an attention layer reads at a context: one rule
-- (model_layer_kv / model_kv_read_mean, engine/model.h) for both serving
-- steps -- gp.infer's dense step (infer.c step_kv_mean) and the MoE
-- serving step (serve_step.c) -- a sliding-window layer reading at most
-- its window.  The MoE step read every layer at the whole context before
-- (gpt-oss-20b's 12 sliding layers at 21000 keys).  And ttft_ms, a MoE
-- serving case's metric (lua/gpuplan/predict/infer.lua).
-- Run: ./gpuplan run tests/lua/kv_window.t
local t = require "tap"
local gp = require "gpuplan"
local cat = gp.catalog()
local pi = require "gpuplan.predict.infer"
t.plan(8)

-- gpt-oss-20b's shape (openai/gpt-oss-20b config.json), ns of its 24
-- layers at a window of 128; with moe, its 32 experts top-4 (MXFP4: the
-- MoE serving step), without, a dense model of the same attention.
local function model(ns, moe)
  local m = { layers = 24, hidden = 2880, heads = 64, kv_heads = 8, head_dim = 64,
              ffn_hidden = 2880, ffn_gated = true, vocab = 201088, max_seq = 131072 }
  if moe then
    m.moe = { experts = 32, top_k = 4, shared_experts = 0, ffn_hidden = 2880, dense_layers = 0 }
  end
  if ns > 0 then m.sliding_window = { size = 128, layers = ns } end
  return m
end
-- One stream's decode step at a prompt of `input` tokens, output 2 (the
-- decode reads input + 1 keys, MoE: input + output / 2).
local function moe_step(ns, input)
  return assert(gp.infer{ model = model(ns, true), gpu = "h100-sxm", gpus = 1, tp = 1, ep = 1,
                          expert_weights = "mxfp4", runtime = "vllm", input = input,
                          output = 2, concurrency = 1 }).tpot_s
end
local function dense_step(ns, input)
  return assert(gp.infer{ model = model(ns, false), gpu = "h100-sxm", gpus = 1, tp = 1,
                          runtime = "vllm", input = input, output = 2, batch = 1 }).itl_s
end

-- 1-2. Every layer at its window: a query reads min(ctx, 128) = 128 keys
-- a layer at a 4000- or a 16000-token context alike, and nothing else of
-- a decode step grows with the context, so the step is the same in both
-- paths (to rounding: 1e-12).  The MoE step grew with the context before.
t.near(moe_step(24, 16000), moe_step(24, 4000), 1e-12,
       "MoE step, every layer at a 128 window: the same at 4000 and 16000 keys")
t.near(dense_step(24, 16000), dense_step(24, 4000), 1e-12,
       "dense step, every layer at a 128 window: the same at 4000 and 16000 keys")

-- 3-4. Half the layers at the window: the mean keys a layer reads are
-- (12 x 20001 + 12 x 128) / 24, halfway between the no-window step's
-- 20001 and the all-window step's 128.  The attention rows are priced
-- once at that mean and, memory-bound at one stream (its 8 KV heads'
-- bytes per 64 query heads' FLOP), are affine in the keys, so the step
-- is the mean of the two.  Tolerance: MoE 1e-9 (exact); dense 1e-6 (its
-- mean context ctx - (q - 1) / 2 and the CUDA-graph padding round the
-- 20001 differently from the MoE step's input + output / 2, 1.6e-7
-- apart).
local a, b, c = moe_step(0, 20000), moe_step(12, 20000), moe_step(24, 20000)
t.near(b, (a + c) / 2, 1e-9,
       string.format("MoE step, 12 of 24 at the window: %.4f ms = (%.4f + %.4f) / 2",
                     b * 1e3, a * 1e3, c * 1e3))
a, b, c = dense_step(0, 20000), dense_step(12, 20000), dense_step(24, 20000)
t.near(b, (a + c) / 2, 1e-6,
       string.format("dense step, 12 of 24 at the window: %.4f ms = (%.4f + %.4f) / 2",
                     b * 1e3, a * 1e3, c * 1e3))

-- 5. The window saves the two paths about as much: the MoE step and the
-- dense step price the same attention rows (model_layer_ops' attention at
-- the same mean keys), so (no window - all window) agrees within 10%
-- (the rows' kernel rates differ: the MoE step's sx_attn_row and the
-- dense step's roofline are priced by their own files).
local dm = moe_step(0, 20000) - moe_step(24, 20000)
local dd = dense_step(0, 20000) - dense_step(24, 20000)
t.ok(math.abs(dm / dd - 1) < 0.10,
     string.format("the window's saving: MoE %.3f ms, dense %.3f ms", dm * 1e3, dd * 1e3))

-- 6-7. ttft_ms is a MoE serving case's metric: gp.infer's ttft_s (the
-- prompt's prefill steps, serve_plan.c colocated), read as the dense
-- cases read theirs.
local case = {
  id = "moe-ttft", kind = "infer", model = model(12, true),
  hardware = { gpu = "h100-sxm", gpus = 1 }, parallel = { tp = 1 },
  workload = { framework = "vllm", weight_dtype = "bf16", expert_weight_dtype = "mxfp4",
               input_len = 20000, output_len = 2019, concurrency = 8, num_requests = 150 },
  measured = { metric = "ttft_ms", value = 468.9, statistic = "median" },
  source = { title = "vLLM blog", version = "0.19.1" } }
case.model.moe.expert_ffn_hidden, case.model.moe.ffn_hidden = 2880, nil
local p, why = pi(case, cat)
t.ok(p ~= nil, "a MoE serving ttft_ms case is predicted: " .. tostring(why))
local r = assert(gp.infer(p.job))
t.near(p and p.value or 0, r.ttft_s * 1e3, 1e-12, "it reads the job's ttft_s")

-- 8. A pool measured alone (here the decode pool) states no TTFT of a
-- colocated run: refused, naming the metric.
case.workload.phase = "decode"
case.workload.concurrency, case.workload.num_requests = nil, nil
case.workload.batch = 8
local p2, why2 = pi(case, cat)
t.ok(p2 == nil and tostring(why2):find("ttft_ms", 1, true) ~= nil,
     "a pool measured alone: ttft_ms refused: " .. tostring(why2))
