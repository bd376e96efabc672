-- torchtitan's per-op selective activation checkpointing (recompute = "op";
-- engine/memory_act.c act_op_saved): torchtitan e7c0cae's _save_list keeps
-- aten.mm outputs but every second one, SDPA's outputs, reduce_scatter's and
-- aten.max's; torchao's fp8 linears call aten.mm on Float8Tensors (their
-- handler runs _scaled_mm inside, a 16-bit output), so the policy keeps the
-- same outputs as at bf16.
-- Llama 3 8B as torchtitan's llama3_8b.toml runs it: seq 8192, local batch 2.
-- Run with ./gpuplan run tests/lua/act_op.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(10)

local base = { model = "llama3-8b", gpu = "h200-sxm", gpus = 8, zero = 3, fsdp = "full_shard",
               precision = "fp8", seq = 8192, batch = 2, global_batch = 16 }
local function run(o) return gp.train(t.with(base, o)) end
local function part(r, n) for _, p in ipairs(r.parts) do if p.name == n then return p.seconds end end return 0 end

-- memory.act_layer: one layer's saved bytes per micro-batch, 2 x 8192 =
-- 16384 tokens, 16-bit activations: the block input (4096) and the SDPA
-- output (32 heads x 128 = 4096), 2 B each, the log-sum-exp (4 B x 32
-- heads), and the 1st, 3rd, 5th, 7th aten.mm outputs of wq, wk, wv, wo, w1,
-- w3, w2: q (4096), v (8 KV heads x 128 = 1024), w1 (14336), w2 (4096):
-- 2 x (8192 + 23552) + 128 = 63616 B a token.  Exact (1e-9: the same sums).
local b16 = run { recompute = "op", precision = "bf16" }
t.near(b16.memory.act_layer, 16384 * (2 * (8192 + 4096 + 1024 + 14336 + 4096) + 4 * 32), 1e-9,
       "bf16: every other matmul output as well")
-- fp8: the same, the kept mm outputs 16-bit (the Float8Tensor mm returns
-- its input's original dtype).
local f8 = run { recompute = "op" }
t.near(f8.memory.act_layer, 16384 * (2 * (8192 + 4096 + 1024 + 14336 + 4096) + 4 * 32), 1e-9,
       "fp8: the same outputs kept as at bf16")
-- TP 2 with sequence parallelism: the block input and the two
-- reduce_scatter outputs hold 4096 / 2 each, the SDPA output and the
-- log-sum-exp the rank's 16 heads; the kept mm outputs the rank's columns,
-- q 2048, v 512, w1 7168, and w2's partial sums before the reduction, the
-- whole 4096: 2 x (3 x 2048 + 2048 + 2048 + 512 + 7168 + 4096) + 4 x 16 B.
local tp = run { recompute = "op", tp = 2, sp = true }
t.near(tp.memory.act_layer, 16384 * (2 * (3 * 2048 + 2048 + 2048 + 512 + 7168 + 4096) + 4 * 16), 1e-9,
       "TP 2 + SP: shards, and the reduce_scatter outputs kept")

-- The re-run, in the step's hardware FLOPs against no recompute: the
-- even-numbered matmuls wk, wo and w3, 4096 x (1024 + 4096 + 14336) weights
-- a layer, 2 FLOPs each per token, 32 layers, 16 x 8192 tokens a step.
local r0 = run { recompute = "none" }
t.near(f8.hw_flops - r0.hw_flops, 2 * 32 * 4096 * (1024 + 4096 + 14336) * 16 * 8192, 1e-9,
       "fp8: the even-numbered matmuls again")
t.near(b16.hw_flops - gp.train(t.with(base, { recompute = "none", precision = "bf16" })).hw_flops,
       2 * 32 * 4096 * (1024 + 4096 + 14336) * 16 * 8192, 1e-9,
       "bf16: the even-numbered matmuls again")
-- Time: fp8's op keeps three GEMMs' outputs of five as bf16's does: less
-- than the whole forward but the attention (full - selective).
t.ok(part(f8, "recompute") < part(run { recompute = "full" }, "recompute") -
     part(run { recompute = "selective" }, "recompute"),
     "fp8: the kept matmuls are not re-run")
-- bf16 keeps three GEMMs' outputs of five: less time than fp8's op re-run
-- would take at the same precision (full - selective).
t.ok(part(b16, "recompute") < part(run { recompute = "full", precision = "bf16" }, "recompute") -
     part(run { recompute = "selective", precision = "bf16" }, "recompute"),
     "bf16: the kept matmuls are not re-run")

-- Refusals, each naming the input.
t.raises(function() run { model = "mixtral-8x7b", recompute = "op" } end,
         "recompute op is priced for dense decoder layers", "MoE layers refused", true)
t.raises(function() run { recompute = "op", recompute_modules = "layernorm" } end,
         "recompute_modules applies to recompute = selective (op keeps", "not with recompute_modules", true)
t.raises(function() run { recompute = "op", method = "lora" } end,
         "adapters (LoRA)", "adapters refused", true)
