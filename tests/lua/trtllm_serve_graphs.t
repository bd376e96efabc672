-- The CUDA graphs of a TensorRT-LLM run served by trtllm-serve (the infer
-- predictor's trtllm profile): trtllm-serve passes no cuda_graph_config, so
-- the PyTorch backend captures TorchLlmArgs' default, batch sizes 1..32,
-- 64 and 128 without padding; the profile gives gp.infer graph_sizes 1..32
-- (which pads nothing, and runs every batch above 32 off the graph), where
-- a trtllm-bench run keeps gp.infer's runtime list (trtllm-bench's padded
-- one up to its max_batch_size), and a list the case states wins.  The
-- command is the case's workload.server; a notes-only mention of
-- trtllm-serve changes nothing (a case's notes quote its source, and a
-- prediction depends only on its stated fields).
-- Run: ./gpuplan run tests/lua/trtllm_serve_graphs.t
local t = require "tap"
local gp = require "gpuplan"
local cjson = require "cjson"
local predict = require "gpuplan.predict.infer"
local validate = require "gpuplan.validate"
local cat = gp.catalog()
t.plan(19)

-- Llama 2 70B shape in fp8 on one H200, a 1000-request burst of
-- 128 in / 4 out, run by TensorRT-LLM (workload.framework).
local function case(notes, wl)
  local w = { weight_dtype = "fp8", input_len = 128, output_len = 4, num_requests = 1000,
              max_batch = 2048, max_num_tokens = 8192, framework = "trtllm" }
  for k, x in pairs(wl or {}) do w[k] = x end
  return { id = "serve-graphs", kind = "infer",
           model = { layers = 80, hidden = 8192, heads = 64, kv_heads = 8,
                     ffn_hidden = 28672, ffn_gated = true, vocab = 32000 },
           hardware = { gpu = "h200-sxm", gpus = 1 }, parallel = { tp = 1 },
           workload = w, measured = { metric = "output_tokens_per_s", value = 1 },
           source = { title = "TensorRT-LLM" }, notes = notes }
end

-- Served by trtllm-serve (workload.server): 1..32, listed.
local ps = assert(predict(case("the serving script 'trtllm-serve model --tp_size 1'",
                               { server = "trtllm-serve" }), cat))
