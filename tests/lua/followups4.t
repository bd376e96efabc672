-- Hardening follow-ups left by the day's walks (newuser6, luawalk3,
-- review54): an inconsistency between two ways of asking the same
-- question, or a refusal that did not name what the user gave.  One
-- block a fix.  Run with ./gpuplan run tests/lua/followups4.t.
local t = require "tap"
local gp = require "gpuplan"

local check = t.raises_here

-- 1. gp.train_job{schedule = "dualpipe"} with no pipeline was taken
-- (its own layout unchecked until a step), where gp.train with the same
-- options refuses, and a job's vpp without pp is refused at once.
do
  local o = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, schedule = "dualpipe" }
  local want = "train: dualpipe needs an even pp of 2 or more and no vpp (got pp 1, vpp 1)"
  check(function() gp.train(o) end, want, "gp.train refuses dualpipe at pp 1")
  check(function() gp.train_job(o) end, want, "gp.train_job refuses it the same way")
  -- an even pipeline is taken, and the job's step prices as gp.train
  -- (the same C step: exact equality)
  local job = gp.train_job(t.with(o, { pp = 2, tp = 2 }))
  t.is(job:step {}.step_s, gp.train(t.with(o, { pp = 2, tp = 2 })).step_s,
    "gp.train_job at pp 2: its step is gp.train's")
end

-- 2. gp.vlm.tokens and gp.vlm.media refused a bad count as "images must
-- be a whole number >= 0", naming no function, where every other gp.*
-- refusal opens with its function's name.
do
  local m = gp.catalog():get("models", "qwen2.5-vl-7b")
  check(function() gp.vlm.tokens { model = "qwen2.5-vl-7b", images = -1 } end,
    "vlm.tokens: images must be a whole number >= 0 (got -1)", "vlm.tokens: a bad count, prefixed")
  check(function() gp.vlm.tokens { model = "llama3-8b", images = 1 } end,
    "vlm.tokens: llama3-8b has no vision tower", "vlm.tokens: a text model, prefixed")
  check(function() gp.vlm.media(m, { images = -1 }) end,
    "vlm.media: images must be a whole number >= 0 (got -1)", "vlm.media: a bad count, prefixed")
  check(function() gp.vlm.media(m, { images = 1, frame_size = 448 }) end,
    "vlm.media: frame_size 448 sizes video frames", "vlm.media: a misplaced size, prefixed")
  check(function() gp.vlm.tokens {} end, "vlm.tokens: model is required",
    "a message that had its prefix keeps one (not two)")
  -- a planner's call keeps the planner's name: gp.train's refusal of a
  -- frame size without frames opened with no function at all
  check(function() gp.train { model = "qwen2.5-vl-7b", gpu = "h100-sxm", gpus = 8,
                              frame_size = 448 } end,
    "train: frame_size 448 sizes video frames", "gp.train: a media refusal opens with train:")
  -- what it answers is unchanged: 2 images of Qwen2.5-VL's default
  -- 448 px (catalog image_size) at patch 14, merge 2 are
  -- 2 x (448 / 28)^2 = 512 tokens
  t.is(gp.vlm.media(m, { images = 2 }).tokens, 512, "vlm.media: 2 default images are 512 tokens")
end

