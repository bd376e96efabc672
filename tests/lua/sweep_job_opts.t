-- The layout search with the job's split_ends, activation_offload_layers,
-- fp8_attention and mtp_layers (`gpuplan plan --split-ends` ...): each is
-- the job's, fixed in every layout the search prices, never a searched
-- dimension.  Where it cannot apply to a layout the search skips the
-- layout, as gp.train would refuse it (engine/sweep.c job_pp_ok, ok_rec,
-- ok_sched, ok_vpp); where it applies to none the search is refused,
-- naming it.  Run with ./gpuplan run tests/lua/sweep_job_opts.t.
local t = require "tap"
local gp = require "gpuplan"
local sweep = require "gpuplan.sweep"

local same_as_train = t.same_as_train
local function values(r, f)
  local set, list = {}, {}
  for _, c in ipairs(r.results) do set[f(c)] = true end
  for v in pairs(set) do list[#list + 1] = v end
  table.sort(list, function(a, b) return tostring(a) < tostring(b) end)
  return table.concat(list, " ")
end
-- A copy of x without key k (t.with cannot drop a key).
local function without(x, k)
  local y = t.with(x, {})
  y[k] = nil
  return y
end
local function refused(o, text, what)
  local ok, e = pcall(gp.sweep, o)
  t.ok(not ok and tostring(e):find(text, 1, true) ~= nil, what .. ": " .. tostring(e))
end

-- split_ends.  Llama-3 8B: 32 layers + the 2 ends = 34 slots, which pp
-- 2 divides (17 a stage) and pp 4 and 8 do not (34 = 2 x 17); pp 1 has no
-- stages.  On 8 H100s with pp_max 8 every result is pp 2.
local job = { model = "llama3-8b", seq = 4096, global_batch = 64, split_ends = true }
local o = t.with(job, { gpu = "h100-sxm", gpus = 8, pp_max = 8, top = 1000, scaling = false })
local r = gp.sweep(o)
t.is(values(r, function(c) return c.pp end), "2", "split_ends, 34 slots on 8 GPUs: pp 2 only")
same_as_train(job, r.results[1], "split_ends best")
-- 17 slots a stage divide into no vpp > 1 model chunks: no interleaving.
t.is(values(gp.sweep(t.with(o, { vpp_max = 4 })), function(c) return c.vpp end), "1",
     "split_ends, 17 slots a stage: vpp 1 only")
-- Priced for 1F1B and the interleaved schedule, not DualPipe
-- (memory_layout.c split_ends_check): the search that lists DualPipe
-- finds it without split_ends (pp 2, 64 / (dp mb) >= 2 x pp micro-
-- batches) and skips it with split_ends.
local dual = { schedule = { "1f1b", "dualpipe" } }
local function has_dual(x)
  for _, c in ipairs(gp.sweep(t.with(x, dual)).results) do
    if c.schedule == "dualpipe" then return true end
  end
  return false
end
t.ok(has_dual(t.with(o, { split_ends = false })), "without split_ends: DualPipe layouts")
t.ok(not has_dual(o), "with split_ends: no DualPipe layout")
-- A 30-layer model (Llama-3 8B's shape otherwise): 32 slots, which pp
-- 2, 4 and 8 divide (16, 8, 4 a stage); interleaved, a stage's slots
-- divide into vpp chunks: at pp 8 (4 slots) vpp 2 and 4, a chunk of one
-- slot the embedding or the loss alone (layout.c check_vpp).
local m30 = { name = "llama3-8b-30l", layers = 30, hidden = 4096, heads = 32, kv_heads = 8,
              head_dim = 128, ffn_hidden = 14336, ffn_gated = true, vocab = 128256,
              tied_embeddings = false }
local o30 = t.with(o, { model = m30, vpp_max = 4, micro_batch = { 1 }, recompute = { "full" } })
local r30 = gp.sweep(o30)
t.is(values(r30, function(c) return c.pp end), "2 4 8", "30 layers, 32 slots: pp 2, 4 and 8")
local inter
for _, c in ipairs(r30.results) do
  if c.pp == 8 and c.vpp == 4 then inter = c end
end
t.ok(inter ~= nil, "pp 8 x vpp 4 with the ends: searched")
if inter then same_as_train(t.with(job, { model = m30 }), inter, "pp 8 vpp 4 split_ends") end
-- Refused, naming it: no pp the search tries takes the ends.
refused(t.with(o, { pp_max = 1 }), "split_ends applies to pipeline stages (pp >= 2); the "
  .. "search tries pp up to 1 (pp_max, clamped to the GPUs and layers)", "pp_max 1")
refused(t.with(o, { gpus = 4, pp_max = 1 }), "split_ends applies to pipeline stages",
  "4 GPUs, pp_max 1")

-- activation_offload_layers: Megatron-Core offloads with pp 1 and no
-- recompute; the search keeps those layouts, and prices each as gp.train.
local aj = { model = "llama3-8b", seq = 4096, global_batch = 64, activation_offload_layers = 4 }
local ao = t.with(aj, { gpu = "h100-sxm", gpus = 8, pp_max = 4, top = 1000, scaling = false })
local ra = gp.sweep(ao)
t.is(values(ra, function(c) return c.pp end), "1", "activation_offload_layers: pp 1 only")
t.is(values(ra, function(c) return c.recompute end), "none",
     "activation_offload_layers: recompute none only")
local ba = same_as_train(aj, ra.results[1], "activation_offload_layers best")
-- The offload is priced: the same layout without it differs.
local noff = gp.train(sweep.train_options(without(aj, "activation_offload_layers"),
                                          ra.results[1]))
t.ok(noff.memory.total > ba.memory.total,
     "the same layout without the offload holds more on the GPU")
refused(t.with(ao, { recompute = { "full" } }), "activation_offload_layers needs recompute none",
  "recompute full only")

-- fp8_attention: a windowed dense model (GPT-OSS's attention, 64 query
-- and 8 KV heads of 64, every second layer a 128-token window) on 4
-- GB200s in MXFP8.  In FP8 a window layer's backward walks every key
-- tile to the diagonal (fp8_attention.t), so each layout's step is
-- gp.train's with the option, and longer than without it.
local wm = { name = "window-shape", layers = 8, hidden = 2880, heads = 64, kv_heads = 8,
             head_dim = 64, ffn_hidden = 8192, ffn_gated = true, vocab = 32000,
             sliding_window = { size = 128, layers = 4 } }
local fj = { model = wm, seq = 4096, global_batch = 64, stack = "megatron", precision = "fp8",
             fp8_scaling = "block", fp8_attention = true }
local fo = t.with(fj, { gpu = "gb200", gpus = 4, top = 1000, scaling = false })
local rf = gp.sweep(fo)
local bf = same_as_train(fj, rf.results[1], "fp8_attention best")
local f16 = gp.train(sweep.train_options(without(fj, "fp8_attention"), rf.results[1]))
t.ok(bf.step_s > f16.step_s, "the same layout without fp8_attention is faster (windowed)")

-- mtp_layers: the module on the last stage, priced in every layout as
-- gp.train prices it (train_mtp.t), at pp 1 and pp > 1.
local mj = { model = "llama3-8b", seq = 4096, global_batch = 64, mtp_layers = 1 }
local mo = t.with(mj, { gpu = "h100-sxm", gpus = 8, pp_max = 2, top = 1000, scaling = false })
local rm = gp.sweep(mo)
local seen = {}
for _, c in ipairs(rm.results) do
  if not seen[c.pp] then
    seen[c.pp] = true
    local tm = same_as_train(mj, c, "mtp_layers 1, pp " .. c.pp)
    local t0 = gp.train(sweep.train_options(without(mj, "mtp_layers"), c))
    t.ok(tm.step_s > t0.step_s, "mtp_layers 1, pp " .. c.pp .. ": longer than without")
  end
end
t.ok(seen[1] and seen[2], "mtp_layers: pp 1 and pp 2 layouts both priced")

t.done_testing()
