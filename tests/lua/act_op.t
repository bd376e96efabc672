-- torchtitan's per-op selective activation checkpointing (recompute = "op";
-- engine/memory_act.c act_op_saved): torchtitan e7c0cae's _save_list keeps
-- aten.mm outputs but every second one, SDPA's outputs, reduce_scatter's and
-- aten.max's; fp8 linears run aten._scaled_mm, which the list does not hold.
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
-- 16384 tokens, 16-bit activations.  fp8 linears: the block input (4096) and
-- the SDPA output (32 heads x 128 = 4096), 2 B each, and the log-sum-exp
-- (4 B x 32 heads): 16512 B a token, 270532608 B.  Exact (1e-9: the same sums).
local f8 = run { recompute = "op" }
t.near(f8.memory.act_layer, 16384 * (2 * (4096 + 4096) + 4 * 32), 1e-9,
       "fp8: the block input and SDPA's outputs only")
-- bf16: also the 1st, 3rd, 5th, 7th aten.mm outputs of wq, wk, wv, wo, w1,
-- w3, w2: q (4096), v (8 KV heads x 128 = 1024), w1 (14336), w2 (4096):
-- 2 x (8192 + 23552) + 128 = 63616 B a token.
local b16 = run { recompute = "op", precision = "bf16" }
t.near(b16.memory.act_layer, 16384 * (2 * (8192 + 4096 + 1024 + 14336 + 4096) + 4 * 32), 1e-9,
       "bf16: every other matmul output as well")
-- TP 2 with sequence parallelism: the block input and the two
-- reduce_scatter outputs hold 4096 / 2 each, the SDPA output and the
-- log-sum-exp the rank's 16 heads: 2 x (3 x 2048 + 2048) + 4 x 16 B.
local tp = run { recompute = "op", tp = 2, sp = true }
t.near(tp.memory.act_layer, 16384 * (2 * (3 * 2048 + 2048) + 4 * 16), 1e-9,
       "TP 2 + SP: shards, and the reduce_scatter outputs kept")

-- The re-run, in the step's hardware FLOPs against no recompute: fp8 re-runs
-- every linear of the 32 layers, 2 x 218103808 weights (4096 x (4096 + 1024 +
-- 1024 + 4096) + 3 x 4096 x 14336) per token, 16 x 8192 tokens a step.
local r0 = run { recompute = "none" }
t.near(f8.hw_flops - r0.hw_flops, 2 * 32 * 218103808 * 16 * 8192, 1e-9,
       "fp8: every linear's forward again")
-- bf16 re-runs wk, wo and w3: 4096 x (1024 + 4096 + 14336) weights a layer.
t.near(b16.hw_flops - gp.train(t.with(base, { recompute = "none", precision = "bf16" })).hw_flops,
       2 * 32 * 4096 * (1024 + 4096 + 14336) * 16 * 8192, 1e-9,
       "bf16: the even-numbered matmuls again")
-- Time: fp8's op re-runs the whole forward of a layer but its fused
-- attention; selective re-runs just that attention, full all of it: the two
-- recompute parts add up to full's (the same op times, 1e-9).
t.near(part(f8, "recompute") + part(run { recompute = "selective" }, "recompute"),
       part(run { recompute = "full" }, "recompute"), 1e-9,
       "fp8: op + selective = full recompute time")
-- bf16 keeps three GEMMs' outputs of five: less time than fp8's op re-run
-- would take at the same precision (full - selective).
t.ok(part(b16, "recompute") < part(run { recompute = "full", precision = "bf16" }, "recompute") -
     part(run { recompute = "selective", precision = "bf16" }, "recompute"),
     "bf16: the kept matmuls are not re-run")

-- Refusals, each naming the input.
t.raises(function() run { model = "mixtral-8x7b", recompute = "op" } end,
         "recompute op is priced for dense decoder layers", "MoE layers refused", true)
t.raises(function() run { recompute = "op", recompute_modules = "layernorm" } end,
         "recompute_modules applies to recompute = none or selective", "not with recompute_modules", true)
t.raises(function() run { recompute = "op", method = "lora" } end,
         "adapters (LoRA)", "adapters refused", true)
