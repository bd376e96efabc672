-- gp.train's moe_router_dtype fp64 (Megatron-Core's moe_router_dtype
-- "fp64", verl's for DeepSeek-V3): the router's gating GEMM and its two
-- gradients run as torch.mm in float64 at the card's FP64 rate, beside
-- the casts to and from fp64 (engine/train_layer.c router_fp64_costs).
-- Run with ./gpuplan run tests/lua/router_fp64.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(9)

-- Qwen3-30B-A3B (hidden 2048, 128 experts) on 8 H20s, EP 8, TP 1: a
-- micro-batch of 4096 tokens, all routed on each rank (no SP shard).
local job = { model = "qwen3-30b-a3b", gpu = "h20", gpus = 8, ep = 8, method = "pretrain",
              seq = 4096, global_batch = 8 }
local base = gp.train(job)
local r64 = gp.train(t.with(job, { moe_router_dtype = "fp64" }))
local okf, ef = pcall(gp.train, t.with(job, { moe_router_dtype = "fp32" }))
t.like(not okf and tostring(ef) or "", "router's GEMM stays Transformer Engine's",
  "fp32 without unfused_act: refused (TE's 16-bit GEMM, nothing to price)")

-- Hand values.  The GEMM: 2 x 4096 x 128 x 2048 = 2.147e9 FLOP at the
-- H20's 1 TFLOPS of FP64 (catalog fp64; it has no FP64 tensor cores):
-- 2.147 ms forward, twice that backward (dgrad and wgrad).  The casts,
-- each a read and a write: forward the input 4096 x 2048 x (2 + 8) B,
-- the weight 128 x 2048 x (2 + 8), the logits 4096 x 128 x 8 --
-- 90,701,824 B; backward the logits' gradient 4096 x 128 x 8, the
-- weight and the input cast again, the input's gradient back to bf16
-- (8 + 2) and the weight's -- 177,209,344 B.  Their time lies between
-- the H20's 4.0 TB/s and half of it (the catalog's achievable share is
-- above one half): the bounds below, a test the GEMM's rate and the
-- casts' bytes must both pass.
local f, fp64, bw = 2 * 4096 * 128 * 2048, 1e12, 4.0e12
local cf, cb = 90701824, 177209344
local op = t.op(r64, "moe_router")
t.ok(op.fwd >= f / fp64 + cf / bw and op.fwd <= f / fp64 + cf / (bw / 2),
  string.format("forward %.4f ms: the fp64 GEMM 2.147 ms and the casts", op.fwd * 1e3))
t.ok(op.bwd >= 2 * f / fp64 + cb / bw and op.bwd <= 2 * f / fp64 + cb / (bw / 2),
  string.format("backward %.4f ms: two fp64 GEMMs 4.295 ms and the casts", op.bwd * 1e3))
-- The 16-bit router is a tensor-core GEMM: a small share of that.
t.ok(t.op(base, "moe_router").fwd < op.fwd / 20, "the bf16 router is far cheaper")
t.ok(r64.step_s > base.step_s, "the step takes longer")

-- Under sequence parallelism each rank routes its shard of the tokens
-- (Megatron's MoE layer takes [s/tp, b, h]): TP 2 with SP halves the
-- rows, 2048, and the GEMM's time with them (1.074 ms forward).
local sp = gp.train(t.with(job, { tp = 2, sp = true, ep = 4, moe_router_dtype = "fp64" }))
local ops = t.op(sp, "moe_router")
local cfs = 2048 * 2048 * 10 + 128 * 2048 * 10 + 2048 * 128 * 8
t.ok(ops.fwd >= f / 2 / fp64 + cfs / bw and ops.fwd <= f / 2 / fp64 + cfs / (bw / 2),
  string.format("SP shard: forward %.4f ms, the GEMM over 2048 rows", ops.fwd * 1e3))

-- A dense model has no router: refused, not ignored.
local ok, e = pcall(gp.train, t.with(job, { model = "llama3-8b", ep = 1,
                                              moe_router_dtype = "fp64" }))
t.like(not ok and tostring(e) or "", "moe_router_dtype is a MoE router's; llama3%-8b has no "
  .. "experts", "a dense model: refused, named")
-- The values are declared: anything else is an error naming the option.
ok, e = pcall(gp.train, t.with(job, { moe_router_dtype = "fp16" }))
t.like(not ok and tostring(e) or "", "moe_router_dtype", "fp16: refused, named")
-- rl takes it for the actor's update and forwards.
local rl = { model = "qwen3-30b-a3b", gpu = "h20", gpus = 16, ep = 8, zero = 1, prompts = 16,
             group = 4, prompt_len = 256, response_len = 512, recompute = "full",
             offload_states = true }
t.ok(gp.rl(t.with(rl, { moe_router_dtype = "fp64" })).step_s > gp.rl(rl).step_s,
  "rl: the actor's phases take the fp64 router")

t.done_testing()
