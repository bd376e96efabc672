-- Megatron-LM's asynchronous TP all-reduce (async_tp_allreduce; Megatron-LM
-- 16c90445 and f3e57f6f, September 2021): a column-parallel linear's
-- input-gradient collective runs beside its weight-gradient GEMM
-- (megatron/mpu/layers.py LinearWithGradAccumulationAndAsyncAllreduce).
-- Run with ./gpuplan run tests/lua/async_tp_allreduce.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(9)

local op = t.op
-- GPT-3 175B's layer (hidden 12288) at TP 8, four 2048-token sequences a
-- micro-batch: each of the backward's two all-reduces (8192 x 12288 x 2 B
-- = 201 MB, about 1.7 ms over the DGX A100's NVLink) runs beside the
-- weight gradient of qkv (2 x 8192 x 4608 x 12288 = 0.93 PFLOP, about 4 ms)
-- or of the MLP's up projection (1.24 PFLOP): both hidden whole, each
-- leaving the compute under it slower by OVERLAP_SLOWDOWN, 0.189 of the
-- seconds hidden (train_int.h).  Without SP the backward's two collectives
-- are both these, so its TP time is 0.189 x the forward's; the forward's
-- are unchanged.  The same arithmetic both ways: 1e-9.
local job = { model = "gpt3-175b", gpu = "a100-sxm-80gb", gpus = 8, tp = 8, pp = 1,
              method = "pretrain", stack = "megatron", seq = 2048, batch = 4,
              global_batch = 4, recompute = "full" }
local off = gp.train(job)
local on = gp.train(t.with(job, { async_tp_allreduce = true }))
local tf, tb = op(off, "tp_comm"), op(on, "tp_comm")
t.near(tb.fwd, tf.fwd, 1e-9, "the forward's all-reduces stay on the path")
t.near(tb.bwd, 0.189 * tf.bwd, 1e-9, "no SP: both backward all-reduces hidden, 0.189 of them paid")
t.ok(on.step_s < off.step_s, "the step shortens")
-- With SP the backward's collectives are the row-parallel linears'
-- all-gathers (on the path), the column-parallel ones' reduce-scatters
-- under their weight gradients and their inputs' second all-gathers
-- under their input gradients (LinearWithGradAccumulationAndAsync
-- Communication.backward re-gathers the shard it kept, async_op=True,
-- before grad_output.matmul(weight)).  Without the flag the engine prices
-- the backward as two all-gathers and two reduce-scatters on the path,
-- soff = 2 (ag + rs) with ag = rs at these bytes; with it: the two
-- row-parallel all-gathers, soff / 2, plus the two reduce-scatters and
-- the two re-gathers, soff in all, each hidden whole under its half of
-- a 2-4 ms GEMM (1 ms each over NVLink) and paid at 0.189:
-- (0.5 + 0.189) soff.
local sp = t.with(job, { sp = true })
local soff = op(gp.train(sp), "tp_comm")
local son = op(gp.train(t.with(sp, { async_tp_allreduce = true })), "tp_comm")
t.near(son.bwd, (0.5 + 0.189) * soff.bwd, 1e-9,
       "SP: the reduce-scatters and the input's re-gathers hidden, the row all-gathers not")
-- A window shorter than the collective leaves the rest exposed: the
-- Megatron 1.7B layer (hidden 2304) at TP 8, four 2048-token sequences,
-- has a qkv weight gradient of 2 x 8192 x 864 x 2304 = 32.6 GFLOP (about
-- 0.15 ms) beside a 37.7 MB all-reduce (about 0.35 ms): part hidden.
local small = { model = "megatron-gpt-1.7b", gpu = "a100-sxm-80gb", gpus = 8, tp = 8,
                method = "pretrain", stack = "megatron", seq = 2048, batch = 4,
                global_batch = 4 }
local a = op(gp.train(small), "tp_comm")
local b = op(gp.train(t.with(small, { async_tp_allreduce = true })), "tp_comm")
t.ok(b.bwd > 0.189 * a.bwd + 1e-12 and b.bwd < a.bwd, "a short window hides part of it")
-- TP 1 has no collective to hide: the same step.
local one = t.with(job, { gpus = 1, tp = 1, model = "megatron-gpt-1.7b", batch = 1,
                        global_batch = 1 })
