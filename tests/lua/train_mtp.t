-- mtp_layers: multi-token prediction modules trained with the model
-- (Megatron-Core's mtp_num_layers; DeepSeek-V3 report sec. 2.2), each one
-- more transformer layer of the model's last kind on the last pipeline
-- stage with its two norms, its 2h x h eh_proj and the shared head's
-- logits and loss once more.
-- Run with ./gpuplan run tests/lua/train_mtp.t.
local t = require "tap"
local gp = require "gpuplan"
local validate = require "gpuplan.validate"

t.plan(13)

local function train(o)
  local base = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, tp = 8, seq = 4096,
                 global_batch = 64, stack = "megatron" }
  for k, v in pairs(o) do base[k] = v end
  return pcall(gp.train, base)
end

local _, without = train {}
local _, with = train { mtp_layers = 1 }
-- Model FLOPs per token the module adds, forward (times 3 for the
-- training step), Llama 3 8B (h 4096, 8 KV heads of 128, FFN 14336
-- gated, vocab 128256), attention over the whole 4096 keys (no
-- causal_flops here):
--   the layer's weights: q 4096^2 + k, v 2 x 4096 x 1024 + o 4096^2
--     + 3 x 4096 x 14336 = 218,103,808, 2 FLOPs each: 436,207,616
--   attention: 2 (QK) + 2 (AV) x 4096 keys x 4096 = 67,108,864
--   eh_proj: 2 x (2h x h) = 4 x 4096^2 = 67,108,864
--   logits: 2 x 128256 x 4096 = 1,050,673,152
--   sum 1,621,098,496.  Exact integers in doubles: 1e-9 relative.
local per_tok = (with.model_flops - without.model_flops) / (3 * with.tokens_per_step)
t.ok(math.abs(per_tok / 1621098496 - 1) < 1e-9,
  string.format("MTP FLOPs a token: %.0f (hand: 1,621,098,496)", per_tok))
-- The step: at least the one more layer of 32 (1/32 of the layers'
-- time), at most twice the module's share of the forward FLOPs (1.62 of
-- 32 x 0.503 + 1.05 = 17.15 GFLOP a token): (1 + 1/32, 1 + 2 x 0.0945).
local grow = with.step_s / without.step_s
t.ok(grow > 1 + 1 / 32 and grow < 1 + 2 * 1.621 / 17.15,
  string.format("the step grows by one layer and a head: x%.4f", grow))

-- The step's parts, module by module (the bounds above hold without the
-- layer or the second head: the head alone is 1.05 of 1.62 GFLOP).  The
-- same shape as a table, with 33 layers beside 32 and a vocabulary of
-- 1024 beside 128256: compute(32 layers + MTP) - compute(33 layers) is
-- the module less its layer, 64 micro-batches of its norms, eh_proj and
-- second head; tp_comm's the same difference, its head's TP all-reduce.
local function shape(layers, vocab, mtp)
  local _, r = train { model = { name = "llama3-8b-shape", layers = layers, hidden = 4096,
    heads = 32, kv_heads = 8, head_dim = 128, ffn_hidden = 14336, ffn_gated = true,
    vocab = vocab, tied_embeddings = false }, mtp_layers = mtp }
  local p = {}
  for _, x in ipairs(r.parts) do p[x.name] = x.seconds end
  return p
end
local function extras(vocab)
  local l33, m = shape(33, vocab), shape(32, vocab, 1)
  return m.compute - l33.compute, m.tp_comm - l33.tp_comm
end
local e_big, tp_big = extras(128256)
local e_small = extras(1024)
local layer = shape(33, 1024).compute - shape(32, 1024).compute
-- Vocabulary 1024: the norms and eh_proj (its three GEMMs, 6 T 2h h / tp
-- = 6 x 4096 x 8192 x 512 FLOPs a micro-batch, x 64 at the H100's dense
-- BF16 989 TFLOPS: 6.67 ms at least) and a head of 1024: more than
-- eh_proj at peak, less than the module's own layer (were the layer not
-- counted, the difference would be below zero).
t.ok(e_small > 6 * 4096 * 8192 * 512 * 64 / 989e12 and e_small < layer,
  string.format("the module's layer and eh_proj: %.4f s beside a layer's %.4f s", e_small, layer))
