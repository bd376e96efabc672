-- A TP group over whole nodes (gpuplan.infer's tp_over_nodes): SGLang's
-- `--tp 16 --nnodes 2` (sgl-project/sglang benchmark/deepseek_v3/README.md)
-- and vLLM's tensor_parallel_size across a Ray cluster run one; infer
-- refused every TP group past a node ("give --tp 8 --pp 2").  Its
-- all-reduces cross the nodes' NICs, priced by the collective model.
-- Run: prove --exec './gpuplan run' tests/lua/tp_over_nodes.t
local t = require "tap"
local gp = require "gpuplan"

-- whether a defaults line holds the text (tap.said, plain)
local function said(r, text) return t.said(r, text, true) end

local job = { model = "llama3-70b", gpu = "h100-sxm", tp = 16, runtime = "vllm", batch = 1 }
local r = gp.infer(job)
t.ok(r.fits and r.tp == 16 and r.gpus == 16, "vllm: tp 16 on 8-GPU H100 nodes is priced")
t.ok(said(r, "tp 16 over 2 nodes of 8"), "the defaults say the group spans 2 nodes")
t.ok(said(r, "8 x ib-ndr-400 NICs"), "and the NICs its all-reduces cross (dgx-h100's)")

-- The same group on one hypothetical 16-GPU NVLink node: every other
-- term of the decode step is the same (tp, weights, KV, graphs; no
-- custom all-reduce past 8 GPUs), so the ITL moves by the all-reduces
-- alone.  llama3-70b: 80 layers, 2 all-reduces a layer (after attention
-- and after the MLP), each of hidden 8192 x 2 B (bf16) x batch 1 =
-- 16384 B: ITL(2 nodes) - ITL(one node) = 160 x (AR_2nodes - AR_1node),
-- each AR gp.comm's for 16 GPUs.  Tolerance 1e-6: the sums' rounding.
local nvl16 = { id = "nvl16", gpu = "h100-sxm", gpus = 16, scaleup = "nvlink4", nics = 8,
                nic_fabric = "ib-ndr-400" }
local one = gp.infer(t.with(job, { system = nvl16 }))
local ar2 = gp.comm { system = "dgx-h100", gpus = 16, bytes = 16384 }
local ar1 = gp.comm { system = nvl16, gpus = 16, bytes = 16384 }
t.is(ar2.nodes, 2, "gp.comm: 16 GPUs of dgx-h100 are 2 nodes")
t.near(r.itl_s - one.itl_s, 160 * (ar2.time - ar1.time), 1e-6,
  "ITL over 2 nodes - ITL on one node = 160 all-reduces' difference")

-- SGLang too; the default runtime refuses it, naming the runtimes that
-- run one, and a group that does not fill whole nodes is refused.
local s = gp.infer(t.with(job, { runtime = "sglang" }))
t.ok(s.fits and said(s, "SGLang's --tp N --nnodes M"), "sglang: tp 16 priced, its source said")
local plain = t.with(job)
plain.runtime = nil
t.raises(function() gp.infer(plain) end,
  "runtime = sglang or vllm, whose TP group spans whole nodes",
  "the default runtime: refused, naming sglang and vllm")
-- its own runtime named as the way out read wrong: the nearest whole
-- nodes instead, 12 // 8 x 8 = 8 and (12 // 8 + 1) x 8 = 16
t.raises(function() gp.infer(t.with(job, { tp = 12, gpus = 12 })) end,
  "its TP group spans whole nodes, tp a multiple of 8 (tp 8 or 16)",
  "tp 12 on vllm: not whole nodes, refused with the whole-node groups", true)
local ok, e = pcall(gp.infer, t.with(job, { tp = 12, gpus = 12 }))
t.ok(not ok and not tostring(e):find("or runtime =", 1, true),
  "... without naming vllm, its runtime already, as the way out")
-- A node without NICs cannot reach the other: refused in comm's words.
local nonic = { id = "nonic", gpu = "h100-sxm", gpus = 8, scaleup = "nvlink4", nics = 0 }
t.raises(function() gp.infer(t.with(job, { system = nonic })) end,
  "has no NICs", "a system without NICs: refused")
t.done_testing()
