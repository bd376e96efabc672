-- The all-to-all's price at NCCL's first p2p channel doubling inside one
-- node (comm_algo.c a2a_link_eff).  8 x H100 (dgx-h100), the send buffer S,
-- each of the 7 peers' part S/8.  NCCL gives a peer 4 channels (its share of
-- the 32-channel pool over 8 ranks) and doubles them while a channel's part
-- exceeds 16 MiB (enqueue.cc addP2pToPlan, maxPartSize = 512 KiB x 32): at
-- S = 512 MiB a peer's 64 MiB fills 4 channels exactly, past it 8.  What
-- the GPU sends, 7/8 S, binds at its share of the ring's 450 x 0.82 = 369
-- GB/s (a peer's channels carry 4 x 20.6 = 82.4 GB/s, above 1/7 of it):
-- 0.83 of it on 4 channels, 0.90 on 8 (the 8 x H100 alltoall_perf log's
-- 331.99 GB/s at 1 GiB), not the 8-GiB plateau's 0.94, which made the price
-- fall 11.7% for 0.01% more bytes.  Exact products: 1e-9.
local t = require "tap"
local gp = require "gpuplan"
local MiB = 2^20
local function a2a(S)
  return gp.comm { op = "all_to_all", bytes = S, gpus = 8, system = "dgx-h100" }.bw_time
end
local lo, hi = 512 * MiB, 512.05 * MiB
t.near(a2a(lo), 7 / 8 * lo / (369e9 * 0.83), 1e-9, "512 MiB: 4 channels a peer, 0.83 of 369 GB/s")
t.near(a2a(hi), 7 / 8 * hi / (369e9 * 0.90), 1e-9, "512.05 MiB: 8 channels a peer, 0.90 of 369 GB/s")
-- The step is the one NCCL's channel count makes, 0.83 / 0.90 - 1 = -7.8%
-- (plus the 0.01% more bytes); the old 0.94 made it -11.7%.
t.ok(a2a(hi) / a2a(lo) > 0.92, "the step at the doubling is 0.83/0.90, not 0.83/0.94")
-- 2 GiB: 256 MiB a peer on 16 channels, four times its share: 0.93.
t.near(a2a(2048 * MiB), 7 / 8 * 2048 * MiB / (369e9 * 0.93), 1e-9, "2 GiB: 16 channels a peer, 0.93")
t.done_testing()
