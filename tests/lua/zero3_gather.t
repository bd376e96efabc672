-- ZeRO-3's gather implementation (gp.train's zero3_gather; engine/
-- train_stage.c per_param_colls).  Run with ./gpuplan run
-- tests/lua/zero3_gather.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(13)

local part = t.step_part

-- megatron-gpt-1.7b (24 layers, h 2304, LayerNorm, biases on every
-- linear, plain 4h MLP) on one DGX H100, dp 8, one micro-batch, every
-- overlap off, bf16 gradients reduced in bf16; Megatron-DeepSpeed's
-- fused modules (kernels fused: no Hugging Face module hooks).
local h, L = 2304, 24
local base = { model = "megatron-gpt-1.7b", gpu = "h100-sxm", gpus = 8, method = "pretrain",
  seq = 2048, zero = 3, stack = "deepspeed", global_batch = 8, batch = 1,
  recompute = "none", overlap_param_gather = false, overlap_grad_reduce = false,
  grad_reduce = "bf16", precision = "bf16", kernels = "fused" }
local function with(extra) return gp.train(t.with(base, extra)) end

-- Hand derivation of per_param.  A layer holds P = 12h^2 + 13h
-- parameters: the weights qkv 3h^2, output h^2, MLP-in 4h^2, MLP-out
-- 4h^2 (shares 3/12, 1/12, 4/12, 4/12 of P) and 8 vectors of h (two
-- LayerNorms' weight and bias, four biases).  Each is gathered on its
-- own: G = sum over the four weights of all_gather(2 bytes x P x share)
-- + 8 x all_gather(2h bytes) on the 8 GPUs of a DGX H100 (gp.comm's
-- price of the same collective), each followed by PyTorch's copy of the
-- flat buffer out to the 8 ranks' views: 12 tensors x 8 launches of
-- the Hopper arch's launch_overhead (catalog/archs.lua, 4 us) + the
-- layer's 2P bytes read and written at H100's 3.35 TB/s x hbm 0.84
-- (both read from the catalog here) and written once before by the
-- gather buffer's zero fill (DeepSpeed's torch.zeros); the gradients
-- likewise, R = the same sum of reduce_scatters, each after PyTorch's
-- copy of the 8 ranks' gradient views into its flat input (the same
-- 12 x 8 launches and the 2P bytes of bf16 gradients read and
-- written).  Each pass (forward, backward;
-- plus the recompute forward under full recompute) drains the GPU at
-- each of the 6 submodules with parameters (2 norms, 4 linears) for
-- one host op, 24.84 us (engine/common.h GP_EAGER_OP_TIME, gp.train's
-- default).  Nothing overlaps: zero_gather = L (2 G + passes x 6 x
-- 24.84 us) + ZG, dp_comm = L x R + DG (the ends, below).
local P = 12 * h * h + 13 * h
local function coll(op, bytes)
  return gp.comm { op = op, bytes = bytes, gpus = 8, system = "dgx-h100" }.time
end
local G, R = 8 * coll("all_gather", 2 * h), 8 * coll("reduce_scatter", 2 * h)
for _, share in ipairs { 3 / 12, 1 / 12, 4 / 12, 4 / 12 } do
  G = G + coll("all_gather", 2 * P * share)
  R = R + coll("reduce_scatter", 2 * P * share)
end
local cat = gp.catalog()
local h100 = cat.gpus["h100-sxm"]
local hopper = cat.archs[h100.arch]
local launches, bw = 12 * 8 * hopper.launch_overhead, h100.mem_bw * hopper.achievable.hbm
G, R = G + launches + 3 * (2 * P) / bw, R + launches + 2 * (2 * P) / bw
local host = 6 * 24.84e-6
-- The ends (train_stage.c ends_block), each one tensor gathered and
-- reduced on its own: the embedding (its word and position tables,
-- gp.params) gathered for the forward and again for its backward, the
-- output layer (tied here: none on the one stage) -- ZG to zero_gather;
-- the second gather and the reduce-scatters to dp_comm, DG.
local PR = gp.params("megatron-gpt-1.7b")
local E, H = 2 * PR.embedding, 2 * PR.lm_head
local ZG = coll("all_gather", E) + (H > 0 and coll("all_gather", H) or 0)
local DG = coll("all_gather", E) + coll("reduce_scatter", E) +
  (H > 0 and coll("reduce_scatter", H) or 0)
