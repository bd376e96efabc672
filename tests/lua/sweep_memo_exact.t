-- A sweep prices each layout as gp.train prices it alone, whatever the
-- search priced before it: the memo's phase (the layouts that differ only
-- in ZeRO stage and the TP and DP overlaps) shares only what reads none
-- of those.  Two kept terms read more, and a sweep gave a layout its
-- neighbour's price:
--  * the ZeRO blocks were kept by "either overlap on" (train_int.h
--    block_set), but FSDP's backward, the per-parameter reduction and
--    DeepSpeed stage 3's side streams read overlap_grad_reduce alone: with
--    overlap_param_gather on, the DP-overlap-off layout's blocks priced
--    its -on twin (LoRA below: 10.27 s for both where gp.train says 10.27
--    and 9.25);
--  * DeepSpeed stage 3's module hooks are in the eager layer costs
--    (train_prep.c layer_key ds_hooks, zero 3 only), which the phase
--    shared across ZeRO stages: a ZeRO-3 layout searched after its ZeRO-2
--    twin ran without them (gpt3 below: 412.4 s where gp.train says 435.8).
-- And a DualPipe job's step ran 1F1B with DualPipe's defaults (lgp_train.c
-- job:step set the schedule from vpp alone).
-- Every equality is exact: the same train_step on the same config, so a
-- kept term priced for another layout shows; each case also checks that
-- the twins differ, so a shared price cannot pass.
-- Run with ./gpuplan run tests/lua/sweep_memo_exact.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(10)

-- gp.train of a sweep row's layout, with the search's fixed options.
local function alone(o, x)
  return gp.train(t.with(o, { gpus = x.gpus, tp = x.tp, pp = x.pp, cp = x.cp, zero = x.zero,
    sp = x.sp, batch = x.micro_batch, recompute = x.recompute, tp_overlap = x.tp_overlap,
    overlap_grad_reduce = x.overlap_grad_reduce })).step_s
end

-- Every row (of tp 8: 2 ZeRO stages x 2 DP overlaps x micro-batches x
-- recompute policies) against gp.train; n counts those compared.
local function all_alone(name, o, sw)
  local bad, n, first = 0, 0, nil
  for _, x in ipairs(sw.results) do
    if x.tp == 8 then
      n = n + 1
      local a = alone(o, x)
      if a ~= x.step_s then
        bad = bad + 1
        first = first or string.format("%s: sweep %.17g, alone %.17g", x.layout, x.step_s, a)
      end
    end
  end
  t.ok(n > 0 and bad == 0, string.format("%s: %d rows of tp 8 priced as gp.train prices them (%d differ%s)",
    name, n, bad, first and ("; " .. first) or ""))
end

-- base on 16 H100s with the ZeRO stages zero and both DP overlaps
-- searched: every row as gp.train prices it, and the DP overlap moving a
-- ZeRO-3 step at tp 8 (so a block shared by its two values would show).
local function dp_overlap_searched(name, base, zero)
  all_alone(name .. ", DP overlap searched", base, gp.sweep(t.with(base, { gpus = { 16 },
    zero = zero, tp_overlap = { false }, overlap_grad_reduce = { false, true }, top = 100000 })))
  local L = { gpus = 16, tp = 8, zero = 3, sp = true, batch = 1, recompute = "full",
    tp_overlap = false }
  t.ok(gp.train(t.with(base, t.with(L, { overlap_grad_reduce = false }))).step_s ~=
    gp.train(t.with(base, t.with(L, { overlap_grad_reduce = true }))).step_s,
    name .. " ZeRO 3: the DP overlap moves the step (so a shared block would show)")
end

-- LoRA on llama3-8b, 16 H100s, ZeRO 2 and 3, both DP overlaps (the
-- megatron stack's overlap_param_gather on).
dp_overlap_searched("lora", { model = "llama3-8b", gpu = "h100-sxm", method = "lora",
  tokens = 1e10 }, { 2, 3 })

-- GPT-3 175B on the deepspeed stack (eager kernels), 128 H100s, ZeRO 2
-- and 3: the ZeRO-3 rows come after their ZeRO-2 twins.
local ds = { model = "gpt3-175b", gpu = "h100-sxm", stack = "deepspeed", method = "pretrain",
  tokens = 1e10 }
local sw = gp.sweep(t.with(ds, { gpus = { 128 }, zero = { 2, 3 }, tp_overlap = { false },
  overlap_grad_reduce = { true }, top = 100000 }))
all_alone("deepspeed, ZeRO 2 and 3 searched", ds, sw)
-- job:step prices ZeRO 2 and then 3 on one memo as a fresh job does.
local j = gp.train_job(t.with(ds, { gpus = 128, tp = 8 }))
local L3 = { tp = 8, zero = 3, sp = true, batch = 1, recompute = "full", tp_overlap = false,
  overlap_grad_reduce = true }
local fresh = j:step(L3).step_s
local j2 = gp.train_job(t.with(ds, { gpus = 128, tp = 8 }))
local z2 = j2:step(t.with(L3, { zero = 2 })).step_s
t.is(j2:step(L3).step_s, fresh, "deepspeed job: ZeRO 3 after ZeRO 2 on one memo is ZeRO 3 alone")
t.ok(z2 ~= fresh, "deepspeed: ZeRO 2 and 3 differ (so a shared layer cost would show)")

-- A DualPipe job (mixtral-8x7b, 32 H100s, tp 4, pp 8): its step is
-- gp.train's DualPipe step, full recompute included (1F1B with
-- DualPipe's ep_overlap refused it).
local mx = { model = "mixtral-8x7b", gpu = "h100-sxm", gpus = 32, method = "pretrain",
  tokens = 1e10, schedule = "dualpipe", tp = 4, pp = 8 }
local dj = gp.train_job(mx)
local S = { tp = 4, pp = 8, ep = 1, zero = 1, sp = true, batch = 4 }
t.is(dj:step(t.with(S, { recompute = "none" })).step_s,
  gp.train(t.with(mx, t.with(S, { recompute = "none" }))).step_s, "dualpipe job: a step is gp.train's")
t.is(dj:step(t.with(S, { recompute = "full" })).step_s,
  gp.train(t.with(mx, t.with(S, { recompute = "full" }))).step_s,
  "dualpipe job: full recompute is gp.train's, not refused as 1F1B's ep_overlap")
t.ok(gp.train(t.with(mx, t.with(S, { recompute = "none" }))).step_s ~=
  gp.train(t.with(mx, t.with(S, { recompute = "none", schedule = "1f1b" }))).step_s,
  "mixtral: DualPipe and 1F1B differ (so a 1F1B step would show)")

-- DeepSpeed stage 3 per parameter (zero3_gather per_param), llama3-8b on 16
-- H100s, overlap_param_gather on: per_param_block hides the gradients'
-- reduce-scatters under the backward by overlap_grad_reduce alone, so the
-- ZeRO blocks are keyed by it there (train_int.h block_set), while the
-- megatron stack's blocks, which read the DP overlap only as "either
-- overlap on", are shared by its two values.
dp_overlap_searched("deepspeed per_param, overlap_param_gather on", { model = "llama3-8b",
  gpu = "h100-sxm", stack = "deepspeed", method = "pretrain", zero3_gather = "per_param",
  overlap_param_gather = true, tokens = 1e10 }, { 3 })
