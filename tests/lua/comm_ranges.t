-- gp.comm's 80% range and defaults, as every other command's answer has
-- them: the range from the validated collective cases like it
-- (gpuplan.ranges, validation/ranges.lua: the op, the card, the ranks'
-- nodes), the defaults the NCCL release, NVLS and the NICs it assumed.
-- Run: prove --exec './gpuplan run' tests/lua/comm_ranges.t
local t = require "tap"
local gp = require "gpuplan"
local ranges = require "gpuplan.ranges"

-- whether a defaults line holds the text (tap.said, plain)
local function said(r, text) return t.said(r, text, true) end

-- 16 GPUs of dgx-h100: 2 nodes, all_reduce on Hopper.  The range is the
-- regime's factors (ranges.lookup, read from the generated file, so the
-- test follows `make ranges`) times the time: time_lo = time x lo,
-- time_hi = time x hi; a rate divides (busbw_lo = busbw / hi).
local r = gp.comm { system = "dgx-h100", gpus = 16, bytes = 2 ^ 26 }
local iv = ranges.lookup("collective", { vendor = "NVIDIA", style = "all_reduce",
                                         scale = "nodes", gen = "hopper" })
t.is(r.range.regime, iv.key, "the regime of 16 H100s over 2 nodes: " .. iv.key)
t.near(r.time_lo, r.time * iv.lo, 1e-12, "time_lo = time x the regime's lo")
t.near(r.time_hi, r.time * iv.hi, 1e-12, "time_hi = time x the regime's hi")
t.near(r.busbw_lo, r.busbw / iv.hi, 1e-12, "busbw_lo = busbw / hi (a rate)")
t.ok(said(r, "nccl=2.30.7 (the latest release modelled"), "defaults: the NCCL release")
t.ok(said(r, "nvls=auto (NCCL_NVLS_ENABLE's default: this node's NVLink switch multicasts"),
  "defaults: NVLS on a DGX H100's NVSwitch")
t.ok(said(r, "nics=8 a node (ib-ndr-400, dgx-h100's)"), "defaults: the system's NICs")

-- One node: its own regime; what the call gives is not a default.
local one = gp.comm { system = "dgx-h100", bytes = 2 ^ 26, nccl = "2.20.5", nvls = "off" }
local iv1 = ranges.lookup("collective", { vendor = "NVIDIA", style = "all_reduce",
                                          scale = "node", gen = "hopper" })
t.is(one.range.regime, iv1.key, "one node: the one-node regime, " .. iv1.key)
t.ok(not said(one, "nccl=") and not said(one, "nvls="), "nccl and nvls given: not defaults")
t.ok(said(one, "one node: none crossed"), "one node: its NICs crossed by none")
-- A node built from a card: no NICs, said.
local pcie = gp.comm { gpu = "h100-pcie", bytes = 2 ^ 20 }
t.ok(said(pcie, "nics=0 (the node built from the card"), "--gpu: no NICs")
t.ok(said(pcie, "this node's nvlink-bridge does not multicast, so no NVLS"),
  "a bridged pair: no NVLS, the fabric by its id")
-- An MI300X node: its xGMI by its id (not the kind "nvlink" the fabric
-- entry files it under) and RCCL, AMD's library, named beside the NCCL
-- release whose model prices it.
local amd = gp.comm { gpu = "mi300x", bytes = 2 ^ 20 }
t.ok(said(amd, "this node's xgmi4 does not multicast"), "mi300x: xgmi4 named")
t.ok(said(amd, "AMD runs RCCL, priced by this model"), "mi300x: RCCL named")
t.ok(not said(pcie, "runs RCCL") and not said(pcie, "runs HCCL"), "an NVIDIA card: NCCL alone")
t.done_testing()
