-- DeepSpeed's stage 3 gathers and frees parameters from Python hooks on
-- every module of the Hugging Face model it wraps (engine/train_layer.c
-- ds_hook_ops, DS_Z3_MODULE_HOOK_OPS 3 and DS_Z3_PARAM_HOOK_OPS 10 host
-- ops a module): the forward's host work grows by them, and behind the
-- Hugging Face MoE block's per-expert sync (hf_moe_loop.t) an expert's
-- stretch waits for its own modules' hooks.  The backward runs the hooks'
-- other halves and stage3.py's gradient hook on each weight
-- (DS_Z3_PARAM_BWD_HOOK_OPS 13 host ops a weight, 3 a module without),
-- and each gradient bucket a layer closes is reduced from the host
-- (ds_flush_ops, DS_Z3_FLUSH_OPS 6 host ops a bucket).
-- Run with ./gpuplan run tests/lua/ds_z3_hooks.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(11)

local tau = 24.84e-6   -- common.h GP_EAGER_OP_TIME: an x86 host's launch
-- FSDP1 (the hf stack's full_shard) points each parameter of a unit at
-- its gathered flat parameter before the layer's first kernel
-- (engine/train_layer.c FSDP1_VIEW_S, 6.112 ms / 400 a parameter);
-- DeepSpeed's own gathers run no such loop (its hooks are counted here).
local VIEW_S = 6.112e-3 / 400
local fwd = t.fwd_total
local function bwd(r)
  local s = 0
  for _, o in ipairs(r.ops) do s = s + o.bwd end
  return s
end

-- Mixtral 8x7B on 8 H100s, the eager kernels, one sequence of 16 tokens:
-- the host's launches and hooks outlast the GPU's work everywhere.
local moe = { model = "mixtral-8x7b", gpu = "h100-sxm", gpus = 8, zero = 3, method = "full",
              kernels = "eager", margin = 0, seq = 16, batch = 1, global_batch = 8 }
local fsdp = gp.train(t.with(moe, { stack = "hf", fsdp = "full_shard" }))
local ds = gp.train(t.with(moe, { stack = "deepspeed" }))
-- FSDP (no module hooks of its kind): hf_moe_loop.t's 42 launches and 8
-- experts of 10, (42 + 8 x 10) x tau, and its views of the layer's 31
-- parameters (q, k, v, o, two norms, the router, 8 x 3 expert
-- matrices), 31 x VIEW_S.  DeepSpeed adds, outside the
-- experts, the decoder layer, attention and MoE block (3 each), the two
-- norms, q, k, v, o and the router's gate (10 each): 79; each expert,
-- itself and its act_fn (3 each) and w1, w3, w2 (10 each): 36.  Its
-- forward is (42 + 79 + 8 x (10 + 36)) x tau = 489 x tau (1e-9: the same
-- sums).
t.near(fwd(fsdp), 122 * tau + 31 * VIEW_S, 1e-9,
  "FSDP: 42 launches, 8 experts of 10 and 31 views")
t.near(fwd(ds), 489 * tau, 1e-9, "DeepSpeed stage 3: 121 and 8 experts of 46")
-- Backward: the same 3 a module without a weight, 10 + 3 (the gradient
-- hook's wait_stream, copy_ into the bucket, record_stream) = 13 a weight:
-- outside the experts 3 x 3 + 7 x 13 = 100, each expert 2 x 3 + 3 x 13 =
-- 45; (100 + 8 x 45) x tau = 460 x tau.  And the buckets the layer closes
-- at DeepSpeed's default reduce_bucket_size 5e8 elements, its gradients
-- in backward order: 24 expert matrices of 4096 x 14336 = 58,720,256 (8
-- fill a bucket: 469.8M, the 9th would pass 5e8), two closed; the open
-- one takes the router (32,768), o (16,777,216), v and k (4,194,304
-- each): 495.0M; q would pass it, the third; q opens the next,
-- 16,777,216 / 5e8 = 0.0336 of one.  3.0336 buckets x 6 = 18.2 host ops:
-- 478.2 x tau, which outlasts the GPU's backward at 16 tokens (FSDP's,
-- with no host wait: about 231 x tau), so the backward is the hooks' host
-- time (1e-9: the same sums).
local mix_b = 3 + 16777216 / 5e8
t.near(bwd(ds), (460 + 6 * mix_b) * tau, 1e-9,
       "DeepSpeed stage 3 backward: 100 and 8 experts of 45, 3.03 buckets of 6")
t.ok(bwd(fsdp) < 0.6 * bwd(ds), "FSDP's backward: the GPU's, below the hooks")

-- A dense Llama-3-8B layer at 16 tokens, host-bound both ways: the
-- DeepSpeed forward is FSDP's launches plus the hooks, the decoder layer,
-- attention, MLP and act_fn (3 each) and the two norms, q, k, v, o, gate,
-- up and down (10 each): 102 x tau a layer, less FSDP1's views of those 9
-- parameters, 9 x VIEW_S.
local dense = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, zero = 3, method = "full",
                kernels = "eager", margin = 0, seq = 16, batch = 1, global_batch = 8 }
