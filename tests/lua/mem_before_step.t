-- gp.memory's before_step (engine/memory_train.c stage_states,
-- memory_deepspeed.c mem_ds_zero_phases): the micro-batches before the
-- first optimizer step.  torch.optim's Adam/AdamW create their moments in
-- their first step() and DeepSpeed's ZeRO optimizers no longer step at
-- construction from v0.13.2 (PR #5104), so a reading taken then holds no
-- moments and no step's tensors; the fp32 master (built at construction)
-- stays.
-- Run with ./gpuplan run tests/lua/mem_before_step.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(13)

-- LLaMA-7B as the DeepSpeed 0.14.2 gist runs it (validation/cases.json
-- ds0142-a800-llama7b-s4096-zero2-ckpt-mb1-mem): ZeRO-2 on 8 A800s, bf16,
-- HF checkpointing, one 4096-token sample a micro-batch, 8 a step.
local model = { ffn_gated = true, ffn_hidden = 11008, heads = 32, hidden = 4096, id = "llama-7b",
  kv_heads = 32, layers = 32, norm = "rms", split_proj = "both", tied_embeddings = false,
  vocab = 32000 }
local base = { model = model, gpu = "a800-sxm-80gb", gpus = 8, zero = 2, tp = 1, pp = 1,
  batch = 1, microbatches = 8, seq = 4096, method = "full", precision = "bf16",
  recompute = "full", stack = "deepspeed", kernels = "eager", margin = 0 }
local function mem(extra) return gp.memory(t.with(base, extra)) end

-- Hand derivation.  The embedding and the untied output layer, V h =
-- 32000 x 4096 = 131,072,000 each; a layer 4 h^2 = 67,108,864 (q, k, v,
-- o), 3 h x 11008 = 135,266,304 (gate, up, down), two norms 8,192:
-- 202,383,360, x 32 = 6,476,267,520; the final norm 4,096.  N =
-- 6,738,415,616.  Adam's two fp32 moments on this rank's eighth: 8 N / 8
-- = N B; the fp32 master 4 N / 8 = N / 2 B.  Exact (integer bytes).
local N = 2 * 32000 * 4096 + 32 * (4 * 4096 * 4096 + 3 * 4096 * 11008 + 2 * 4096) + 4096
t.is(N, 6738415616, "LLaMA-7B holds 6,738,415,616 parameters")
local steady, before = mem {}, mem { before_step = true }
t.is(t.part(steady, "optimizer"), N, "steady state: the rank's eighth of Adam's two fp32 moments, N B")
t.is(t.part(before, "optimizer"), 0, "before the first step: no moments yet")
t.is(t.part(before, "master"), t.part(steady, "master"), "the fp32 master, built at construction, stays")
-- Here the backward is the peak either way (its activations outweigh the
-- step's fp32 gradient), so the two differ by the moments alone.
-- Exact: the same breakdown less one term.
t.is(steady.allocated - before.allocated, N, "the peak falls by the moments alone, N B")

-- Where the step is the peak (256 tokens, no recompute, one micro-batch a
-- step): steady state holds the step's gradient set, the 16-bit partition,
-- its flat copy and the fp32 gradient, 2 + 2 + 4 = 8 B on each of N / 8
-- elements = N B; before the first step only the backward's 16-bit
-- partition, 2 N / 8 = N / 4 B.  Exact.
local short = { seq = 256, recompute = "none", microbatches = 1 }
t.is(t.part(mem(short), "grads"), N, "steady state at 256 tokens: the step's gradient set, N B")
t.is(t.part(mem(t.with(short, { before_step = true })), "grads"), N / 4,
  "before the first step: the backward's 16-bit partition, N / 4 B")

-- ZeRO 1 in fp16 (stage_1_and_2.py's stage 1; bf16 there is
-- BF16_Optimizer, another class): its backward holds the whole 16-bit
-- gradient (2 N B, more than the step's 8 B on N / 8 elements), so the
-- backward is its peak either way and before the first step the peak
-- falls by the moments alone, N B.  Exact.
local z1 = t.with(short, { zero = 1, precision = "fp16" })
t.is(mem(z1).allocated - mem(t.with(z1, { before_step = true })).allocated, N,
  "ZeRO 1 before the first step: the moments alone less, N B")

-- A plain torch.optim AdamW (stack hf, ZeRO off): its moments are lazy too.
t.is(t.part(mem { stack = "hf", zero = 0, kernels = nil, before_step = true }, "optimizer"), 0,
  "torch.optim AdamW before its first step: no moments")

-- bitsandbytes' paged optimizers create their states in the first step()
-- as well (optim/optimizer.py Optimizer8bit.step: "if len(state) == 0:
-- self.init_state(...)", get_state_buffer allocating the paged buffer):
-- steady state pages Adam's two fp32 moments of every parameter (ZeRO
-- off), 8 N B; before the first step none.  Exact (integer bytes).
local paged = { stack = "hf", zero = 0, kernels = nil, paged_optimizer = true }
t.is(t.part(mem(paged), "optimizer_paged"), 8 * N, "paged states in steady state: 8 N B")
t.is(t.part(mem(t.with(paged, { before_step = true })), "optimizer_paged"), 0,
  "paged states before the first step: none yet")

-- Bad input is refused, naming the option.
local ok, err = pcall(mem, { before_step = "yes" })
t.ok(not ok and tostring(err):find("before_step", 1, true), "a non-boolean is refused, naming before_step")
-- The optimizer fused into backward (torchtune optimizer_in_bwd) steps in
-- the first backward: no micro-batch runs before its first step, so the
-- pair is refused, naming both.
ok, err = pcall(mem, { stack = "hf", zero = 0, kernels = nil, grads_in_bwd = true,
  before_step = true })
t.ok(not ok and tostring(err):find("before_step with grads_in_bwd", 1, true),
  "before_step under the optimizer in backward is refused")
