-- DeepSpeed's ZeRO buckets (gp.train's reduce_bucket_size and
-- prefetch_bucket_size on the deepspeed stack; engine/train_stage.c
-- ds_reduce_time and ds_no_prefetch, engine/memory_train.c stage_states):
-- how many gradient reductions a layer issues, the flat buffer every GPU
-- holds, and what stage 3 gathers ahead.
-- Run with ./gpuplan run tests/lua/ds_bucket_size.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(12)

local part = t.step_part

-- Llama 2 7B on one DGX A100 (8 GPUs), DeepSpeed ZeRO-3, 4096 tokens, 2
-- micro-batches of 1, every overlap off, bf16 gradients reduced in bf16.
local h, ffn, L, mbs = 4096, 11008, 32, 2
local base = { model = "llama2-7b", gpu = "a100-sxm-80gb", gpus = 8, zero = 3, seq = 4096,
  batch = 1, global_batch = 8 * mbs, recompute = "none", stack = "deepspeed",
  overlap_param_gather = false, overlap_grad_reduce = false, grad_reduce = "bf16",
  precision = "bf16" }
local function with(extra) return gp.train(t.with(base, extra)) end
local function coll(op, bytes)
  return gp.comm { op = op, bytes = bytes, gpus = 8, system = "dgx-a100" }.time
end
local function comp(r, name) return t.part(r.memory, name) end

-- Hand derivation.  A layer holds P = 4h^2 + 3 h ffn + 2h = 202,383,360
-- weights: the gated MLP's three matrices of h x ffn = 45,088,768 and the
-- rest, q, k, v and o with the two norms, as four of (4h^2 + 2h) / 4 =
-- 16,779,264.  The backward hands DeepSpeed down, up, gate, then o, v, k,
-- q; a weight that would pass the bucket closes it first.
-- At reduce_bucket_size 1e7 every weight is larger than the bucket, so
-- each goes alone: 7 reductions a layer, priced as 7 of 2P / 7 bytes.
-- At the default 5e8 the 32 layers' 6.5e9 elements fill buckets of 5e8,
-- a layer's share P / 5e8 = 0.405 of one reduction of 2 x 5e8 bytes.
-- Only dp_comm moves (the backward's gathers are the same), by
-- mbs x L x (7 RS(2P/7) - (P/S) RS(2S)): more launches, each of them
-- latency-bound sooner.  Tolerance 1e-5 relative: the engine's layer
-- count agrees with P to about 1e-7.
local P = 4 * h * h + 3 * h * ffn + 2 * h
local S = 5e8
local def, small = with {}, with { reduce_bucket_size = 1e7 }
local grow = mbs * L * (7 * coll("reduce_scatter", 2 * P / 7) -
  P / S * coll("reduce_scatter", 2 * S))
t.ok(grow > 0, "seven small reductions cost more than a share of a large one")
t.near((part(small, "dp_comm").seconds - part(def, "dp_comm").seconds) / grow, 1, 1e-5,
  "reduce_bucket_size 1e7: each of a layer's 7 weights reduced alone")
t.near(small.step_s - def.step_s, grow, 1e-5, "and only dp_comm moves")

-- A bucket larger than the stage's gradients reduces them in one
-- collective a micro-batch: 1e12 and 1e10 elements, both above the 6.5e9
-- the 32 layers hold, price the same step.  Exact: the same bucket.
t.is(with { reduce_bucket_size = 1e12 }.step_s, with { reduce_bucket_size = 1e10 }.step_s,
  "a bucket past the stage's gradients: one reduction of them all")

-- Memory: the flat bucket is reduce_bucket_size 16-bit elements on every
-- GPU (stage3.py __ipg_bucket_flat_buffer), whatever the model: 5e8 x 2 B
-- = 1 GB at the default, beside the gathered window: the prefetch runs
-- ahead to stage3_max_live_parameters (1e9) plus the weight that crosses
-- it, here the output layer, V h = 32000 x 4096 (tests/lua/
-- ds_live_window.t derives it): 2 x (1e9 + V h) bytes.  Exact to the
-- byte: integers.
local Vh = 32000 * h
t.is(comp(def, "param_gather"), 2 * (1e9 + Vh) + 2 * 5e8,
  "param_gather: the live window and the 5e8-element bucket")
t.is(comp(def, "param_gather") - comp(small, "param_gather"), 2 * (5e8 - 1e7),
  "a 1e7 bucket holds 2 x (5e8 - 1e7) bytes less")

-- prefetch_bucket_size 0: nothing gathered ahead, so with
-- overlap_param_gather asked the forward's gathers hide under nothing:
-- zero_gather shows every gather in full, the same total as with the
-- overlap off, none hidden.  Exact: the same collectives summed the same
-- way.  Its memory is the reuse window alone: DeepSpeed keeps what it
-- reuses within stage3_max_reuse_distance (1e9 elements), about half of
-- it in the last layers at the turn from the forward to the backward,
-- beside the module computed (at most the output layer): 2 x (1e9 / 2 +
-- V h) bytes and the bucket.  Exact: integers.
local ov = with { overlap_param_gather = true }
local ov0 = with { overlap_param_gather = true, prefetch_bucket_size = 0 }
t.ok((part(ov, "zero_gather").hidden or 0) > 0,
  "prefetched, the forward's gathers hide under the layer before")
t.is(part(ov0, "zero_gather").hidden or 0, 0, "prefetch_bucket_size 0: none hidden")
t.is(part(ov0, "zero_gather").seconds, part(def, "zero_gather").seconds,
  "the gathers in full, as with the overlap off")
t.is(comp(with { prefetch_bucket_size = 0 }, "param_gather"), 2 * (1e9 / 2 + Vh) + 2 * 5e8,
  "prefetch_bucket_size 0: the reuse window alone")

-- Refusals name the user's key: another stack has no such config, and a
-- negative size is no size.
t.raises(function() with { stack = "hf", reduce_bucket_size = 1e7 } end,
  "reduce_bucket_size is DeepSpeed's ZeRO config (zero_optimization); stack = hf has no "
    .. "such option (the deepspeed stack takes it)", "hf stack refused", true)
t.raises(function() with { prefetch_bucket_size = -1 } end, "prefetch_bucket_size",
  "negative refused", true)