t.near(gp.train(t.with(one, { async_tp_allreduce = true })).step_s, gp.train(one).step_s, 1e-12,
       "tp 1: nothing to hide")

-- The validation profile: Korthikanti et al. 2022's rows run it, the 2021
-- paper's do not (its SC21 scripts' commit 6985e58 predates it).
local validate = require "gpuplan.validate"
local cat = gp.catalog()
local k22, n21
for _, c in ipairs(validate.read("validation/cases.json")) do
  if c.id == "korthikanti2022-1t-full-recompute" then k22 = validate.predict(c, cat) end
  if c.id == "megatron2021-t1-gpt-145.6b" then n21 = validate.predict(c, cat) end
end
t.ok(k22 and k22.defaults:find("async_tp_allreduce=true", 1, true)
     and n21 and not n21.defaults:find("async_tp_allreduce", 1, true),
     "2022's Megatron-LM hides the all-reduce, 2021's does not")

-- Windows shorter than the collectives: Megatron-DeepSpeed's GPT 30B
-- long-sequence layer (hidden 6144, ffn 24576) at TP 32 over four DGX A100
-- nodes, one 2048-token sequence: each collective moves the whole 2048 x
-- 6144 x 2 B = 25 MB buffer over InfiniBand (about 0.26 ms), the
-- backward's GEMMs are short (qkv's about 0.17 ms, dgrad and wgrad half
-- each).  The forward is two all-gathers and two reduce-scatters, f = 4
-- ag (ag = rs here), so one collective is f / 4; the backward with the
-- flag is f / 2 (the row-parallel all-gathers) plus, for qkv and for
-- mlp_up, the reduce-scatter under the wgrad half and the re-gather under
-- the dgrad half: 2 x ov(f / 4, op.bwd / 2), ov(c, w) = c - min(c, w) +
-- 0.189 min(c, w) (train_int.h overlap_at).  The same arithmetic: 1e-9.
local mds = { gpu = "a100-sxm-40gb", gpus = 32, gpus_per_node = 8, nic_fabric = "ib-hdr-200",
  nics = 8, tp = 32, pp = 1, sp = true, batch = 1, global_batch = 2, seq = 2048,
  recompute = "full", precision = "fp16", stack = "deepspeed", flash = true,
  attn_kernel = "triton", async_tp_allreduce = true,
  model = { layers = 64, hidden = 6144, heads = 64, kv_heads = 64, ffn_hidden = 24576,
            vocab = 53248, ffn_gated = false, norm = "layer", positions = "learned",
            linear_bias = true, tied_embeddings = true } }
local mr = gp.train(mds)
local f = op(mr, "tp_comm").fwd
local function ov(c, w) local h = math.min(c, w) return c - h + 0.189 * h end
t.near(op(mr, "tp_comm").bwd, f / 2 + 2 * ov(f / 4, op(mr, "qkv").bwd / 2)
       + 2 * ov(f / 4, op(mr, "mlp_up").bwd / 2), 1e-9,
       "SP, short windows: what the GEMMs cannot hide stays on the path")

-- Megatron-DeepSpeed's SP runs (the long-sequence rows, commit cc3a94c6)
-- take it whatever --no-async-tensor-model-parallel-allreduce says (the
-- SP path of layers.py is asynchronous); its BLOOM rows (no SP) do not.
local ls, bl
for _, c in ipairs(validate.read("validation/cases.json")) do
  if c.id == "mds-longseq-a100-40g-x32-gpt30b-tp32-sp-s2k" then ls = validate.predict(c, cat) end
  if (c.workload or {}).framework == "megatron-deepspeed" and not (c.parallel or {}).sp
     and ((c.parallel or {}).tp or 1) > 1 and not bl then bl = validate.predict(c, cat) end
end
t.ok(ls and ls.defaults:find("async_tp_allreduce=true", 1, true)
     and bl and bl.defaults and not bl.defaults:find("async_tp_allreduce", 1, true),
     "Megatron-DeepSpeed: SP's reduce-scatter hidden, BLOOM's all-reduce not")
