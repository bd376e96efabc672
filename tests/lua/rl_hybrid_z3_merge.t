-- DeepSpeed's hybrid engine under ZeRO-3 (DeepSpeed-Chat's run_13b.sh and
-- run_66b.sh), and its fuse of a LoRA actor's adapters (the end of this
-- file).  First the merge.  DeepSpeed's hybrid engine under ZeRO-3 (as
-- run_66b.sh): the inference attention keeps q, k and v apart
-- (containers/base.py v0.9.0 set_params_wo_copy: the fused qkvw only "if
-- not Z3_enabled or self.q_k_v is None") and DeepSpeedSelfAttention.forward
-- copies them into one shared buffer at every forward (ds_attention.py
-- _merge_qkv).  gp.rl prices those copies on each decode step's GPU
-- timeline (result hybrid_qkv_merge; gpuplan.rl HYBRID_Z3_MERGE_COPIES).
-- Run with ./gpuplan run tests/lua/rl_hybrid_z3_merge.t.
local t = require "tap"
local gp = require "gpuplan"

local with = t.with

t.plan(16)

-- OPT-13B (facebook/opt-13b: 40 layers, hidden 5120, 40 heads of 128; its
-- own q_proj, k_proj, v_proj) on one DGX of 8 A100-40GB, as run_13b.sh:
-- ZeRO-3, LoRA 128, the hybrid engine at inference TP 2, 16 prompts a GPU.
local opt13 = { id = "OPT-13B", layers = 40, hidden = 5120, heads = 40, kv_heads = 40,
  head_dim = 128, ffn_hidden = 20480, ffn_gated = false, ffn_act = "relu", split_proj = "qkv",
  vocab = 50272, tied_embeddings = true, positions = "learned", norm = "layer" }
local base = { model = opt13, gpu = "a100-sxm-40gb", gpus = 8, gpus_per_node = 8, algo = "ppo",
  zero = 3, precision = "fp16", prompts = 128, group = 1, prompt_len = 256, response_len = 256,
  batch = 16, global_batch = 128, rollout_engine = "hybrid", generation_batch = 16,
  rollout_tp = 2, recompute = "full", method = "lora", lora_rank = 128,
  lora_targets = "q,k,v,o,up,down" }

local r = gp.rl(base)
t.ok(r.fits, "the job fits")
-- The bytes a decode step: 40 layers x 3 copies (q, k, v) x (read +
-- write) x the TP rank's 5120 / 2 rows of 5120 x 2 B = 6,291,456,000 B.
-- At the card's peak 1.555 TB/s (catalog mem_bw) that is 4.046 ms; the
-- roofline's copies run at the achievable fraction of it (Ampere's hbm
-- 0.85, catalog archs.lua) plus each of the 120 kernels' launch, so the
-- time lies above that floor and below twice it (1 / 0.85 = 1.18x, the
-- launches a few microseconds each: well under the 2x bound).
local bytes = 40 * 3 * 2 * 2560 * 5120 * 2
local floor = bytes / 1.555e12
t.ok(r.hybrid_qkv_merge and r.hybrid_qkv_merge >= floor and r.hybrid_qkv_merge <= 2 * floor,
  string.format("ZeRO-3, TP 2: %.2f ms a decode step re-fusing q, k, v (floor %.2f ms)",
    (r.hybrid_qkv_merge or 0) * 1e3, floor * 1e3))
