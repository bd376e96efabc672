-- mtp_layers in the memory figures: each multi-token prediction module on
-- the last pipeline stage holds one more layer of the model's last kind
-- and its 2h x h eh_proj (states and activations), its two input norms'
-- and eh_proj's inputs, the shared head's logits once more, and with
-- pp > 1 Megatron-Core's embedding copy for the MTP process -- unless
-- DualPipe holds the first stage on the same rank (DeepSeek-V3 report
-- arXiv:2412.19437 sec. 3.2.3: the "physical sharing of parameters and
-- gradients, of the shared embedding and output head").
-- Run with ./gpuplan run tests/lua/train_mtp_memory.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(9)

local function mem(o)
  local base = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, pp = 1, method = "pretrain",
                 seq = 4096, microbatches = 1 }
  for k, v in pairs(o) do base[k] = v end
  local m = gp.memory(base)
  local c = {}
  for _, x in ipairs(m.components) do c[x.name] = x.bytes end
  return m, c
end

-- Llama 3 8B (h 4096, 8 KV heads of 128, FFN 14336 gated, vocab 128256,
-- untied head).  One layer's parameters: q 4096^2 + k, v 2 x 4096 x 1024
-- + o 4096^2 + 3 x 4096 x 14336 = 218,103,808, its two norms 8192, and
-- the final norm's 4096 spread over the 32 layers (the engine averages
-- the norms over the layers): 128; eh_proj 2 x 4096^2 = 33,554,432.
-- Sum 251,666,560.  Exact integers in doubles: 1e-9 relative.
local LAYER_MTP = 218103808 + 8192 + 128 + 33554432
local m0, c0 = mem {}
local m1, c1 = mem { mtp_layers = 1 }
t.near(m1.params - m0.params, LAYER_MTP, 1e-9,
  "pp 1: the module's layer and eh_proj, 251,666,560 parameters")
-- Its weights at bf16, 2 bytes each: 503,333,120.
t.near(c1.weights - c0.weights, 2 * LAYER_MTP, 1e-9,
  "pp 1: their bf16 weights")
-- Activations, 1 micro-batch of 4096 tokens: one more layer's saved
-- tensors (act_layer, the model's own per-layer figure) and the module's
-- two RMSNorm inputs and eh_proj's 2h input, bf16: 4096 x (2 x 2 + 2 x 2)
-- x 4096 = 134,217,728 bytes.
local act = m0.act_layer + 4096 * 8 * 4096
t.near(c1.activations - c0.activations, act, 1e-9,
  "pp 1: one more layer's activations and eh_proj's inputs")
-- The logits kept for the loss: the module's head once more, twice the
-- model's alone.
t.near(c1.logits, 2 * c0.logits, 1e-9, "the head's logits once more")

-- pp 2, one micro-batch (each stage holds one): the last stage holds the
-- layer, eh_proj and Megatron-Core's embedding for the MTP process,
-- 128256 x 4096 = 525,336,576 more (gpt_model.py: "there will be both
-- embedding layer and output layer in the mtp process stage").
local EMB = 128256 * 4096
local p0 = mem { pp = 2, gpus = 16 }
local p1 = mem { pp = 2, gpus = 16, mtp_layers = 1 }
t.is(p1.stage, 1, "pp 2: the last stage is the peak")
t.near(p1.params - p0.params, LAYER_MTP + EMB, 1e-9,
  "pp 2: the layer, eh_proj and an embedding copy on the last stage")
-- DualPipe: the rank holds stage 0 beside stage 1, the embedding already:
-- no copy, the same parameters added as at pp 1.
local d0 = mem { pp = 2, gpus = 16, schedule = "dualpipe" }
local d1 = mem { pp = 2, gpus = 16, schedule = "dualpipe", mtp_layers = 1 }
t.near(d1.params - d0.params, LAYER_MTP, 1e-9,
  "dualpipe: the embedding and head shared with the first stage's chunk")

-- gp.train's memory is the same breakdown.
local tr = gp.train { model = "llama3-8b", gpu = "h100-sxm", gpus = 16, pp = 2, method = "pretrain",
                      seq = 4096, global_batch = 8, mtp_layers = 1 }
local tm = mem { pp = 2, gpus = 16, mtp_layers = 1, microbatches = 8 }
t.near(tr.memory.total, tm.total, 1e-9, "gp.train counts the module as gp.memory")

-- Refused out of range, naming the option.
local ok, e = pcall(gp.memory, { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, seq = 4096,
                                  method = "pretrain", mtp_layers = 17 })
t.ok(not ok and tostring(e):find("mtp_layers", 1, true), "gp.memory: mtp_layers 17 refused")
