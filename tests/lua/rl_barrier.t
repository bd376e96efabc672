-- gp.rl: a synchronous rollout waits for its slowest engine.  The driver
-- gathers every engine's batch before the next phase (NeMo RL's generate:
-- ray.get over every DP shard), so the rollout lasts until the longest of
-- all the step's responses, not the longest of one engine's; one step
-- off-policy the engines take new prompts as theirs end.  Run with
-- ./gpuplan run tests/lua/rl_barrier.t.
local t = require "tap"
local gp = require "gpuplan"

local with, phase = t.with, t.phase

local H = t.harmonic -- H_n, the n-th harmonic number

-- Llama 3.2 1B on 8 H100s, colocated: 8 engines of one GPU, 64 prompts x
-- 8 = 512 samples, 64 an engine.  Exponential lengths of mean 200 clipped
-- at 4096: the scale theta solves theta (1 - e^{-4096/theta}) = 200, so
-- theta = 200 (1 + 1.3e-9); the expected longest of n is theta H_n
-- (Renyi), far below the clip.  Colocated the step waits for the longest
-- of all 512: 200 H_512 = 1363.2 tokens; one engine's 64 alone would end
-- at 200 H_64 = 948.8.  Tolerance 1e-6 relative: theta's 1.3e-9 and the
-- engine's asymptotic H_n beyond 64 (error ~1/n^4).  response_clip 0:
-- the exponential alone, no share cut at the limit beside its own
-- e^{-4096/200}.
local base0 = { model = "llama3.2-1b", gpu = "h100-sxm", gpus = 8, prompts = 64, group = 8,
                prompt_len = 256, response_len = 200, response_max = 4096 }
local base = with(base0, { response_clip = 0 })
local r = gp.rl(base)
t.is(r.rollout.engines, 8, "8 engines")
t.is(r.rollout.samples, 64, "64 samples an engine")
t.near(r.rollout.longest, 200 * H(512), 1e-6,
       "colocated: the rollout runs to the longest of all 512 responses")
t.ok(r.rollout.longest > 200 * H(64) * 1.4, "well past one engine's longest of 64")

-- Separate pools one step off-policy (staleness 1, the default): 4
-- engines of one GPU, 128 samples each, no barrier between them: the
-- longest of an engine's 128, 200 H_128 = 1087.4.
local rs = gp.rl(with(base, { rollout_gpus = 4 }))
t.is(rs.rollout.samples, 128, "4 rollout engines: 128 samples each")
t.near(rs.rollout.longest, 200 * H(128), 1e-6,
       "one step off-policy: an engine's own longest of 128")
-- Without staleness the pools wait for each other: the barrier again.
local r0 = gp.rl(with(base, { rollout_gpus = 4, staleness = 0 }))
t.near(r0.rollout.longest, 200 * H(512), 1e-6,
       "staleness 0: the longest of all 512 again")
-- The same engines' decode: the barrier's run is longer by the tail the
-- slowest engine decodes alone.
t.ok(phase(r0, "rollout").seconds > phase(rs, "rollout").seconds,
     "and its rollout is the longer")

-- A cache too small for all of an engine's samples: vLLM's scheduler,
-- simulated with K = 64 representatives at the quantiles (rollout.c), ends
-- when its longest one does, the length whose survival is 1 / 2K:
-- theta ln 128.  Synchronous, the slowest engine then decodes on alone to
-- the longest of all 512: theta (H_512 - ln 128) steps more.  Mean 1000
-- clipped at 16384: theta = 1000 (1 + 8e-8); 1e-6 relative.  The
-- exponential alone again (response_clip 0).  One step off with refits
-- that wait for the engines (refit_drain), so that each step's batch
-- drains alone, as the barrier's does; without it the next step's groups
-- would enter under the tail (rl_stale.t).
local big = { model = "llama3.2-1b", gpu = "h100-sxm", gpus = 16, prompts = 64, group = 8,
              prompt_len = 256, response_len = 1000, response_max = 16384, rollout_gpus = 8,
              rollout_memory = 0.06, response_clip = 0 }
local q1 = gp.rl(with(big, { refit_drain = true }))
local q0 = gp.rl(with(big, { staleness = 0 }))
t.ok(q1.rollout.queued and q1.rollout.preempted > 0 and q0.rollout.preempted > 0,
     "rollout_memory 0.06: the engine's scheduler evicts and readmits")
