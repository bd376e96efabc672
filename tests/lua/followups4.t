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
  -- what it answers is unchanged: 2 images of Qwen2.5-VL's default
  -- 448 px (catalog image_size) at patch 14, merge 2 are
  -- 2 x (448 / 28)^2 = 512 tokens
  t.is(gp.vlm.media(m, { images = 2 }).tokens, 512, "vlm.media: 2 default images are 512 tokens")
end

t.done_testing()
