-- Megatron-LM's asynchronous TP all-reduce (async_tp_allreduce; Megatron-LM
-- 16c90445 and f3e57f6f, September 2021): a column-parallel linear's
-- input-gradient collective runs beside its weight-gradient GEMM
-- (megatron/mpu/layers.py LinearWithGradAccumulationAndAsyncAllreduce).
-- Run with ./gpuplan run tests/lua/async_tp_allreduce.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(18)

local op = t.op
-- GPT-3 175B's layer (hidden 12288) at TP 8, four 2048-token sequences a
-- micro-batch: each of the backward's two all-reduces (8192 x 12288 x 2 B
-- = 201 MB, about 1.7 ms over the DGX A100's NVLink) runs beside the
-- weight gradient of qkv (2 x 8192 x 4608 x 12288 = 0.93 PFLOP, about 4 ms)
-- or of the MLP's up projection (1.24 PFLOP): both hidden whole, each
-- leaving the compute under it slower by OVERLAP_SLOWDOWN, 0.189 of the
-- seconds hidden (train_int.h).  Without SP the backward's two collectives
-- are both these, so its TP time is 0.189 x the forward's; the forward's
-- are unchanged.  The same arithmetic both ways: 1e-9.  (On the megatron
-- stack it is the default: "off" says false.)
local job = { model = "gpt3-175b", gpu = "a100-sxm-80gb", gpus = 8, tp = 8, pp = 1,
              method = "pretrain", stack = "megatron", seq = 2048, batch = 4,
              global_batch = 4, recompute = "full" }
local off = gp.train(t.with(job, { async_tp_allreduce = false }))
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
-- before grad_output.matmul(weight)).  Transformer Engine's column-
-- parallel modules, the megatron stack's, run the same backward
-- (layernorm_linear.py: "gather_along_first_dim(ln_out, ctx.tp_group,
-- async_op=True)" before the dgrad GEMM, "reduce_scatter_along_first_dim(
-- dgrad, ctx.tp_group, async_op=True)" before the wgrad GEMM), so the
-- flag changes nothing there under SP.  The forward is two all-gathers
-- and two reduce-scatters, f = 2 (ag + rs) with ag = rs at these bytes;
-- the backward: the two row-parallel all-gathers, f / 2, plus the two
-- reduce-scatters and the two re-gathers, f in all, each hidden whole
-- under its half of a 2-4 ms GEMM (1 ms each over NVLink) and paid at
-- 0.189: (0.5 + 0.189) f.  The same arithmetic: 1e-9.
local sp = t.with(job, { sp = true })
local soff = op(gp.train(t.with(sp, { async_tp_allreduce = false })), "tp_comm")
local son = op(gp.train(t.with(sp, { async_tp_allreduce = true })), "tp_comm")
t.near(son.bwd, (0.5 + 0.189) * son.fwd, 1e-9,
       "SP: the reduce-scatters and the input's re-gathers hidden, the row all-gathers not")
t.near(soff.bwd, son.bwd, 1e-12, "SP on Transformer Engine's linears: the same backward without the flag")
-- PyTorch's SP (the hf stack: DTensor's ColwiseParallel) keeps the
-- gathered input for the weight gradient: no re-gather, and its
-- collectives on the path, the backward's as the forward's (2 ag + 2 rs).
local hf = op(gp.train(t.with(sp, { stack = "hf" })), "tp_comm")
t.near(hf.bwd, hf.fwd, 1e-12, "PyTorch's SP: no re-gather, the backward's four collectives on the path")
-- Under Userbuffers (tp_overlap) every TP collective of a pass runs under
-- that pass's GEMMs, the re-gather in bulk under the dgrad GEMM
-- (layernorm_linear.py: "ub_bulk_dgrad ... BULK_OVERLAP_AG"): GPT-3's 96
-- layers, recompute none, hide the forward's f and the backward's f + 2
-- (f / 4) (two more all-gathers), 2.5 f a layer, all of it under ~30 ms of
-- GEMMs a pass: hidden = 96 x 2.5 f.  The same arithmetic: 1e-9.
local ub = gp.train(t.with(sp, { recompute = "none", tp_overlap = true }))
local uf = op(ub, "tp_comm").fwd
local uh
for _, p in ipairs(ub.parts) do if p.name == "tp_comm" then uh = p.hidden end end
t.near(uh, 96 * 2.5 * uf, 1e-9, "Userbuffers: the re-gathers hidden under the backward's GEMMs")
-- A MoE layer's second pair is the token dispatcher's gather (its experts
-- keep their own gathered input): one re-gather, the attention's.  Mixtral
-- 8x7B at TP 8 under SP, 4096 tokens on H100: f = 4 x 0.11 ms (ag = rs),
-- qkv's backward 0.105 ms, so its halves (0.053 ms) hide part of the
-- reduce-scatter and the re-gather; the backward is the two row gathers
-- (f / 2), the dispatcher pair's reduce-scatter on the path (f / 4) and
-- 2 ov(f / 4, qkv.bwd / 2).  The same arithmetic: 1e-9.
local mx = gp.train({ model = "mixtral-8x7b", gpu = "h100-sxm", gpus = 8, tp = 8, pp = 1,
                      ep = 1, method = "pretrain", stack = "megatron", seq = 4096, batch = 1,
                      sp = true, global_batch = 1, recompute = "none" })
