-- sac_attn_recompute: recompute op whose save list lacks the fused
-- attention kernel that ran (engine/memory_act.c act_op_saved).  torchtitan
-- 6fc499f's _save_list held SDPA's flash and efficient ops only, and its
-- SDPA wrapper runs cuDNN's first on sm100: there the attention's output
-- and log-sum-exp are not kept and its forward re-runs in the backward
-- (torchtitan b39377f9f, December 2025, added the cuDNN op).
-- Llama 3 8B as the torchao MXFP8 B200 table ran it: seq 8192, batch 1.
-- Run with ./gpuplan run tests/lua/sac_attn_recompute.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(13)

local base = { model = "llama3-8b", gpu = "b200", gpus = 8, zero = 3, fsdp = "full_shard",
               fsdp_version = 2, stack = "hf", kernels = "fused", seq = 8192, batch = 1,
               global_batch = 8, recompute = "op", precision = "bf16", attn_kernel = "cudnn" }
local function run(o) return gp.train(t.with(base, o)) end
local function part(r, n) for _, p in ipairs(r.parts) do if p.name == n then return p.seconds end end return 0 end
local function op(r, n) for _, x in ipairs(r.ops) do if x.name == n then return x end end end

local kept, lost = run {}, run { sac_attn_recompute = true }

-- memory.act_layer: what one layer no longer keeps, per micro-batch of
-- 8192 tokens: SDPA's output (32 heads x 128 = 4096 wide, 2 B) and its
-- log-sum-exp (4 B x 32 heads): 8192 x (2 x 4096 + 4 x 32) = 68157440 B.
-- Exact (1e-9: the same sums).
t.near(kept.memory.act_layer - lost.memory.act_layer, 8192 * (2 * 4096 + 4 * 32), 1e-9,
       "the attention's output and log-sum-exp are not kept")
-- The step's peak: 31 layers' stash of it (the layer in its backward
-- rebuilds its whole set, out->full, either way), allocated, and 1.05
-- times that in the total (engine/memory.c mem_reserve_default: frag
-- 0.05 of the allocated bytes).  Exact (1e-9).
t.near(kept.memory.total - lost.memory.total, 1.05 * 31 * 8192 * (2 * 4096 + 4 * 32), 1e-9,
       "31 layers' stash of it off the peak, with the fragmentation")

-- Time: the recompute part grows by the attention's forward, once a
-- layer: 32 x the attention op's forward time (the op table's own, cuDNN
-- at the B200's rates).  1e-9: the same sums in another order.
local af = op(lost, "attention").fwd
t.ok(af > 0, "the attention has a forward time")
t.near(part(lost, "recompute") - part(kept, "recompute"), 32 * af, 1e-9,
       "recompute: the attention's forward once more a layer")
t.near(lost.step_s - kept.step_s, 32 * af, 1e-9, "the step by as much (nothing hides it)")

-- hw_flops: the attention's forward again, counted as the step's FLOPs
-- count it (over the whole sequence: QK^T and PV, 2 x 2 x s x d a head
-- and token): 4 x 8192 x 4096 x 32 layers a token, 8 x 8192 tokens a step
-- = 2.8147e14.  Exact (1e-9).
t.near(lost.hw_flops - kept.hw_flops, 4 * 8192 * 4096 * 32 * 8 * 8192, 1e-9,
       "hw_flops: the attention forward recounted")
t.is(lost.model_flops, kept.model_flops, "model_flops unchanged")

-- Refusals, each naming the option and what it needs.
t.raises(function() run { recompute = "selective", sac_attn_recompute = true } end,
         "sac_attn_recompute prices the attention missing from recompute op's save list: it "
           .. "needs recompute = op (got recompute = selective)", "another policy refused", true)
t.raises(function() run { flash = false, attn_kernel = nil, sac_attn_recompute = true } end,
         "sac_attn_recompute is a fused attention kernel missing from recompute op's save list",
         "unfused attention refused", true)
-- A plan's search tries none, selective and full unless told: no op,
-- so the flag would price nothing there.
t.raises(function() gp.sweep { model = "llama3-8b", gpu = "b200", gpus = 8, seq = 8192,
                               sac_attn_recompute = true } end,
         "sac_attn_recompute prices the attention missing from recompute op's save list: add op "
           .. "to the recompute policies to try (got none, selective, full)", "a search without op refused", true)

-- The torchtitan validation profile (lua/gpuplan/predict/train.lua) sets
-- it where its SDPA wrapper runs cuDNN's (sm100 or newer) under op SAC,
-- not on Hopper (FlashAttention-2, whose op the list holds) nor under
-- another policy.
local train = require "gpuplan.train"
local predict = require "gpuplan.predict.train"
local seen
local orig = train.train
train.train = function(o) seen = o; return orig(o) end
local function case(gpu, recompute)
  seen = nil
  predict({
    id = "t", kind = "train",
    model = { name = "Llama 3 8B", layers = 32, hidden = 4096, heads = 32, kv_heads = 8,
              ffn_hidden = 14336, ffn_gated = true, vocab = 128256, tied_embeddings = false,
              params_b = 8.03 },
    hardware = { gpu = gpu, gpus = 8, gpus_per_node = 8 },
    parallel = { tp = 1, pp = 1, dp = 8, zero = 3, fsdp = "full_shard", fsdp_version = 2,
                 micro_batch = 1, global_batch = 8, recompute = recompute },
    workload = { seq_len = 8192, precision = "bf16", method = "pretrain", framework = "torchtitan" },
    measured = { metric = "tokens_per_s_per_gpu", value = 1000 },
    source = { title = "torchtitan Llama 3 8B benchmark" },
  }, gp.catalog())
  return seen and seen.sac_attn_recompute
end
t.is(case("b200", "op"), true, "torchtitan on B200 under op SAC: the cuDNN attention recomputed")
t.is(case("h100-sxm", "op"), nil, "on H100 (FlashAttention-2, in the list): not set")
t.is(case("b200", "full"), nil, "on B200 under full recompute: not set")
train.train = orig
