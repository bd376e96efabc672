-- A step of several pipeline schedule calls (gp.train's pp_microbatches;
-- engine/train.c step_sum): NeMo AutoModel's benchmark loop
-- (nemo_automodel/recipes/llm/benchmark.py run_benchmark at v0.5.0) runs
-- "ga_steps = global_batch_size // (local_batch_size * dp_size)" passes,
-- each a "self.pp.info.schedule.step(" over the local batch's micro-batches,
-- so each pass fills and drains the pipeline: the bubble comes once a call,
-- where one Megatron-style schedule over the step's micro-batches has one.
-- Run with ./gpuplan run tests/lua/pp_microbatches.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(15)

local function part(r, n)
  for _, p in ipairs(r.parts) do if p.name == n then return p.seconds end end
  return 0
end

-- Llama 3 8B on 8 H100s, PP 4 x VP 2, dp 2, micro-batch 1, global batch
-- 32: 32 / (2 x 1) = 16 micro-batches a step.
local function job(x)
  return t.with({ model = "llama3-8b", gpu = "h100-sxm", gpus = 8, pp = 4, vpp = 2,
                  seq = 4096, batch = 1, global_batch = 32, zero = 1 }, x or {})
end
local one = gp.train(job())
local b1 = part(one, "bubble")
t.ok(b1 > 0, "one call: a bubble")

-- 4 micro-batches a call: 16 / 4 = 4 calls, each the one call's fill and
-- drain ((p - 1) t / v and the fill's transfers do not depend on m): 4
-- times the bubble, the rest of the step unchanged.  1e-9: the engine's
-- own product of the same term.
local four = gp.train(job { pp_microbatches = 4 })
t.near(part(four, "bubble"), 4 * b1, 1e-9, "4 calls: 4 times the bubble")
t.near(four.step_s - one.step_s, 3 * b1, 1e-9, "4 calls: the step 3 bubbles longer")
-- 8 a call: 2 calls.
t.near(part(gp.train(job { pp_microbatches = 8 }), "bubble"), 2 * b1, 1e-9,
       "2 calls: twice the bubble")
-- 16 a call is the step's all: one call, as without the option.
t.is(gp.train(job { pp_microbatches = 16 }).step_s, one.step_s, "16 a call: one call")
-- No pipeline: nothing to fill.
local function flat(x)
  return t.with({ model = "llama3-8b", gpu = "h100-sxm", gpus = 2, seq = 4096, batch = 1,
                  global_batch = 32, zero = 1 }, x or {})
end
t.is(gp.train(flat { pp_microbatches = 4 }).step_s, gp.train(flat()).step_s,
     "pp 1: no bubble to repeat")

-- Refused: a count that does not divide the step's micro-batches, and a
-- negative one.
t.raises(function() gp.train(job { pp_microbatches = 5 }) end,
         "pp_microbatches 5 does not divide", "5 of 16: refused", true)
t.raises(function() gp.train(job { pp_microbatches = -1 }) end,
         "pp_microbatches", "negative: refused", true)

-- A schedule's own rules hold for each call's micro-batches, not the
-- step's: 16 a step in calls of 2 interleave 2 micro-batches over pp 4
-- (not a multiple of pp: the warning), where calls of 8 are (none).
local function warned(r)
  for _, w in ipairs(r.warnings) do
    if w == "microbatches_not_multiple_of_pp" then return true end
  end
  return false
end
t.ok(warned(gp.train(job { pp_microbatches = 2 })) and not warned(gp.train(job { pp_microbatches = 8 })),
     "interleaved: 2 a call over pp 4 warns, 8 a call does not")
-- DualPipe feeds each call's micro-batches from both ends: at least 2 x pp
-- = 8 a call at pp 4; a step of 64 / (1 x 1) = 64 in calls of 4 feeds it 4.
local function dual(x)
  return t.with({ model = "llama3-8b", gpu = "h100-sxm", gpus = 8, pp = 4, schedule = "dualpipe",
                  seq = 4096, batch = 1, global_batch = 64, zero = 1 }, x or {})
end
t.raises(function() gp.train(dual { pp_microbatches = 4 }) end,
         "got 4 (pp_microbatches)", "dualpipe: 4 a call at pp 4 refused", true)
t.ok(gp.train(dual { pp_microbatches = 8 }).step_s > 0, "dualpipe: 8 a call at pp 4 runs")

-- Without a pipeline there is no schedule to call: pp 1 takes a count that
-- does not divide its step and changes nothing (it was refused).
t.is(gp.train(flat { pp_microbatches = 3 }).step_s, gp.train(flat()).step_s,
     "pp 1: a count of 3 against 16 a step, not refused")

-- The layout search leaves out the pipelined layouts whose step the calls
-- do not divide, where it stopped at the first layout it met (pp 1
-- among them).  Llama 3 8B on 16 GPUs, tp 1, pp 1, 2, 4, global batch
-- 32, micro-batches 1 or 2: 32 / (dp x mb) a step with dp = 16 / pp --
--   pp 1: 2 (mb 1), 1 (mb 2)   no pipeline: both kept
--   pp 2: 4, 2                 calls of 4: 4 kept, 2 left out
--   pp 4: 8, 4                 calls of 4: both kept
-- 6 layouts without it, 5 with 4 a call; with 3 a call the pp 1 two.
local rule = { model = "llama3-8b", gpu = "h100-sxm", gpus = 16, seq = 4096, global_batch = 32,
               tp_max = 1, pp_max = 4, micro_batch = { 1, 2 }, recompute = { "full" },
               schedule = { "1f1b" }, top = 100, bound = false, scaling = false }
local function layouts(x) return gp.sweep(t.with(rule, x)).stats["h100-sxm"].layouts end
t.is(layouts(), 6, "plan: 6 layouts")
t.is(layouts { pp_microbatches = 4 }, 5, "plan, 4 a call: pp 2 at mb 2 (2 a step) left out")
t.is(layouts { pp_microbatches = 3 }, 2, "plan, 3 a call: the pp 1 layouts only")
