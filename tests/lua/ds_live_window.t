-- DeepSpeed ZeRO-3's gathered window (gp.train's max_live_parameters and
-- max_reuse_distance on the deepspeed stack; engine/memory_train.c
-- ds_gather_window): what partitioned_param_coordinator.py keeps gathered
-- at the turn from the forward to the backward.
-- Run with ./gpuplan run tests/lua/ds_live_window.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(17)

-- Llama 2 7B on 8 A800s, ZeRO-3, one stage: its parameters are 32 layers
-- of P = 4h^2 + 3 h ffn + 2h = 202,383,360, the embedding and the output
-- layer of V h = 32000 x 4096 = 131,072,000 each, and the final norm h:
-- N = 6,738,415,616.  The largest weight is the output layer (V h > the
-- MLP's h ffn = 45,088,768).  param_gather is 2 bytes (bf16) a gathered
-- element plus the 5e8-element gradient bucket, 2 x 5e8 bytes.
local h, ffn, L, V = 4096, 11008, 32, 32000
local P = 4 * h * h + 3 * h * ffn + 2 * h
local Vh = V * h
local N = L * P + 2 * Vh + h
local bucket = 2 * 5e8
local base = { model = "llama2-7b", gpu = "a800-sxm-80gb", gpus = 8, zero = 3, seq = 4096,
  batch = 2, global_batch = 64, recompute = "full", stack = "deepspeed", precision = "bf16" }
local function with(extra) return gp.train(t.with(base, extra)) end
local function pg(r) return t.part(r.memory, "param_gather") end

-- Default (both limits 1e9): the prefetch gathers ahead until 1e9 are
-- live, the parameter that crosses the limit whole: 1e9 + V h, more
-- than the reuse window's 1e9 / 2 + V h.  Exact: integers.
local def = with {}
t.is(pg(def), 2 * (1e9 + Vh) + bucket, "default: 1e9 live plus the output layer")

-- max_live_parameters 3e8 with max_reuse_distance 0: the live limit alone,
-- 3e8 + V h.
t.is(pg(with { max_live_parameters = 3e8, max_reuse_distance = 0 }), 2 * (3e8 + Vh) + bucket,
  "max_live_parameters 3e8: 3e8 plus the weight that crosses it")

-- max_live_parameters 3e8 at the default reuse distance: the reuse window,
-- 1e9 / 2 + V h, is the larger -- what the coordinator keeps for reuse
-- counts against the limit but is not released by it.
t.is(pg(with { max_live_parameters = 3e8 }), 2 * (1e9 / 2 + Vh) + bucket,
  "a small live limit: the reuse window is the larger")

-- max_reuse_distance 4e9: the last 2e9 elements stay for reuse, beyond the
-- live limit: 4e9 / 2 + V h.
t.is(pg(with { max_reuse_distance = 4e9 }), 2 * (4e9 / 2 + Vh) + bucket,
  "max_reuse_distance 4e9: half of it kept at the turn")

-- A limit past the model's N parameters gathers the whole stage: 2 N.
-- Tolerance 1e-6 relative: the engine's parameter count may differ from N
-- by its norms' rounding (a few thousand elements).
t.near((pg(with { max_live_parameters = 1e12 }) - bucket) / (2 * N), 1, 1e-6,
  "max_live_parameters 1e12: the whole stage, N parameters")

-- The limits price memory only: the step time does not move.  Exact.
t.is(with { max_live_parameters = 3e8 }.step_s, def.step_s, "the step time is the same")

-- The defaults line states both at ZeRO 3 on the deepspeed stack.
local d = table.concat(def.defaults, "; ")
t.ok(d:find("max_live_parameters=1e9 (DeepSpeed's default, zero/config.py)", 1, true) and
  d:find("max_reuse_distance=1e9 (DeepSpeed's default, zero/config.py)", 1, true),
  "the defaults line states DeepSpeed's limits")

-- Refusals name the user's key: another stack has no such config, and a
-- negative count is no count.
t.raises(function() with { stack = "hf", max_live_parameters = 3e8 } end,
  "max_live_parameters is DeepSpeed's ZeRO config (zero_optimization); stack = hf has no "
    .. "such option (the deepspeed stack takes it)", "hf stack refused", true)
t.raises(function() with { max_reuse_distance = -1 } end, "max_reuse_distance",
  "a negative distance refused, naming the key", true)
-- ZeRO-3's own keys at another stage change nothing in DeepSpeed (only
-- stage 3 reads stage3_*): refused, naming the key and the stage, in
-- gp.train and gp.memory at ZeRO 2.
t.raises(function() with { zero = 2, max_live_parameters = 3e8 } end,
  "max_live_parameters is DeepSpeed's stage 3 (stage3_max_live_parameters): it needs zero 3 "
    .. "(got zero 2)", "gp.train at zero 2 refused", true)
