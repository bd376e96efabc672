-- A weight format (weights) is the frozen base's of an adapter or a
-- served replica's.  A step that trains every weight holds them in its
-- recipe's dtype, and a given format was dropped in silence: gpuplan
-- train --weights int4 (or --weights foo) planned the bf16 full
-- fine-tune and exited 0.  Each training entry now refuses it, naming
-- the option; where the format is read it still moves the weights.
local t = require "tap"
local gp = require "gpuplan"

local base = { model = "llama3-8b", gpu = "h100-sxm" }
local WHY = "weights applies to an adapter's frozen base"

t.raises(function() gp.memory(t.with(base, { weights = "int4" })) end, WHY,
  "gp.memory, method full: refused", true)
t.raises(function() gp.memory(t.with(base, { weights = "foo" })) end, WHY,
  "gp.memory, an unknown format with method full: refused, not ignored", true)
t.raises(function() gp.memory(t.with(base, { method = "pretrain", weights = "fp8" })) end, WHY,
  "gp.memory, method pretrain: refused", true)
t.raises(function() gp.memory(t.with(base, { method = "grpo", weights = "int4" })) end, WHY,
  "gp.memory, method grpo without an adapter: refused", true)
t.raises(function() gp.train(t.with(base, { gpus = 8, weights = "int4" })) end, WHY,
  "gp.train: refused", true)
t.raises(function() gp.sweep(t.with(base, { gpus = 8, weights = "int4" })) end, WHY,
  "gp.sweep (pretrain): refused", true)
t.raises(function() gp.rl(t.with(base, { gpus = 8, weights = "int4" })) end, WHY,
  "gp.rl, a full actor: refused", true)

-- Where it is read: an adapter's base.  llama3-8b's 8.03e9 parameters
-- at 16 bits are 16.06 GB; int4 (4 bits and a 16-bit scale per 128:
-- 4.125 bits) is 4.14 GB of them, under a third.  The embedding and the
-- head may stay 16-bit, so only the bound is tested.
local b16 = gp.memory(t.with(base, { method = "lora" }))
local b4 = gp.memory(t.with(base, { method = "lora", weights = "int4" }))
t.ok(t.part(b4, "weights") < t.part(b16, "weights") / 2, "lora: int4 shrinks the base below half of bf16's")
local g4 = gp.memory(t.with(base, { method = "grpo", lora_rank = 8, weights = "int4" }))
t.ok(t.part(g4, "weights") < t.part(b16, "weights") / 2, "grpo with an adapter: the base in int4")
-- and a served replica's
local i16 = gp.memory(t.with(base, { method = "infer" }))
local i4 = gp.memory(t.with(base, { method = "infer", weights = "int4" }))
t.ok(t.part(i4, "weights") < t.part(i16, "weights") / 2, "infer: int4 weights")

t.done_testing()