local dfs = gp.train(t.with(dense, { stack = "hf", fsdp = "full_shard" }))
local dds = gp.train(t.with(dense, { stack = "deepspeed" }))
t.near(fwd(dds) - fwd(dfs), 102 * tau - 9 * VIEW_S, 1e-9,
  "dense: 102 hook ops a layer against FSDP1's 9 views")
-- Its backward: 4 modules x 3 + 9 weights x 13 = 129 x tau, and the
-- layer's gradients (down, up, gate 58,720,256 each, o and q 16,777,216,
-- v and k 4,194,304: 218,103,808) fill 0.4362 of a 5e8 bucket, 6 x
-- 0.4362 = 2.62 host ops: 131.6 x tau, above the GPU's backward at 16
-- tokens (about 46 x tau).
t.near(bwd(dds), (129 + 6 * 218103808 / 5e8) * tau, 1e-9,
       "dense backward: 129 hook ops a layer and 0.44 of a bucket")

-- Stage 2 registers no module hooks (the parameters stay whole): its
-- forward is FSDP's launches, without FSDP1's 9 views (1e-9: the same
-- sums in another order).
local z2 = gp.train(t.with(dense, { stack = "deepspeed", zero = 2 }))
t.near(fwd(z2), fwd(dfs) - 9 * VIEW_S, 1e-9, "stage 2: no hooks")

-- The fused kernels (Megatron's modules, not the Hugging Face ones the
-- count is of): no hooks added; FSDP1's views stay with FSDP, still
-- host-bound at 16 tokens (1e-9: as above).
local fused = gp.train(t.with(dense, { stack = "deepspeed", kernels = "fused" }))
local ffs = gp.train(t.with(dense, { stack = "hf", fsdp = "full_shard", kernels = "fused" }))
t.near(fwd(fused), fwd(ffs) - 9 * VIEW_S, 1e-9, "fused kernels: no hooks counted")

-- reduce_bucket_size at hidden^2 (transformers' "auto" for it: 4096^2 =
-- 16,777,216 elements), below an expert's matrix: each expert matrix goes
-- alone, 24 buckets (the last closed by the router's arrival); the router
-- alone (closed by o's), o alone (by v's), v and k together (8,388,608),
-- closed by q's; q (16,777,216 = S) a full one: 28 buckets a layer where
-- the default closes 3.0336, 6 host ops each more in the host-bound
-- backward (1e-9: the same sums); the forward closes none.
local small = gp.train(t.with(moe, { stack = "deepspeed", reduce_bucket_size = 16777216 }))
t.near(bwd(small) - bwd(ds), 6 * (28 - mix_b) * tau, 1e-9,
       "hidden^2 buckets: 28 a layer against 3.03, 6 host ops each")
t.near(fwd(small), fwd(ds), 1e-12, "buckets: none in the forward")

-- A LoRA base reduces no gradient of its weights (the adapters' few
-- elements share buckets across layers, not counted): the bucket size
-- moves nothing.
local lo = t.with(dense, { stack = "deepspeed", method = "lora" })
t.near(bwd(gp.train(t.with(lo, { reduce_bucket_size = 16777216 }))), bwd(gp.train(lo)), 1e-12,
       "LoRA: no bucket closings of the base")
