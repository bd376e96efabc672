-- The volta arch's streaming fraction (achievable.hbm 0.85) against the
-- published streaming runs on a V100 (900 GB/s HBM2, the SXM2 and the
-- PCIe card alike).  A memory-bound kernel is priced t = bytes / (mem_bw
-- x hbm) + 3.9 us (engine/roofline.c ROOF_MEM_FILL), the t_memory
-- gp.roofline returns for an op of no FLOPs.  The catalog takes Ampere's
-- 0.85 (the same benchmark streams the A100-40GB at the V100's share);
-- the V100's own runs measure 0.875-0.921, so the model must price none
-- of them faster than measured.  Run with ./gpuplan run tests/lua/volta_stream.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(6)

local FILL = 3.9e-6
local BW = 900e9   -- catalog/gpus/nvidia-volta.lua mem_bw "900GB/s"

local function t_mem(bytes)
  return gp.roofline{ gpu = "v100-sxm2-32gb", op = { flop = 0, bytes = bytes } }.op.t_memory
end

local cat = gp.catalog()
t.is(cat.archs.volta.achievable.hbm, 0.85, "volta: streaming at 0.85 of the rated bandwidth")

-- Eager PyTorch's own elementwise kernel: ml-explore/mlx PR #2330, "on a
-- V100 ... in PyTorch the same op has throughput of 818.5 GB/s", a + b on
-- two 8192 x 8192 fp32 tensors, counted "100 * 100 * 3 * a.nbytes": two
-- reads and a write of 4 B, 3 x 8192^2 x 4 = 805,306,368 B an op, in
-- 805,306,368 / 818.5e9 = 983.88 us.  Model: 805,306,368 / (900e9 x 0.85)
-- + 3.9 us = 1052.69 + 3.9 = 1056.59 us.  1e-9: arithmetic only.
local add_bytes = 3 * 8192 ^ 2 * 4
local add = t_mem(add_bytes)
t.near(add, add_bytes / (BW * 0.85) + FILL, 1e-9, "v100 torch a + b fp32 8192^2: 1056.59 us priced")

-- The rates of long streams (the runs state a rate, not their sizes): a
-- terabyte's time is the rate's to 3e-6 (the 3.9 us fill over ~1.3 s).
local BIG = 1e12
local rate = BIG / t_mem(BIG)

-- Priced over measured time (= measured rate over priced rate):
--   te42kyfo/gpu-benches README cuda-stream, "Example Results for a Tesla
--   V100-PCIe-16GB", 1280 blocks (100% occupancy): scale 787.8 GB/s ->
--   787.8 / 765 = 1.0298; triad 829.1 -> 1.0838;
--   paranumal.com "Rough-n-Ready Roofline: NVIDIA V100 edition",
--   "Using cudaMemcpy we measure achievable memory bandwidth of 790GB/s"
--   -> 790 / 765 = 1.0327;
--   the torch add above 1056.59 / 983.88 = 1.0739.
-- The band [1.00, 1.09]: never faster than a published run (the scale
-- run's 0.8753 of 900 GB/s is the lowest share measured), and no more
-- than 9% slower than the fastest (the triad).  It holds hbm between
-- about 0.845 (the triad priced 1.09 x: 829.1 / (1.09 x 900) = 0.8452)
-- and 0.875; the V100's own rounded figure, 0.88, prices the scale run
-- 0.995 x and fails here -- docs/validation.md records that 0.88 moves
-- every V100 case further.
local function band(r, name)
  t.ok(r >= 1.00 and r <= 1.09, string.format("%s: priced / measured %.4f in [1.00, 1.09]", name, r))
end
band(787.8e9 / rate, "v100 cuda-stream scale 787.8 GB/s")
band(829.1e9 / rate, "v100 cuda-stream triad 829.1 GB/s")
band(790e9 / rate, "v100 cudaMemcpy 790 GB/s")
band(add / (add_bytes / 818.5e9), "v100 torch a + b fp32 818.5 GB/s")
