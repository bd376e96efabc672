-- fused_grouped_mlp: the routed experts as Transformer Engine's fused
-- grouped MLP (Megatron-Core's use_transformer_engine_op_fuser with
-- NVTE_CUTEDSL_FUSED_GROUPED_MLP=1, MXFP8 on Blackwell).  fc1, the gated
-- activation with its clamp and the router's weights, both biases and the
-- casts between the GEMMs run in cuDNN's grouped GEMM epilogues, one
-- launch for the local experts (engine/train_layer.c gemm_costs,
-- FUSED_MLP_FWD_B): no moe_act, moe_clamp or moe_bias op, no cast of
-- fc2's input, no cast of fc1's dY, no per-expert launches.
-- Run with ./gpuplan run tests/lua/fused_grouped_mlp.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(29)

local op = t.op
-- GB200 streams at 8e12 B/s x 0.85 (catalog achievable.hbm).
local bw = 8e12 * 0.85
-- A block-scaled cast to both copies moves MXFP8_BOTH_EXTRA bytes an
-- element beyond the 2 read and 1 + 1 written (engine/train_int.h: the
-- B200 cast measured at 52.34 us for 8192^2 at 7.67e12 x 0.85 B/s, less
-- the 3.9 us fill, less 4 B).
local mx = (52.34e-6 - 3.9e-6) * 7.67e12 * 0.85 / 8192 ^ 2 - 4
-- gpt-oss-120b (top 4 of 128 experts, 2880 wide, clamped GEGLU, biased
-- linears) on 8 GB200s, EP 8, one sequence a micro-batch, MXFP8.
local job = { model = "gpt-oss-120b", gpu = "gb200", gpus = 8, ep = 8, batch = 1,
              global_batch = 8, stack = "megatron", zero = 1, precision = "fp8",
              fp8_scaling = "block", method = "pretrain" }
-- capacity_factor 1: every rank runs the mean rows (the padded buffer), which the counts
-- here take; the dropless default's chance skew is tests/lua/moe_balance.t's
local function run(x) return gp.train(t.with(t.with(job, { capacity_factor = 1 }), x)) end
local u4, u8 = run { seq = 4096 }, run { seq = 8192 }
local f4, f8 = run { seq = 4096, fused_grouped_mlp = true },
  run { seq = 8192, fused_grouped_mlp = true }
-- The same with the rows arriving aligned (moe_fp8_pad none): the fp8
-- padding's extra rows (256 an expert fused, 32 unfused) then change
-- neither path's GEMMs, which price alike both ways.
local un4, un8 = run { seq = 4096, moe_fp8_pad = "none" },
  run { seq = 8192, moe_fp8_pad = "none" }
local fn4, fn8 = run { seq = 4096, fused_grouped_mlp = true, moe_fp8_pad = "none" },
  run { seq = 8192, fused_grouped_mlp = true, moe_fp8_pad = "none" }

t.ok(op(u4, "moe_act") and op(u4, "moe_clamp") and op(u4, "moe_bias"),
     "TEGroupedMLP: the activation, the clamp and fc2's bias loop are ops of their own")
t.ok(op(f4, "moe_act") == nil and op(f4, "moe_clamp") == nil and op(f4, "moe_bias") == nil,
     "fused: none of them runs")

-- A balanced router at capacity factor 1: a = Tn k ffn elements of fc2's
-- input per GPU.  Doubling the tokens adds 4096 x 4 x 2880 = 47,185,920.
-- fc2's forward without its input's cast: the cast read A = 2 B and wrote
-- 1 + 1 B and mx more an element, (4 + mx) x 47.19 MB / 6.8e12 B/s =
-- 32.6 us.  The per-expert launches (expert_loop) and the cast's fill do
-- not depend on the tokens: they cancel in the difference, as does the
-- GEMM, priced alike both ways.  Float rounding only, 1e-6.
local da = 4096 * 4 * 2880
local function dd(a8, a4, b8, b4, name, dir)
  return (op(a8, name)[dir] - op(a4, name)[dir]) - (op(b8, name)[dir] - op(b4, name)[dir])
