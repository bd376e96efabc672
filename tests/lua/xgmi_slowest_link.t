-- An 8-GPU collective on MI300X / MI325X drives all seven xGMI links at
-- once and ends with its slowest: the catalog's xgmi4 `achievable` is 7 x
-- each GPU's slowest link in AMD's own TransferBench all-to-all (ROCm
-- blog "Understanding RCCL Bandwidth and xGMI Performance on AMD Instinct
-- MI300X", 2025-03-02: "the slowest link is what defines the total
-- bandwidth"), not the 48 GB/s one link reaches alone.
local t = require "tap"
local gp = require "gpuplan"
local comm = require "gpuplan.comm"
local cat = gp.catalog()
local GiB = 2 ^ 30

-- The fabric: the blog's "Actual" column (7 x each GPU's slowest link)
-- reads 316.469, 318.799, 318.160, 315.994, 319.297, 317.968, 318.378 and
-- 315.664 GB/s, mean 317.591; / (7 x 64 = 448) = 0.70891, kept as 0.709.
-- 1e-9: the catalog states 0.709 exactly.
local x = cat.fabrics.xgmi4
t.near(x.achievable, 0.709, 1e-9, "xgmi4: 7 x the slowest link over 7 x 64 GB/s")
t.near(x.achievable * 448, 317.591, 0.001,
       "0.709 of 448 GB/s is the TransferBench mean of 317.59 GB/s (within 0.1%: the rounding to 0.709)")

-- One node of 8 MI300X, all_reduce 16 GiB (ring/simple): its busbw is
-- the links' 448 x 0.709 = 317.632 GB/s less the latency (a few tens of
-- us on 94.6 ms: 2 x 7/8 x 16 GiB / 317.632e9).  The same blog's
-- rccl-tests run (RCCL 2.22.3, -g 1, one process a GPU) reads 318.98
-- GB/s busbw at 16 GiB; 1%: the spread of the eight GPUs' slowest links
-- (315.66 to 319.30) around their mean.  With the lone link's 0.75 the
-- model gave 336 GB/s, 5.3% over it.
local topo = comm.from_fabrics({ scaleup = "xgmi4", gpus_per_node = 8, nodes = 1, nics = 0,
                                 gpu = cat.gpus["mi300x"], cpu_vendor = "amd" }, cat)
local r = gp.comm { op = "all_reduce", bytes = 16 * GiB, gpus = 8, topology = topo }
t.is(r.algo .. "/" .. r.proto, "ring/simple", "16 GiB on 8 MI300X: the Simple ring")
t.near(r.busbw / 1e9, 318.98, 0.01, "busbw at the blog's rccl-tests 318.98 GB/s (within 1%)")
t.ok(r.busbw / 1e9 < 317.632, "and under the links' 317.632 GB/s (the latency takes its share)")
t.done_testing()