local mf = op(mx, "tp_comm").fwd
local function ov0(c, w) local h = math.min(c, w) return c - h + 0.189 * h end
t.near(op(mx, "tp_comm").bwd, 0.75 * mf + 2 * ov0(mf / 4, op(mx, "qkv").bwd / 2), 1e-9,
       "MoE under SP: the attention's re-gather only")
-- A window shorter than the collective leaves the rest exposed: the
-- Megatron 1.7B layer (hidden 2304) at TP 8, four 2048-token sequences,
-- has a qkv weight gradient of 2 x 8192 x 864 x 2304 = 32.6 GFLOP (about
-- 0.15 ms) beside a 37.7 MB all-reduce (about 0.35 ms): part hidden.
local small = { model = "megatron-gpt-1.7b", gpu = "a100-sxm-80gb", gpus = 8, tp = 8,
                method = "pretrain", stack = "megatron", seq = 2048, batch = 4,
                global_batch = 4 }
local a = op(gp.train(t.with(small, { async_tp_allreduce = false })), "tp_comm")
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
     and n21 and n21.defaults:find("async_tp_allreduce=false", 1, true),
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
local ov = t.ov
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

-- Without SP the megatron stack's own linears run it by default: Transformer
-- Engine's column-parallel modules all-reduce dgrad beside the wgrad GEMM
-- ("# Overlap dgrad-RS/AR with wgrad ... elif ctx.parallel_mode ==
-- "column" and ctx.tensor_parallel: dgrad, handle = allreduce(dgrad,
-- ctx.tp_group, async_op=True)", layernorm_linear.py and linear.py v1.9;
-- v2.x waits on dgrad_work after the wgrad GEMM), Megatron-Core's own
-- ColumnParallelLinear likewise ("if ctx.allreduce_dgrad: # Asynchronous
-- all-reduce").  So the default is the flag's backward, 0.189 x the
-- synchronous one here (both windows hide their all-reduce whole, as
-- above), and --no-async-tp-allreduce gives the old one back.  The same
-- arithmetic: 1e-9.
local def = op(gp.train(job), "tp_comm")
t.near(def.bwd, 0.189 * tf.bwd, 1e-9, "megatron stack, no SP: TE's async all-reduce by default")
-- The deepspeed stack (Megatron-DeepSpeed's BLOOM rows) keeps its own
-- flag: off unless given, the backward's all-reduces on the path, as the
-- forward's.  Identity: 1e-12.
local ds = op(gp.train(t.with(job, { stack = "deepspeed" })), "tp_comm")
t.near(ds.bwd, ds.fwd, 1e-12, "deepspeed stack: synchronous unless the flag says so")
-- A frozen weight (LoRA's base) has no wgrad GEMM: TE skips it ("if
-- ctx.requires_wgrad:") and waits on the all-reduce with nothing beside it;
-- Megatron-Core's LinearWithFrozenWeight all-reduces synchronously.  The
-- LoRA job's TP backward is the same with the flag on as off.  Identity:
-- 1e-12.
local lora = t.with(job, { method = "lora", lora_rank = 16 })
local lon = op(gp.train(t.with(lora, { async_tp_allreduce = true })), "tp_comm")
local loff = op(gp.train(t.with(lora, { async_tp_allreduce = false })), "tp_comm")
t.near(lon.bwd, loff.bwd, 1e-12, "LoRA without SP: no wgrad GEMM to hide the all-reduce under")
-- The Gaudi rows run Intel's TE (intel_transformer_engine, not published):
-- the validation profile keeps their all-reduce on the path and says so.
local gd
for _, c in ipairs(validate.read("validation/cases.json")) do
  if c.id == "intel-gaudi2-megatron-llama31-8b-fp8-8hpu-tp2" then gd = validate.predict(c, cat) end
end
t.ok(gd and gd.defaults:find("async_tp_allreduce=false (Intel TE", 1, true),
     "Gaudi's Intel TE: the all-reduce kept on the path, the default line says why")

-- Under SP a frozen weight is not gathered again either: the gather is
-- for the wgrad GEMM alone (TE layernorm_linear.py: "ctx.ln_out_needs_gather
-- = (weight.requires_grad and parallel_mode == "column" and
-- sequence_parallel)"), and the reduce-scatter of its input gradient has
-- no wgrad GEMM to hide under.  So the LoRA job's SP backward is the two
-- row-parallel all-gathers and the two reduce-scatters on the path, 2 (ag
-- + rs), the forward's own f: backward = forward.  Identity: 1e-9.
local lsp = op(gp.train(t.with(sp, { method = "lora", lora_rank = 16 })), "tp_comm")
t.near(lsp.bwd, lsp.fwd, 1e-9, "LoRA under SP: no re-gather, the reduce-scatters on the path")
