-- packed_len: samples packed into each sequence attend only within
-- themselves (variable-length attention over cu_seqlens, as NeMo's packed
-- SFT/PEFT runs it: "the complexity of attention remains at sum_i s_i^2",
-- NeMo docs/source/features/throughput_optimizations.rst).  Attention and
-- its model FLOPs run over packed_len keys a token; the linears over every
-- token of the sequence, as before.
-- Run with ./gpuplan run tests/lua/packed_len.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(10)

-- Llama 2 7B full SFT on 8 H100s, 4096-token sequences, fp8.
local job = { model = "llama2-7b", gpu = "h100-sxm", gpus = 8, method = "full", seq = 4096,
  precision = "fp8", batch = 1, global_batch = 32, margin = 0 }
local whole = gp.train(job)
local packed = gp.train(t.with(job, { packed_len = 1024 }))

-- Model FLOPs: the forward's attention is 4 FLOP per key, head
-- dimension and head a token and layer (QK^T and PV, 2 each), over the
-- whole sequence (Megatron's formula, no causal half); times 3 with the
-- backward.  Packed at 1024 of 4096 the step loses, exactly,
-- tokens x 3 x 4 x layers x hidden x (4096 - 1024), hidden = heads x
-- head_dim = 4096 and 32 layers for Llama 2 7B (1e-9: float rounding).
local lost = whole.tokens_per_step * 3 * 4 * 32 * 4096 * (4096 - 1024)
t.near(whole.model_flops - packed.model_flops, lost, 1e-9,
  "model FLOPs lose the attention over the keys outside each sample")

-- The layers' operators: attention is cheaper forward and backward, every
-- linear and elementwise operator is unchanged (same shapes, same tokens).
local op = t.op
t.ok(op(packed, "attention").fwd < op(whole, "attention").fwd
  and op(packed, "attention").bwd < op(whole, "attention").bwd, "attention cheaper both ways")
t.near(op(packed, "qkv").fwd + op(packed, "qkv").bwd,
  op(whole, "qkv").fwd + op(whole, "qkv").bwd, 1e-12, "the QKV projection unchanged")
t.near(op(packed, "mlp_up").fwd + op(packed, "mlp_up").bwd,
  op(whole, "mlp_up").fwd + op(whole, "mlp_up").bwd, 1e-12, "the MLP unchanged")
t.ok(packed.step_s < whole.step_s, "so the step is shorter")

-- Samples as long as the sequence are the unpacked step, exactly.
t.near(gp.train(t.with(job, { packed_len = 4096 })).step_s, whole.step_s, 1e-12,
  "packed_len = seq is the unpacked step")

-- A plan prices every layout it ranks with the packed attention.
local sw = gp.sweep { model = "llama2-7b", gpu = "h100-sxm", gpus = 8, method = "full",
  seq = 4096, packed_len = 1024, top = 1 }
local sw0 = gp.sweep { model = "llama2-7b", gpu = "h100-sxm", gpus = 8, method = "full",
  seq = 4096, top = 1 }
t.ok(sw.results[1].step_s < sw0.results[1].step_s, "plan: the best packed layout is faster")

-- Refused: samples longer than their sequence,
t.raises(function() gp.train(t.with(job, { packed_len = 5000 })) end,
  "at most seq (got packed_len 5000, seq 4096)", "longer than seq", true)
-- ... shorter than one token (0 alone means not packed),
t.raises(function() gp.train(t.with(job, { packed_len = 0.5 })) end,
  "at least 1 token, or 0 for none (got packed_len 0.5)", "below one token", true)
-- and a value that is not a number.
t.raises(function() gp.train(t.with(job, { packed_len = "short" })) end,
  "train: packed_len must be a finite number (got string 'short')", "a string refused", true)
