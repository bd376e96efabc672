-- The MoE serving model (lua/gpuplan/serve.lua node_of) on a node without
-- NICs: an instance whose TP (and the EP group that fills it) spans nodes,
-- or disaggregated pools whose KV moves over the NICs, is refused naming
-- the node and what to give, as train's and comm's refusals do.  The
-- engine's own refusals said "decode tp 16 spans 2 nodes, but the system
-- has no NICs" and "...over the NICs; the system has none": neither which
-- node nor how to give it NICs.  MI300X has no catalog system: its node is
-- built from the GPU (8 on xGMI, no NICs).
-- Run with ./gpuplan run tests/lua/serve_no_nics.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(4)

t.raises(function() gp.infer { model = "deepseek-v3", gpu = "mi300x", gpus = 16, tp = 16, ep = 16,
  dp_attention = true } end,
  "infer: 16 GPUs span 2 nodes of 8, but the node built from mi300x (xgmi4, no catalog system) "
  .. "has no NICs: give nics = N and nic_fabric = ID (scale-out fabrics: ",
  "EP16 over two NIC-less nodes: names the node and what to give", true)
t.raises(function() gp.infer { model = "deepseek-v3", gpu = "mi300x", gpus = 16, tp = 8, ep = 8,
  disagg = true, prefill_gpus = 8 } end,
  "infer: disaggregation moves the KV cache between pools over the NICs, but the node built from "
  .. "mi300x (xgmi4, no catalog system) has no NICs: give nics = N and nic_fabric = ID",
  "disaggregation without NICs: names the node and what to give", true)
-- Given NICs, both run.
t.ok(pcall(gp.infer, { model = "deepseek-v3", gpu = "mi300x", gpus = 16, tp = 16, ep = 16,
  dp_attention = true, nics = 8, nic_fabric = "roce-400" }), "... with nics and nic_fabric: EP16 runs")
t.ok(pcall(gp.infer, { model = "deepseek-v3", gpu = "mi300x", gpus = 16, tp = 8, ep = 8,
  disagg = true, prefill_gpus = 8, nics = 8, nic_fabric = "roce-400" }),
  "... and the disaggregated pools")
