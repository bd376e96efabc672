-- unfused_permute: Megatron-Core's alltoall dispatcher without
-- moe_permute_fusion (NeMo RL's grpo_math_1B.yaml from v0.4) permutes the
-- tokens with PyTorch ops -- masked_select and index_select, split and
-- cat, zeros and scatter_add_ -- where the fused path runs one Transformer
-- Engine kernel each (engine/train_layer.c MOE_UNFUSED_PERMUTE_OPS and
-- moe_permute_costs), and two of them add with atomics
-- (ATOMIC_SCATTER_SLOWDOWN).
-- Run with ./gpuplan run tests/lua/unfused_permute.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(15)

local op = t.op
-- H100 SXM streams at 3.35e12 B/s x 0.84 (the hopper arch's hbm).
local bw = 3.35e12 * 0.84
-- Qwen3-30B-A3B (hidden 2048, top 8) on 8 H100s at EP 8, one sequence a
-- micro-batch, bf16 activations (A = 2 B).
local h, k = 2048, 8
local job = { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 8, ep = 8, batch = 1,
              global_batch = 8, stack = "megatron", zero = 1 }
local function run(x) return gp.train(t.with(job, x)) end

-- The bytes: index_select reads the us = k u gathered rows where the
-- fused permute reads the u tokens (us - u more); the unpermute
-- zero-fills u rows and scatter_add_s the us rows into them, reading and
-- writing the output per added row (u + 3 us against us + u: 2 us more):
-- 3 k u - u = 23 u.  At 4096 tokens u = 4096 x 2048 x 2 B = 16.78 MB:
-- 385.9 MB / 2.814e12 B/s = 137.1 us.  The atomics: the forward's
-- scatter_add_ (and the backward's index_add_) of the us rows into u
-- take 2.304 / 0.207 = 11.13x their rows' streaming time (DLBlas PR #66's
-- index_add_ against a streaming kernel), 10.13 x (us + u) = 10.13 x 9 u
-- = 10.13 x 151.0 MB / 2.814e12 B/s = 543.6 us more each way: 680.7 us.
-- One op either way, so its fixed fill and launch cancel: float rounding
-- only, 1e-6.
local u = 4096 * h * 2
local stall = 2.304 / 0.207 - 1
local f, n = run { seq = 4096 }, run { seq = 4096, unfused_permute = true }
t.near(op(n, "moe_permute").fwd - op(f, "moe_permute").fwd,
       ((3 * k - 1) * u + stall * (k + 1) * u) / bw, 1e-6,
       "unfused: 3 us - u more rows moved, and the scatter_add_'s atomic stall, in the forward")
t.near(op(n, "moe_permute").bwd - op(f, "moe_permute").bwd,
       ((3 * k - 1) * u + stall * (k + 1) * u) / bw, 1e-6,
       "and in the backward (gather and index_add_, the reverse)")

-- The padded dispatcher (capacity_factor 1.0 with Megatron-Core's
-- moe_pad_expert_input_to_capacity, as the DGX Cloud Grok-1 rows state):
-- before core_r0.11.0 there is no fused permute, and core_r0.9.0's
-- permute_with_padded_tokens is the same index_select and its
-- unpermute_with_padded_tokens the same scatter_add (7094270's
-- drop-and-pad path too), over capacity x experts = 1.0 x k x tokens
-- rows, the us copies above.  So the surplus is the dropless one: (23 u
-- + 10.13 x 9 u) / 2.814e12 B/s = 680.7 us each way at 4096 tokens (the
-- fused sorts' ur terms, padded alike, cancel).  1e-6: float rounding.
do
  local fc = run { seq = 4096, capacity_factor = 1.0 }
  local nc = run { seq = 4096, capacity_factor = 1.0, unfused_permute = true }
  t.near(op(nc, "moe_permute").fwd - op(fc, "moe_permute").fwd,
         ((3 * k - 1) * u + stall * (k + 1) * u) / bw, 1e-6,
         "capacity 1.0: the padded rows' index_select and scatter_add surplus, forward")
  t.near(op(nc, "moe_permute").bwd - op(fc, "moe_permute").bwd,
         ((3 * k - 1) * u + stall * (k + 1) * u) / bw, 1e-6,
         "and backward")
end

-- The host: 8 launches more a MoE layer's forward (permute 6 against 1,
-- the chunk sorts' cats 3 against 2, zeros and scatter_add_ 2 against 1,
-- the per-expert counts' host copy 1), 24.84 us each on an x86 host
-- (GP_EAGER_OP_TIME): 198.72 us; and the three chunk sorts' torch.split
-- views, one per chunk of num_experts x etp = 128, 0.93 us each
-- (engine/train_layer.c SORT_VIEW_GRAD, PyTorch issue #64407's view op
-- with autograd; x86: host_op_time / GP_EAGER_OP_TIME = 1): 3 x 128 x
-- 0.93 us = 357.12 us, 555.84 us in all.  At 1024 tokens this layer is
-- host-bound (the dispatcher's wait for its splits keeps the host from
-- running ahead, layer_extras' rule), so the forward grows by exactly
-- that -- the GPU's growth hides under it: u = 1024 x 2048 x 2 B =
-- 4.194 MB, (23 u + 10.13 x 9 u) / 2.814e12 B/s = 34.3 + 135.9 = 170.2 us
-- -- and the host wait by 555.84 - 170.2 = 385.7 us.  1e-6: float
-- rounding.
local hostop, view = 24.84e-6, 0.93e-6
do
  local u1 = 1024 * h * 2
  local ff, wf = t.layer_fwd(run { seq = 1024 })
  local fn, wn = t.layer_fwd(run { seq = 1024, unfused_permute = true })
  t.ok(wf > 0, "the fused layer already waits for its host")
  t.near(fn - ff, 8 * hostop + 3 * 128 * view, 1e-6,
         "8 host launches and 3 sorts' 128 views more a layer's forward")
  t.near(wn - wf, 8 * hostop + 3 * 128 * view - ((3 * k - 1) + stall * (k + 1)) * u1 / bw,
         1e-6, "the host wait grows by them less the GPU's own growth")
end

-- The stretch after the dispatcher's host wait (engine/train_layer.c
-- MOE_A2A_POST_OPS, MOE_UNFUSED_POST_OPS): with ep_overlap on (the
-- dispatch all-to-all runs beside another micro-batch, not in the
-- stretch; EP 8 over two nodes of 4, where the overlap hides:
-- engine/train_prep.c train_ep_hides) and 6144 tokens, the attention leaves enough GPU time that the
-- whole layer's host time no longer binds, but the stretch's does -- fused
-- and unfused alike (a host wait either way).  Unfused, the stretch holds
-- permute()'s 5 more calls and the probabilities' split-and-cat 1 more:
-- 6 x 24.84 us = 149.04 us more host time; and of the 23 u more bytes
-- only index_select's us - u = 7 u run before the experts: u = 6144 x
-- 2048 x 2 B = 25.17 MB, 7 u / 2.814e12 B/s = 62.6 us more GPU time in
-- the stretch; and the two sorts before the experts (the tokens' and the
-- probabilities'), 2 x 128 views of 0.93 us: 238.08 us more host time.
-- The wait grows by 149.04 + 238.08 - 62.6 = 324.5 us.  1e-6: float
-- rounding.
do
  local u6 = 6144 * h * 2
  local fo = run { seq = 6144, ep_overlap = true, gpus_per_node = 4 }
  local no = run { seq = 6144, ep_overlap = true, gpus_per_node = 4,
                   unfused_permute = true }
  local _, wfo = t.layer_fwd(fo)
  local _, wno = t.layer_fwd(no)
  t.ok(wfo > 0, "6144 tokens, ep_overlap: the fused layer waits in the stretch")
  t.near(wno - wfo, 6 * hostop + 2 * 128 * view - (k - 1) * u6 / bw, 1e-6,
         "the stretch's wait grows by its 6 launches and 2 sorts' views less "
           .. "index_select's surplus")
end

-- The backward: the three sorts' CatBackward narrows the gradient into
-- the same 128 chunks without grad mode, a plain view of 0.58 us each
-- (engine/train_layer.c SORT_VIEW_PLAIN, PyTorch PR #61466): 3 x 128 x
-- 0.58 us = 222.72 us more host time.  With ep_overlap over two nodes of
-- 4 (the all-to-alls beside another micro-batch, so none sits between the
-- kernels the host runs ahead under) and 1024 tokens the backward is host-bound fused and
-- unfused alike, and its wait grows by that less the unfused backward's
-- GPU growth, the 23 u more bytes and index_add_'s atomic stall on 9 u:
-- u = 1024 x 2048 x 2 B = 4.194 MB, (23 u + 10.13 x 9 u) / 2.814e12 B/s
-- = 170.2 us; 52.5 us.  1e-6: float rounding.
do
  local u1 = 1024 * h * 2
  local fb = run { seq = 1024, ep_overlap = true, gpus_per_node = 4 }
  local nb = run { seq = 1024, ep_overlap = true, gpus_per_node = 4,
                   unfused_permute = true }
  t.ok(op(fb, "host_wait").bwd > 0, "1024 tokens, ep_overlap: the fused backward waits")
  t.near(op(nb, "host_wait").bwd - op(fb, "host_wait").bwd,
         3 * 128 * 0.58e-6 - ((3 * k - 1) + stall * (k + 1)) * u1 / bw, 1e-6,
         "the backward's wait grows by the 3 sorts' plain views less the GPU's growth")
end

-- Where the permutation is not the alltoall dispatcher's, refused by name.
t.raises(function() run { unfused_permute = true, model = "llama3-8b", ep = 1 } end,
  "train: unfused_permute is the MoE dispatcher's token permutation; llama3-8b has no experts",
  "a dense model refused", true)
t.raises(function() run { unfused_permute = true, moe_dispatcher = "flex" } end,
  "moe_dispatcher flex permutes otherwise: give moe_dispatcher = alltoall", "flex refused", true)
t.raises(function() run { unfused_permute = true, stack = "hf" } end,
  "with kernels = eager (stack = hf) the experts are Hugging Face's loop", "eager refused", true)
t.raises(function() run { unfused_permute = "yes" } end,
  "train: unfused_permute must be true or false (got string 'yes')", "a string refused", true)
