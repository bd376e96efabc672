-- NVLS's pipeline fill is charged by the loops each NVLS channel runs
-- (engine/comm_algo.c nvls_fill), for any channel count.  NCCL's NVLS and
-- NVLS_TREE kernels run, in every channel's block, warp groups that each
-- step through "for (elemOffset = 0; elemOffset < channelCount;
-- elemOffset += loopCount)" with loopCount = nHeads x chunkSize
-- (src/device/all_reduce.h), one Simple step per loop and group (ProtoSimple
-- <1, 1>: SlicePerChunk 1, "dataSize = max(DIVUP(peerElem, 16 *
-- SlicePerChunk) * 16, sliceSize / 32)", prims_simple.h), through buffers
-- NCCL_STEPS deep ("buffSize = nvlsStepSize * NCCL_STEPS", nvls.cc), so a
-- channel of k loops fills its pipe once: (stages - 1) x the NVLink stage
-- / k, k = S / (channels x heads x chunk).  Blackwell under NCCL 2.26.2
-- runs 32 channels (nvls_channels_nodes.t), twice Hopper's 16, so a given
-- size runs half the loops a channel and pays twice the fill.
local t = require "tap"
local gp = require "gpuplan"
local comm = require "gpuplan.comm"

local cat = gp.catalog()
local MiB, GiB, US = 2 ^ 20, 2 ^ 30, 1e-6

local function ar(bytes, nodes, nccl)
  local topo = comm.from_fabrics({ scaleup = "nvlink5", gpus_per_node = 8, nodes = nodes,
                                   nics = 8, nic_fabric = "ib-ndr-400", gpu = cat.gpus.b200,
                                   cpu_vendor = "intel" }, cat)
  return gp.comm { op = "all_reduce", bytes = bytes, gpus = 8 * nodes, nccl = nccl,
                   topology = topo, algo = "nvls" }
end

-- One node of 8 B200, NCCL 2.26.2: 32 channels x 8 heads = 256 concurrent
-- ops.  1 GiB: 64 KiB chunks (below 64 x 256 x 128 KiB = 2 GiB; not below
-- 8 x 256 x 64 KiB = 128 MiB), k = 1 GiB / (256 x 64 KiB) = 64 loops,
-- steps 3.7 us x (64 - 32) (nvls_steps, against 128 KiB chunks' 32 loops):
-- bw_time = I1G (1 + 2/64) + 118.4 us, where I1G is the NVLink stage of
-- 1 GiB.
-- 16 MiB: 64 KiB (< 2 GiB), 32 KiB (< 8 x 256 x 64 KiB = 128 MiB), stays
-- 32 KiB (16 MiB = 2 x 256 x 32 KiB, not below), k = 16 MiB / (256 x 32
-- KiB) = 2 loops: bw_time = I16 (1 + 2/2) + 3.7 us x (2 - 1), I16 = I1G /
-- 64 (the NVLink stage is linear in the bytes).
local b1g = ar(GiB, 1, "2.26.2").bw_time
local i1g = (b1g - 32 * 3.7 * US) / (1 + 2 / 64)
local b16 = ar(16 * MiB, 1, "2.26.2").bw_time
-- Sums and ratios of the same constants: 1e-9 relative.
t.near(b16, 2 * i1g / 64 + 3.7 * US, 1e-9 * b16, "1 node, 32 channels, 16 MiB: 2 loops, fill = the NVLink stage")

-- 2.29.2 gives one node 24 channels (192 ops): 16 MiB takes 32 KiB chunks
-- (not below 2 x 192 x 32 KiB = 12 MiB), k = 16 MiB / (192 x 32 KiB) = 8/3
-- loops: fill 2 / (8/3) = 0.75 x I16, steps 3.7 us x (8/3 - 1).
local b16_24 = ar(16 * MiB, 1, "2.29.2").bw_time
t.near(b16_24, 1.75 * i1g / 64 + 3.7 * US * (8 / 3 - 1), 1e-9 * b16_24,
       "1 node, 24 channels, 16 MiB: 8/3 loops, fill 0.75 x the NVLink stage")

-- 2 x 8 B200 (NVLS_TREE, 32 channels, 2.26.2): 16 MiB takes 64 KiB chunks
-- (below 4 x 256 x 128 KiB = 128 MiB; not below 256 x 64 KiB = 16 MiB):
-- k = 1 loop a channel, fill = 3 x I16 (4 stages: scatter, reduce and send,
-- receive and multicast, gather).  32 MiB: 64 KiB, k = 2, fill = 3 x I32 /
-- 2 = 3 x I16, the same, plus one 3.7 us step (2 loops against 1 of 128
-- KiB).  The streaming time is linear in the bytes, so bw(32) - bw(16) =
-- stream(16) + 3.7 us, and bw(16) - stream(16) = 3 x I16.
local n16 = ar(16 * MiB, 2, "2.26.2").bw_time
local n32 = ar(32 * MiB, 2, "2.26.2").bw_time
local stream16 = n32 - n16 - 3.7 * US
t.near(n16 - stream16, 3 * i1g / 64, 1e-9 * n16, "2 nodes, 32 channels, 16 MiB: 1 loop, fill = 3 x the NVLink stage")

t.done_testing()