-- 3. gp.memory took no system: its host fit was the card's default
-- node's (dgx-h100, 2 TB).  Llama 3.1 405B, ZeRO-3 params+optimizer
-- offload on 16 H100s holds 4058533888000 B a node of 8
-- (tests/lua/host_fit.t derives it): past 2e12 B, within a node table
-- of 8 TB = 8e12 B.
do
  local sys = {}
  for k, v in pairs(gp.catalog():get("systems", "dgx-h100")) do sys[k] = v end
  sys.id, sys.host_memory = "big-node", "8TB"
  local o = { model = "llama3.1-405b", gpu = "h100-sxm", gpus = 16, zero = 3,
              offload = "params+optimizer", stack = "deepspeed", recompute = "full", seq = 512,
              method = "full" }
  local r0 = gp.memory(o)
  t.ok(not r0.fits and r0.host_memory == 2e12 and r0.host_system == "dgx-h100",
    "gp.memory: the default node's 2 TB is short")
  local r1 = gp.memory(t.with(o, { system = sys }))
  t.ok(r1.fits and r1.host_memory == 8e12 and r1.host_system == "big-node"
    and r1.host_need == 4058533888000, "gp.memory{system = a node of 8 TB}: it holds the offload")
  t.is(gp.train(t.with(o, { system = sys })).fits, r1.fits, "... as gp.train with that node says")
  check(function() gp.memory(t.with(o, { system = "hgx-h800" })) end,
    "memory: system 'hgx-h800' holds h800-sxm, not h100-sxm", "a node of another card refused")
  check(function() gp.memory { model = "llama3-8b", gpu = "h100-sxm", method = "infer",
                               system = "dgx-h100" } end,
    "memory: system applies to training", "method infer reads no node: refused, not dropped")
end

-- 4. A script's model table took any mtp_layers, params_b and
-- active_params_b ("x", NaN, -1): the engine's reader ignored them while
-- validate's case reader and the listing read them.  Now checked as the
-- catalog's schema checks them, in the one reader every model table
-- passes (engine/lgp_model.c).
do
  local function model(k, v)
    local m = {}
    for key, x in pairs(gp.catalog():get("models", "llama3-8b")) do m[key] = x end
    m[k] = v
    return m
  end
  local function job(m) return { model = m, gpu = "h100-sxm", gpus = 8 } end
  check(function() gp.train(job(model("mtp_layers", "x"))) end,
    "train: model.mtp_layers must be a number (got string)", "mtp_layers 'x' refused")
  check(function() gp.train(job(model("mtp_layers", -1))) end,
    "model.mtp_layers must be an integer in 0..16777216 (got -1)", "mtp_layers -1 refused")
  check(function() gp.memory(job(model("params_b", 0 / 0))) end,
    "model.params_b must be a positive number of billions", "params_b NaN refused (gp.memory)")
  check(function() gp.train(job(model("active_params_b", -1))) end,
    "model.active_params_b must be a positive number of billions, at most 1e6 (got -1)",
    "active_params_b -1 refused")
  check(function() gp.infer { model = model("params_b", "x"), gpu = "h100-sxm" } end,
    "model.params_b must be a number (got string)", "gp.infer: the same reader")
  -- a valid value prices nothing: the step is the catalog model's (the
  -- same C step, exact)
  t.is(gp.train(job(model("params_b", 8.1))).step_s, gp.train(job("llama3-8b")).step_s,
    "a valid params_b changes nothing")
end

-- 5. job:step{seq = 4096} said "unknown field 'seq' (did you mean
-- 'ep'?)": seq is the job's option (gp.train_job's), not a layout's,
-- and the nearest layout name misled.  A misspelt step name keeps its
-- suggestion.
do
  local job = gp.train_job { model = "llama3-8b", gpu = "h100-sxm", gpus = 8 }
  check(function() job:step { seq = 4096 } end,
    "step: 'seq' is the job's, not a step's: give it where the job is made",
    "job:step{seq}: said to be the job's")
  check(function() job:step { tpp = 2 } end, "step: unknown option 'tpp' (did you mean 'tp'?)",
    "a misspelt step key keeps its suggestion")
  -- and given to the job it is taken (the test can fail): the job at
  -- seq 4096 prices as gp.train at seq 4096 (the same C step, exact)
  local j2 = gp.train_job { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, seq = 4096 }
  t.is(j2:step {}.step_s, gp.train { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, seq = 4096 }.step_s,
    "seq given to the job: the step is gp.train's at that seq")
end

t.done_testing()