-- The second head: the 127232 more logits' three GEMMs, 6 T dV h / tp =
-- 6 x 4096 x 127232 x 512 FLOPs, x 64 at 989 TFLOPS = 0.1036 s at least;
-- at most what the same vocabulary adds to the model itself (its own head
-- and its embedding's vocabulary-wide gradient).
local own = shape(32, 128256).compute - shape(32, 1024).compute
t.ok(e_big - e_small > 6 * 4096 * 127232 * 512 * 64 / 989e12 and e_big - e_small <= own,
  string.format("the shared head once more: %.4f s (the model's own: %.4f s)", e_big - e_small, own))
-- Its TP collective: SP off, the head's backward all-reduce, once more.
t.ok(tp_big > 0, "the second head's TP all-reduce")
-- eh_proj's weights on the last stage, which the optimizer steps: 2h x h
-- / tp = 2 x 4096^2 / 8 = 4,194,304 a rank, against a layer's (218,103,808
-- + its two norms' 8192) / 8 = 27,264,000: the optimizer's time grows by
-- 0.153840 of a layer's.  Tolerance 1e-4 relative: the optimizer's time
-- is linear in the parameters to within that here (0.153841).
local o32, o33, om = shape(32, 1024).optimizer, shape(33, 1024).optimizer,
  shape(32, 1024, 1).optimizer
t.near((om - o33) / (o33 - o32), 4194304 / 27264000, 1e-4 * 0.15384,
  "eh_proj's 2h x h weights on the last stage")

-- The second head's forward alone: gp.rl's log-probability forward
-- (forward only, no embedding gradient) of the same shapes, 64 samples of
-- 1024 tokens.  What the vocabulary adds to the module beside its layer
-- is what it adds to the model's own forward: its head's logits and loss,
-- the same ops (train_ends_costs: mtp_f = head_f + ...).  The same sums
-- in another order: 1e-9 of the forward's compute.
local function fwd(layers, vocab, mtp)
  local r = gp.rl { model = { name = "llama3-8b-shape", layers = layers, hidden = 4096,
    heads = 32, kv_heads = 8, head_dim = 128, ffn_hidden = 14336, ffn_gated = true,
    vocab = vocab, tied_embeddings = false }, gpu = "h100-sxm", gpus = 8, tp = 8,
    prompts = 8, group = 8, prompt_len = 512, response_len = 512, mtp_layers = mtp }
  return r.forward.parts.compute
end
local f32 = fwd(32, 128256)
local head_more = (fwd(32, 128256, 1) - fwd(33, 128256)) - (fwd(32, 1024, 1) - fwd(33, 1024))
t.near(head_more, f32 - fwd(32, 1024), 1e-9 * f32,
  "forward: the module's head is the model's head once more")

-- Refusals, naming the option.
local ok, e = train { mtp_layers = -1 }
t.ok(not ok and tostring(e):find("mtp_layers must be a whole number 0..16 (got -1)", 1, true),
  "mtp_layers -1: refused")
ok, e = train { mtp_layers = 1.5 }
t.ok(not ok and tostring(e):find("mtp_layers must be a whole number 0..16 (got 1.5)", 1, true),
  "mtp_layers 1.5: refused")

-- The Megatron-Bridge DeepSeek-V3 rows train the module (the recipe's
-- mtp_num_layers 1; under interleaving where the layout is stated):
-- the 25.11 B200 row, PP 16 with the (16, 1) layout's ends, lists it
-- among its defaults.
local cases = validate.read("validation/cases.json")
local base
for _, c in ipairs(cases) do
  if c.id == "mbridge2511-b200-deepseekv3-fp8mx" then base = c end
end
local cat = gp.catalog()
local r = validate.predict(base, cat)
t.ok(r.defaults and r.defaults:find("mtp_layers=1 (deepseek_v3.py", 1, true),
  "the stack profile trains the MTP module")
t.ok(base.parallel.first_stage_layers == 4 and base.parallel.last_stage_layers == 1,
  "the row states the (16, 1) layout's ends")
-- Under interleaving the profile gives it where the row states the
-- layout's rank totals: the 26.04.01 GB200 row, PP 4 VP 4, layout (4, 4)
-- (16 chunks, chunk i on rank i mod 4: ranks 16, 16, 16 and 13 + MTP).
local gb
for _, c in ipairs(cases) do
  if c.id == "mbridge2604-gb200-deepseekv3-fp8mx" then gb = c end
end
local rg = validate.predict(gb, cat)
t.ok(gb.parallel.last_stage_layers == 13 and rg.defaults
  and rg.defaults:find("mtp_layers=1 (deepseek_v3.py", 1, true),
  "interleaved (vpp 4) with the layout's totals: the profile trains MTP")
-- The 25.11 GB200 BF16 row ("DeepSeekV3 (w/o MTP)" in the corrected
-- table) states no layout: no MTP from the profile.
local gbb
for _, c in ipairs(cases) do
  if c.id == "mbridge2511-gb200-deepseekv3-bf16" then gbb = c end
end
local rb = validate.predict(gbb, cat)
t.ok(rb.defaults and not rb.defaults:find("mtp_layers", 1, true),
  "interleaved (vpp 4) without the layout's totals: no MTP from the profile")