end
t.near(dd(un8, un4, fn8, fn4, "moe_down", "fwd"), (4 + mx) * da / bw, 1e-6,
       "fc2's input comes cast from fc1's epilogue")
-- fc1's backward without dY's cast: dY is fc1's gated output, 2 a
-- elements, the cast (2 + 2 + mx) B each: 65.2 us for the added tokens.
t.near(dd(un8, un4, fn8, fn4, "moe_up", "bwd"), (4 + mx) * 2 * da / bw, 1e-6,
       "fc1's dY comes cast from fc2's dgrad epilogue")

-- The epilogues' own bytes, where the GEMMs stream (few tokens): fc1's
-- forward writes fc2's input twice in 1 B (FUSED_MLP_FWD_B = 2 B an
-- element of a) and fc2's dgrad reads the saved 16-bit pre-activation
-- (2 a x 2 B) and writes fc1's dY twice in 1 B (2 a x 2 B) where a dgrad
-- writes its 2 a x 2 B output: (2 A + 4 - A) a = 6 a bytes.  A grouped
-- fp8 GEMM streams at GB200's 6.8e12 B/s x ROOF_GEMV_BW 0.94 (roofline.c:
-- no fp8 stream fraction in the catalog).  From 64 to 128 tokens a
-- sequence the fused GEMMs' time grows by these bytes over TEGroupedMLP's
-- (the rest cancels as above): 2 da / rate forward, 6 da / rate for fc2's
-- dgrad, da = 64 x 4 x 2880 = 737,280.  Tolerance 3%: at 16 to 32 tokens
-- an expert the MMAs still overlap the stream (roofline.c roof_overlap,
-- d time / d bytes = 1 - 1.5 (t_compute / t_memory)^4 there, and the
-- experts' expected tiles move with the tokens), measured 0.995 and 0.997
-- of the bytes' time; a 1 B or 3 B epilogue would be 50% off.
-- The rows arrive aligned here too (moe_fp8_pad none), so the fused
-- path's 256-row padded blocks do not move its GEMMs' shapes.
local s64, s128 = run { seq = 64, moe_fp8_pad = "none" }, run { seq = 128, moe_fp8_pad = "none" }
local g64, g128 = run { seq = 64, fused_grouped_mlp = true, moe_fp8_pad = "none" },
  run { seq = 128, fused_grouped_mlp = true, moe_fp8_pad = "none" }
local rate, de = bw * 0.94, 64 * 4 * 2880
t.near(dd(g128, g64, s128, s64, "moe_up", "fwd") / (2 * de / rate), 1, 0.03,
       "fc1's epilogue writes fc2's input twice in 1 B (FUSED_MLP_FWD_B)")
t.near(dd(g128, g64, s128, s64, "moe_down", "bwd") / (6 * de / rate), 1, 0.03,
       "fc2's dgrad epilogue reads the pre-activation and writes fc1's dY twice")

-- The fused path pads each expert's rows to 256 (Megatron-Core
-- core_v0.18.0 experts.py "align_size = 256 if self._with_fused_impl"):
-- 4096 tokens x top 4 over 16 local experts is 1024 rows an expert,
-- Poisson (lambda 1024, the zero truncation nil): E[ceil(X/256)] =
-- 4.491690 blocks of two 128-row tiles, 8.983379 tiles, where unpadded
-- they pay E[ceil(X/128)] = 8.491706 (exact Poisson sums): fc1's and
-- fc2's GEMMs 5.79% more tile work.  The forward op also holds work the
-- rows do not touch (fc1's input cast), so it grows by more than nothing
-- and at most 5.79%.
local function grew(name)
  return op(f4, name).fwd / op(fn4, name).fwd
end
t.ok(grew("moe_up") > 1 and grew("moe_up") <= 8.983379 / 8.491706,
     "fused fc1 runs 256-row padded blocks: 0 < growth <= 5.79%")
t.ok(grew("moe_down") > 1 and grew("moe_down") <= 8.983379 / 8.491706,
     "fused fc2 runs 256-row padded blocks: 0 < growth <= 5.79%")

-- HybridEP's dispatch pads the rows itself, to the same multiple
-- (Megatron-Core core_v0.18.0 token_dispatcher.py: "self.pad_multiple =
-- get_align_size_for_quantization(self.config)", 256 under the op fuser,
-- moe_utils.py), where the grouped MLP then copies nothing: the expert
-- GEMMs are the copy path's padded ones, bit for bit (the same counts, the
-- same 256-row blocks).  DeepEP's flex backend pads nothing itself (no
-- router padding, no moe_use_grouped_tensor: skip_routed_expert_padding
-- false), so the grouped MLP's copy pads them: its GEMMs are the copy
-- path's padded ones too.
local hy = run { seq = 4096, fused_grouped_mlp = true, moe_dispatcher = "flex",
                 moe_flex_backend = "hybridep" }
