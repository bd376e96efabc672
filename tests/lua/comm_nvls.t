-- gp.comm's nvls (NCCL_NVLS_ENABLE) and the collective case key nvls.
-- NCCL (src/transport/nvls.cc ncclNvlsInit): 2, the default, asks the
-- driver whether the GPU multicasts; 0 leaves nvlsSupport 0, and the tuner
-- (src/graph/tuning.cc) then runs neither NVLS nor NVLS_TREE; 1 sets it
-- without asking.
local t = require "tap"
local gp = require "gpuplan"
local validate = require "gpuplan.validate"

local GiB = 2 ^ 30
local job = { system = "dgx-h100", bytes = GiB }
local auto = gp.comm(job)
-- 8 x H100 at 1 GiB: the tuner runs NVLS (470 GB/s against the ring's
-- 365; both from the nvlink4 fabric), so off has something to change.
t.is(auto.algo, "nvls", "dgx-h100 1 GiB all_reduce: NVLS by default")
local on = gp.comm { system = "dgx-h100", bytes = GiB, nvls = "on" }
t.is(on.time, auto.time, "nvls on = auto where the switch multicasts (same time, to the bit)")
local off = gp.comm { system = "dgx-h100", bytes = GiB, nvls = "off" }
t.ok(off.algo ~= "nvls", "nvls off: the tuner picks another algorithm (got " .. off.algo .. ")")
-- Off is the node whose switch does not reduce: the same price, to the bit.
local nosw = gp.comm { system = "dgx-h100", bytes = GiB, up_nvls = false }
t.is(off.time, nosw.time, "nvls off prices as up_nvls = false")
t.is(off.algo, nosw.algo, "nvls off: the algorithm of up_nvls = false")
t.ok(off.time > auto.time, "nvls off is slower here (the ring's 1.75 S at 0.82 x 450 GB/s "
  .. "against NVLS's S (1 + 1/8) at 0.85)")
-- Across nodes: NVLS_TREE goes too (2 x dgx-h100, 1 GiB).
local two = { system = "dgx-h100", nodes = 2, bytes = GiB }
t.is(gp.comm(two).algo, "nvls", "2 x dgx-h100 1 GiB: NVLS_TREE by default")
two.nvls = "off"
t.ok(gp.comm(two).algo ~= "nvls", "2 x dgx-h100, nvls off: no NVLS_TREE")

-- Refusals, each naming the argument.
t.raises(function() gp.comm { system = "dgx-h100", bytes = GiB, nvls = "yes" } end,
  "nvls must be one of auto, on, off", "an unknown setting refused", true)
t.raises(function() gp.comm { system = "dgx-h100", bytes = GiB, nvls = true } end,
  "nvls must be one of auto, on, off (got true)", "a boolean refused", true)
t.raises(function() gp.comm { system = "pcie-8x-4090", bytes = GiB, nvls = "on" } end,
  "nvls on (NCCL_NVLS_ENABLE=1) needs a scale-up switch", "on without NVLS refused", true)
t.raises(function() gp.comm { system = "dgx-h100", bytes = GiB, nvls = "off", algo = "nvls" } end,
  "algo nvls needs NVLS, which nvls off disables", "off with algo nvls refused", true)
t.raises(function() gp.comm { system = "dgx-h100", bytes = GiB, nvls = "off", up_nvls = true } end,
  "nvls off contradicts up_nvls = true", "off with up_nvls = true refused", true)
-- A PCIe box has no NVLS: off changes nothing there.
t.is(gp.comm { system = "pcie-8x-4090", bytes = GiB, nvls = "off" }.time,
     gp.comm { system = "pcie-8x-4090", bytes = GiB }.time, "pcie box: off = auto")

-- The case key: a collective case with nvls off is priced as gp.comm's.
local function case_file(c)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(c)
  f:close()
  return path
end
local coll = [[[{"id": "x", "kind": "collective", "collective": "all_reduce",
  "bytes": 1073741824, "nvls": "off",
  "hardware": {"gpu": "h100-sxm", "gpus": 8, "gpus_per_node": 8},
  "measured": {"metric": "busbw_gbps", "value": 365},
  "source": {"title": "t", "where": "w", "id": "i"}}]
]]
local path = case_file(coll)
local cases = validate.read(path)
local r = validate.predict(cases[1], gp.catalog())
r.value = r.predicted
local want = gp.comm { gpu = "h100-sxm", bytes = GiB, nvls = "off" }
t.near(r.value, want.busbw / 1e9, 1e-12, "case nvls off: gp.comm's busbw with nvls off")
t.ok(r.value < gp.comm { gpu = "h100-sxm", bytes = GiB }.busbw / 1e9,
  "case nvls off: below the NVLS default")
os.remove(path)
-- Another kind does not read it: refused, not ignored.
local bad = case_file((coll:gsub('"kind": "collective"', '"kind": "train"')
  :gsub('"busbw_gbps"', '"step_time_s"')))
t.raises(function() validate.read(bad) end, "field 'nvls' (NCCL_NVLS_ENABLE) is a collective case's",
  "nvls in a train case refused", true)
