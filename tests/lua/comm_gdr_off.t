-- No GPUDirect RDMA between a GPU and its NIC (the topology's nic_gdr_off,
-- a collective case's hardware.gdr = false): NCCL keeps the network
-- buffers in host memory, the GPU's SMs write what it sends there and read
-- back what it receives, so its PCIe link carries both directions at the
-- host-staged share HOST_STAGED_BW = 43.0 / 2 / 38.5 of its one-way rate
-- (engine/comm.c nic_path), and host DRAM holds each byte twice a
-- direction.  The pair is the A3 Ultra case's (validation/cases.json
-- coll-allgather-h200-sxm-2g-1pn-*-dranet): one H200 and one 400 Gb/s
-- RoCE NIC in each of two nodes.
-- Run: ./gpuplan run tests/lua/comm_gdr_off.t
local t = require "tap"
local gp = require "gpuplan"
local cat = gp.catalog()
local predict = require "gpuplan.predict.collective"
t.plan(9)

local GiB = 2 ^ 30
local PCIE5 = 16 * 0.985e9 * 4 * 0.8          -- comm.pcie_bw: Gen5 x16, 50.432 GB/s
local STAGED = 43.0 / 2.0 / 38.5               -- comm.c HOST_STAGED_BW
local function pair(over, bytes)
  local topo = {
    gpus_per_node = 1, nodes = 2, nics = 1, nic_bw = 50e9, nic_achievable = 0.9,
    nic_latency = 2.7e-6, nic_path_bw = PCIE5, up_kind = "nvlink", up_bw = 450e9,
    up_achievable = 0.82, up_latency = 6e-7,
  }
  for k, v in pairs(over or {}) do topo[k] = v end
  return gp.comm { op = "all_gather", bytes = bytes or 4 * GiB, gpus = 2, nccl = "2.25.1",
                   algo = "ring", topology = topo }
end

-- With GPUDirect RDMA the NIC binds: 0.9 x 50 = 45 GB/s < 50.432 of PCIe.
-- A 2-rank all-gather's busbw is the rate each rank sends at (nccl-tests'
-- algbw x (n - 1) / n), so 4 GiB runs at 45 GB/s less its latency: the
-- ring's few tens of us against 47.7 ms of transfer, under 0.5%.
-- Tolerance 1%.
local gdr = pair()
t.near(gdr.busbw, 45e9, 0.01, string.format("GPUDirect: the NIC's 45 GB/s (%.2f)", gdr.busbw / 1e9))

-- Without it the PCIe link carries the staged traffic: 50.432 x 43.0 / 2 /
-- 38.5 = 28.16 GB/s, under the NIC's 45.  Tolerance 1% (the latency).
local staged = pair { nic_gdr_off = true }
t.near(staged.busbw, PCIE5 * STAGED, 0.01,
       string.format("no GPUDirect: PCIe at the host-staged share, %.2f GB/s (%.2f)",
                     PCIE5 * STAGED / 1e9, staged.busbw / 1e9))
t.ok(staged.busbw < gdr.busbw, "and slower than with GPUDirect")

-- A host whose DRAM streams 80 GB/s: each GPU's staged flow costs 4 r of
-- it (written and read on the way out, written and read on the way in),
-- one GPU a node: r <= 80 / 4 = 20 GB/s, under the link's 28.16.
-- Tolerance 1% (the latency).
local dram = pair { nic_gdr_off = true, host_mem_bw = 80e9 }
t.near(dram.busbw, 20e9, 0.01, string.format("host DRAM 80 GB/s: 80 / 4 = 20 GB/s (%.2f)", dram.busbw / 1e9))

-- With no PCIe limit given (nic_path_bw 0) there is no link to share: the
-- switch moves nothing, the NIC's 45 GB/s binds either way.
local nolink = pair { nic_gdr_off = true, nic_path_bw = 0 }
t.near(nolink.busbw, gdr.busbw, 1e-9, "nic_path_bw 0: nic_gdr_off moves nothing")

-- The case field: hardware.gdr = false prices the staged path; on one node
-- (no network) it is refused with the field named.
local function case(hw)
  local h = { gpu = "h200-sxm", gpus = 2, gpus_per_node = 1, inter_node = "roce-400",
              nics_per_node = 1 }
  for k, v in pairs(hw) do h[k] = v end
  return { id = "gdr-field", kind = "collective", collective = "all_gather",
           bytes = 4 * GiB, hardware = h, source = { version = "2.25.1" },
           measured = { metric = "busbw_gbps", value = 1 } }
end
local on = assert(predict(case {}, cat))
local off = assert(predict(case { gdr = false }, cat))
-- roce-400's NIC at its achievable share binds with GPUDirect; without it
-- the h200-sxm's Gen5 x16 link at the staged share, 28.16 GB/s.
-- Tolerance 1% (the latency).
t.near(off.value, PCIE5 * STAGED / 1e9, 0.01,
       string.format("case gdr false: %.2f GB/s against %.2f with GPUDirect", off.value, on.value))
local one, why = predict(case { gpus_per_node = 2, inter_node = nil, nics_per_node = nil,
                                gdr = false }, cat)
t.ok(one == nil and why:find("hardware.gdr", 1, true) ~= nil,
     "one node: refused, " .. tostring(why))
local ok, e = t.read_case(case { gdr = "no" })
t.ok(not ok and e:find("gdr", 1, true) ~= nil, "gdr must be a boolean: " .. tostring(e))
-- Only the collective predictor reads it: on a train case it is refused,
-- not priced with GPUDirect in silence.
local trainc = { id = "gdr-train", kind = "train",
  model = { layers = 2, hidden = 256, heads = 4, ffn_hidden = 1024, vocab = 1000 },
  hardware = { gpu = "h100-sxm", gpus = 16, gpus_per_node = 8, gdr = false },
  parallel = { tp = 1 }, workload = { seq_len = 256, precision = "bf16", method = "pretrain" },
  measured = { metric = "step_time_s", value = 1 } }
local ok2, e2 = t.read_case(trainc)
t.ok(not ok2 and e2:find("field 'hardware.gdr' (GPUDirect RDMA) is a collective case's", 1,
  true) ~= nil, "on a train case: refused, " .. tostring(e2))
