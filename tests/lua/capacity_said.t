-- The defaults line says the capacity an MoE job with experts over EP
-- ranks rests on when capacity_factor is left out: dropless (0), where
-- every MoE layer waits for the busiest EP rank (engine/train_prep.c
-- train_ep_skew), or DeepSpeed's einsum MOELayer's own capacity 1.0.  A
-- step priced on the busiest rank's chance excess said nothing of it.
-- Run with ./gpuplan run tests/lua/capacity_said.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(6)

local job = { model = "mixtral-8x7b", gpu = "h100-sxm", gpus = 64, ep = 8,
              stack = "megatron", zero = 1 }
local r = gp.train(job)
t.ok(t.said(r, "capacity_factor=0 (dropless: each MoE layer waits for the busiest EP rank)",
            true), "left out: dropless is said")
-- the default prices as the line says (the same step, to the last bit)
t.is(gp.train(t.with(job, { capacity_factor = 0 })).step_s, r.step_s,
     "the default prices as capacity_factor 0")
-- given: the job's own choice, nothing assumed
t.ok(not t.said(gp.train(t.with(job, { capacity_factor = 1.25 })), "capacity_factor", true),
     "a given capacity_factor is not said among the defaults")
t.ok(not t.said(gp.train(t.with(job, { capacity_factor = 0 })), "capacity_factor", true),
     "a given 0 is not said either")
-- EP 1: every rank holds every expert, no busiest rank to wait for
t.ok(not t.said(gp.train(t.with(job, { ep = 1, gpus = 8 })), "capacity_factor", true),
     "EP 1: the capacity is not said")
-- DeepSpeed's einsum dispatcher: its own default capacity 1.0
r = gp.train(t.with(job, { stack = "deepspeed", moe_dispatcher = "einsum", kernels = "fused" }))
t.ok(t.said(r, "capacity_factor=1.0 (moe_dispatcher einsum", true),
     "einsum: DeepSpeed's capacity 1.0 is said")
