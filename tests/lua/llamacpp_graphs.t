-- llama.cpp replays a one-token decode step on one NVIDIA GPU of Ampere or
-- later as a CUDA graph (gp.infer cuda_graphs, default on: PR #6766,
-- 2024-05-08; engine/infer.c infer_step, cfg one_token_graphs); its other
-- steps, a layer split (pp), a row split (tp) and cuda_graphs = false
-- launch each kernel on its own.  And the validation predictor's rule: a
-- llama.cpp case dated before 2024-05-08 is priced without the graph.
local t = require "tap"
local infer = require "gpuplan.infer"

local function run(extra)
  local a = { model = "llama3-8b", gpu = "rtx-4090", runtime = "llama.cpp", batch = 1,
              input = 1, output = 512 }
  for k, v in pairs(extra or {}) do a[k] = v end
  return infer.infer(a)
end
local function launches(ph)
  local n = 0
  for _, o in ipairs(ph.ops) do n = n + o.count end
  return n
end

-- Llama 3 8B's one-token decode step: 9 op rows a layer (attn_norm, qkv,
-- rope_kv, attention, o_proj, mlp_norm, mlp_up, mlp_act, mlp_down) over 32
-- layers, and embed, final_norm, logits, sample once: 9 x 32 + 4 = 292
-- launches.  Each op's time is its roofline time plus its launch
-- (roofline.h), the 4090's graph_launch_overhead 1 us replayed and
-- launch_overhead 4 us launched on its own (catalog/archs.lua, ada), so
-- the step differs by 292 x 3 us = 876 us and nothing else (1e-9
-- relative: float sums of the same rows).
local on, off = run(), run { cuda_graphs = false }
t.is(launches(on.decode), 292, "292 launches in a one-token step of the 8B")
for _, o in ipairs(on.decode.ops) do
  if o.t_launch ~= 1e-6 then t.ok(false, o.name .. ": replayed at the graph launch") end
end
t.near(off.decode.gpu_time - on.decode.gpu_time, 292 * 3e-6, 1e-9,
       "cuda_graphs = false: 292 launches at 4 us instead of 1 us")
-- The prompt (one token here, but a prefill step of 2048 tokens below)
-- runs more than one token a graph: ggml-cuda drops the graph for "batch
-- size > 1", so a prompt step is the same with or without.
local p_on = run { input = 2048, output = 16 }
local p_off = run { input = 2048, output = 16, cuda_graphs = false }
t.is(p_on.prefill.gpu_time, p_off.prefill.gpu_time, "a 2048-token prompt step: no graph either way")
-- Two sequences decoding together: two tokens a step, no graph.
t.is(run({ batch = 2 }).decode.gpu_time, run({ batch = 2, cuda_graphs = false }).decode.gpu_time,
     "a decode step of 2 sequences: no graph either way")
-- A layer split over two 4090s (pp 2): the pipeline's rotating input
-- copies change each GPU's graph every token and ggml-cuda drops it (PR
-- #13814): priced as the kernels launched one by one.
local s_on, s_off = run { gpus = 2, pp = 2 }, run { gpus = 2, pp = 2, cuda_graphs = false }
t.is(s_on.decode.gpu_time, s_off.decode.gpu_time, "pp 2: no graph either way")
t.near(s_on.decode.gpu_time, off.decode.gpu_time, 1e-12,
       "... the split step's kernels are the one-GPU eager step's")
-- cuda_graphs = true under a split would change nothing (no graph at tp or
-- pp > 1): refused naming the option and the split, not ignored;
-- cuda_graphs = false under the split stands (above).
t.raises(function() run { gpus = 2, pp = 2, cuda_graphs = true } end,
         "cuda_graphs = true with pp 2", "cuda_graphs = true under pp 2 is refused", true)
t.raises(function() run { gpus = 2, tp = 2, cuda_graphs = true } end,
         "cuda_graphs = true with tp 2", "cuda_graphs = true under tp 2 is refused", true)
-- Below Ampere ggml-cuda keeps graphs off "due to GPU architecture".
t.is(run({ gpu = "v100-sxm2-32gb" }).decode.gpu_time,
     run({ gpu = "v100-sxm2-32gb", cuda_graphs = false }).decode.gpu_time,
     "a V100 (compute capability 7.0): no graph")
-- Another runtime: refused, naming the runtime it needs.
t.raises(function() run { runtime = "vllm", cuda_graphs = false } end,
         "--runtime llama.cpp only (got runtime vllm)", "cuda_graphs under vllm is refused", true)
t.raises(function() run { cuda_graphs = 1 } end, "cuda_graphs must be true or false",
         "cuda_graphs = 1 is refused", true)

-- The predictor: a llama.cpp case dated before PR #6766 (2024-05-08) is
-- priced without the graph and says so; one dated after, or undated,
-- with it; a case stating workload.cuda_graphs keeps what it states.  The
-- 8B one-token decode on one 4090 (32 layers, GQA 8 of 32 heads): the
-- undated rate is the dated-before one's step less the 876 us above, so
-- faster (the ratio is not exact: the metric is over the whole run).
do
  local gp = require "gpuplan"
  local predict = require "gpuplan.predict.infer"
  local function case(src, wl)
    local w = { weight_dtype = 4.9, batch = 1, input_len = 1, output_len = 512,
                framework = "llama.cpp" }
    for k, v in pairs(wl or {}) do w[k] = v end
    return { model = { layers = 32, hidden = 4096, heads = 32, kv_heads = 8, head_dim = 128,
                       ffn_hidden = 14336, ffn_gated = true, vocab = 128256 },
             hardware = { gpu = "rtx-4090", gpus = 1 }, parallel = { tp = 1 },
             workload = w, measured = { metric = "decode_tokens_per_s" }, source = src }
  end
  local function said(r)
    for _, d in ipairs(r.defaults) do
      if d:find("cuda_graphs=false (llama.cpp dated before PR 6766", 1, true) then return true end
    end
    return false
  end
  local old = assert(predict(case { title = "x", date = "2024-01-10" }, gp.catalog()))
  local new = assert(predict(case { title = "x", date = "2024-05-09" }, gp.catalog()))
  local none = assert(predict(case { title = "x" }, gp.catalog()))
  local stated = assert(predict(case({ title = "x", date = "2024-01-10" }, { cuda_graphs = true }),
                                gp.catalog()))
  t.ok(said(old) and not said(new) and not said(none), "dated before 2024-05-08: no graph, said")
  t.ok(new.value > old.value * 1.05, "dated after: the graph's step, over 5% faster here")
  t.is(none.value, new.value, "undated: the tool's default, the graph")
  t.is(stated.value, new.value, "workload.cuda_graphs true overrides the date")
  -- another runtime's case stating it is declined naming the field, not
  -- priced without it (as workload.server on a runtime but trtllm)
  local r, why = predict(case({ title = "x" }, { framework = "vllm", cuda_graphs = false }),
                         gp.catalog())
  t.ok(r == nil and tostring(why):find("workload.cuda_graphs false", 1, true)
       and why:find("runtime is vllm", 1, true), "workload.cuda_graphs on a vllm case: declined")
end

t.done_testing()
