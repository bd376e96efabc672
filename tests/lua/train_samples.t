-- gp.train's run given as its dataset: samples x sample_tokens (the
-- sequence unless given) x epochs set the tokens, as a fine-tuning recipe
-- states its run (a dataset and num_train_epochs); tokens with them is
-- refused.
-- Run: prove --exec './gpuplan run' tests/lua/train_samples.t
local t = require "tap"
local gp = require "gpuplan"

local job = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, method = "lora" }
-- 50000 samples x seq 2048 (the default sequence of a fine-tune) x 3
-- epochs = 307200000 tokens, the run of tokens = 3.072e8 exactly
local r = gp.train(t.with(job, { samples = 50000, epochs = 3 }))
local same = gp.train(t.with(job, { tokens = 307200000 }))
t.is(r.tokens, 307200000, "50000 x 2048 x 3 tokens")
t.near(r.train_s, same.train_s, 1e-12, "the run's time is that of tokens = 3.072e8")
t.ok(t.said(r, "tokens=3.072e+08 (samples 50000 x 2048 (seq: each sample a whole "
  .. "sequence) x epochs 3)", true), "the defaults line says how the tokens were made")
-- a mean length and half an epoch: 50000 x 700 x 0.5 = 17500000
local h = gp.train(t.with(job, { samples = 50000, epochs = 0.5, sample_tokens = 700 }))
t.is(h.tokens, 17500000, "50000 x 700 x 0.5 tokens")
-- epochs default 1: 1000 x 2048
t.is(gp.train(t.with(job, { samples = 1000 })).tokens, 2048000, "one epoch by default")
t.raises(function() gp.train(t.with(job, { samples = 1000, tokens = 1e9 })) end,
  "both set the run's tokens", "tokens and samples: refused")
t.raises(function() gp.train(t.with(job, { epochs = 2 })) end,
  "give samples = N with it", "epochs without samples: refused")
t.raises(function() gp.train(t.with(job, { samples = 10, sample_tokens = 4096 })) end,
  "is more than seq 2048", "a sample longer than the sequence: refused")
t.raises(function() gp.train(t.with(job, { samples = 10, epochs = 0 })) end,
  "epochs must be a number in %(0, 1e6%]", "epochs 0: refused")
t.done_testing()