t.near(q1.rollout.steps, 1000 * math.log(128), 1e-6,
       "staleness 1: the scheduler's last representative, theta ln 128 steps")
t.near(q0.rollout.steps - q1.rollout.steps, 1000 * (H(512) - math.log(128)),
       -- each step count to 1e-6 relative: their difference to
       -- 1e-6 x 1000 H_512 tokens
       1e-6 * H(512) / (H(512) - math.log(128)),
       "staleness 0: theta (H_512 - ln 128) steps more, alone")
t.ok(phase(q0, "rollout").seconds > phase(q1, "rollout").seconds, "and the rollout longer")

-- The default: a share c = 0.01 of the responses never ends and is cut at
-- the limit (rl.RESPONSE_CLIP; at most response_len / (2 response_max) =
-- 200 / 8192 = 0.024, so 0.01).  The rest are exponential with the mean
-- that keeps the whole at 200: mu_b = (200 - 0.01 x 4096) / 0.99 =
-- 160.646, theta = mu_b (e^{-4096/160.6} = 8e-12).  The longest of n is
-- the limit unless none of the n is cut, q = 0.99^n:
-- 4096 (1 - q) + q theta H_n.  Colocated, n = 512: q = 0.005822, theta
-- H_512 = 1095.4, 4078.5 tokens; one step off-policy an engine's 128: q
-- = 0.2762, theta H_128 = 872.8, 3205.6.  Tolerance 1e-6 relative, as
-- above.
local function cut(n)
  local c, mub = 0.01, (200 - 0.01 * 4096) / 0.99
  local q = (1 - c) ^ n
  return 4096 * (1 - q) + q * mub * H(n)
end
local d = gp.rl(base0)
t.is(d.response_clip, 0.01, "response_clip 0.01 by default with exp lengths")
t.like(table.concat(d.defaults, ","), "response_clip=0.01 (assumed: a share of the responses "
  .. "never ends", "said among the defaults", true)
t.near(d.rollout.longest, cut(512), 1e-6,
       "colocated: the longest of 512 is the limit but for 0.99^512")
local ds = gp.rl(with(base0, { rollout_gpus = 4 }))
t.near(ds.rollout.longest, cut(128), 1e-6,
       "one step off-policy: an engine's 128, 0.99^128 of them all short")
t.ok(phase(d, "rollout").seconds > phase(r, "rollout").seconds,
     "the cut responses lengthen the rollout")
-- The default never puts more than half the mean's tokens at the limit:
-- mean 20 of 4096 gives c = 20 / 8192.
local s20 = gp.rl(with(base0, { response_len = 20 }))
t.near(s20.response_clip, 20 / 8192, 1e-12, "short responses: c = mean / (2 limit)")
t.raises(function() gp.rl(with(base, { response_clip = 1 })) end,
         "rl: response_clip must be a share in [0, 1) (got 1)", "a share below 1", true)
t.raises(function() gp.rl(with(base, { response_clip = 0.1 })) end,
         "rl: response_clip 0.1 puts 409.6 tokens a response at response_max 4096, above "
         .. "response_len 200", "no more at the limit than the mean", true)
t.raises(function() gp.rl(with(base, { response_clip = 0.01, response_dist = "uniform",
                                       response_len = 3000 })) end,
         "rl: response_clip needs exp lengths, a limit above the mean (got uniform)", "exp only", true)
-- A mean of one token: the responses that end must average at least one
-- (c max + (1 - c) mu_b = 1 with mu_b >= 1 gives c = 0), so the default
-- cuts none, and a share given is refused for what it leaves them
-- (0.01 x 2 = 0.02 tokens at the limit, 0.98 for the other 0.99).
local one = gp.rl(with(base0, { response_len = 1, response_max = 2 }))
t.is(one.response_clip, 0, "response_len 1: the default cuts none at the limit")
t.raises(function() gp.rl(with(base0, { response_len = 1, response_max = 2,
                                        response_clip = 0.01 })) end,
         "rl: response_clip 0.01 puts 0.02 tokens a response at response_max 2, leaving the "
         .. "responses that end a mean under one token (response_len 1)",
         "a share that leaves the rest under one token", true)

t.done_testing()
