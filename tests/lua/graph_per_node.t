-- A captured graph replayed node by node (gp.infer graph_per_node): the
-- HIP runtime of ROCm 6.1 enqueues every kernel node of a hipGraphLaunch
-- as an ordinary dispatch (DEBUG_CLR_GRAPH_PACKET_CAPTURE off until ROCm
-- 6.2.0), so each kernel of a graphed step costs the card's stream launch
-- (roof_device launch) instead of its graph launch.  validate sets it for
-- upstream vLLM before 0.6.2 on an AMD card (its Dockerfile.rocm on ROCm
-- 6.1).  Run with ./gpuplan run tests/lua/graph_per_node.t.
local t = require "tap"
local gp = require "gpuplan"

-- Llama 3 8B on one MI300X under vLLM, batch 1: a decode step of one
-- CUDA/HIP graph.
local q = { model = "llama3-8b", gpu = "mi300x", gpus = 1, input = 1024, output = 128,
            runtime = "vllm", batch = 1 }
local on, off = gp.infer(t.with(q, { graph_per_node = true })), gp.infer(q)

-- The decode step's kernels: 9 a layer (attn_norm, qkv, rope_kv,
-- attention, o_proj, mlp_norm, mlp_up, mlp_act, mlp_down) x 32 layers, and
-- embed, final_norm, logits, sample once: 9 x 32 + 4 = 292.  Each moves
-- from the CDNA 3 graph launch (catalog/archs.lua cdna3
-- graph_launch_overhead 1 us) to its stream launch (launch_overhead 4 us):
-- 292 x 3 us = 0.876 ms more a step, nothing else.  1e-12 relative: the
-- same sums.
local n = 0
for _, o in ipairs(on.decode.ops) do n = n + o.count end
t.is(n, 292, "the decode step's kernels: 9 x 32 + 4")
t.near(on.decode.gpu_time - off.decode.gpu_time, 292 * 3e-6, 1e-12,
       "each of the 292 kernels at the 4 us stream launch, not the 1 us graph launch")
t.is(on.decode.bytes, off.decode.bytes, "the same bytes: only the launches move")
local stream = true
for _, o in ipairs(on.decode.ops) do stream = stream and o.t_launch == 4e-6 end
t.ok(stream, "every decode kernel at the stream launch")
t.ok(on.tokens_per_s < off.tokens_per_s, "... so the stream is slower")

-- Bad input: a boolean, and not beside enforce_eager (an eager run replays
-- no graph).
t.raises(function() gp.infer(t.with(q, { graph_per_node = 1 })) end,
         "graph_per_node must be true or false", "a number is refused", true)
t.raises(function()
  gp.infer(t.with(q, { graph_per_node = true, enforce_eager = true }))
end, "give graph_per_node or enforce_eager, not both", "refused with enforce_eager", true)

-- validate's vLLM profile: an upstream release before 0.6.2 on an AMD card
-- (LLM-Inference-Bench's MI300X rows state 0.6.1) sets it and says why;
-- the same case on an H100 does not.
local predict = require "gpuplan.predict.infer"
local c = t.shipped_case("llminfbench-vllm-mi300x-llama3-8b-tp1-fp16-1024-1024-bs1")
local p = assert(predict(c, gp.catalog()))
local function says(r, pat) return t.said(r, pat, true) end
t.is(p.job.graph_per_node, true, "the MI300X case of vLLM 0.6.1: graph_per_node")
t.ok(says(p, "graph_per_node (upstream vLLM before 0.6.2 builds on ROCm 6.1"),
     "... with its reason")
c.hardware.gpu = "h100-sxm"
local ph = assert(predict(c, gp.catalog()))
t.ok(ph.job.graph_per_node == nil and not says(ph, "graph_per_node"),
     "the same case on an H100: not set")
t.done_testing()
