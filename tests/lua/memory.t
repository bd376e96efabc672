-- gp.memory{} and core.memory against hand-derived numbers, and its errors.
-- Run with ./gpuplan run tests/lua/memory.t.
local t = require "tap"
local gp = require "gpuplan"
local memory = require "gpuplan.memory"
local core = require "gpuplan.core"

t.plan(22)

local GiB = 2 ^ 30
-- Llama-2-7B params: 32 (4 h^2 + 3 h f + 2h) + h + 2 V h = 6,738,415,616.
local P7 = 6738415616

local function comp(r, name)
  for _, c in ipairs(r.components) do if c.name == name then return c.bytes end end
  return 0
end
local function states(r)
  return comp(r, "weights") + comp(r, "grads") + comp(r, "master") + comp(r, "optimizer")
end

-- 7B full fine-tune, AdamW mixed precision: 16 B/param of model states
-- (ZeRO paper sec. 3.1), 107.8 GB; does not fit one 80 GB card.
local r = gp.memory { model = "llama2-7b", capacity = 80e9, method = "full" }
t.near(states(r), 16 * P7, 1e-12, "7B full FT model states = 16 B/param")
t.is(r.fits, false, "7B full FT does not fit 80 GB")
t.is(r.largest, "optimizer", "largest term is the optimizer")
-- budget 0.9 * 80e9 = 72e9 (default 10% margin).
t.near(r.budget, 72e9, 1e-12, "budget = capacity - 10% margin")
t.near(r.short_by, r.total - 72e9, 1e-12, "short_by = total - budget")
t.ok(memory.verdict(r):match("^fits: no %(short by %d+%.%d GiB; largest term optimizer"),
  "verdict line names the shortfall and the largest term")

-- ZeRO-3 over 8 divides model states by 8.
local r8 = gp.memory { model = "llama2-7b", capacity = 80e9, gpus = 8, zero = 3 }
t.near(states(r8), 16 * P7 / 8, 1e-12, "ZeRO-3 over 8: states / 8")
t.is(r8.dp, 8, "dp = gpus / (tp*pp*cp)")

-- Llama-2-70B bf16 KV: 2 * 80 * 8 * 128 * 2 B * 4096 = 1.25 GiB.
local ri = gp.memory { model = "llama2-70b", capacity = 80e9, gpus = 8, tp = 8,
                       method = "infer", ctx = 4096, concurrency = 1 }
t.near(ri.kv_per_seq * 8, 1.25 * GiB, 1e-12, "70B KV 4096 tokens = 1.25 GiB (8 TP shards)")
-- fp8 KV halves it.
local rf = gp.memory { model = "llama2-70b", capacity = 80e9, gpus = 8, tp = 8,
                       method = "infer", ctx = 4096, kv = "fp8" }
t.near(rf.kv_per_seq * 8, 0.625 * GiB, 1e-12, "fp8 KV = 0.625 GiB")

-- 70B QLoRA base: 68,451,041,280 linear weights at 4.126953125 bits +
-- 525,606,912 embedding/norm params at 2 B = 36,362,993,664 B (~36 GB).
local rq = gp.memory { model = "llama2-70b", capacity = 80e9, method = "qlora",
                       seq = 512, recompute = "full" }
t.near(comp(rq, "weights"), 36362993664, 1e-12, "70B QLoRA NF4 base = 36.4 GB")
t.is(comp(rq, "grads"), 0, "frozen base: no grads")
-- LoRA r=8 on q,v of 70B: 80 * 8 * ((8192+8192) + (8192+1024)) = 16,384,000.
t.near(rq.trainable, 16384000, 1e-12, "QLoRA trainable = r (in + out) per q, v")

-- Weight formats: GGUF-style bits per weight and named formats.
t.near(memory.weight_format("4.85").bits, 4.85, 0, "bits-per-weight string")
t.is(memory.weight_format("nf4").group, 64, "nf4 block of 64")

-- Errors are clear.
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, tp = 3, gpus = 3 } end,
  "tp 3 does not divide the 32 attention heads", "tp not dividing heads")
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, seq = -5 } end,
  "seq must be a positive number", "negative seq")
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, recipe = "fp7" } end,
  "unknown recipe 'fp7'", "unknown recipe")
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, method = "dpo" } end,
  "unknown method 'dpo'", "unknown method")
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, method = "infer",
                                weights = "int3" } end,
  "unknown weight format 'int3'", "unknown weight format")
t.raises(function() core.memory(gp.catalog():get("models", "llama2-7b"),
                                { capacity = 0 / 0, seq = 1 }) end,
  "memory.capacity must be finite", "NaN capacity")
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, gpus = 8, tp = 8,
                                zero = 5 } end,
  "zero must be 0, 1, 2 or 3", "zero 5")
t.done_testing()
