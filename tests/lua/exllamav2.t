#!/usr/bin/env lua
-- runtime exllamav2: CUDA-graph kernels with ExLlamaV2's own memory rule
-- (gpuplan.infer M.exllamav2): no margin held back (model.load maps the
-- modules into a 99999 GB allocation), a forward's tokens at most
-- max_input_len 2048 x max_batch_size (ExLlamaV2Config defaults), one
-- sequence where none is given.
local t = require "tap"
local gp = require "gpuplan"

-- Llama 2 70B at EXL2 2.5 bpw on one RTX 4090, FP16 cache, a one-token
-- prompt and 127 tokens out (ExLlamaV2's README speed test).
local llama2_70b = { name = "Llama 2 70B", layers = 80, hidden = 8192, heads = 64, kv_heads = 8,
  head_dim = 128, ffn_hidden = 28672, ffn_gated = true, vocab = 32000, tied_embeddings = false }
local base = { model = llama2_70b, gpu = "rtx-4090", weights = 2.5, kv = "fp16", input = 1,
               output = 127 }

-- The generic engine holds back vLLM's 10% and an 8192-token workspace:
-- 25.17 GB needed, 22.94 after the margin (25.49 x 0.9).
local g = gp.infer(base)
t.ok(not g.fits and g.why:find("after the margin", 1, true), "runtime graphs: refused by memory")

-- ExLlamaV2: the workspace of 2048 tokens, per token (memory_infer.c
-- ws_token, 16-bit activations) 2 x (2 h + q + k + v + o + 3 f) =
-- 2 x (16384 + 8192 + 1024 + 1024 + 8192 + 86016) = 241,664 B, and one
-- sequence's fp32 logits row, 32000 x 4 = 128,000 B:
-- 2048 x 241,664 + 128,000 = 495,055,872 B.  Float sums: reltol 1e-12.
local x = gp.infer(t.with(base, { runtime = "exllamav2" }))
t.ok(x.fits, "runtime exllamav2: fits one RTX 4090, as the README ran it (38 t/s)")
t.near(x.workspace, 2048 * 241664 + 32000 * 4, 1e-12, "workspace: 2048 tokens x 241,664 B + one logits row")
t.is(x.batch, 1, "one sequence where none is given (max_batch_size 1)")
local said = table.concat(x.defaults, "; ")
t.ok(said:find("margin=0.00", 1, true) and said:find("max_num_tokens=2048", 1, true)
  and said:find("max_batch=1", 1, true), "the defaults line says the margin, budget and batch")
-- The generic one's 8192 tokens: 8192 x 241,664 + 128,000 B.
t.near(g.workspace, 8192 * 241664 + 32000 * 4, 1e-12, "runtime graphs: the 8192-token workspace")

-- The margin decides: with vLLM's 0.10 given, the 2048-token workspace
-- alone does not make it fit (weights 22.44 + KV 0.04 + workspace 0.50 +
-- reserve 0.63 = 23.61 GB against 22.94).
local m = gp.infer(t.with(base, { runtime = "exllamav2", margin = 0.1 }))
t.ok(not m.fits and m.why:find("needs 23.61 GB", 1, true), "a given margin 0.10 is taken: 23.61 GB, refused")

-- A batch of 4 runs four sequences a forward: 4 x 2048 = 8192 tokens, the
-- workspace the generic engine's (one logits row: r.workspace is a
-- sequence's).
local b4 = gp.infer(t.with(base, { runtime = "exllamav2", batch = 4 }))
t.ok(b4.fits and b4.batch == 4, "batch 4 fits")
t.near(b4.workspace, 8192 * 241664 + 32000 * 4, 1e-12, "batch 4: 4 x 2048 tokens a forward")

-- A given budget is the user's.
local u = gp.infer(t.with(base, { runtime = "exllamav2", max_num_tokens = 512 }))
t.near(u.workspace, 512 * 241664 + 32000 * 4, 1e-12, "max_num_tokens given: 512 tokens")

-- The runtime list names it.
t.raises(function() gp.infer(t.with(base, { runtime = "exllama" })) end, "exllamav2",
  "an unknown runtime's refusal lists exllamav2")

-- The runtimes' names are one list (gpuplan.infer RUNTIME_ORDER) that
-- every refusal reads: it holds each runtime once, and the --runtime
-- option's help (its one declaration) names each.
local inf = require "gpuplan.infer"
local listed, missing, extra = {}, {}, {}
for _, n in ipairs(inf.RUNTIME_ORDER) do
  if listed[n] or not inf.runtimes[n] then extra[#extra + 1] = n end
  listed[n] = true
end
for n in pairs(inf.runtimes) do if not listed[n] then missing[#missing + 1] = n end end
t.ok(#missing == 0 and #extra == 0, "RUNTIME_ORDER holds every runtime once: missing "
  .. table.concat(missing, ",") .. ", extra " .. table.concat(extra, ","))
local help, unnamed = require("gpuplan.options").get("runtime").help, {}
for _, n in ipairs(inf.RUNTIME_ORDER) do
  if not help:find(n, 1, true) then unnamed[#unnamed + 1] = n end
end
t.is(table.concat(unnamed, ","), "", "--runtime's help names every runtime")
t.raises(function() gp.infer(t.with(base, { runtime = "eager", graph_sizes = { 1, 2 } })) end,
  "(runtime graphs, trtllm, vllm, sglang, nim-http, gpt-fast, exllamav2)",
  "graph_sizes' refusal names the CUDA-graph runtimes, exllamav2 among them", true)

t.done_testing()
