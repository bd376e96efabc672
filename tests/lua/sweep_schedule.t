-- The layout search over pipeline schedules: gp.sweep{schedule = {...}}
-- (plan --schedule) enumerates DualPipe's layouts by its rules -- an even
-- pp, an even count of at least 2 x pp micro-batches a step (DualPipe's
-- dualpipe.py: "assert num_chunks > 0 and num_chunks % 2 == 0 and
-- num_chunks >= num_ranks * 2") -- and prices each as gp.train does.
-- Run with ./gpuplan run tests/lua/sweep_schedule.t.
local t = require "tap"
local gp = require "gpuplan"
local sweep = require "gpuplan.sweep"

t.plan(19)

-- The rule, counted by hand.  qwen3-30b-a3b on 16 GPUs, tp 1, pp 1..4,
-- global batch 32, micro-batches 1 or 2: the micro-batches a step are
-- 32 / (dp x mb) with dp = 16 / pp.
--   pp 1: not DualPipe (pp >= 2)        pp 3: does not divide 16
--   pp 2, dp 8: mb 1 -> 4 (even, >= 4: kept); mb 2 -> 2 (< 4)
--   pp 4, dp 4: mb 1 -> 8 (even, >= 8: kept); mb 2 -> 4 (< 8)
-- so two layouts, pp 2 and pp 4 at mb 1 (layouts counts what divides,
-- before memory: neither fits an H100, which does not matter here).
local rule = { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 16, seq = 4096,
               global_batch = 32, tp_max = 1, pp_max = 4, micro_batch = { 1, 2 },
               recompute = { "full" }, schedule = { "dualpipe" }, top = 100,
               bound = false, scaling = false }
local r = gp.sweep(rule)
t.is(r.stats["h100-sxm"].layouts, 2, "dualpipe: 2 layouts of 16 GPUs at global batch 32")
-- global batch 24: pp 2 mb 1 gives 3 (odd), pp 4 mb 1 gives 6 (< 8), the
-- rest do not divide: none.
t.is(gp.sweep(t.with(rule, { global_batch = 24 })).stats["h100-sxm"].layouts, 0,
     "an odd or short count of micro-batches: none")
-- gp.train refuses the same layouts by the same rule, naming it.
local okr, er = pcall(gp.train, { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 16,
  pp = 4, seq = 4096, global_batch = 16, schedule = "dualpipe", method = "pretrain" })
t.like(not okr and tostring(er) or "", "even count of at least 2 x pp = 8 a step",
       "gp.train: 4 micro-batches at pp 4 refused, naming the rule")

-- A schedule list enumerates each schedule's layouts; the default is
-- 1F1B (interleaved above vpp 1) and enumerates as {"1f1b"} does, index
-- for index (the level passes one value per vpp).
local moe = { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 32, seq = 4096,
              global_batch = 256, pp_max = 4, ep_max = 8, vpp_max = 2, top = 30,
              scaling = false }
local base = gp.sweep(moe)
local one = gp.sweep(t.with(moe, { schedule = { "1f1b" } }))
local same = #base.results == #one.results and
  base.stats["h100-sxm"].layouts == one.stats["h100-sxm"].layouts
for i, c in ipairs(base.results) do
  same = same and one.results[i].index == c.index and one.results[i].step_s == c.step_s
end
t.ok(same, "default schedule == {\"1f1b\"}: the same layouts, indices and steps")
local inter = false
for _, c in ipairs(base.results) do inter = inter or c.schedule == "interleaved" end
t.ok(inter, "1f1b with vpp_max 2: interleaved layouts too, named so")
local both = gp.sweep(t.with(moe, { schedule = { "1f1b", "dualpipe" }, vpp_max = 1 }))
local dual, legal, labelled, agree = 0, true, true, true
for _, c in ipairs(both.results) do
  if c.schedule == "dualpipe" then
    dual = dual + 1
    local per = 256 / (c.dp * c.micro_batch)
    legal = legal and c.pp % 2 == 0 and c.vpp == 1 and per % 2 == 0 and per >= 2 * c.pp
    labelled = labelled and c.layout:find("PP" .. c.pp .. " DualPipe", 1, true) ~= nil
    -- the candidate is the job gp.train prices: the same step and peak
    -- memory (DualPipe's pp + 1 micro-batches of two chunks, its overlaps
    -- on as gp.train's defaults under dualpipe); 1e-12: the same sums
    local tr = gp.train(sweep.train_options(moe, c))
    agree = agree and math.abs(tr.step_s / c.step_s - 1) < 1e-12
      and math.abs(tr.memory.total / c.mem_bytes - 1) < 1e-12
  else
    labelled = labelled and not c.layout:find("DualPipe", 1, true)
  end
end
t.ok(dual > 0, "1f1b,dualpipe: DualPipe layouts among the best")
t.ok(legal, "each on an even pp, one chunk a stage, an even count >= 2 pp of micro-batches")
t.ok(labelled, "DualPipe in their labels, nowhere else")
t.ok(agree, "each priced as gp.train prices it: step and memory")
-- DualPipe runs the all-to-all under the paired chunk's compute: the
-- best DualPipe layout is faster with its overlap on than with it off
-- (ep_overlap = false given: the job's, as gp.train takes it).
local d1 = gp.sweep(t.with(moe, { schedule = { "dualpipe" }, vpp_max = 1, top = 1 }))
local d0 = gp.sweep(t.with(moe, { schedule = { "dualpipe" }, vpp_max = 1, top = 1,
                                  ep_overlap = false }))
local c0 = d0.results[1]
t.ok(c0 and d1.results[1].step_s < c0.step_s, "dualpipe's overlap on unless the job says off")
local tr0 = c0 and gp.train(sweep.train_options(t.with(moe, { ep_overlap = false }), c0))
t.ok(tr0 and math.abs(tr0.step_s / c0.step_s - 1) < 1e-12,
     "ep_overlap = false: the candidate is gp.train's job with it off")
-- A string list as the command line gives it.
t.is(gp.sweep(t.with(moe, { schedule = "dualpipe,1f1b", vpp_max = 1 })).results[1].layout,
     both.results[1].layout, "\"dualpipe,1f1b\" searches what the list does")

-- Refusals, each naming the input.
local function err(o)
  local ok, e = pcall(gp.sweep, o)
  return ok and "" or tostring(e)
end
t.like(err(t.with(moe, { schedule = { "gpipe" } })),
       "schedule%[1%] must be 1f1b, interleaved or dualpipe %(got string 'gpipe'%)", "an unknown name")
t.like(err(t.with(moe, { schedule = { "interleaved" }, vpp_max = 1 })),
       "schedule interleaved runs vpp >= 2", "interleaved without vpp_max")
t.like(err(t.with(moe, { schedule = {} })), "sweep: schedule must not be empty",
  "an empty list, named as the other sweep errors are")
t.like(err(t.with(moe, { schedule = { "1f1b", 2 } })),
       "schedule%[2%] must be 1f1b, interleaved or dualpipe %(got 2%)", "not a name")

-- fp8 on the megatron stack: Megatron-Core's grouped MLP pads the experts'
-- rows by a copy (moe_fp8_pad's default), DualPipe's layouts do not
-- (DeepSeek's own framework; gp.train's default under dualpipe).
-- DeepSeek-V3's report layout, margin 0 (it needs 77.7 GiB on the uniform
-- split the search takes): the DualPipe candidate is gp.train's job, step
-- and memory to 1e-12, and a copy asked for beside dualpipe is refused.
local ds = { model = "deepseek-v3", gpu = "h800-sxm", gpus = 2048, tp_max = 1, pp_max = 16,
             ep_max = 64, seq = 4096, global_batch = 15360, precision = "fp8",
             recipe = "deepseek-fp8", recompute_modules = "layernorm,mla_up_proj,moe_act",
             fp8_activations = true, schedule = { "dualpipe" }, micro_batch = { 1 },
             recompute = { "selective" }, margin = 0, scaling = false, top = 1 }
local dc = gp.sweep(ds).results[1]
local dt = dc and gp.train(sweep.train_options(ds, dc))
t.ok(dt and math.abs(dt.step_s / dc.step_s - 1) < 1e-12 and
     math.abs(dt.memory.total / dc.mem_bytes - 1) < 1e-12,
     "fp8 DualPipe candidate: no grouped-MLP padding, as gp.train")
t.like(err(t.with(ds, { moe_fp8_pad = "copy" })), "moe_fp8_pad copy with schedule dualpipe",
       "a padding copy beside dualpipe: refused")
-- DualPipe alone runs one chunk a stage: a vpp_max above 1 would search
-- nothing, so it is refused rather than taken in silence.
t.like(err(t.with(moe, { schedule = { "dualpipe" }, vpp_max = 2 })),
       "schedule dualpipe runs one model chunk a stage: vpp_max 2 searches nothing",
       "dualpipe alone with vpp_max 2: refused")