local gs = ps.job.graph_sizes
t.ok(type(gs) == "table" and #gs == 32 and gs[1] == 1 and gs[32] == 32,
     "trtllm-serve: graph_sizes 1..32 (" .. tostring(gs and #gs) .. " sizes)")
t.ok(t.said(ps, "graph_sizes=1..32 (trtllm-serve: TorchLlmArgs' CudaGraphConfig default", true),
     "... listed with its reason")
local rs = gp.infer(ps.job)
t.ok(rs.fits and rs.tokens_per_s > 0, "... and priced (" .. tostring(rs.tokens_per_s) .. " tok/s)")

-- A trtllm-bench run (no workload.server): no list from the profile;
-- gp.infer captures trtllm-bench's own and says so.
local pb = assert(predict(case("trtllm-bench throughput, the perf-overview workflow"), cat))
t.is(pb.job.graph_sizes, nil, "trtllm-bench: the profile sets no graph_sizes")
t.ok(not t.said(pb, "graph_sizes=1..32", true), "... and lists none of trtllm-serve's")
t.ok(t.said(pb, "(trtllm-bench's captured CUDA-graph batches", true),
     "... gp.infer's runtime list (trtllm-bench's) is said instead")

-- A list the case states (workload.graph_sizes: the run's
-- cuda_graph_config) wins over trtllm-serve's default.
local pl = assert(predict(case("trtllm-serve with cuda_graph_config batch_sizes 1..256",
                               { server = "trtllm-serve",
                                 graph_sizes = { 1, 2, 4, 8, 16, 32, 64, 128, 256 } }), cat))
t.is(#pl.job.graph_sizes, 9, "stated graph_sizes win: 9 sizes")
t.ok(not t.said(pl, "graph_sizes=1..32", true), "... not listed as a default")

-- A shipped trtllm-serve case (gpustack's Qwen3-32B FP8 on one H100,
-- whose notes quote 'trtllm-serve Qwen/Qwen3-32B-FP8 ...') gets the list.
do
  local f = assert(io.open("validation/cases.json"))
  local all = cjson.decode(f:read("a"))
  f:close()
  local found
  for _, c in ipairs(all.cases or all) do
    if c.id == "gpustack-trtllm120rc1-qwen3-32b-fp8-h100-1996in-100out-500req" then found = c end
  end
  local p = assert(predict(found, cat))
  t.ok(p.job.graph_sizes and #p.job.graph_sizes == 32, "shipped gpustack trtllm-serve case: 1..32")
end

-- The notes alone name trtllm-serve, the case states no workload.server:
-- the prediction is trtllm-bench's, the same job and the same number as
-- with neutral notes (the word in prose moves nothing).  Exact equality:
-- the same job priced twice by the same code.
do
  local pn = assert(predict(case("the serving script 'trtllm-serve model --tp_size 1'"), cat))
  t.is(pn.job.graph_sizes, nil, "notes-only trtllm-serve: no graph_sizes from the profile")
  t.is(pn.value, pb.value, "... the same prediction as a trtllm-bench case ("
       .. tostring(pn.value) .. ")")
  t.ok(pn.value ~= ps.value, "... and not the workload.server case's ("
       .. tostring(ps.value) .. ")")
  -- workload.server is TensorRT-LLM's: a vLLM case that states it is refused.
  local c = case("vLLM", { server = "trtllm-serve" })
  c.source, c.workload.framework = { title = "vLLM" }, "vllm"
  local pv, why = predict(c, cat)
  t.ok(pv == nil and tostring(why):find("workload.server trtllm-serve is a TensorRT-LLM command", 1, true),
       "workload.server on a vLLM case refused (" .. tostring(why) .. ")")
end

-- The case reader: workload.server is one of the two commands, refused
-- naming the field otherwise, and refused on a kind that serves nothing.
do
  -- tap's read_case: c read as `gpuplan validate` reads a file of it
  local read = t.read_case
  t.ok((read(case("", { server = "trtllm-serve" }))), "an infer case with server trtllm-serve reads")
  local ok, err = read(case("", { server = "trtllm-srv" }))
  t.ok(not ok and err:find("workload.server", 1, true),
       "server \"trtllm-srv\": refused naming the field: " .. err)
  local tr = case("", { server = "trtllm-serve" })
  tr.kind, tr.workload.method = "train", "pretrain"
  tr.workload.max_batch, tr.workload.max_num_tokens, tr.workload.num_requests = nil, nil, nil
  tr.measured = { metric = "mfu", value = 0.4 }
  ok, err = read(tr)
  t.ok(not ok and err:find("workload.server", 1, true) and err:find("only infer cases", 1, true),
       "a train case's workload.server: refused, naming it: " .. err)
end

-- What the list prices (gp.infer, Llama 3.1 8B in bf16 on one H100, a
-- steady batch): at 32 the step replays a graph under both lists
-- (trtllm-bench's holds 32: 8 x 4), so the ITL is the same, exactly.  At
-- 48 trtllm-bench's list holds 48 (8 x 6) and replays it; trtllm-serve's
-- runs it off the graph, every kernel launched from the stream: 4 us a
-- launch against 1 us in a graph (catalog/archs.lua hopper
-- launch_overhead, graph_launch_overhead), over 9 kernels a layer x 32
-- layers + embed, final_norm, logits and sample = 292 kernels, so the ITL
-- grows by 292 x 3 us = 0.876 ms.  Tolerance 1e-12 s: the floating point
-- of two sums of about 300 terms.
do
  local serve = {}
  for i = 1, 32 do serve[i] = i end
  local function itl(b, list)
    local r = gp.infer { model = "llama3.1-8b", gpu = "h100-sxm", runtime = "trtllm",
                         input = 128, output = 256, batch = b, graph_sizes = list }
    return r.itl_s
  end
  t.near(itl(32, serve), itl(32, nil), 1e-12, "batch 32: a graph under both lists, same ITL")
  t.near(itl(48, serve) - itl(48, nil), 292 * 3e-6, 1e-12,
         "batch 48: off the graph, 292 kernels x 3 us = 0.876 ms more")
  t.ok(itl(48, serve) > itl(48, nil), "... slower than trtllm-bench's graph at 48")
end
