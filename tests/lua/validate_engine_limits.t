-- A serving case's engine limits (validation/SCHEMA.md workload.max_batch,
-- workload.max_num_tokens, workload.kv_free_fraction; gp.infer's keys of
-- those names): the infer predictor hands what the case states to
-- gp.infer, the runtime profile fills only what it leaves (TensorRT-LLM:
-- kv_free_fraction 0.90, trtllm-bench's tuned batch and token limits), the
-- MoE serving model takes the batch cap and the KV fraction and refuses
-- the step budget by name, and another kind's case is refused.
-- Run: ./gpuplan run tests/lua/validate_engine_limits.t
local t = require "tap"
local gp = require "gpuplan"
local validate = require "gpuplan.validate"
local predict = require "gpuplan.predict.infer"
local cat = gp.catalog()
t.plan(43)

-- Llama 2 70B in fp8 on one H200, TensorRT-LLM (workload.framework), the
-- MLPerf Offline rows' mean lengths: 222 in, 292 out.
local function case(wl)
  local w = { weight_dtype = "fp8", input_len = 222, output_len = 292, framework = "trtllm" }
  for k, x in pairs(wl or {}) do w[k] = x end
  return { id = "limits", kind = "infer",
           model = { layers = 80, hidden = 8192, heads = 64, kv_heads = 8,
                     ffn_hidden = 28672, ffn_gated = true, vocab = 32000 },
           hardware = { gpu = "h200-sxm", gpus = 1 }, parallel = { tp = 1 },
           workload = w, measured = { metric = "output_tokens_per_s", value = 1 },
           source = { title = "TensorRT-LLM" } }
end
local function run(wl)
  local p = assert(predict(case(wl), cat))
  return p, gp.infer(p.job)
end
local function said(p, text)
  for _, d in ipairs(p.defaults) do
    if d:find(text, 1, true) then return d end
  end
end

local p0, r0 = run {}
-- Nothing stated: the profile's limits, each listed.
t.is(p0.job.kv_free_fraction, 0.90, "unstated kv_free_fraction: TensorRT-LLM's 0.90")
t.ok(said(p0, "kv_free_fraction=0.90 (kv_cache_free_gpu_mem_fraction default)"),
     "... listed as the default")
t.ok(said(p0, "max_batch=") and said(p0, "(trtllm-bench tuning heuristic)"),
     "unstated limits: trtllm-bench's heuristic, listed")
-- Hand derivation of a sequence's KV under GUARANTEED_NO_EVICT (the
-- profile's kv_policy max): K and V x 80 layers x 8 KV heads x 128 dims
-- x 1 B (fp8 KV, trtllm-bench's rule for fp8 weights) x (222 + 292)
-- tokens = 163,840 B x 514 = 84,213,760 B.  Exact: integer arithmetic.
t.is(r0.kv_per_seq, 2 * 80 * 8 * 128 * 514, "KV a sequence: 2 x 80 x 8 x 128 x 1 B x 514")

-- kv_free_fraction stated 0.95 (MLPerf's kvcache_free_gpu_mem_frac): the
-- pool is that share of the same free memory (the weights and the
-- workspace do not change: max_num_tokens is the heuristic's either way),
-- so budget(0.95) / budget(0.90) = 0.95 / 0.90 = 1.0556; tolerance 1e-9
-- relative, the floating point of one product each.
local p95, r95 = run { kv_free_fraction = 0.95 }
t.is(p95.job.kv_free_fraction, 0.95, "stated kv_free_fraction reaches gp.infer")
t.ok(not said(p95, "kv_free_fraction="), "... and is not listed as a default")
t.is(p95.job.max_num_tokens, p0.job.max_num_tokens, "... the step budget unchanged")
t.near(r95.kv_budget / r0.kv_budget, 0.95 / 0.90, 1e-9, "KV budget x 0.95 / 0.90")
t.ok(r95.kv_seqs > r0.kv_seqs, string.format("... more sequences held (%d > %d)",
     r95.kv_seqs, r0.kv_seqs))

-- max_batch stated 64, below what the KV holds (848 sequences of 84.2 MB
-- in the 0.90 pool, about 71.5 GB): the cap binds, the batch is 64; the
-- heuristic still fills the unstated max_num_tokens, the same one as with
-- nothing stated (its tuned budget does not read a given batch cap).
local p64, r64 = run { max_batch = 64 }
t.is(r64.batch, 64, "stated max_batch 64 caps the batch")
t.ok(r64.kv_seqs > 64, "... below what the KV holds (" .. r64.kv_seqs .. ")")
t.is(p64.job.max_num_tokens, p0.job.max_num_tokens, "... max_num_tokens the heuristic's")
t.ok(said(p64, "max_num_tokens=") and not said(p64, "max_batch="),
     "... the heuristic's entry names the token budget only")
t.ok(r64.tokens_per_s < r0.tokens_per_s, "... and fewer tokens/s than the larger batch")

-- max_num_tokens stated (the H200 class's 1536): taken, the heuristic
-- fills the batch cap alone.
local pt = run { max_num_tokens = 1536 }
t.is(pt.job.max_num_tokens, 1536, "stated max_num_tokens reaches gp.infer")
t.is(pt.job.max_batch, p0.job.max_batch, "... max_batch the heuristic's")
t.ok(said(pt, "max_batch=") and not said(pt, "max_num_tokens="),
     "... the heuristic's entry names the batch cap only")

-- All three stated: no profile entry for any of them.
local pall = run { max_batch = 2048, max_num_tokens = 3584, kv_free_fraction = 0.95 }
t.ok(not said(pall, "max_batch=") and not said(pall, "max_num_tokens=") and
     not said(pall, "kv_free_fraction="), "all three stated: none listed as a default")
t.is(pall.job.max_batch, 2048, "... max_batch 2048")

-- A vLLM case: a stated max_num_seqs wins over V1's 1024 on a large card.
do
  local c = case { max_batch = 128, framework = "vllm" }
  c.source = { title = "vLLM" }
  local p = assert(predict(c, cat))
  t.is(p.job.max_batch, 128, "vLLM: stated max_batch wins over max_num_seqs' default")
  t.ok(not said(p, "max_batch=1024"), "... the default not listed")
end

-- gp.infer's own refusal reaches the case: kv_free_fraction 0 is no pool.
do
  local p, why = predict(case { kv_free_fraction = 0 }, cat)
  t.ok(p == nil and tostring(why):find("kv_free_fraction must be a number in (0, 1]", 1, true),
       "kv_free_fraction 0: not predicted, named: " .. tostring(why))
end

-- The MoE serving model (ep > 1): the KV fraction reaches it (the same
-- ratio, 0.95 / 0.90, of its budget: its runtime trtllm rule is 0.90),
-- the step budget is refused naming prefill_tokens.
do
  local function moe(wl)
    local c = case(wl)
    c.model = { layers = 32, hidden = 4096, heads = 32, kv_heads = 8, ffn_hidden = 14336,
                ffn_gated = true, vocab = 32000,
                moe = { experts = 8, top_k = 2, expert_ffn_hidden = 14336 } }
    c.hardware = { gpu = "h100-sxm", gpus = 8 }
    c.parallel = { tp = 8, ep = 8 }
    c.workload.batch = 32
    return c
  end
  local a = assert(predict(moe {}, cat))
  local b = assert(predict(moe { kv_free_fraction = 0.95 }, cat))
  t.near(gp.infer(b.job).kv_budget / gp.infer(a.job).kv_budget, 0.95 / 0.90, 1e-9,
         "MoE serving: the stated KV fraction's budget, x 0.95 / 0.90")
  local p, why = predict(moe { max_num_tokens = 4096 }, cat)
  t.ok(p == nil and tostring(why):find("max_num_tokens", 1, true) and
       tostring(why):find("prefill_tokens", 1, true),
       "MoE serving: max_num_tokens refused, naming prefill_tokens")
end

-- The case reader: the fields are an infer case's; a training case that
-- states one is refused naming it; a fraction above 1 is refused.
do
  -- tap's read_case: c read as `gpuplan validate` reads a file of it
  local read = t.read_case
  t.ok((read(case { max_batch = 2048, max_num_tokens = 3584, kv_free_fraction = 0.95 })),
       "an infer case with the three limits reads")
  local tr = case { max_batch = 8 }
  tr.kind, tr.workload.method = "train", "pretrain"
  tr.measured = { metric = "mfu", value = 0.4 }
  local ok, err = read(tr)
  t.ok(not ok and err:find("workload.max_batch", 1, true) and err:find("only infer cases", 1, true),
       "a train case's workload.max_batch: refused, naming it: " .. err)
  ok, err = read(case { kv_free_fraction = 1.5 })
  t.ok(not ok and err:find("kv_free_fraction", 1, true), "kv_free_fraction 1.5: refused: " .. err)
  -- its range is (0, 1], 0 excluded (options.lua range gt): the reader
  -- took 0 (the schema read [0, 1]) and the case went on to a reason
  -- naming no line, where 1.5 is refused here naming the field
  ok, err = read(case { kv_free_fraction = 0 })
  t.ok(not ok and err:find("field 'workload.kv_free_fraction': must be positive, got 0", 1, true),
       "kv_free_fraction 0: refused by the reader, naming the field: " .. err)
  ok, err = read(case { max_num_tokens = 0 })
  t.ok(not ok and err:find("max_num_tokens", 1, true), "max_num_tokens 0: refused: " .. err)
  -- workload.scheduler_steps (vLLM V0's --num-scheduler-steps): a count,
  -- an infer case's only
  t.ok((read(case { scheduler_steps = 7 })), "an infer case with scheduler_steps 7 reads")
  ok, err = read(case { scheduler_steps = 0 })
  t.ok(not ok and err:find("scheduler_steps", 1, true), "scheduler_steps 0: refused: " .. err)
  local ts = case { scheduler_steps = 7 }
  ts.kind, ts.workload.method = "train", "pretrain"
  ts.measured = { metric = "mfu", value = 0.4 }
  ok, err = read(ts)
  t.ok(not ok and err:find("workload.scheduler_steps", 1, true)
       and err:find("only infer cases", 1, true),
       "a train case's workload.scheduler_steps: refused, naming it: " .. err)
end

-- The shipped MLPerf rows state what their configs state (the config
-- files quoted in their notes): B200 2048 / 3584 / 0.95, H100 PP2
-- 1024 / 1024 / 0.95, the v4.x rows gpu_batch_size as the cap and 0.90.
do
  local want = {
    ["mlperf50-nvidia-llama2-70b-b200x1-tp1-fp4-offline"] = { 2048, 3584, 0.95 },
    ["mlperf50-nvidia-llama2-70b-h100x8-pp2-offline"] = { 1024, 1024, 0.95 },
    ["mlperf50-nvidia-llama2-70b-h200x8-tp1-offline"] = { 2048, 1536, nil },
    ["mlperf40-nvidia-llama2-70b-h100x8-tp2-offline"] = { 896, nil, 0.90 },
    ["mlperf41-nvidia-llama2-70b-h200x8-tp1-offline"] = { 806, nil, 0.90 },
  }
  local seen = 0
  for _, c in ipairs(validate.read("validation/cases.json")) do
    local w = want[c.id]
    if w then
      seen = seen + 1
      local wl = c.workload
      t.ok(wl.max_batch == w[1] and wl.max_num_tokens == w[2] and wl.kv_free_fraction == w[3]
           and wl.batch == nil, c.id .. ": the config's limits, no fixed batch")
    end
  end
  t.is(seen, 5, "the five MLPerf rows checked are shipped")
end



-- A shipped case whose notes quote its engine config's multi-step
-- scheduling ('num_scheduler_steps: N', vLLM V0's --num-scheduler-steps)
-- states it as workload.scheduler_steps N (SCHEMA.md), since the field
-- decides whether V0's host work between steps is priced a step: the
-- AMD MLPerf v5.1 rows quote 11 (MI300X) and 7 (both MI325X machines),
-- Dell's MLPerf v6.0 MI300X row 11.
do
  local seen = 0
  for _, c in ipairs(validate.read("validation/cases.json")) do
    local n = tostring(c.notes or ""):match("'num_scheduler_steps: (%d+)'")
    if n then
      seen = seen + 1
      t.is(c.workload.scheduler_steps, tonumber(n),
           c.id .. ": workload.scheduler_steps is the config's num_scheduler_steps " .. n)
    end
  end
  t.is(seen, 4, "the three AMD MLPerf v5.1 rows and Dell's v6.0 MI300X row quote num_scheduler_steps")
end
