-- vLLM's custom all-reduce (SGLang runs the same kernels): a TP group of
-- 2, 4, 6 or 8 GPUs on one host of a full NVLink mesh all-reduces messages
-- below 8 MiB with peer-to-peer kernels, not NCCL (engine/infer.c
-- custom_ar_time; lua/gpuplan/infer.lua custom_ar_gpus).  One stage (each
-- rank reads its n - 1 peers' buffers) for n <= 8 below 256 KiB and n <= 4
-- below 512 KiB, else two (2 (n - 1) / n of the buffer through each rank),
-- fitted to vLLM PR #24111's H100 timing: 5.15 us + (n - 1) S / (0.720 x
-- link) and 11.41 us + 2 (n - 1) / n S / (0.617 x link).
-- Run with ./gpuplan run tests/lua/custom_ar.t.
local t = require "tap"
local gp = require "gpuplan"
local infer = require "gpuplan.infer"

t.plan(13)

local cat = gp.catalog()
-- Llama-3.1-8B: 32 layers of hidden 4096; a decode step all-reduces the
-- batch's bf16 activations twice a layer (after o_proj and the MLP):
-- B x 4096 x 2 bytes each, 64 calls a step.
local function comm(x)
  local a = { model = "llama3.1-8b", gpu = "h100-sxm", gpus = 8, tp = 8, batch = 16,
              runtime = "vllm", input = 128, output = 128 }
  for k, v in pairs(x or {}) do a[k] = v end
  return gp.infer(a).decode.comm_time
end
local link = 450e9     -- NVLink 4, per direction (the nvlink4 fabric's 900 GB/s bidir)

-- Batch 16 on 8 H100s: 131,072 B, below 256 KiB: one stage,
-- 5.15 us + 7 x 131072 / (0.720 x 450e9) = 5.15 + 2.832 = 7.982 us a call,
-- 64 calls: 510.8 us.  Float rounding only: 1e-9.
local one = 5.15e-6 + 7 * 131072 / (0.720 * link)
t.near(comm(), 64 * one, 1e-9, "TP 8, 128 KiB: the one-stage kernel")
-- Batch 64: 524,288 B, past 256 KiB at n = 8: two stages,
-- 11.41 us + (7/4) x 524288 / (0.617 x 450e9) = 11.41 + 3.304 = 14.71 us.
local two = 11.41e-6 + 2 * 7 / 8 * 524288 / (0.617 * link)
t.near(comm { batch = 64 }, 64 * two, 1e-9, "TP 8, 512 KiB: the two-stage kernel")
-- At n = 4 the one-stage kernel runs up to 512 KiB: batch 32 on 4 GPUs,
-- 262,144 B: 5.15 us + 3 x 262144 / (0.720 x 450e9) = 7.577 us.
t.near(comm { gpus = 4, tp = 4, batch = 32 }, 64 * (5.15e-6 + 3 * 262144 / (0.720 * link)),
       1e-9, "TP 4, 256 KiB: still one stage")

-- The runtimes without it, and the messages past its 8 MiB buffer (batch
-- 1024: 1024 x 4096 x 2 = 8 MiB), are NCCL's: the same price as the
-- generic CUDA-graph runtime's, which is dearer at the small message.
local nccl = comm { runtime = "graphs" }
t.near(comm { runtime = "trtllm" }, nccl, 1e-12, "TensorRT-LLM: NCCL's price")
t.ok(nccl > 2 * comm(), "NCCL's 128 KiB all-reduce costs over twice the custom kernel's")
t.near(comm { batch = 1024 }, comm { batch = 1024, runtime = "graphs" }, 1e-12,
       "8 MiB, the buffer's size: NCCL")

-- Which TP groups it serves: the GPUs of one host on a full NVLink mesh.
local function span(g) return infer.custom_ar_gpus("vllm", cat:get("gpus", g), nil, cat) end
t.is(span("h100-sxm"), 8, "HGX H100: the host's 8 GPUs")
-- A GB200 NVL72 compute tray runs 4 GPUs under one OS (catalog host_gpus):
-- TP 8 over two trays is NCCL's, TP 4 the custom kernel's (NVLink 5, 900
-- GB/s: 5.15 us + 3 x 131072 / (0.720 x 900e9) = 5.757 us a call).
t.is(span("gb200"), 4, "GB200: one tray's 4 GPUs")
t.near(comm { gpu = "gb200", gpus = 4, tp = 4 }, 64 * (5.15e-6 + 3 * 131072 / (0.720 * 900e9)),
       1e-9, "GB200 TP 4: the custom kernel on NVLink 5")
-- No full mesh: the V100 hybrid cube-mesh, PCIe cards.
t.is(span("v100-sxm2-32gb") + span("h100-pcie"), 0, "no custom all-reduce without NVSwitch")
t.is(infer.custom_ar_gpus("trtllm", cat:get("gpus", "h100-sxm"), nil, cat), 0,
     "TensorRT-LLM: NCCL (its own kernels are not modelled)")

-- An RL rollout engine asked for NCCL (rollout_custom_ar false, what verl's
-- vLLM rollout passes: disable_custom_all_reduce=True) all-reduces through
-- NCCL, whose per-call latency at decode sizes is above the custom
-- kernel's 5-11 us, so the same job's rollout decode is longer; on, the
-- default, equals the unstated job's.  Llama-3-8B on 8 H100s, one TP-8
-- engine in the host.
local job = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, zero = 1, rollout_tp = 8,
              prompts = 64, response_len = 1024 }
local on = gp.rl(job)
local offj = {}
for k, v in pairs(job) do offj[k] = v end
offj.rollout_custom_ar = false
local off = gp.rl(offj)
t.ok(off.rollout.decode > on.rollout.decode,
  string.format("rollout_custom_ar false: NCCL's decode %.3f s > custom %.3f s", off.rollout.decode,
    on.rollout.decode))
offj.rollout_custom_ar = true
t.is(gp.rl(offj).rollout.decode, on.rollout.decode, "rollout_custom_ar true: vLLM's default")
