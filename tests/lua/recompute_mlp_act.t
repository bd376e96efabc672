-- recompute_modules "mlp_act": a JAX dots policy over a plain MLP (Paxml's
-- SAVE_DOT_ONLY and SAVE_DOT_WITH_NO_BATCH_DIM: praxis layers/
-- checkpoint_policy.py maps them to jax.checkpoint_policies.checkpoint_dots
-- and checkpoint_dots_with_no_batch_dims) keeps fc1's output, a dot, and
-- re-runs the GELU, no dot, in the backward; fc1 itself is not re-run.  The
-- job is the dgxc-benchmarking 24.11.1 Paxml GPT 5B row at 16 H100s (FSDP 8
-- a node, 4 sequences of 2048 a GPU, one micro-batch a step, XLA's fused
-- kernels).
-- Run with ./gpuplan run tests/lua/recompute_mlp_act.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(11)

local model = { id = "gpt-5b-test", layers = 24, hidden = 4096, heads = 32, kv_heads = 32,
                head_dim = 128, ffn_hidden = 16384, ffn_gated = false, ffn_act = "gelu",
                vocab = 50304, tied_embeddings = true, norm = "layer",
                positions = "learned", split_proj = "none" }
local base = { model = model, gpu = "h100-sxm", gpus = 16, gpus_per_node = 8, tp = 1,
               pp = 1, zero = 3, zero_group = 8, fsdp = "full_shard", batch = 4,
               global_batch = 64, seq = 2048, precision = "bf16", kernels = "fused",
               method = "pretrain", recompute = "selective",
               recompute_modules = "layernorm,core_attn" }
local r0 = gp.train(base)
local r1 = gp.train(t.with(base, { recompute_modules = "layernorm,core_attn,mlp_act" }))
local function part(r, n)
  for _, p in ipairs(r.parts) do if p.name == n then return p.seconds end end
  return 0
end
local function fwd(r, n)
  for _, o in ipairs(r.ops) do if o.name == n then return o.fwd end end
  error("no op " .. n)
end

-- No GEMM runs again: the hardware FLOPs are the same (the GELU's FLOPs are
-- an elementwise op's, which the model's FLOP counts leave out).  1e-9: the
-- same sums.
t.near(r1.hw_flops, r0.hw_flops, 1e-9, "mlp_act: no GEMM re-run")
-- Time: one micro-batch a step, so the recompute part grows by 24 times
-- the activation's forward seconds, nothing else (fc1's forward, mlp_up, is
-- not among them).  1e-9: the same sums.
t.near(part(r1, "recompute") - part(r0, "recompute"), 24 * fwd(r1, "mlp_act"), 1e-9,
       string.format("mlp_act: the GELU's forward once more a layer (%.4f -> %.4f s)",
         part(r0, "recompute"), part(r1, "recompute")))
t.ok(fwd(r1, "mlp_act") > 0, "the activation's forward is priced")
-- Memory: the down projection's input, 16384 elements of 2 B a token, over
-- 4 x 2048 tokens (tp 1): 4 x 2048 x 16384 x 2 = 268435456 B a layer fewer.
-- 1e-9: the same sums.
t.near(r0.memory.act_layer - r1.memory.act_layer, 4 * 2048 * 16384 * 2, 1e-9,
       "mlp_act: a layer keeps the 16384-wide fc2 input no more")
-- Under mlpwi the activation is re-run with fc1 already: naming mlp_act
-- too changes nothing (the same sums, 1e-9).
local w0 = gp.train(t.with(base, { recompute_modules = "layernorm,core_attn,mlpwi" }))
local w1 = gp.train(t.with(base, { recompute_modules = "layernorm,core_attn,mlpwi,mlp_act" }))
t.near(w1.step_s, w0.step_s, 1e-9, "mlpwi with mlp_act: the same step as mlpwi")
t.raises(function() gp.train(t.with(base, { model = "mixtral-8x7b", gpus = 64,
                                            recompute_modules = "mlp_act" })) end,
         "recompute_modules: mlp_act needs dense MLP layers; every layer of mixtral-8x7b is MoE",
         "mlp_act on a model of MoE layers only: refused, naming the model", true)
t.raises(function() gp.train(t.with(base, { recompute_modules = "layernorm,mlp_ac" })) end,
         "unknown module 'mlp_ac'",
         "a misspelt module: refused, naming it", true)

-- What trains: the GELU's output is kept only for fc2's backward, and a
-- frozen fc2 (LoRA's base) keeps its input only where an adapter on it
-- reads it with no dropout of its own (engine/memory_act.c
-- mem_act_down_kept).  Where it is not kept there is nothing to drop
-- and nothing to re-run: the memory and the step as without mlp_act
-- (the same sums, 1e-9).  Llama 3 8B on 8 H100s, q and v adapted.
local lb = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, method = "lora",
             lora_targets = "q,v", recompute = "selective",
             recompute_modules = "layernorm,core_attn" }
local l0 = gp.train(lb)
local l1 = gp.train(t.with(lb, { recompute_modules = "layernorm,core_attn,mlp_act" }))
t.near(part(l1, "recompute"), part(l0, "recompute"), 1e-9,
       "LoRA on q, v: fc2 keeps no input, so mlp_act re-runs nothing")
t.near(l1.memory.act_layer, l0.memory.act_layer, 1e-9,
       "LoRA on q, v: and drops nothing")
-- Every projection adapted, no dropout: fc2's adapter reads the GELU's
-- output, which mlp_act drops: 2048 tokens x 14336 x 2 B = 58720256 B a
-- layer fewer (1e-9: the same sums); and the step re-runs it (more
-- recompute seconds).
local a0 = gp.train(t.with(lb, { lora_targets = "all", lora_dropout = 0 }))
local a1 = gp.train(t.with(lb, { lora_targets = "all", lora_dropout = 0,
                                 recompute_modules = "layernorm,core_attn,mlp_act" }))
t.near(a0.memory.act_layer - a1.memory.act_layer, 2048 * 14336 * 2, 1e-9,
       "LoRA on every projection, no dropout: the fc2 input is dropped")
t.ok(part(a1, "recompute") > part(a0, "recompute") + 1e-6,
     string.format("and re-run (%.4f -> %.4f s)", part(a0, "recompute"), part(a1, "recompute")))