local dp = run { seq = 4096, fused_grouped_mlp = true, moe_dispatcher = "flex",
                 moe_flex_backend = "deepep" }
t.is(op(hy, "moe_up").fwd, op(f4, "moe_up").fwd,
     "HybridEP's 256-row padding: fused fc1's forward as the copy path's")
t.is(op(hy, "moe_down").bwd, op(f4, "moe_down").bwd,
     "HybridEP's 256-row padding: fused fc2's backward (wgrad's K too) as the copy path's")
t.is(op(dp, "moe_up").fwd, op(f4, "moe_up").fwd,
     "DeepEP without router padding: the grouped MLP's copy, fused fc1's forward padded")

-- The per-expert launches: the fused kernels are one launch for the 16
-- local experts, where TEGroupedMLP pays 15 more GEMM gaps (GB200's
-- graph launch, 1 us) and 15 more cast fills forward.  So at one token
-- count the fused fc2 forward is shorter than TEGroupedMLP's by its cast
-- and 15 x (1 us + a cast's fixed part) more: at least the cast plus 15 us.
local cast4 = (4 + mx) * da / 2 / bw
t.ok(op(u4, "moe_down").fwd - op(f4, "moe_down").fwd > cast4 + 15e-6,
     "no per-expert launches")
t.ok(f4.step_s < u4.step_s and f4.tokens_per_s_gpu > u4.tokens_per_s_gpu,
     "the fused MLP's step is shorter")

-- Where Transformer Engine would not fuse, refused by name.
local function err(x, j)
  local ok, e = pcall(gp.train, t.with(j or job, t.with({ seq = 4096, fused_grouped_mlp = true },
                                                         x)))
  return not ok and tostring(type(e) == "table" and e.msg or e) or ""
end
local job16 = t.with(job, { precision = "bf16" })
job16.fp8_scaling = nil
t.like(err({}, job16), "fused_grouped_mlp runs only with an MXFP8 recipe", "bf16 refused")
t.like(err { fp8_scaling = "current" },
       "fused_grouped_mlp runs only with an MXFP8 recipe", "per-tensor fp8 refused")
t.like(err { gpu = "h100-sxm" }, "fused_grouped_mlp runs cuDNN's SM100 kernels",
       "Hopper refused")
t.like(err { model = "llama3-8b", ep = 1 },
       "fused_grouped_mlp is the MoE experts' fused MLP; llama3%-8b has no experts",
       "a dense model refused")
t.like(err { stack = "hf" }, "it needs stack = megatron with kernels = fused",
       "Hugging Face's modules refused")
t.like(err { tp = 2 }, "fused_grouped_mlp needs the experts unsplit",
       "expert tensor parallelism refused")

-- The sweep (gpuplan plan, gp.sweep): Megatron-Core fuses the experts'
-- MLP only unsplit, so the layouts whose experts split over tp > 1 (etp
-- as tp, the sweep's default) are skipped (engine/sweep.c ok_etp), and
-- the defaults say so.  The same space without the option has TP2
-- layouts among its best, so the test can fail.
local space = { model = "gpt-oss-120b", gpu = "gb200", gpus = { 32 }, seq = 4096,
                global_batch = 64, stack = "megatron", precision = "fp8",
                fp8_scaling = "block", ep_max = 8, tp_max = 2, top = 100 }
local function tps(r, etp)
  local n = 0
  for _, c in ipairs(r.results) do
    if c.tp > 1 and (etp == nil or c.etp == etp) then n = n + 1 end
  end
  return n
end
local function said(r, pat)
  for _, d in ipairs(r.defaults) do if d:find(pat, 1, true) then return true end end
  return false
end
local plain = gp.sweep(space)
local fused = gp.sweep(t.with(space, { fused_grouped_mlp = true }))
t.ok(tps(plain) > 0 and #fused.results > 0 and tps(fused) == 0,
     "sweep: no layout with the experts split over tp > 1")
t.ok(said(fused, "tp=1 (fused_grouped_mlp: Megatron-Core refuses the fused MLP with the "
  .. "experts split over TP; layouts with etp = tp > 1 skipped: give etp = {\"tp\", 1} to "
  .. "search"),
     "sweep: the defaults say why tp stays 1")
-- With the experts folded searched too (etp = {"tp", 1}) the tp > 1
-- layouts come back, each with its experts unsplit (the etp level's 1).
local folded = gp.sweep(t.with(space, { fused_grouped_mlp = true, etp = { "tp", 1 } }))
t.ok(tps(folded) > 0 and tps(folded) == tps(folded, 1),
     "sweep: etp tp,1 searches tp > 1 with the experts folded only")
t.ok(said(folded, "etp=1 at tp > 1 (fused_grouped_mlp"), "sweep: the defaults say etp=1")
-- Each result is gp.train's job: its best layout priced again by gp.train
-- gives its step (the same engine, so float rounding only).
local best = folded.results[1]
local again = gp.train(require("gpuplan.sweep").train_options(
  t.with(space, { fused_grouped_mlp = true }), best))
t.near(again.step_s, best.step_s, 1e-9 * best.step_s, "sweep: the best layout is gp.train's")

-- gp.train_job's step prices layouts without gp.train's Lua checks: the
-- engine refuses the split experts itself (train_prep.c check_fused_mlp).
local job32 = gp.train_job { model = "gpt-oss-120b", gpu = "gb200", gpus = 32, seq = 4096,
  global_batch = 64, stack = "megatron", precision = "fp8", fp8_scaling = "block",
  fused_grouped_mlp = true }
local ok2, e2 = pcall(job32.step, job32, { tp = 2, ep = 8, batch = 4 })
t.ok(not ok2 and tostring(e2):find("fused_grouped_mlp needs the experts unsplit", 1, true)
     and tostring(e2):find("got etp 2", 1, true), "train_job: etp 2 refused by the engine")

-- gp.rl's actor trains with gp.train's layer pricing: the fused MLP takes
-- its update phase (and only its training) down, as in gp.train.
local rl = { model = "qwen3-30b-a3b", gpu = "gb200", gpus = 8, ep = 8, stack = "megatron",
             precision = "fp8", fp8_scaling = "block", prompts = 64, group = 8,
             prompt_len = 512, response_len = 1024 }
local r0, r1 = gp.rl(rl), gp.rl(t.with(rl, { fused_grouped_mlp = true }))
t.ok(r1.update.stage_time_s < r0.update.stage_time_s, "rl: the update is shorter")
t.is(r1.update.parts.ep_comm, r0.update.parts.ep_comm, "rl: the all-to-all is unchanged")
local ok3, e3 = pcall(gp.rl, t.with(rl, { fused_grouped_mlp = true, tp = 2 }))
t.like(tostring(e3), "rl: fused_grouped_mlp needs the experts unsplit", "rl: etp 2 refused")
local ok4, e4 = pcall(gp.rl, t.with(rl, { fused_grouped_mlp = true, gpu = "h100-sxm" }))
t.like(tostring(e4), "rl: fused_grouped_mlp runs cuDNN's SM100 kernels", "rl: Hopper refused")
