-- gp.rl's response_min: a source that bounds every response between two
-- lengths gives the bottom as response_min and the top as
-- response_max; the lengths are uniform
-- between them and the mean is their middle (rl_lengths' uniform on
-- [2 mean - max, max]).
-- Run with ./gpuplan run tests/lua/rl_range.t.
local t = require "tap"
local gp = require "gpuplan"
local validate = require "gpuplan.validate"

local with = t.with

local base = { model = "llama3-8b", gpu = "a100-sxm-80gb", gpus = 8, zero = 3, algo = "ppo",
               prompts = 64, group = 1, prompt_len = 150 }

-- 100..300 is uniform on [2 x 200 - 300, 300]: the same job as the mean
-- 200 with the limit 300 and uniform lengths, to the bit.
local r = gp.rl(with(base, { response_min = 100, response_max = 300 }))
local u = gp.rl(with(base, { response_len = 200, response_max = 300, response_dist = "uniform" }))
t.is(r.response_len, 200, "the range's middle is the mean: (100 + 300) / 2")
t.is(r.response_dist, "uniform", "a range is uniform lengths")
t.is(r.response_max, 300, "its top is the longest response")
t.is(r.response_min, 100, "and its bottom the shortest (2 x 200 - 300)")
t.is(r.step_s, u.step_s, "100..300 prices as mean 200, max 300, uniform")
-- E[L^2] of uniform [a, b] = (a^2 + a b + b^2) / 3 = (1e4 + 3e4 + 9e4) / 3
-- = 43333.33; tolerance 1e-9 relative (the engine's own sum of doubles).
t.near(r.response_m2, 130000 / 3, 1e-9, "E[L^2] of uniform 100..300")
-- The mean as given, when it is the middle, changes nothing.
t.is(gp.rl(with(base, { response_min = 100, response_max = 300, response_len = 200 })).step_s,
  r.step_s, "response_len at the middle agrees with the range")
-- An odd sum puts the mean on a half token: 101..300, mean 200.5.
t.is(gp.rl(with(base, { response_min = 101, response_max = 300 })).response_len, 200.5,
  "101..300: mean 200.5")
-- A range of one length is fixed lengths.
t.is(gp.rl(with(base, { response_min = 300, response_max = 300 })).response_dist, "fixed",
  "300..300: every response 300 tokens")
-- The longer range is the longer rollout.
t.ok(gp.rl(with(base, { response_min = 100, response_max = 500 })).step_s > r.step_s,
  "100..500 takes longer than 100..300")

-- pad_batch (OpenRLHF's micro-batches, padded to their own longest): the
-- training sequence is the prompt and the expected longest of a
-- micro-batch's responses, uniform 100..300 at batch 8: 100 + 200 x 8 / 9
-- = 277.78, so 150 + 277.78 = 427.78 tokens (tolerance 1e-12 relative:
-- the engine's own expression); the attention stays the real tokens'.
local pb = gp.rl(with(base, { response_min = 100, response_max = 300, batch = 8,
                              pad_batch = true }))
t.near(pb.train_seq, 150 + 100 + 200 * 8 / 9, 1e-12, "pad_batch: prompt + longest of 8")
t.ok(pb.step_s > gp.rl(with(base, { response_min = 100, response_max = 300, batch = 8 })).step_s,
  "padded micro-batches take longer than sequences at their mean")
-- The forwards run on the generated batch as generate() returned it: with
-- static batches of 16 (hf) the padded width is the longest of 16 (100 +
-- 200 x 16 / 17 = 288.2), wider than a training micro-batch's of 8: the
-- log-probability pass lengthens, the update does not.
local hf = with(base, { response_min = 100, response_max = 300, batch = 8, pad_batch = true,
                        rollout_engine = "hf", model = "llama2-7b", zero = 2,
                        gpus = 8, prompts = 64 })
local h16 = gp.rl(with(hf, { generation_batch = 16 }))
local h8 = gp.rl(with(hf, { generation_batch = 8 }))
t.ok(t.phase(h16, "logprob").seconds > t.phase(h8, "logprob").seconds,
  "forwards at the generated batch's longest: 16 a batch pads wider than 8")
t.is(t.phase(h16, "actor_update").seconds, t.phase(h8, "actor_update").seconds,
  "the update pads to its own micro-batch's longest either way")
t.raises(function() gp.rl(with(base, { response_min = 100, response_max = 300, pad = true,
                                       pad_batch = true })) end,
  "pad_batch pads each micro-batch to its own longest; pad (to the limit) contradicts it",
  "pad_batch or pad", true)
t.raises(function() gp.rl(with(base, { response_min = 100, response_max = 300,
                                       pack_tokens = 4096, pad_batch = true })) end,
  "pad_batch pads each micro-batch to its own longest; pack_tokens (packed to their lengths) "
    .. "contradicts it", "pad_batch or pack_tokens", true)

t.raises(function() gp.rl(with(base, { response_min = 100 })) end,
  "rl: response_min is the bottom of a range of response lengths: it needs response_max, its top",
  "a range needs its top", true)
t.raises(function() gp.rl(with(base, { response_min = 400, response_max = 300 })) end,
  "rl: response_min 400 is above response_max 300", "bottom above top", true)
t.raises(function() gp.rl(with(base, { response_min = 100, response_max = 300,
                                       response_dist = "exp" })) end,
  "rl: response_min states lengths uniform up to response_max; response_dist string 'exp' "
    .. "contradicts it", "a range is not exponential", true)
t.raises(function() gp.rl(with(base, { response_min = 100, response_max = 300,
                                       response_len = 150 })) end,
  "rl: response_len 150 is not the middle of response_min 100 and response_max 300",
  "a mean off the middle", true)
t.raises(function() gp.rl(with(base, { response_min = 100, response_max = 300,
                                       base_checkpoint = true })) end,
  "rl: base_checkpoint assumes the mean response; response_min and response_max state it",
  "the range states the mean", true)
t.raises(function() gp.rl(with(base, { response_min = 0, response_max = 300 })) end,
  "rl: response_min must be a whole number of tokens", "at least one token", true)

-- The case format: rl.response_min with rl.response_max and no mean
-- predicts with the range, uniform between them (the OpenRLHF 7B row's
-- placement and layout, its lengths restated as bounds on every
-- response; the shipped row gives the mean and the limit instead).
local cat = require("gpuplan.catalog").get()
for _, c in ipairs(validate.read("validation/cases.json")) do
  if c.id == "openrlhf-2024-ppo-llama2-7b-a100-8" then
    t.is(c.rl.response_min, nil, "the shipped 7B row states no range (its notes: a logged mean)")
    local r = t.with(c, {})
    r.rl = t.with(c.rl, { response_min = 100, response_max = 300 })
    r.rl.response_len = nil
    local row = validate.predict(r, cat)
    t.ok(row.predicted and not row.reason, "the row with a range is predicted")
    t.ok(not (row.defaults or ""):find("response_dist=exp", 1, true),
      "no exponential assumed for a stated range")
    t.ok(row.predicted < validate.predict(c, cat).predicted,
      "bounded at 300, its batches end sooner than under the exponential to 1024")
  end
end

t.done_testing()
