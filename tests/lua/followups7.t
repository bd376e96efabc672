-- followups7: hardening follow-ups.  Each section: the input, the old
-- answer, and what is checked.
local t = require "tap"
local gp = require "gpuplan"

-- 1. A MoE model's --target with no layout searched its colocated TP
-- instances with the serving model's steps, while gp.infer prices a MoE
-- model's TP replicas (no serving option) with gpuplan.infer's model: the
-- plan for mixtral-8x7b on h100-sxm at 1000 tokens/s said TP8 on 8 GPUs,
-- 60 sequences a GPU (480), 9672 tokens/s at a mean ITL of 49.8 ms, where
-- gp.infer of that deployment (gpus 8, tp 8, batch 480) gives 8647
-- tokens/s at 55.7 ms, past the limit.
-- Now such a candidate is priced with gpuplan.infer's model, so gp.infer
-- at the plan's GPUs, tp and batch answers the plan's tokens/s, mean ITL
-- and TTFT exactly (the same engine call: 1e-12, rounding only).
do
  local a = { model = "mixtral-8x7b", gpu = "h100-sxm" }
  -- (newuser9: the search tries TP1 up to two nodes, no longer only TP8
  -- and TP16: one TP2 replica on 2 GPUs delivers the 1000 tok/s)
  local p = gp.infer_plan(t.with(a, { target = 1000 }))
  t.is(p.layout, "TP2", "mixtral-8x7b on h100-sxm, 1000 tok/s: TP2 replicas")
  t.is(p.gpus, 2, "one replica of 2 GPUs")
  local r = gp.infer(t.with(a, { gpus = p.gpus, tp = 2, batch = p.batch }))
  t.ok(r.fits and r.replicas == 1, "plain gp.infer of the plan's deployment fits")
  t.near(r.tokens_per_s, p.tokens_per_s, 1e-12, "plan's tokens/s = gp.infer's")
  t.near(r.itl_load_s, p.itl_s, 1e-12, "plan's ITL = gp.infer's mean ITL (with prompts)")
  t.near(r.ttft_s, p.ttft_s, 1e-12, "plan's TTFT = gp.infer's")
  t.ok(p.itl_s <= 0.050, "within the 50 ms limit")
  -- one rule: the search's pick is what the fixed-TP plan gives
  local f = gp.infer_plan(t.with(a, { target = 1000, tp = 2 }))
  t.is(f.batch, p.batch, "the search's TP2 = the plan given tp = 2 (batch)")
  t.is(f.tokens_per_s, p.tokens_per_s, "the search's TP2 = the plan given tp = 2 (tokens/s)")
  -- a serving layout still wins where it delivers more from as many GPUs:
  -- qwen3-30b-a3b, 8 h100-sxm, EP8 against TP8 replicas (the TP route
  -- held to one node's TP, tp = 8, against the EP8 layout given)
  local q = { model = "qwen3-30b-a3b", gpu = "h100-sxm", target = 1000 }
  local e = gp.infer_plan(t.with(q, { ep = 8 }))
  local tp8 = gp.infer_plan(t.with(q, { tp = 8 }))
  t.is(e.gpus, tp8.gpus, "qwen3-30b-a3b: EP8 and TP8 replicas both take 8 GPUs")
  t.ok(e.layout ~= "TP8" and e.tokens_per_s > tp8.tokens_per_s,
       "the EP layout gives more tokens/s (" .. e.layout .. ")")
end

-- 3. Counts came back as Lua floats (205.0): gp.infer's decode.batch,
-- decode.tokens, prefill.tokens, ctx and every operator's count,
-- gp.train's tokens_per_step and memory.params / trainable, gp.rl's
-- rollout engines / samples / prompts / batch and its pools' and phases'
-- gpus.  A count held as a whole double is now an integer (the engine's
-- lgp_pushcount, as microbatches already was); a fractional one (a TP
-- GPU's share of a sequence) stays a float.
do
  local function int(v) return math.type(v) == "integer" end
  local r = gp.infer { model = "llama3-8b", gpu = "h100-sxm", gpus = 8 }
  t.ok(int(r.decode.batch) and int(r.decode.tokens) and int(r.decode.ctx),
       "gp.infer decode batch, tokens, ctx: integers (" .. tostring(r.decode.batch) .. ")")
  t.ok(int(r.prefill.tokens) and int(r.prefill.batch), "gp.infer prefill tokens, batch: integers")
  local allint = true
  for _, o in ipairs(r.ops) do allint = allint and int(o.count) end
  t.ok(allint, "gp.infer operators' counts: integers")
  local m = gp.infer { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 8, ep = 8 }
  t.ok(int(m.decode.batch) and int(m.decode.tokens) and int(m.prefill.tokens),
       "MoE gp.infer decode batch, tokens, prefill tokens: integers")
  -- one stream on a TP8 instance: 1/8 of a sequence a GPU, a share
  local c1 = gp.infer { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 8, tp = 8, ep = 8,
                        concurrency = 1 }
  t.is(c1.decode.batch, 0.125, "a TP8 GPU's share of one stream stays 1/8")
  local tr = gp.train { model = "llama3-8b", gpu = "h100-sxm", gpus = 16 }
  t.ok(int(tr.tokens_per_step) and int(tr.memory.params) and int(tr.memory.trainable),
       "gp.train tokens_per_step, memory.params, trainable: integers")
  t.is(string.format("%s", tr.tokens_per_step), "262144", "tokens_per_step prints as 262144")
  local rl = gp.rl { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 16, algo = "grpo" }
  t.ok(int(rl.rollout.engines) and int(rl.rollout.samples) and int(rl.rollout.prompts)
       and int(rl.rollout.batch), "gp.rl rollout engines, samples, prompts, batch: integers")
  t.ok(int(rl.pools.rollout.gpus) and int(rl.pools.train.gpus) and int(rl.phases[1].gpus),
       "gp.rl pools' and phases' gpus: integers")
  local mem = gp.memory { model = "llama3-8b", gpu = "h100-sxm", gpus = 8 }
  t.ok(int(mem.params) and int(mem.trainable), "gp.memory params, trainable: integers")
end

-- 4. gp.rl_job's step reached the engine's refusal (engine/rl.c rl_pools)
-- "the rollout engine's rollout_tp x rollout_pp = 4 does not divide the 6
-- GPUs of the rollout pool" for step{tp = 4}: neither rollout option was
-- given (the rollout's tp follows the actor's).  The step now says it in
-- what was given, as gp.rl does (its own check, newuser7).
do
  local a = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 14, algo = "grpo",
              rollout_gpus = 6 }
  local job = gp.rl_job(a)
  local ok, e = pcall(job.step, job, { tp = 4 })
  t.ok(not ok, "step{tp = 4} on a rollout pool of 6: refused")
  t.like(tostring(e), "step: the rollout engine's 4 GPUs (the actor's tp 4) do not divide "
    .. "rollout_gpus 6 (the rollout pool)", "names the actor's tp and rollout_gpus", true)
  t.ok(not tostring(e):find("rollout_pp", 1, true), "no rollout_pp, which nobody gave")
  -- gp.rl's words for the same job
  local okr, er = pcall(gp.rl, t.with(a, { tp = 4 }))
  t.like(tostring(er), "the rollout engine's 4 GPUs (the actor's tp 4) do not divide "
    .. "rollout_gpus 6 (the rollout pool)", "gp.rl says the same", true)
  t.ok(not okr, "gp.rl refuses it too")
  -- rollout_tp given in the step, on the colocated pools of 8
  local j8 = gp.rl_job { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, algo = "grpo" }
  ok, e = pcall(j8.step, j8, { tp = 2, rollout_tp = 3 })
  t.like(tostring(e), "step: the rollout engine's 3 GPUs (rollout_tp 3) do not divide gpus 8 "
    .. "(the colocated pools)", "a step's rollout_tp named as given", true)
  -- what divides still steps
  t.ok(job:step { tp = 2 }.step_s > 0, "step{tp = 2} on the pool of 6 still prices")
end

-- 5. A train, infer (one model or MoE serving), rl or collective case
-- whose hardware.gpu is no catalog card gave "unknown gpu 'x' (did you
-- mean ...)" ("rl: unknown gpu ..." for rl, "unknown gpu 'x'" for a
-- collective): neither the file nor the key.  Every predictor now says it
-- as the memory predictor does (followups6): the case's file, the case
-- and the key, from one helper (gpuplan.predict.case.gpu).
do
  local cjson = require "cjson"
  local scratch = t.scratch()
  local cat = gp.catalog()
  local all = gp.validate.read(require("gpuplan.config").root .. "/validation/cases.json")
  local function shipped(id)
    for _, c in ipairs(all) do if c.id == id then return c end end
  end
  for i, id in ipairs { "automodel-h100-llama31-70b-bf16-fsdp2-cp2",
                        "accelerate-opt30b-fp16-2xtitanrtx-cpu-offload",
                        "deepseek-day6-dsv3-h800-ep144-decode",
                        "dschat-readme-step3-opt66b-critic-opt350m-a100-80gb-64",
                        "coll-allgather-h100-sxm-128g-efa-256MiB-hyperpod" } do
    local c = shipped(id)
    t.ok(c ~= nil, id .. ": shipped")
    local raw = cjson.decode(cjson.encode(c))
    raw._file = nil
    raw.hardware.gpu = "x"
    local p = scratch.put("badgpu" .. i .. ".json", cjson.encode { raw })
    local row = gp.validate.predict(gp.validate.read(p)[1], cat)
    t.is(row.predicted, nil, c.kind .. " case with an unknown gpu: not priced")
    -- one line of JSON (cjson.encode): the field's line is 1
    local want = p .. ":1: case '" .. id .. "': field 'hardware.gpu': unknown gpu 'x' (did you mean "
    t.is((row.reason or ""):sub(1, #want), want, c.kind .. ": the reason names the file:line, case and key")
  end
  scratch.remove()
end

-- 6. A price's date was free text: date = "2026-13" or "last week" was
-- taken, and printed beside the price.  It is now a day (as a currency's
-- date), a month or a year, real ones, or "undated" (the shipped seed
-- guides'), refused at the entry's file:line otherwise
-- (tests/fixtures/catalog/semantic lines 48-49 hold the refusals).
do
  local schema = require "gpuplan.schema"
  local base = { id = "t/x/us", gpu = "h100-sxm", provider = "x", provider_kind = "guide",
                 region = "us", price = "$2/h", source = "t" }
  for _, d in ipairs { "2026-06-01", "2026-06", "2023", "undated", "2024-02-29" } do
    t.ok(pcall(schema.price.check, t.with(base, { date = d }), "price"), "date " .. d .. ": taken")
  end
  for _, d in ipairs { "2026-13", "2026-00", "last week", "2025-02-29", "26-06", "2026-6",
                       "2026-06-01T00:00" } do
    local ok, e = pcall(schema.price.check, t.with(base, { date = d }), "price")
    e = type(e) == "table" and (e.path .. ": " .. e.msg) or tostring(e)
    t.ok(not ok and e:find("price.date: expected a date as", 1, true),
         "date " .. d .. ": refused (" .. e .. ")")
  end
end

t.done_testing()
