#!/usr/bin/env lua
-- runtime autoawq: AutoAWQ's fused modules (v0.1.6, fuse_layers=True) run
-- in eager PyTorch, one model call a token from Python (its
-- examples/benchmark.py loop): gpuplan.infer M.host_ops.autoawq, 12
-- kernel launches a Llama-like layer at decode, against the 49 of the
-- plain-PyTorch block eager-pytorch prices.
local t = require "tap"
local gp = require "gpuplan"

-- Vicuna 7B (Llama 2 7B's shape) in AWQ 4-bit on one RTX 4090, a 64-token
-- prompt and 64 out: the AutoAWQ README's benchmark row.
local vicuna = { name = "Vicuna 7B", layers = 32, hidden = 4096, heads = 32, kv_heads = 32,
  head_dim = 128, ffn_hidden = 11008, ffn_gated = true, vocab = 32000, tied_embeddings = false }
local base = { model = vicuna, gpu = "rtx-4090", weights = "int4-g128-fp16", kv = "fp16",
               input = 64, output = 64, batch = 1 }

-- Host time of a decode step (engine/infer.c infer_eager_host): (layers x
-- ops a layer + 10 ops outside the layers) x GP_EAGER_OP_TIME 24.84 us.
-- AutoAWQ: (32 x 12 + 10) x 24.84 us = 394 x 24.84e-6 = 9.78696 ms; Hugging
-- Face's block: (32 x 49 + 10) x 24.84e-6 = 1578 x 24.84e-6 = 39.19752 ms.
-- Products of two decimals: reltol 1e-12.
local a = gp.infer(t.with(base, { runtime = "autoawq" }))
local e = gp.infer(t.with(base, { runtime = "eager-pytorch" }))
t.near(a.decode.host_time, 394 * 24.84e-6, 1e-12, "autoawq: 12 ops a layer, (32 x 12 + 10) x 24.84 us")
t.near(e.decode.host_time, 1578 * 24.84e-6, 1e-12, "eager-pytorch: 49 ops a layer")
-- The GPU's own work is the same kernels' (both eager, the AWQ GEMV for
-- one token): only the host's dispatch differs.
t.near(a.decode.gpu_time, e.decode.gpu_time, 1e-12, "the same GPU time a step")
-- The step is the slower of host and GPU (the host runs ahead): 9.79 ms
-- host against about 6.6 ms of GPU work here, so the host sets it.
t.ok(a.decode.host_time > a.decode.gpu_time, "the host still paces the 7B step")
t.near(a.itl_s, math.max(a.decode.host_time, a.decode.gpu_time), 1e-9, "itl = max(host, GPU)")

-- The validation predictor takes it from workload.framework.
local predict = require "gpuplan.predict.infer"
local case = { model = vicuna, hardware = { gpu = "rtx-4090", gpus = 1 }, parallel = {},
  workload = { weight_dtype = "int4-g128-fp16", kv_dtype = "fp16", batch = 1, input_len = 64,
               output_len = 64, framework = "autoawq" },
  measured = { metric = "decode_tokens_per_s" }, source = { title = "AutoAWQ README" } }
local res = predict(case, gp.catalog())
local rt
for _, d in ipairs(res.defaults) do rt = rt or d:match("^runtime=(%S+)") end
t.is(rt, "autoawq", "workload.framework autoawq -> runtime autoawq")
-- decode_tokens_per_s is one stream's 1 / ITL.
t.near(res.value, 1 / a.itl_s, 1e-9, "the case reads 1 / itl_s")

-- AutoAWQ serves AWQ's 4-bit checkpoints alone (from_quantized, w_bit 4):
-- the default 16-bit weights, fp8 or 8-bit ones are no AutoAWQ run, refused
-- by name where they were priced with its op count in silence (the
-- default is the RTX 4090's 16-bit dtype, bf16).
t.raises(function() gp.infer(t.with(base, { runtime = "autoawq", weights = "bf16" })) end,
  "runtime autoawq serves AWQ's 4-bit checkpoints", "autoawq with bf16 weights: refused", true)
t.raises(function() gp.infer(t.with(base, { runtime = "autoawq", weights = "int8" })) end,
  "give weights = awq or int4 (got int8)", "autoawq with int8 weights: refused", true)
local nw = t.with(base, { runtime = "autoawq" })
nw.weights = nil
t.raises(function() gp.infer(nw) end, "(got bf16, the default)",
  "autoawq with no weights: the default's name", true)
t.ok(pcall(gp.infer, t.with(base, { runtime = "autoawq", weights = "awq" })), "awq: accepted")

-- AutoAWQ has no tensor parallelism (accelerate's layer-wise device_map)
-- and a 16-bit cache alone (WindowedCache's .half()): refused by name.
local awq = t.with(base, { runtime = "autoawq", weights = "awq" })
t.raises(function() gp.infer(t.with(awq, { tp = 2 })) end,
  "tp 2 with runtime = autoawq: AutoAWQ splits a model over its GPUs by whole layers",
  "autoawq tp 2: refused", true)
t.ok(pcall(gp.infer, t.with(awq, { pp = 2 })), "autoawq pp 2 (the layer split): accepted")
t.raises(function() gp.infer(t.with(awq, { kv = "fp8" })) end,
  "kv fp8 with runtime = autoawq: AutoAWQ's fused modules keep a 16-bit cache",
  "autoawq fp8 cache: refused", true)
t.ok(pcall(gp.infer, t.with(awq, { kv = "fp16" })), "autoawq fp16 cache: accepted")

t.done_testing()
