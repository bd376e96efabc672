-- legacy_permute and te_mxfp8_grouped: the two Transformer Engine changes
-- of Megatron-LM's DeepSeek-V3 GB200 guide that the ladder's rows state
-- (engine/train_layer.c te_loop_surplus, mxfp8_grouped_legacy):
-- the fused permute before TE PR #1927, and the MXFP8 grouped linear
-- before PR #2019 (bulk) and before PR #1934 (per_tensor).
-- Run with ./gpuplan run tests/lua/te_mxfp8_grouped.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(21)

local op = t.op
-- B200: 7.67e12 B/s x 0.85 (its catalog hbm) streams; a small kernel is
-- its fill (ROOF_MEM_FILL 3.9 us) and a graph launch (Blackwell's 1 us).
local bw = 7.67e12 * 0.85
local small = 3.9e-6 + 1e-6
local function tmem(b) return b / bw + small end
-- Qwen3-30B-A3B (hidden 2048, top 8, 128 experts: 16 local at EP 8) on 8
-- B200s, MXFP8 (fp8_scaling block), capacity factor 1 so that each rank
-- runs exactly 4096 x 8 = 32768 rows, 2048 an expert (no chance skew).
local h, k, n = 2048, 8, 16
local job = { model = "qwen3-30b-a3b", gpu = "b200", gpus = 8, ep = 8, batch = 1,
              global_batch = 8, stack = "megatron", zero = 1, precision = "fp8",
              fp8_scaling = "block", capacity_factor = 1.0, seq = 4096 }
local function run(x) return gp.train(t.with(job, x)) end

-- legacy_permute: permutation 1 and unpermutation 1 (and, backward, the
-- same two kernels swapped) each take the longer of their bytes and their
-- loop of dependent L2 hits (te_loop_surplus).  The loop: T = 4096 tokens
-- on 148 SMs x 16 programs = 2368 in flight, ceil(4096 / 2368) = 2 waves;
-- hidden 2048 in ceil(2048 / 1024) = 2 blocks; the permute 2 x 128 + 8 =
-- 264 loads a token, the unpermute 2 x (128 + 8) = 272; a hit (258.0 +
-- 414.1) / 2 cycles at 1.98 GHz = 169.72 ns: 2 x 264 x 169.72 ns = 89.61
-- us and 92.33 us, each with its fill and launch (tmem(1)).  The bytes: u
-- + us = 9 u = 151.0 MB, and the E x T x 8 B map (4.19 MB): 24.5 us + 4.9
-- us, below the loop.  Each kernel's surplus over the fused one's
-- tmem(u + us) = 28.06 us: 66.46 + 69.17 = 135.6 us more each way.
-- Float rounding: 1e-6.
local u = 4096 * h * 2
local L = (258.0 + 414.1) / 2 / 1.98e9
local function loop(loads) return 2 * loads * L + tmem(1) end
local surplus = loop(2 * 128 + k) + loop(2 * (128 + k)) - 2 * tmem(u + k * u)
local f, l = run {}, run { legacy_permute = true }
t.near(op(l, "moe_permute").fwd - op(f, "moe_permute").fwd, surplus, 1e-6,
       "legacy_permute: the permute's and unpermute's expert loops, forward")
t.near(op(l, "moe_permute").bwd - op(f, "moe_permute").bwd, surplus, 1e-6,
       "and backward")
t.is(op(l, "moe_up").fwd, op(f, "moe_up").fwd, "the experts do not move")

-- per_tensor against fused, on the experts' up projection (16 experts):
-- the per-GEMM swizzles, 2 (n - 1) = 30 small kernels more forward and 2
-- x 30 backward (dgrad and wgrad); each expert's two zeroed scales, 2 n =
-- 32 small kernels each way.  Forward 62 x 4.9 us = 303.8 us, backward 92
-- x 4.9 us = 450.8 us (a byte's streaming, 1 / bw, is in tmem(1)).
local c = run { te_mxfp8_grouped = "per_tensor" }
t.near(op(c, "moe_up").fwd - op(f, "moe_up").fwd, (2 * (n - 1) + 2 * n) * tmem(1), 1e-6,
       "per_tensor: the swizzles and the scales' zero fills, forward")
t.near(op(c, "moe_up").bwd - op(f, "moe_up").bwd, (4 * (n - 1) + 2 * n) * tmem(1), 1e-6,
       "and backward (dgrad's and wgrad's swizzles)")
-- bulk: the same swizzles, and the two zeroed buffers written whole: the
-- input's 32768 x 2048 fp8 elements, 1 B each, per copy: 67.1 MB / 6.52e12
-- B/s = 10.29 us + 4.9 us, twice; dY's the same over the 2 x 768 outputs.
local b = run { te_mxfp8_grouped = "bulk" }
local rows = 4096 * k
t.near(op(b, "moe_up").fwd - op(f, "moe_up").fwd,
       2 * (n - 1) * tmem(1) + 2 * tmem(rows * h), 1e-6,
       "bulk: the swizzles and the zeroed buffers' pass, forward")
t.near(op(b, "moe_up").bwd - op(f, "moe_up").bwd,
       4 * (n - 1) * tmem(1) + 2 * tmem(rows * 2 * 768), 1e-6,
       "and backward (dY's buffers)")
t.is(op(run { te_mxfp8_grouped = "fused" }, "moe_up").fwd, op(f, "moe_up").fwd,
     "fused is the default")

-- The host: at 1024 tokens the layer's forward is host-bound, so it grows
-- by the host calls per_tensor adds on the two grouped linears: the 30
-- swizzles (an at::empty 1.46 us and a launch 2.35 us each) and the 4 n -
-- 2 = 62 allocations and 2 n = 32 fill launches: 30 x 3.81 + 62 x 1.46 +
-- 32 x 2.35 = 280.02 us a linear, 560.04 us, on the B200's x86 host at
-- 1.118 x an x86 Hopper host's launch (host_op_scale): 626.1 us.
do
  local ff = t.layer_fwd(run { seq = 1024 })
  local fc = t.layer_fwd(run { seq = 1024, te_mxfp8_grouped = "per_tensor" })
  t.near(fc - ff, 2 * (30 * 3.81e-6 + 62 * 1.46e-6 + 32 * 2.35e-6) * 1.118, 1e-6,
         "per_tensor's host calls on a host-bound forward")
end

t.raises(function() run { gpu = "h100-sxm", te_mxfp8_grouped = "bulk" } end,
  "train: te_mxfp8_grouped bulk is Transformer Engine's MXFP8 grouped linear (Blackwell); "
  .. "h100-sxm is hopper", "Hopper's blockwise fp8 refused", true)
t.raises(function() run { fused_grouped_mlp = true, te_mxfp8_grouped = "per_tensor" } end,
  "train: te_mxfp8_grouped per_tensor predates Transformer Engine's fused grouped MLP "
  .. "(fused_grouped_mlp): give one of them", "with the fused grouped MLP refused", true)
t.raises(function() run { moe_dispatcher = "flex", legacy_permute = true } end,
  "train: legacy_permute is the alltoall dispatcher's fused permute; moe_dispatcher flex "
  .. "permutes otherwise: give moe_dispatcher = alltoall", "legacy_permute on flex refused", true)
t.raises(function() run { unfused_permute = true, legacy_permute = true } end,
  "train: legacy_permute is Transformer Engine's fused permute kernel; unfused_permute runs "
  .. "Megatron-Core's PyTorch ops instead: give one of them", "with unfused_permute refused", true)
-- The engine prices the alltoall dispatcher's permute on the
-- expert-parallel layer alone (train_layer.c: moe_permute_costs at ep >
-- 1): at ep 1 legacy_permute would price nothing, so it is refused.
t.raises(function() run { ep = 1, legacy_permute = true } end,
  "train: legacy_permute is priced on the expert-parallel layer's permute (moe_permute); "
  .. "give ep > 1 (got 1)", "legacy_permute at ep 1 refused", true)
-- Off Transformer Engine's modules there is no GroupedLinear to price.
t.raises(function() run { stack = "hf", capacity_factor = 0, te_mxfp8_grouped = "bulk" } end,
  "train: te_mxfp8_grouped bulk is Transformer Engine's GroupedLinear: it needs stack = "
  .. "megatron with kernels = fused (got stack = hf, kernels = eager)",
  "te_mxfp8_grouped off TE's modules refused", true)
t.raises(function() run { te_mxfp8_grouped = "old" } end,
  "train: te_mxfp8_grouped must be fused, bulk or per_tensor (got string 'old')",
  "an unknown value refused", true)

-- The shared experts' own module (engine/train_layer.c shared_expert_host,
-- Megatron-Core's SharedExpertMLP): a Qwen3-30B-A3B-shaped model with and
-- without one shared expert, on 8 H100s at 512 tokens, where the MoE
-- layer's forward is host-bound, so it grows by the module's host work:
-- linear_fc1, the activation, linear_fc2 and the combine's add, 4 launches
-- at 24.84 us (GP_EAGER_OP_TIME, x86 Hopper: host_op_scale 1); in fp8 the
-- two linears' fp8 share more, 2 x (114.51 - 59.19) / 59.19 (TE PR #3523's
-- GB200 Linear, TE_FP8_FWD_HOST); with the router graphed (cuda_graph_scope
-- moe_router, which "also capture[s] shared experts") the add alone.  The
-- shared GEMMs' own GPU time hides under the host.  Float rounding: 1e-6.
local function sm(shared)
  return { name = "qwen3-like", layers = 48, hidden = 2048, heads = 32, kv_heads = 4,
           head_dim = 128, ffn_hidden = 6144, ffn_gated = true, vocab = 151936,
           tied_embeddings = false,
           moe = { experts = 128, top_k = 8, shared_experts = shared, ffn_hidden = 768 } }
end
local function srun(shared, x)
  return gp.train(t.with({ model = sm(shared), gpu = "h100-sxm", gpus = 8, ep = 8, batch = 1,
                           seq = 512, global_batch = 8, stack = "megatron", zero = 1 }, x))
end
local hop = 24.84e-6
for _, c in ipairs {
  { {}, 4, "the shared expert's 4 host launches, bf16" },
  { { precision = "fp8" }, 4 + 2 * (114.51 - 59.19) / 59.19, "and fp8's share of its two linears" },
  { { cuda_graph_scope = { "moe_router" } }, 1, "with the router graphed, the add alone" },
} do
  local a, b = t.layer_fwd(srun(0, c[1])), t.layer_fwd(srun(1, c[1]))
  t.near(b - a, c[2] * hop, 1e-6, c[3])
end

-- The check, not a fit: Megatron-LM's DeepSeek-V3 GB200 guide (2.1.1)
-- gives TE PR #1927 "up to a 10x unit speedup" at 256 experts, top 8.
-- Its shape: 4096 tokens a rank (tp 1), hidden 7168, a GB200 GPU (148
-- SMs, 8e12 x 0.85 B/s).  Fused, each kernel moves u + us = 9 x 4096 x
-- 7168 x 2 B = 528.5 MB: 77.7 us + its fill and launch; the old loop 2
-- waves x (7 x 256 + 8) loads x 169.72 ns = 611.0 us (the unpermute's
-- 7 x 264: 627.3 us).  The old pair over the fused pair: (611.0 + 627.3
-- + 2 x 4.9) / (2 x 82.6) = 7.55x: inside the guide's bound, above half
-- of it (the band is the check; the figure is the derivation's).
local dsv3 = { model = "deepseek-v3", gpu = "gb200", gpus = 256, ep = 32, pp = 8, batch = 1,
               global_batch = 256, stack = "megatron", zero = 1, precision = "bf16",
               seq = 4096, capacity_factor = 1.0 }
local df = gp.train(dsv3)
local dl = gp.train(t.with(dsv3, { legacy_permute = true }))
local gbw = 8e12 * 0.85
local tf = 9 * 4096 * 7168 * 2 / gbw + small
local d = op(dl, "moe_permute").fwd - op(df, "moe_permute").fwd
local ratio = (2 * tf + d) / (2 * tf)
t.ok(ratio > 5 and ratio < 10, ("the guide's shape: old / new %.2fx, within 5x..10x"):format(ratio))
local old = (2 * (7 * 256 + 8) * L + small) + (2 * 7 * (256 + 8) * L + small)
t.near(ratio, old / (2 * tf), 0.01,
       "and 7.55x as derived (0.01: the GB200's small kernel is Blackwell's, as the B200's)")
