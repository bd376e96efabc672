-- CUDA-graph batch padding (engine/infer_run.c graph_batch, graph_step):
-- a decode-only step of b sequences replays the graph captured at the
-- smallest of graph_sizes >= b, every row priced at that size but the
-- attention, which runs over the b sequences' KV; above the largest size
-- the step runs without a graph (eager_step).  The runtimes' default lists
-- (gpuplan.infer M.graph_sizes) and TensorRT-LLM's cap (M.trtllm_graph_cap).
-- Run with ./gpuplan run tests/lua/infer_graphs.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(14)

local dev = gp.roofline { gpu = "h100-sxm" }.device
local function kernels(r)
  local n = 0
  for _, o in ipairs(r.ops) do n = n + o.count end
  return n
end
local function attn(r) return t.op(r, "attention").total end

-- Prompts in steps of their own (chunked_prefill = false), a fixed batch.
local job = { model = "llama3.1-8b", gpu = "h100-sxm", weights = "fp8", input = 1000,
              output = 200, runtime = "trtllm", chunked_prefill = false }

-- Batch 100 with sizes 1, 64, 128 pads to 128: ITL = T(128) - A(128) +
-- A(100), T(x) the step at batch x where x is captured (no padding), A(x)
-- its attention row.  The same rows summed the same way: within 1e-12.
local p = gp.infer(t.with(job, { batch = 100, graph_sizes = "1,64,128" }))
local e128 = gp.infer(t.with(job, { batch = 128, graph_sizes = "1,64,128" }))
local e100 = gp.infer(t.with(job, { batch = 100, graph_sizes = "100" }))
t.near(p.itl_s, e128.itl_s - attn(e128) + attn(e100), 1e-12,
  "padded decode step: the rows at 128, the attention at 100")
-- The rows shown are the real batch's (attention over 100 sequences).
t.near(attn(p), attn(e100), 1e-12, "the step's rows are those of the real batch")
-- The padding costs: the 28 empty slots' GEMMs make the step slower than
-- at 100 (an 8B fp8 step at 100-128 tokens is not purely weight-bound).
t.ok(p.itl_s > e100.itl_s, "padding to 128 costs more than batch 100 alone")

-- Above the largest captured size (1, 2, 4) the step runs without a graph:
-- the unpadded step plus each kernel's stream launch over its graph launch
-- (catalog/archs.lua: 4 us vs 1 us on Hopper).  Launches add exactly:
-- within 1e-9.
local big = gp.infer(t.with(job, { batch = 100, graph_sizes = { 4, 1, 2 } }))
t.near(big.itl_s, e100.itl_s + kernels(e100) * (dev.launch - dev.graph_launch), 1e-9,
  "above the largest size: eager, the kernels' stream launches")

-- A finite run of one request (requests = 1, output 11): one prefill
-- share, then 10 decode-only steps at batch 1; with sizes {2} each pads to
-- 2: tokens/s = 11 / (share + 10 x ITL1), ITL1 = T(2) - A(2) + A(1).
-- run_finite reads the same step prices from its table: within 1e-9.
local one = t.with(job, { output = 11, requests = 1 })
local f = gp.infer(t.with(one, { graph_sizes = "2" }))
local t2 = gp.infer(t.with(job, { output = 11, batch = 2, graph_sizes = "2" }))
local t1 = gp.infer(t.with(job, { output = 11, batch = 1, graph_sizes = "1" }))
t.near(f.itl_batch1_s, t2.itl_s - attn(t2) + attn(t1), 1e-12,
  "batch 1 padded to 2: the rows at 2, the attention at 1")
t.near(f.tokens_per_s, 11 / (f.prefill_share_s + 10 * f.itl_batch1_s), 1e-9,
  "finite run: its decode-only steps at the padded price")

-- Defaults said, by runtime.  trtllm (trtllm-bench's list for max_batch
-- 224: 1, 2, 4, 8..128 by 8 (16), then 224 = 20 sizes; cap min(224,
-- 2048) = 224).
local tr = gp.infer(t.with(job, { max_batch = 224, max_num_tokens = 2048 }))
t.ok(t.said(tr, "graph_sizes=20 sizes 1%.%.224 %(trtllm%-bench's"), "trtllm: trtllm-bench's list")
-- vllm (max_batch 256: min(2 x 256, 512) = 512; 1, 2, 4 and 8..512 by 8 =
-- 67 sizes, all under its 8192-token budget on an H100).
local vl = gp.infer(t.with(job, { runtime = "vllm", max_batch = 256 }))
t.ok(t.said(vl, "graph_sizes=67 sizes 1%.%.512 %(vLLM's"), "vllm: its capture sizes")
-- sglang on an 80 GB card at tp 1: cuda_graph_max_bs 256; 1, 2, 4, 8, 12
-- and 16..256 by 8 (31) = 36 sizes.
local sg = gp.infer(t.with(job, { runtime = "sglang" }))
t.ok(t.said(sg, "graph_sizes=36 sizes 1%.%.256 %(SGLang's"), "sglang: its cuda_graph_bs")

-- TensorRT-LLM caps the user's list at min(max_batch, max_num_tokens) and
-- pads to the cap above it: the perf-overview list with max_batch 224
-- keeps 1..128 and adds 224, so batch 192 pads to 224 (the same step as a
-- list of 224 alone).
local capped = gp.infer(t.with(job, { batch = 192, max_batch = 224, max_num_tokens = 2048,
  graph_sizes = "1,2,4,8,16,32,64,128,256,384,512,1024,2048,4096,8192" }))
local at224 = gp.infer(t.with(job, { batch = 192, max_batch = 224, max_num_tokens = 2048,
  graph_sizes = "224" }))
t.near(capped.itl_s, at224.itl_s, 1e-12, "trtllm: the list capped at max_batch, 192 pads to 224")

-- Bad input names the argument.
t.raises(function() gp.infer(t.with(job, { graph_sizes = "1,0" })) end,
  "graph_sizes[2] must be a whole number", "a size of 0 refused", true)
t.raises(function() gp.infer(t.with(job, { graph_sizes = "1,x" })) end,
  "graph_sizes must be whole numbers", "a word refused", true)
t.raises(function() gp.infer(t.with(job, { graph_sizes = "8,8" })) end,
  "graph_sizes names 8 twice", "a size twice refused", true)
t.raises(function() gp.infer(t.with(job, { runtime = "llama.cpp", graph_sizes = "8" })) end,
  "runs no graphs", "a runtime without graphs refuses it", true)