local mem = t.with(base, { zero = 2, max_reuse_distance = 0 })
mem.global_batch = nil  -- gp.memory prices one micro-batch, no step
t.raises(function() gp.memory(mem) end,
  "max_reuse_distance is DeepSpeed's stage 3 (stage3_max_reuse_distance): it needs zero 3 "
    .. "(got zero 2)", "gp.memory at zero 2 refused", true)

-- overlap_comm at stage 2 (overlap_grad_reduce on the deepspeed stack):
-- stage_1_and_2.py's backward makes a second flat buffer "to avoid data
-- access conflict when overlap_comm is enabled", buf_1 of
-- reduce_bucket_size 16-bit elements: 2 x 5e8 bytes more.  Stage 3 keeps
-- its one __ipg_bucket_flat_buffer: no change there.  Exact: integers.
local z2 = { zero = 2, recompute = "full" }
local off2 = with(t.with(z2, { overlap_grad_reduce = false }))
local on2 = with(t.with(z2, { overlap_grad_reduce = true }))
t.is(pg(on2) - pg(off2), 2 * 5e8, "stage 2 with overlap_comm: a second 5e8-element buffer")
t.is(pg(with { overlap_grad_reduce = true }), pg(def), "stage 3: one flat buffer either way")

-- gp.sweep searching the overlap prices the second buffer per row, as
-- gp.train does (its ZeRO-2 memory under overlap_comm has a slot of its
-- own in the sweep's memo, train_int.h train_zslot): every row's memory
-- against gp.train with the row's layout.  The same sums: 1e-9 relative.
local sw = gp.sweep { model = "llama2-7b", gpu = "a800-sxm-80gb", gpus = "8", stack = "deepspeed",
  seq = 4096, global_batch = 64, top = 120, zero = { 1, 2 }, overlap_grad_reduce = { false, true } }
local bad, on = {}, 0
for _, c in ipairs(sw.results) do
  if c.zero == 2 and c.overlap_grad_reduce then on = on + 1 end
  local r = gp.train { model = "llama2-7b", gpu = "a800-sxm-80gb", gpus = 8, stack = "deepspeed",
    seq = 4096, global_batch = 64, zero = c.zero, batch = c.micro_batch, recompute = c.recompute,
    tp = c.tp, pp = c.pp, sp = c.sp, vpp = c.vpp, overlap_grad_reduce = c.overlap_grad_reduce,
    tp_overlap = c.tp_overlap }
  if math.abs(r.memory.total - c.mem_bytes) > 1e-9 * r.memory.total then
    bad[#bad + 1] = string.format("%s ovl %s: sweep %.0f, train %.0f", c.layout,
      tostring(c.overlap_grad_reduce), c.mem_bytes, r.memory.total)
  end
end
t.ok(on > 0 and #bad == 0, "sweep rows' memory is gp.train's, ZeRO-2 overlap rows included")
if #bad > 0 then t.diag(table.concat(bad, "\n")) end

-- max_live_parameters 0: the prefetch asks for min(0 - live, bucket) <= 0
-- elements and gathers nothing ahead, as prefetch_bucket_size 0 does:
-- under overlap_param_gather no forward gather hides (zero_gather the
-- same as with prefetch_bucket_size 0, exact: the same sums), and memory
-- is the reuse window alone, 2 x (1e9 / 2 + V h) and the bucket (exact).
local part = t.step_part
local l0 = with { overlap_param_gather = true, max_live_parameters = 0 }
local p0 = with { overlap_param_gather = true, prefetch_bucket_size = 0 }
t.is(part(l0, "zero_gather").hidden or 0, 0, "max_live_parameters 0: no gather hidden")
t.is(part(l0, "zero_gather").seconds, part(p0, "zero_gather").seconds,
  "the gathers as with prefetch_bucket_size 0")
t.is(pg(l0), 2 * (1e9 / 2 + Vh) + bucket, "max_live_parameters 0: the reuse window alone")
