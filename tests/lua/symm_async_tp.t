-- PyTorch's micro-pipelined async TP (tp_overlap without Transformer
-- Engine's modules: torchtitan's enable_async_tensor_parallel, the
-- micro_pipeline_tp pass over torch.distributed._symmetric_memory): each
-- TP collective hides only under its own matmuls, the backward's
-- input-gradient reduce-scatters of a gated layer stay on the path, and
-- each fused reduce-scatter ends with a reduction over the group's
-- partials (train_layer.c symm_tp).
-- Run with ./gpuplan run tests/lua/symm_async_tp.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(6)

local op = t.op
local part = t.step_part   -- a step part's table by name (tap.lua)

-- Llama 3 8B at TP 8 with SP on one H100 node, four 8192-token sequences
-- a micro-batch (T = 32768), no recompute: each pass has two all-gathers
-- and two reduce-scatters of the T x h buffer (32768 x 4096 x 2 B = 268
-- MB), c = tp_comm / 4 each, about 0.67 ms over NVLink.  The windows,
-- 7/8 of each matmul (the local shard's matmul runs before any peer's
-- data is needed):
--   forward  AG under qkv (0.36 ms -> 0.31): 0.36 ms exposed + 0.189 x
--            0.31 = 0.42 ms; AG under mlp_up (1.54 ms), RS under
--            mlp_down (0.81 ms -> 0.71): hidden, 0.189 c = 0.13 ms each;
--            RS under o_proj (0.29 ms -> 0.26): 0.41 + 0.05 = 0.46 ms;
--   backward AG under o_proj's input gradient (half its backward, 0.51 /
--            2 -> 0.22 ms): 0.45 + 0.04 = 0.49 ms; AG under mlp_down's
--            (0.78 -> 0.68 ms): 0.13 ms; the attention's and the gated
--            MLP's input-gradient reduce-scatters whole: 2 c = 1.34 ms;
-- 3.08 ms a layer, plus two reductions of 268 x 9/8 = 302 MB each at the
-- roofline's HBM rate (0.09 to 0.13 ms between 3.35 and 2.4 TB/s).
local job = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, tp = 8, sp = true,
              method = "pretrain", stack = "hf", kernels = "fused", seq = 8192, batch = 4,
              global_batch = 4, recompute = "none" }
local off = gp.train(job)
local on = gp.train(t.with(job, { tp_overlap = true }))
local L, sl, q = 32, 0.189, 7 / 8
local c = op(on, "tp_comm").fwd / 4
local function ov(comm, win)
  local h = math.min(comm, win)
  return comm - h + sl * h
end
local f = ov(c, q * op(on, "qkv").fwd) + ov(c, q * op(on, "mlp_up").fwd) +
  ov(c, q * op(on, "o_proj").fwd) + ov(c, q * op(on, "mlp_down").fwd)
local b = ov(c, q * 0.5 * op(on, "o_proj").bwd) + ov(c, q * 0.5 * op(on, "mlp_down").bwd) + 2 * c
-- The model's ends (the embedding's and the head's TP collectives) are
-- not overlapped either way: what the layers do not account for in the
-- step without overlap (2 c x 4 a layer) is theirs.
local ends = part(off, "tp_comm").seconds - L * 8 * c
local red = part(on, "tp_comm").seconds - ends - L * (f + b)
local mb = 268435456 * 9 / 8
t.ok(red > L * 2 * mb / 3.35e12 and red < L * 2 * mb / 2.4e12,
     string.format("the layers' exposed TP time is the per-collective windows' plus two reductions (%.4f s)", red))
t.ok(L * (f + b) > 0.4 * L * 8 * c, "more than 40% of the TP traffic exposed")
t.ok(on.step_s < off.step_s, "still faster than plain TP")

-- A non-gated MLP (GPT's one up projection): its input-gradient
-- reduce-scatter is a matmul's output, fused under that matmul.
local gpt = { model = "megatron-gpt-1.7b", gpu = "h100-sxm", gpus = 8, tp = 8, sp = true,
              method = "pretrain", stack = "hf", kernels = "fused", seq = 2048, batch = 8,
              global_batch = 8, recompute = "none" }
local g_on = gp.train(t.with(gpt, { tp_overlap = true }))
local g_off = gp.train(gpt)
t.ok(part(g_on, "tp_comm").seconds < part(g_off, "tp_comm").seconds, "GPT: hides part of it")

-- Transformer Engine's Userbuffers (the megatron stack) keep the layer's
-- GEMMs as one window: the whole traffic hidden at 0.189 when the window
-- covers it.  A pass's traffic: the forward's 4 c, the backward's 4 c and
-- the column-parallel linears' two re-gathers of their kept input shards
-- (bulk under the dgrad GEMM), 2 c: 10 c = 2.5 x the forward's, 13.4 ms
-- against 17.8 ms of GEMMs a layer.  Without Userbuffers the layer's
-- backward is op(tp_comm).bwd (TE's async reduce-scatter and re-gather,
-- train_layer.c async_tp_bwd): what the layers do not account for there
-- is the ends'.
local mj = t.with(job, { stack = "megatron" })
local m_off, m_on = gp.train(mj), gp.train(t.with(mj, { tp_overlap = true }))
local mc = op(m_on, "tp_comm")
local m_ends = part(m_off, "tp_comm").seconds - L * (mc.fwd + mc.bwd)
t.near(part(m_on, "tp_comm").seconds, m_ends + L * sl * 2.5 * mc.fwd, 1e-9,
       "megatron: Userbuffers' whole-layer window")

-- The validation profile: torchtitan's async-TP rows price it this way.
local validate = require "gpuplan.validate"
local cat = gp.catalog()
local a, v
for _, cs in ipairs(validate.read("validation/cases.json")) do
  if cs.id == "torchtitan2506-h100-llama31-8b-64gpu-tp8-bf16-asynctp" then a = validate.predict(cs, cat) end
  if cs.id == "torchtitan2506-h100-llama31-8b-64gpu-tp8-bf16-tp" then v = validate.predict(cs, cat) end
end
-- Measured 4809.4 / 4378 = 1.10; the whole-layer window gave 1.30.
t.ok(a and v and a.predicted / v.predicted < 1.2 and a.predicted / v.predicted > 1.05,
     string.format("torchtitan 8B TP 8: async over plain TP %.3f (measured 1.10)",
                   a and v and a.predicted / v.predicted or 0))
