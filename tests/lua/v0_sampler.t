-- vLLM V0's sampler (gp.infer sampling and vllm_version; lua/gpuplan/infer.lua
-- M.v0_sampler_kernels, engine/infer.c sample_extra): the kernels a step's
-- sampling settings launch beyond greedy sampling's, counted from the
-- release's sampler.py, each priced as one pass over the step's logits on
-- the stream after the forward; greedy sampling is priced as before.  And
-- the validation predictor's hand-off: workload.sampling on the V0 sampler
-- of the case's source.version.
local t = require "tap"
local gp = require "gpuplan"
local infer = require "gpuplan.infer"

-- Qwen2.5-7B (catalog: vocabulary 152064) on an A100 SXM4 80GB, one
-- sequence, the Qwen2.5 speed benchmark's row at input 1.
local function run(extra)
  local a = { model = "qwen2.5-7b", gpu = "a100-sxm-80gb", weights = "bf16", runtime = "vllm",
              batch = 1, input = 1, output = 2048 }
  for k, v in pairs(extra or {}) do a[k] = v end
  return infer.infer(a)
end
local row = t.op   -- the phase's op row of that name (tap)

-- The counts, by hand from the sampler.py of each release (the table's
-- comment lists the ops): penalties 20 kernels at 0.4.2-0.4.3, 22 from
-- 0.5.0 (the prompt and output token tensors' two copies, greedy's too
-- before vllm PR #5289); top_p 15 to 0.6.1, 13 from 0.6.2 (vllm PR
-- #8619's one-scatter unsort); random 2 (exponential_, div_).  Exact.
local function k(stages, v)
  return (infer.v0_sampler_kernels(assert(infer.sampling_stages(stages)), v))
end
t.is(k("random,top_p,penalties", "0.4.2"), 20 + 15 + 2, "0.4.2, the Qwen2 benchmark's settings: 37")
t.is(k("random,top_p,penalties", "0.6.3"), 22 + 13 + 2, "0.6.3, the Qwen2.5 script's settings: 37")
t.is(k("random,top_p,penalties", "0.5.4"), 22 + 15 + 2, "0.5.4 (between the two merges): 39")
t.is(k("penalties", "0.4.3"), 20, "0.4.3: penalties 20 (the token copies are greedy's too)")
t.is(k("penalties", "0.5.0"), 22, "0.5.0: penalties 22 (#5289: the token copies are theirs)")
t.is(k("top_p", "0.6.1"), 15, "0.6.1: top_p 15 (arange, scatter_, gather to unsort)")
t.is(k("top_p", "0.6.2"), 13, "0.6.2: top_p 13 (#8619: one scatter_)")
t.is(k({ "random" }, "0.6.3"), 2, "random alone: 2 (a Lua list)")
t.is(k("greedy", "0.6.3"), 0, "greedy: none")

-- Greedy is the price without the option: the same step, no row.
local base = run()
local greedy = run { sampling = "greedy" }
t.is(greedy.decode.time, base.decode.time, "sampling greedy: the decode step unchanged")
t.ok(not row(base.decode, "sample_ops"), "... and no sample_ops row")

-- One kernel of the 37 (0.6.3, random,top_p,penalties), by hand: a pass
-- over one sequence's 152064 fp32 logits, read and written, 152064 x 8 =
-- 1,216,512 B, at the A100's streaming rate 2039e9 x 0.85 = 1.73315e12 B/s
-- (catalog a100-sxm-80gb, ampere hbm 0.85): 0.70191 us, + ROOF_MEM_FILL
-- 3.9 us (engine/roofline.c) + the graph runtime's 1 us launch (catalog
-- archs.lua ampere graph_launch_overhead, as the "sample" row's) = 5.60191
-- us; 37 of them 207.271 us.  Exact to 1e-9 relative: the same sums.
local full = run { sampling = "random,top_p,penalties", vllm_version = "0.6.3" }
local s = row(full.decode, "sample_ops")
t.is(s.count, 37, "sample_ops: 37 kernels a step")
t.is(s.bytes, 152064 * 8, "... each over 152064 fp32 logits, read and written")
local one = 152064 * 8 / (2039e9 * 0.85) + 3.9e-6 + 1e-6
t.near(s.time, one, 1e-9, "... one kernel 5.602 us (bytes / rate + fill + launch)")
t.near(s.total, 37 * one, 1e-9, "... 37 of them 207.3 us")
-- Only that row moves: the decode step and the prefill step (which samples
-- the first token) each by its total.  A run naming a V0 release also
-- waits for V0's host work between steps (async_scheduling = false, said
-- by gp.infer), so it is compared with the greedy run that states it.
local base0 = run { async_scheduling = false }
t.near(full.decode.time - base0.decode.time, s.total, 1e-9, "the decode step grows by the row alone")
t.near(full.prefill.time - base0.prefill.time, row(full.prefill, "sample_ops").total, 1e-9,
       "the prefill step (it samples the first token) by its own row")
