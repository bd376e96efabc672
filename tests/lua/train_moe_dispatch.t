-- A Megatron-Core MoE layer with expert parallelism launches, besides its
-- GEMMs, the router's top-k and the alltoall dispatcher's bookkeeping from
-- Python (engine/train_layer.c MOE_DISPATCH_OPS, 32 ops), and its host
-- waits on the device for the all-to-all's splits: a layer of few tokens
-- costs the host's launches, not the GPU's work.  Transformer Engine's
-- GroupedLinear issues one GEMM per local expert, each costing the host
-- TE_EXPERT_GEMM (0.267 ms / 8: TE PR #3134's 8-expert loop), twice as
-- many in the backward (dgrad, wgrad).
-- Run with ./gpuplan run tests/lua/train_moe_dispatch.t.
local t = require "tap"
local gp = require "gpuplan"

-- Qwen3-30B-A3B (128 experts, top 8), one 512-token sequence a
-- micro-batch: a layer's GPU work is well under its launches' host time.
local function layer(ep, gpu, stack)
  -- capacity_factor 1: every rank runs the mean rows (the padded buffer), which the counts here take; the dropless default's chance skew is tests/lua/moe_balance.t's
  local r = gp.train { model = "qwen3-30b-a3b", capacity_factor = 1, gpu = gpu or "h100-sxm", gpus = 8, ep = ep,
                       seq = 512, batch = 1, global_batch = 8, stack = stack or "megatron",
                       zero = 1, kernels = "fused" }
  local f, wait = t.layer_fwd(r)
  local b = 0
  for _, o in ipairs(r.ops) do b = b + o.bwd end
  return f, b, wait
end
-- The layer's backward all-to-alls on the GPU, without EP overlap on its
-- path: the dispatch and the combine of the rank's 512 tokens x top-8
-- copies x h 2048 x 2 B (16 MiB a rank), and on the megatron stack the
-- router probabilities' gradient (moe_probs activation, its default:
-- one bf16 value a token copy, 512 x 8 x 2 B = 8 KiB; the other stacks
-- weigh the experts' outputs at the combine and send none), each one
-- all-to-all over the DGX H100's 8 GPUs as gp.comm prices it.
local function a2a(bytes)
  return gp.comm { system = "dgx-h100", op = "all_to_all", bytes = bytes }.time
end
local a2a_tokens, a2a_probs = a2a(512 * 8 * 2048 * 2), a2a(512 * 8 * 2)
local op = 24.84e-6        -- GP_EAGER_OP_TIME: the host's time per launched op
local te = 0.267e-3 / 8    -- TE_EXPERT_GEMM: the host's time per expert GEMM
-- The layer's op list launches 14 kernels (norms 2, qkv, Qwen3's
-- q_layernorm and k_layernorm 2 (model qk_norm), rope, attention, o_proj,
-- router, the two expert GEMMs, the activation, residual adds 2); with EP
-- the dispatcher's 32 more.  EP 8 puts 16 experts on a GPU; its
-- 512 x 8 tokens' 8 picks each miss a given expert with probability
-- (120/128)^4096 ~ 1e-115, so all 16 are reached: 2 x 16 expert GEMMs.
-- The forward is (14 + 32) x 24.84 us + 32 x 33.375 us = 2.211 ms.
local f8, b8, w8 = layer(8)
t.ok(w8 > 0, "EP 8: the host is the bound (a host_wait op)")
t.near(f8, (14 + 32) * op + 32 * te, 1e-9, "EP 8: a layer's forward = 46 launches + 32 expert GEMMs")
-- The backward's 64 expert GEMMs (dgrad and wgrad of each) cost the host
-- 2.136 ms, and each Transformer Engine module's Python backward its own
-- (TE_BWD_HOST, TE PR #3523: a Linear's (311.30 - 59.19) / 59.19 = 4.259
-- launches, the norm-fused qkv's LayerNormLinear (397.73 - 83.48) /
-- 59.19 = 5.309; o_proj and the two grouped linears are Linears, the
-- router's gating is Megatron-Core's own Function): 2.136 ms +
-- (5.309 + 3 x 4.259) x 24.84 us = 2.585 ms, more than a 512-token
-- layer's backward on the GPU.  Nothing in the backward waits for the
-- GPU (the splits are kept on the host), so those launches also hide
-- under the layer's backward all-to-alls, which the GPU runs between its
-- kernels: the backward's kernels and wait together are the host's time
-- less them (a2a8: 2 x 59.7 us + 7.5 us).  A token all-to-all of 16 MiB
-- sends 2 MiB to each of 7 peers, 4 channels each (the pool's 32 / 8;
-- 512 KiB a channel, under the 16 MiB part limit, so NCCL does not
-- double them), 56 GB/s a peer (37.4 us), so what the GPU sends in all
-- binds: 7 x 2 MiB at 0.83 of the H100 ring's 369 GB/s (comm_algo.c
-- a2a_link_eff: 0.94 only once a peer's channels double) = 47.9 us, plus
-- the Simple base 8.4 and a hop 3.4 us.  Exact products: 1e-9.  The
-- probabilities' 8 KiB, LL, 7.5 us.
local bwd_te = (397.73 - 83.48) / 59.19 + 3 * (311.30 - 59.19) / 59.19
local a2a8 = 2 * a2a_tokens + a2a_probs
t.near(a2a_tokens, 7 * 2^21 / (369e9 * 0.83) + 11.8e-6, 1e-9,
       "EP 8: a token all-to-all = 7 x 2 MiB / (369 GB/s x 0.83) + 11.8 us")
