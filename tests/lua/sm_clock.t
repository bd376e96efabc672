-- The SM clock a run held (gp.train's sm_clock, a case's hardware.sm_clock):
-- the GEMM and attention fractions scale from the clock the arch's
-- sustained record stands for (catalog/archs.lua hopper
-- achievable.sustained: 0.82 = 1500 / 1830, clock_mhz 1500) to the one
-- the trace states (roofline.lua clock_at_mhz); memory-bound kernels
-- keep their rate.  KempnerForge's 175B run on H200 SXMs: "SM clock 1,840
-- MHz near boost" at "619 W mean".  Run with ./gpuplan run
-- tests/lua/sm_clock.t.
local t = require "tap"
local gp = require "gpuplan"
local roofline = require "gpuplan.roofline"

t.plan(14)

local cat = gp.catalog()
local hopper = cat.archs.hopper
t.is(hopper.achievable.sustained.clock_mhz, 1500, "hopper: the sustained factors stand for 1500 MHz")

-- The device at 1840 MHz: bf16 GEMM 0.80 (MAMF) x 0.82 (sustained) x
-- 1840 / 1500 = 0.80 x 0.82 x 1.226667 = 0.804693; cuDNN's forward 0.53
-- x 0.82 x 1.226667 = 0.533109; the streaming fraction unchanged.  1e-9:
-- the products are exact up to the doubles' rounding.
local h200 = cat:get("gpus", "h200-sxm")
local d0 = roofline.device(h200, cat)
local d, clock = roofline.device(h200, cat, nil, nil, 1840)
t.near(clock, 1840 / 1500, 1e-12, "the clock share: 1840 / 1500")
t.near(d.gemm.bf16, 0.80 * 0.82 * 1840 / 1500, 1e-9, "bf16 GEMM fraction at 1840 MHz")
t.near(d.attn_fwd, 0.53 * 0.82 * 1840 / 1500, 1e-9, "cuDNN attention forward at 1840 MHz")
t.is(d.hbm, d0.hbm, "the streaming fraction keeps its rate")
-- At the record's own clock nothing moves.
local d1500 = roofline.device(h200, cat, nil, nil, 1500)
t.is(d1500.gemm.bf16, d0.gemm.bf16, "sm_clock 1500: the arch's sustained rate itself")

-- The step: a 7B step on one H200 (KempnerForge's row 1 layout).  Its
-- tensor work runs 1500 / 1840 = 0.815 as long, its norms, copies and
-- optimizer not at all: the step falls by more than 10% and by at most
-- the clock's share.
local job = { model = { layers = 32, hidden = 4096, heads = 32, kv_heads = 8,
                        ffn_hidden = 14336, ffn_gated = true, vocab = 128256 },
              gpu = "h200-sxm", gpus = 1, seq = 4096, batch = 2, global_batch = 8,
              recompute = "full", kernels = "fused", attn_kernel = "cudnn", cat = cat }
local r0 = gp.train(job)
local r1 = gp.train(t.with(job, { sm_clock = 1840 }))
local ratio = r1.step_s / r0.step_s
t.ok(ratio < 0.90 and ratio >= 1500 / 1840 - 1e-9,
     string.format("7B on one H200 at 1840 MHz: %.3f of the 1500 MHz step (0.815 .. 0.90)", ratio))
t.ok(r0.defaults and not table.concat(r1.defaults or {}, "\n"):find("power_limit=", 1, true),
     "no power_limit default line beside a stated clock")

-- Refusals name the argument.
t.raises(function() gp.train(t.with(job, { sm_clock = 50 })) end, "sm_clock",
         "sm_clock below 100 MHz refused")
t.raises(function() gp.train(t.with(job, { sm_clock = 1840, power_limit = 600 })) end,
         "sm_clock and power_limit both set", "sm_clock with power_limit refused", true)
-- An arch whose sustained record names no clock (Blackwell's) is refused
-- rather than scaled from a guess.
t.raises(function() gp.train(t.with(job, { gpu = "b200", sm_clock = 1800 })) end,
         "names no clock_mhz", "b200: no clock to scale from", true)
t.raises(function() gp.train(t.with(job, { sm_clock = "fast" })) end, "sm_clock",
         "a non-number refused")
-- A clock past the board's peak: the largest sustained fraction on the
-- H200 is the 16-bit GEMM's 0.80 x 0.82 = 0.656 at 1500 MHz, so 1500 /
-- 0.656 = 2286.6 MHz brings it to the peak; 2400 would price 0.656 x
-- 2400 / 1500 = 1.05 of it.  Refused naming sm_clock and the highest whole
-- clock (2286), not by the engine's range on a scaled fraction.
t.raises(function() gp.train(t.with(job, { sm_clock = 2400 })) end,
         "sm_clock 2400 MHz prices h200-sxm's tensor rates above its peak: its sustained "
         .. "record stands for 1500 MHz, at most 2286 MHz there",
         "a clock past the peak refused, naming the highest", true)
t.ok(pcall(gp.train, t.with(job, { sm_clock = 2286 })), "2286 MHz: 0.9997 of the peak, priced")