-- Tolerance 1e-5 relative: the engine's own layer parameter count (from
-- the model's shape, not restated here) agrees with 12h^2 + 13h to
-- about 1e-6 of the collectives' time.
local pp = with { zero3_gather = "per_param" }
t.near(part(pp, "zero_gather").seconds / (L * (2 * G + 2 * host) + ZG), 1, 1e-5,
  "per_param: every parameter's gather exposed, forward and backward, a host gap a submodule")
t.is(part(pp, "zero_gather").hidden, 0, "per_param: no gather under compute")
t.near(part(pp, "dp_comm").seconds / (L * R + DG), 1, 1e-5,
  "per_param: one reduce-scatter per parameter")
local full = with { zero3_gather = "per_param", recompute = "full" }
t.near(part(full, "zero_gather").seconds / (L * (2 * G + 3 * host) + ZG), 1, 1e-5,
  "per_param + full recompute: the recompute forward gathers, the backward reuses it")

-- qk_norm's q_norm and k_norm are two more submodules with parameters
-- (engine/model.c model_layer_norm_modules), each a LayerNorm's weight
-- and bias here: 4 more vectors of h gathered and reduced on their own,
-- each with its 8 launches, and 2 more host gaps a pass.  A layer's
-- gathers grow by dG = 4 all_gather(2h) + 32 launches, its reduce-
-- scatters by dR = 4 reduce_scatter(2h) + 32 launches: zero_gather by
-- L (2 dG + 2 x 2 x 24.84 us), dp_comm by L dR.  Tolerance 1e-6 relative: the
-- difference of two sums of the same collectives.
local qk = gp.train(t.with(base, { zero3_gather = "per_param",
  model = t.with(cat.models["megatron-gpt-1.7b"], { qk_norm = true }) }))
local dG = 4 * coll("all_gather", 2 * h) + 32 * hopper.launch_overhead
local dR = 4 * coll("reduce_scatter", 2 * h) + 32 * hopper.launch_overhead
t.near(part(qk, "zero_gather").seconds - part(pp, "zero_gather").seconds,
  L * (2 * dG + 2 * 2 * 24.84e-6), 1e-6, "qk_norm: two more norms gathered a layer")
t.near(part(qk, "dp_comm").seconds - part(pp, "dp_comm").seconds, L * dR, 1e-6,
  "qk_norm: and reduced")

-- The prefetching default is the option's value and unchanged by it.
local pf = with {}
t.is(with { zero3_gather = "prefetch" }.step_s, pf.step_s, "prefetch is the default")
t.ok(pp.step_s > pf.step_s, "per_param is slower than the prefetching gathers")

-- Refusals name the user's key.
t.raises(function() with { zero3_gather = "bucketed" } end,
  "zero3_gather must be prefetch or per_param (got string 'bucketed')", "unknown value", true)
t.raises(function() with { zero3_gather = "per_param", zero = 2 } end,
  "zero3_gather per_param is DeepSpeed's stage 3: it needs zero 3 without fsdp",
  "per_param at zero 2", true)
t.raises(function() with { zero3_gather = "per_param", fsdp = "full_shard", stack = nil } end,
  "zero3_gather per_param is DeepSpeed's stage 3: it needs zero 3 without fsdp",
  "per_param with fsdp", true)

-- A case states it in parallel.zero3_gather (validation/SCHEMA.md): the
-- shipped Megatron-2021 ZeRO-3 case predicts fewer TFLOP/s with it than
-- the same case without it (the default's prefetching gathers).
local v = require "gpuplan.validate"
local z3
for _, c in ipairs(v.read("validation/cases.json")) do
  if c.id == "megatron2021-t2-zero3-174.6b-384gpu" then z3 = c end
end
t.is(z3.parallel.zero3_gather, "per_param", "the case states per_param")
local stated = v.predict(z3, cat).predicted
z3.parallel.zero3_gather = nil
t.ok(stated < v.predict(z3, cat).predicted, "the case's per_param is priced")