os.remove(bad)
local badv = case_file((coll:gsub('"nvls": "off"', '"nvls": "no"')))
t.raises(function() validate.read(badv) end, "nvls", "an unknown case nvls refused", true)
os.remove(badv)
-- NCCL before 2.17.1 has no NVLS (release notes 2.17.1: "Add new NVLS
-- algorithm for allreduce using NVLink SHARP (intra-node only)") and no
-- NCCL_NVLS_ENABLE: nvls on there is refused, as algo nvls is, not priced
-- as the ring; 2.17.1 takes it, and auto/off on 2.16.2 stay priced.
do
  local ok, e = pcall(gp.comm, { system = "dgx-h100", bytes = GiB, nvls = "on", nccl = "2.16.2" })
  t.ok(not ok and tostring(e):find("nvls on %(NCCL_NVLS_ENABLE=1%) needs NCCL 2%.17%.1 or later"),
       "nvls on with NCCL 2.16.2 refused: " .. tostring(e))
  t.is(gp.comm { system = "dgx-h100", bytes = GiB, nvls = "on", nccl = "2.17.1" }.algo, "nvls",
       "nvls on with NCCL 2.17.1: NVLS")
  t.ok(pcall(gp.comm, { system = "dgx-h100", bytes = GiB, nvls = "auto", nccl = "2.16.2" }),
       "nvls auto with NCCL 2.16.2: priced (the tuner has no NVLS there)")
end
-- NCCL 2.19 to 2.27 rank NVLS_TREE across more than 2 nodes at the NVLS
-- graph's heads x min(bwIntra, bwInter / 2) x 5/6 (src/graph/tuning.cc
-- ncclTopoTuneModel at v2.19.1 .. v2.27.7).  4 x dgx-h100 (8 x 400 Gb/s
-- NICs: bwInter 48 GB/s; bwIntra <= 450 / 9 = 50), 1 GiB: 8 x 24 x 5/6 =
-- 160 GB/s, 1 GiB in 6711 us (+ 81 us of latency), against the ring's
-- min(369, 376) x 32/62 = 190 GB/s (5650 us + its ~400 us of latency):
-- the ring runs, priced as the forced ring to the bit.  2.28.3 replaced
-- the formula with per-channel caps and keeps NVLS_TREE (the streaming
-- estimate, 188 GB/s with NVLS's smaller latency); 2 nodes take the whole
-- bwInter ("nNodes <= 2 ? bwInter : bwInter/2"): NVLS_TREE stays there.
do
  local four = { system = "dgx-h100", nodes = 4, bytes = GiB, nccl = "2.26.2" }
  local r = gp.comm(four)
  t.is(r.algo, "ring", "4 x dgx-h100 1 GiB, NCCL 2.26.2: the ring (NVLS_TREE ranked at 160 GB/s)")
  four.algo = "ring"
  t.is(r.time, gp.comm(four).time, "... priced as the forced ring, to the bit")
  t.is(gp.comm { system = "dgx-h100", nodes = 4, bytes = GiB, nccl = "2.28.3" }.algo, "nvls",
       "4 x dgx-h100 1 GiB, NCCL 2.28.3: NVLS_TREE (per-channel caps, not bwInter / 2)")
  t.is(gp.comm { system = "dgx-h100", nodes = 2, bytes = GiB, nccl = "2.26.2" }.algo, "nvls",
       "2 x dgx-h100 1 GiB, NCCL 2.26.2: NVLS_TREE (2 nodes take the whole bwInter)")
end
-- NCCL's NVLS graph has at most 32 heads (NCCL_MAX_NVLS_ARITY, device.h;
-- search.cc "graph->maxChannels = std::min(NCCL_MAX_NVLS_ARITY, ...)"):
-- 64 GB300 of one NVL72 rack reduce through 32 of them.  By hand, 16 GiB
-- (S = 17179869184 B), nvlink5 (900 GB/s a direction x 0.76 achievable x
-- 0.74 nvlsEfficiency = R = 506.16 GB/s), 24 NVLS blocks:
-- stream S (1 + 1/32) / R = 35002.25 us; the loop is 24 x 32 heads x
-- 128 KiB (S >= 64 x that), k = 170.667 loops, fill 2 x stream / k =
-- 410.18 us; latency 25 us; t = 35437.43 us, algbw S / t = 484.79 GB/s,
-- busbw x 2 x 63/64 = 954.44 GB/s.  With 64 heads (1 + 1/64, a loop of
-- 24 x 64 chunks) it would be 958.0: the cap is what this checks.
-- Tolerance 1e-6 relative: the same arithmetic.  The hand figure is
-- 954.4389 to 4 places, printed 954.44: 1e-5 relative (0.0095 GB/s)
-- holds the rounding and fails the 64-head 958.0 (0.37% off).
do
  local S = 17179869184
  local R = 900e9 * 0.76 * 0.74
  local stream = S * (1 + 1 / 32) / R
  local k = S / (24 * 32 * 131072)
  local tt = 25e-6 + stream + 2 * stream / k
  local want = S / tt * 2 * 63 / 64 / 1e9
  local path = case_file([[[{"id": "x", "kind": "collective", "collective": "all_reduce",
  "bytes": 17179869184, "nvls": "on",
  "hardware": {"gpu": "gb300", "gpus": 64, "gpus_per_node": 72},
  "measured": {"metric": "busbw_gbps", "value": 930},
  "source": {"title": "t", "where": "w", "id": "i"}}]
]])
  local r = validate.predict(validate.read(path)[1], gp.catalog())
  os.remove(path)
  t.near(r.predicted, want, 1e-6,
    string.format("64 GB300, 16 GiB NVLS: 32 heads, busbw %.2f GB/s (got %.2f)", want, r.predicted))
  t.near(want, 954.44, 1e-5, "... the hand figure above")
end
t.done_testing()