t.ok(a2a8 > 120e-6 and a2a8 < 135e-6, "EP 8: the backward's all-to-alls, 127 us")
t.near(b8, 64 * te + bwd_te * op - a2a8, 1e-9,
       "EP 8: a layer's backward = 64 expert GEMMs' and 4 TE modules' host time, "
       .. "less its all-to-alls")
-- A stack of torch modules (DeepSpeed's, fused kernels) runs their
-- backward in autograd's C++ engine: the expert GEMMs' host alone (less
-- the two token all-to-alls; no probabilities are sent).
local _, bd = layer(8, nil, "deepspeed")
local a2ad = 2 * a2a_tokens
t.near(bd, 64 * te - a2ad, 1e-9, "torch modules: no Python backward per module")
-- Without EP the dispatcher skips the all-to-all and its splits (not
-- charged), but all 128 experts are local: (1 - 8/128)^512 ~ 4.5e-15
-- leaves every one reached, 2 x 128 expert GEMMs: 14 x 24.84 us +
-- 256 x 33.375 us = 8.89 ms.
local f1 = layer(1)
t.near(f1, 14 * op + 256 * te, 1e-9, "EP 1: 14 launches + 256 expert GEMMs, no dispatcher ops")
-- A GB200 rack's Grace host takes 2.75x an x86 server's time for the same
-- Transformer Engine linear (catalog host_op_scale): every host term scales.
local fg = layer(8, "gb200")
t.near(fg, 2.75 * ((14 + 32) * op + 32 * te), 1e-9, "GB200: the host's forward x 2.75")

-- The dispatcher's host wait splits the forward (engine/train_layer.c
-- MOE_A2A_POST_OPS): after it the host starts with nothing queued, so the
-- experts' stretch -- the flex dispatcher's 2 launches after its wait
-- (tokens_per_expert.sum(), the probs multiply), the up and down grouped
-- linears and the activation 3, and the 32 expert GEMMs -- costs the GPU
-- the host's time where that outlasts the experts' GPU work, whatever
-- slack the attention leaves later in the layer.  Qwen3-30B-A3B at 4096
-- tokens, EP 8 on H100s, flex: the stretch's host time is 5 x 24.84 us +
-- 32 x 33.375 us = 1.192 ms against the experts' ~0.67 ms on the GPU;
-- the whole layer's (12 + 18) x 24.84 us + 32 x 33.375 us = 1.813 ms
-- against its ~1.39 ms would leave the smaller wait.  HybridEP's: DeepEP
-- adds Megatron-Core's local permute (below).
do
  -- capacity_factor 1: every rank runs the mean rows (the padded buffer), which the counts here take; the dropless default's chance skew is tests/lua/moe_balance.t's
  local r = gp.train { model = "qwen3-30b-a3b", capacity_factor = 1, gpu = "h100-sxm", gpus = 8, ep = 8, seq = 4096,
                       batch = 1, global_batch = 8, stack = "megatron", zero = 1,
                       kernels = "fused", moe_dispatcher = "flex", moe_flex_backend = "hybridep" }
  local g, ge, wait = 0, 0, 0
  for _, o in ipairs(r.ops) do
    if o.name == "host_wait" then wait = o.fwd else g = g + o.fwd end
    if o.name == "moe_up" or o.name == "moe_act" or o.name == "moe_down" then ge = ge + o.fwd end
  end
  local he = 5 * op + 32 * te
  -- (1e-9: the engine sums the same terms; rounding only)
  t.near(wait, he - ge, 1e-9, "flex, 4096 tokens: the forward waits the experts' host time beyond their GPU time")
  t.ok(wait > (12 + 18) * op + 32 * te - g,
       "flex, 4096 tokens: more than the whole layer's host time beyond its GPU time")
end
-- DeepEP (engine/train_layer.c moe_deepep_permute_costs): Megatron-Core's
-- multihot and permute are 2 more launches in that stretch, and the
-- permute's kernel (half of the moe_permute op's forward: the unpermute
-- is after the experts) more GPU work in it: the wait is (5 + 2) x
-- 24.84 us + 32 x 33.375 us less the experts' and the permute's GPU time
-- (1e-9: the same sums).
do
  -- capacity_factor 1: every rank runs the mean rows (the padded buffer), which the counts here take; the dropless default's chance skew is tests/lua/moe_balance.t's
  local r = gp.train { model = "qwen3-30b-a3b", capacity_factor = 1, gpu = "h100-sxm", gpus = 8, ep = 8, seq = 4096,
                       batch = 1, global_batch = 8, stack = "megatron", zero = 1,
                       kernels = "fused", moe_dispatcher = "flex" }
  local ge, wait = 0, 0
  for _, o in ipairs(r.ops) do
    if o.name == "host_wait" then wait = o.fwd end
    if o.name == "moe_up" or o.name == "moe_act" or o.name == "moe_down" then ge = ge + o.fwd end
    if o.name == "moe_permute" then ge = ge + 0.5 * o.fwd end
  end
  t.near(wait, 7 * op + 32 * te - ge, 1e-9,
         "DeepEP, 4096 tokens: the local permute's 2 launches and its kernel in the experts' stretch")
end

t.done_testing()