-- The figure itself: each of the 120 copies (40 layers x q, k, v) is one
-- memory-bound roofline op, its bytes at the achievable rate (1.555 TB/s
-- x Ampere's hbm 0.85) plus the arch's launch (launch_overhead 4 us) and
-- the memory pipeline's fill (roofline.c ROOF_MEM_FILL 3.9 us):
-- 6,291,456,000 / 1.32175e12 + 120 x 7.9 us = 4.760 + 0.948 = 5.708 ms.
-- 1e-9 relative: the same sum, rounding only.
t.near(r.hybrid_qkv_merge, bytes / (1.555e12 * 0.85) + 120 * (4e-6 + 3.9e-6), 1e-9,
  "ZeRO-3, TP 2: 120 copies at the achievable HBM rate plus 7.9 us each, 5.708 ms")

-- It lies on every decode step's GPU timeline: the rollout's decode is
-- longer by steps x the merge than the same job whose q, k and v are one
-- fused linear (split_proj false: a policy with no q_k_v fuses them once).
-- The decode is GPU-bound here (its host, (7.04 x 40 + 17) x 24.84 us =
-- 7.4 ms, under the GPU's ~20 ms), so the difference is exact up to
-- rounding (1e-9 relative).
local f = gp.rl(with(base, { split_proj = false }))
t.is(f.hybrid_qkv_merge, nil, "q, k and v fused by the model's own modules: no merge")
local d = (r.rollout.decode - f.rollout.decode) / r.rollout.steps
t.ok(math.abs(d / r.hybrid_qkv_merge - 1) < 1e-9,
  "the decode grows by the merge each of its 256 steps")

-- At inference TP 1 each GPU copies the whole q, k and v: twice the
-- bytes.  The 120 kernels' launches do not double, so the ratio is a
-- little under 2 (above 1.7: the launches are under a tenth of the TP 2
-- time's copies).
local one = gp.rl(with(base, { rollout_tp = 1 }))
local ratio = one.hybrid_qkv_merge / r.hybrid_qkv_merge
t.ok(ratio > 1.7 and ratio <= 2.0, string.format("TP 1 copies twice the slice (x%.2f)", ratio))
-- The launches cancel in the difference: TP 1 copies TP 2's bytes once
-- more, 6,291,456,000 B at the A100's 1.555 TB/s x Ampere's hbm 0.85
-- (catalog archs.lua) = 4.760 ms.  Tolerance 1e-9 relative: the same
-- copies' fixed costs on both sides, the rest one division.
t.near((one.hybrid_qkv_merge - r.hybrid_qkv_merge) / (bytes / (1.555e12 * 0.85)), 1, 1e-9,
  "TP 1 less TP 2: the slice's bytes at the achievable HBM rate")

-- Below ZeRO-3 the container points at a fused qkvw of its own
-- (set_params_wo_copy: "self.module.attention.attn_qkvw = self.qkvw"): no
-- merge, at TP 1 (what gp.rl takes below ZeRO-3).
local z2 = gp.rl(with(base, { zero = 2, rollout_tp = 1 }))
t.is(z2.hybrid_qkv_merge, nil, "ZeRO-2: the fused copy, no per-forward merge")

-- A vLLM engine has none: its weights are its own, fused at load.
local vo = with(base, { rollout_engine = "vllm" })
vo.generation_batch = nil
t.is(gp.rl(vo).hybrid_qkv_merge, nil, "vLLM: no merge")

-- The copies' host ops join each layer's dispatch: with the merge the
-- host's part of a decode step is 3 ops x 40 layers x 24.84 us longer;
-- the GPU-bound decode hides it, so only the GPU time moved (above).
-- (rollout.host is the engine's per-sequence host work, which the
-- merge does not touch: this equality holds with or without the copies'
-- host ops; the host-bound run below is what sees them.)
t.ok(r.rollout.host == f.rollout.host,
  "GPU-bound: the host's extra ops are hidden under the step")
-- Where the host binds they show.  A small OPT of the same depth (40
-- layers, hidden 1024, 16 heads of 64, ffn 4096): its TP 2 decode step's
-- GPU work (40 x 12.6 M weights x 2 B / 2 = 0.5 GB a rank, 0.4 ms) sits under the
-- hybrid engine's dispatch, (7.04 x 40 + 17) x 24.84 us = 7.4 ms, so the
-- merge's GPU time hides and its host ops are the whole difference:
-- 3 copies x 40 layers x GP_EAGER_OP_TIME 24.84 us = 2.9808 ms a step.
-- 1e-9 relative: the same op counts times one constant.
local small = with(opt13, { id = "OPT-small", hidden = 1024, heads = 16, kv_heads = 16,
  head_dim = 64, ffn_hidden = 4096 })
local sr = gp.rl(with(base, { model = small }))
local sf = gp.rl(with(base, { model = small, split_proj = false }))
t.near((sr.rollout.decode - sf.rollout.decode) / sr.rollout.steps, 3 * 40 * 24.84e-6, 1e-9,
  "host-bound: the 120 copies' host ops, 2.98 ms a decode step")

-- The LoRA fuse (result hybrid_lora_fuse, in the weight_sync phase):
-- generate adds each adapter into its gathered weight, whole on every
-- rank ("weight.data += lora_scaling * torch.matmul(lora_left_weight.t(),
-- lora_right_weight.t())", hybrid_engine.py v0.9.0 _fuse_lora), 12 B an
-- element (gpuplan.rl HYBRID_LORA_FUSE_BYTES).  OPT-13B's adapted linears
-- (q, k, v, o, fc1, fc2) a layer: 4 x 5120^2 + 2 x 5120 x 20480 =
-- 314,572,800 elements; x 12 B x 40 layers = 150.99 GB, 97.1 ms at the
-- card's peak 1.555 TB/s: the floor; the achievable fraction (0.85) and
-- the rank-128 GEMMs' FLOPs stay under twice it.
local fl = 12 * 314572800 * 40 / 1.555e12
t.ok(r.hybrid_lora_fuse and r.hybrid_lora_fuse >= fl and r.hybrid_lora_fuse <= 2 * fl,
  string.format("ZeRO-3, TP 2: %.0f ms a step fusing the adapters (floor %.0f ms)",
    (r.hybrid_lora_fuse or 0) * 1e3, fl * 1e3))
-- At rank 1 the adapters' GEMM does 2 FLOP a weight and is memory
-- bound (it writes its 2 B product), so the fuse is the 12 B a weight at
-- the achievable HBM rate, 150.99 GB / (1.555e12 x 0.85) = 114.24 ms,
-- plus each of its 480 kernels' (2 a linear) fixed costs: launch 4 us and
-- fill 3.9 us at least, under 20 us each (9.6 ms, 8.4%).  So [1, 1.1] of
-- the 12 B figure; 8 B or 16 B a weight (0.67x, 1.33x) fail.
local one_r = gp.rl(with(base, { lora_rank = 1 })).hybrid_lora_fuse
local rr = one_r / (12 * 314572800 * 40 / (1.555e12 * 0.85))
t.ok(rr >= 1 and rr <= 1.1, string.format("rank 1: the fuse is 12 B a weight at the achievable "
  .. "rate plus its kernels' fixed costs (x%.3f)", rr))
-- At inference TP 1 generate fuses before and unfuses after the same
-- whole weights (fuse_lora_weight, unfuse_lora_weight): twice the passes
-- over the same tensors, exactly (1e-12 relative: the same ops summed).
t.ok(math.abs(one.hybrid_lora_fuse / r.hybrid_lora_fuse - 2) < 1e-12,
  "TP 1: fuse and unfuse, twice TP 2's one pass")
-- It is weight_sync's: halving the rank changes only the GEMMs' depth,
-- not the sync's bytes, so the phase moves by the fuse's change exactly
-- (1e-9 relative).
local function phase(res, name)
  for _, p in ipairs(res.phases) do if p.name == name then return p.seconds end end
end
local r64 = gp.rl(with(base, { lora_rank = 64 }))
local dp = phase(r, "weight_sync") - phase(r64, "weight_sync")
local df = r.hybrid_lora_fuse - r64.hybrid_lora_fuse
t.ok(df > 0 and math.abs(dp / df - 1) < 1e-9, "the weight sync carries the fuse")
-- A fully trained actor has no adapters to fuse.
local full = with(base, { method = "full" })
full.lora_rank, full.lora_targets = nil, nil
local rf = gp.rl(full)
t.is(rf.hybrid_lora_fuse, nil, "method full: no fuse")
