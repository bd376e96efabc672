-- gp.infer's graph_max_context (engine/infer_run.c graph_step and
-- finite_step; lua/gpuplan/infer.lua M.v0_graph_max_context): vLLM V0
-- runs a decode step off its CUDA graph when the step's context exceeds
-- max_seq_len_to_capture (max_context_len_to_capture in 0.4.x), 8192 by
-- default ("use_captured_graph = (not self.model_config.enforce_eager and
-- batch_size <= _BATCH_SIZES_TO_CAPTURE[-1] and max_context_len <=
-- self.max_context_len_to_capture)", vllm 0.4.x worker/model_runner.py),
-- its ops dispatched from Python as under --enforce-eager.
-- Run with ./gpuplan run tests/lua/graph_max_context.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(10)

-- Qwen2-0.5B-Instruct's dimensions (the Qwen2 speed benchmark's smallest
-- model) on one A100, batch 1, a 30720-token prompt and 2048 out: the
-- mean decode context, 30720 + 2048 / 2 = 31744, is past 8192.
local model = { id = "qwen2-0.5b-test", layers = 24, hidden = 896, heads = 14, kv_heads = 2,
  head_dim = 64, ffn_hidden = 4864, ffn_gated = true, vocab = 151936,
  tied_embeddings = true, max_seq = 32768, norm = "rms" }
local function run(extra)
  local a = { model = model, gpu = "a100-sxm-80gb", runtime = "vllm", input = 30720,
              output = 2048, batch = 1 }
  for k, v in pairs(extra or {}) do a[k] = v end
  return gp.infer(a)
end
local graph, capped, eager = run(), run({ graph_max_context = 8192 }), run({ enforce_eager = true })

-- Past the limit the step is the eager runtime's: the same price as
-- enforce_eager's (both runtime eager with vLLM's 10 ops a dense layer at
-- TP 1, rl.eager_ops_per_layer: 6 attention + 4 MLP).  The 0.5B's step
-- is host-bound: (24 layers x 10 + 10 outer ops) x 24.84 us = 6.21 ms, the
-- GPU's ~1.9 ms under it (1e-12 s: the same sum in both runs).
t.ok(math.abs(capped.itl_batch1_s - eager.itl_batch1_s) < 1e-12,
  string.format("past the limit: enforce_eager's step (%.4f ms, want %.4f)",
    capped.itl_batch1_s * 1e3, eager.itl_batch1_s * 1e3))
local host = (24 * 10 + 10) * 24.84e-6
t.ok(math.abs(capped.itl_batch1_s - host) < 1e-12,
  string.format("the 0.5B's step is the host's dispatch, (24 x 10 + 10) x 24.84 us = %.4f ms "
    .. "(got %.4f)", host * 1e3, capped.itl_batch1_s * 1e3))
-- Under the graph the same step is the GPU's alone, well under the host's.
t.ok(graph.itl_batch1_s < 0.5 * host,
  string.format("with the graph: %.4f ms, under half the eager step", graph.itl_batch1_s * 1e3))

-- One request (the speed benchmark's burst of 1: infer_burst): 2047
-- decode steps after the prefill, each 6.21 ms past the limit, so the
-- tokens/s fall to about 2048 / (2047 x 6.21 ms + prefill) <= 161.1.
local b1, b2 = run({ requests = 1 }), run({ requests = 1, graph_max_context = 8192 })
t.ok(b2.tokens_per_s <= 2048 / (2047 * host) and b2.tokens_per_s < 0.5 * b1.tokens_per_s,
  string.format("a burst of 1: %.1f -> %.1f tokens/s (at most %.1f)", b1.tokens_per_s,
    b2.tokens_per_s, 2048 / (2047 * host)))

-- A short request (128 + 128: mean context 192) stays on the graph: the
-- same step to the bit.
t.is(run({ input = 128, output = 128, graph_max_context = 8192 }).itl_batch1_s,
  run({ input = 128, output = 128 }).itl_batch1_s, "under the limit: the graph's step")

-- A run naming its V0 release (vllm_version) takes V0's default, said.
local v0 = run({ vllm_version = "0.6.3", sampling = "random" })
local said = false
for _, d in ipairs(v0.defaults) do
  said = said or d:find("graph_max_context=8192 (vLLM V0's max_seq_len_to_capture, "
    .. "vllm_version 0.6.3", 1, true) ~= nil
end
t.ok(said, "vllm_version 0.6.3: graph_max_context=8192 said among the defaults")

-- Refusals: another runtime, an eager run, the MoE serving model, 0.
t.raises(function() run({ runtime = "sglang", graph_max_context = 8192 }) end,
  "graph_max_context is vLLM V0's", "graph_max_context on runtime sglang: refused")
t.raises(function() run({ enforce_eager = true, graph_max_context = 8192 }) end,
  "enforce_eager runs no graphs", "graph_max_context with enforce_eager: refused")
t.raises(function() gp.infer({ model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 2, tp = 2,
    ep = 2, runtime = "vllm", input = 128, output = 128, graph_max_context = 8192 }) end,
  "MoE serving model does not read it", "graph_max_context with ep: refused")
t.raises(function() run({ graph_max_context = 0 }) end,
  "graph_max_context must be a whole number", "graph_max_context = 0: refused")