-- The batch multiplies the bytes, not the kernels: at batch 8 the same 37
-- kernels each move 8 x 1,216,512 B.
local b8 = run { batch = 8, sampling = "random,top_p,penalties", vllm_version = "0.6.3" }
t.is(row(b8.decode, "sample_ops").count, 37, "batch 8: still 37 kernels a step")
t.is(row(b8.decode, "sample_ops").bytes, 8 * 152064 * 8, "... each over 8 rows of logits")
t.ok(t.said(full, "sampling=random,top_p,penalties: 37 kernels a step beyond greedy sampling's "
            .. "(vLLM 0.6.3's V0 sampler, outside the CUDA graph)", true),
     "the assumed line says the count")

-- Refused, by name: another runtime (the sampler counted is vLLM V0's), no
-- release, a release not counted (V1's 0.8.0, a minor-only 0.6), an
-- unknown stage, a release without settings, eager mode, the MoE serving
-- model's own steps.
local P = "random,top_p,penalties"
t.raises(function() run { runtime = "sglang", sampling = P, vllm_version = "0.6.3" } end,
         "sampling random,top_p,penalties is priced for vLLM V0's sampler: --runtime vllm only "
           .. "(got runtime sglang)", "another runtime: refused", true)
t.raises(function() run { sampling = P } end, "give vllm_version, the vLLM release whose V0 sampler runs it",
         "no release: refused", true)
t.raises(function() run { sampling = P, vllm_version = "0.8.0" } end,
         "counted for releases 0.4.2 to 0.6.3 only", "0.8.0 (V1's sampler): refused", true)
t.raises(function() run { sampling = P, vllm_version = "0.6" } end,
         "counted for releases 0.4.2 to 0.6.3 only (X.Y.Z)", "0.6: refused", true)
t.raises(function() run { sampling = "random,min_p", vllm_version = "0.6.3" } end,
         "sampling: unknown stage 'min_p' (expected greedy, or a list of random, top_p, penalties)",
         "an unknown stage: refused", true)
t.raises(function() run { vllm_version = "0.6.3" } end, "says whose sampler runs sampling, which is greedy",
         "a release without sampling: refused", true)
t.raises(function() run { sampling = P, vllm_version = "0.6.3", enforce_eager = true } end,
         "priced behind a CUDA graph's forward only", "enforce_eager: refused", true)
t.raises(function() run { model = "deepseek-v3", gpu = "h200-sxm", gpus = 16, ep = 16,
                          sampling = P, vllm_version = "0.6.3" } end,
         "the MoE serving model (chosen by ep = 16) prices its own steps", "the MoE serving model: refused", true)

-- The predictor: a Qwen2.5 speed-benchmark row states the script's
-- settings (workload.sampling) and its release (source.version 0.6.3): the
-- vllm profile hands the release on and the case is priced with the 37
-- kernels; a V1 release is refused by gp.infer, not priced greedy.
do
  local predict = require "gpuplan.predict.infer"
  local function case(version, sampling)
    -- Qwen2.5-7B-Instruct's config.json: 28 layers, hidden 3584, 28
    -- query heads over 4 KV heads, MLP 18944, vocabulary 152064
    local m = { layers = 28, hidden = 3584, heads = 28, kv_heads = 4, ffn_hidden = 18944,
                ffn_gated = true, vocab = 152064, tied_embeddings = false, max_seq = 32768 }
    return { id = "sampler-" .. version, kind = "infer", model = m, hardware = { gpu = "a100-sxm-80gb", gpus = 1 }, parallel = { tp = 1 },
             workload = { weight_dtype = "bf16", input_len = 1, output_len = 2048, concurrency = 1,
                          num_requests = 1, sampling = sampling, framework = "vllm" },
             measured = { metric = "output_tokens_per_s" },
             source = { title = "Qwen2.5 speed benchmark, vLLM", version = version } }
  end
  local with = assert(predict(case("0.6.3", { "random", "top_p", "penalties" }), gp.catalog()))
  local without = assert(predict(case("0.6.3", nil), gp.catalog()))
  local said = false
  for _, d in ipairs(with.defaults) do
    said = said or d:find("sampling=random,top_p,penalties: 37 kernels", 1, true) ~= nil
  end
  t.ok(said, "the case is priced with 0.6.3's 37 kernels, said in its defaults")
  t.ok(with.value < without.value, "... and predicts fewer tokens/s than greedy")
  local r, why = predict(case("0.8.0", { "penalties" }), gp.catalog())
  t.ok(r == nil and why:find("give vllm_version", 1, true),
       "a V1 release (0.8.0) stating sampling: refused, not priced greedy")
  -- The case reader: workload.sampling is a list of the stages; another
  -- name is refused naming the field.
  local c = case("0.6.3", { "random", "top_p", "penalties" })
  c.measured.value, c.measured.unit = 84.28, "tokens/s"
  c.source.where = "7B (vLLM) table"
  local okr, cases = t.read_case(c)
  t.ok(okr and cases[1].workload.sampling[3] == "penalties", "the reader takes workload.sampling")
  c.workload.sampling = { "random", "min_p" }
  local okb, e = t.read_case(c)
  t.ok(not okb and e:find("workload.sampling", 1, true) and e:find("min_p", 1, true),
       "an unknown stage in workload.sampling: refused naming the field")
end

t.done_testing()
