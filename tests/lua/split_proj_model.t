-- split_proj from the model: the projections a model's own PyTorch modules
-- keep apart (catalog FORMAT.md model.split_proj, validation/SCHEMA.md),
-- priced through the split_proj path on the stacks that run those modules
-- (hf, deepspeed), never on megatron (Megatron-Core's fused linear_qkv and
-- linear_fc1); the option given wins either way.
local t = require("tap")
local gp = require("gpuplan")
local case = require("gpuplan.predict.case")

t.plan(17)

-- A small gated GQA model (8 heads, 2 kv heads of 128): q 1024 wide, k and
-- v 256 each, gate and up 4096 each.
local function model(sp)
  return { name = "t", layers = 4, hidden = 1024, heads = 8, kv_heads = 2, ffn_hidden = 4096,
           ffn_gated = true, vocab = 32000, tied_embeddings = false, split_proj = sp }
end
local function job(sp, stack, split)
  return gp.train { model = model(sp), gpu = "h100-sxm", gpus = 1, method = "full",
                    stack = stack, seq = 2048, batch = 1, global_batch = 1,
                    recompute = "none", precision = "bf16", kernels = "eager",
                    split_proj = split }
end

-- The model's declaration prices exactly what the option prices on the
-- same op: "both" is split_proj = true on q, k, v and gate, up ("mlp" and
-- "qkv" each on their own op, the other op fused as with the option off).
-- Same arithmetic on the same GEMMs: 1e-12 relative.
local on, off = job(nil, "hf", true), job(nil, "hf", false)
local both = job("both", "hf")
for _, op in ipairs { "qkv", "mlp_up" } do
  t.near(t.op(both, op).bwd, t.op(on, op).bwd, 1e-12, "both: " .. op .. " as split_proj = true")
end
local mlp, qkv = job("mlp", "hf"), job("qkv", "deepspeed")
t.near(t.op(mlp, "mlp_up").fwd, t.op(on, "mlp_up").fwd, 1e-12, "mlp: gate and up split")
t.near(t.op(mlp, "qkv").fwd, t.op(off, "qkv").fwd, 1e-12, "mlp: q, k, v one GEMM")
local qkv_on = job(nil, "deepspeed", true)
t.near(t.op(qkv, "qkv").fwd, t.op(qkv_on, "qkv").fwd, 1e-12, "qkv (deepspeed): q, k, v split")
t.near(t.op(qkv, "mlp_up").fwd, t.op(job(nil, "deepspeed", false), "mlp_up").fwd, 1e-12,
  "qkv: gate and up one GEMM")
-- and the split is dearer than the fused GEMM (k and v 256 wide each read
-- the whole 2048 x 1024 input: test split_proj.t), so the check can fail
t.ok(t.op(both, "qkv").fwd > t.op(off, "qkv").fwd, "both: split q, k, v dearer than fused")
-- said as the option's value, true, which prices the same GEMMs (it read
-- "split_proj=both", a value the option refuses); "qkv" in words
t.like(table.concat(both.defaults, "; "), "split_proj=true (t's own modules", "said on the defaults line", true)
t.like(table.concat(qkv.defaults, "; "), "split proj: the model's qkv (t's own modules: q, k, v", "qkv said in words", true)

-- Megatron builds its own fused modules: the model's declaration does not
-- apply (step as with the option off, nothing said); the option still does.
local meg = job("both", "megatron")
local meg_off = job(nil, "megatron", false)
t.near(meg.step_s, meg_off.step_s, 1e-12, "megatron: the model's split does not apply")
t.ok(not table.concat(meg.defaults, "; "):find("split_proj", 1, true), "megatron: nothing said")
t.ok(job("both", "megatron", true).step_s > meg.step_s, "megatron: split_proj = true still splits")
-- The option off wins over the model's declaration.
t.near(job("both", "hf", false).step_s, off.step_s, 1e-12, "split_proj = false: fused")

-- A value not declared is refused, naming the field and the values.
t.raises(function() job("gate", "hf") end, "model.split_proj must be one of none, qkv, mlp, both",
  "a bad model.split_proj refused", true)

-- A case's model that does not state it takes its catalog family's, by
-- the family's name at the start of a word of the model's name (the
-- longest that matches); CodeLlama names none (the case states it).
local function fam(name) return case.family_split({ name = name }) end
t.is(table.concat({ tostring(fam("Meta-Llama-3-70B")), tostring(fam("Qwen2.5-32B")),
  tostring(fam("Mixtral-8x7B-v0.1")), tostring(fam("LLaVA-1.5 7B (Vicuna-7B v1.5)")) }, ","),
  "both,both,both,both", "Llama, Qwen2, Mixtral and LLaVA names: both")
t.is(table.concat({ tostring(fam("CodeLlama 34B Instruct")), tostring(fam("GPT-OSS-120B")),
  tostring(fam("Qwen-7B")), tostring(fam("BLOOM-176B")) }, ","), "nil,none,nil,none",
  "no family at a word's start: nil; GPT and BLOOM: none")

-- Every catalog model of one family declares the same split (the case
-- fallback takes whichever it meets first).
local cat, seen, bad = gp.catalog(), {}, {}
for _, id in ipairs(cat:ids("models")) do
  local m = cat:get("models", id)
  if m.family and m.split_proj then
    if seen[m.family] and seen[m.family] ~= m.split_proj then bad[#bad + 1] = id end
    seen[m.family] = seen[m.family] or m.split_proj
  end
end
t.is(#bad, 0, "a family's models agree on split_proj " .. table.concat(bad, " "))
