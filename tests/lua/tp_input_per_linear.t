-- Each column-parallel projection its own ColwiseParallel(input_layouts=
-- Shard(1)) under sequence parallelism (tp_input_per_linear; KempnerForge's
-- TP plan, distributed/tensor_parallel.py at 3ad9d9a): every projection
-- reduce-scatters its own input gradient, and eager also gathers its own
-- input (engine/train_layer.c layer_comm).  Run with
-- ./gpuplan run tests/lua/tp_input_per_linear.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(7)

-- llama3-8b (h = 4096, 32 layers, gated MLP), one sequence of 4096 on 4
-- H200 SXM, tp 4 with SP, no recompute, one micro-batch.  Each extra
-- collective is on the whole T x h buffer in bf16: 4096 x 4096 x 2 =
-- 33,554,432 B over the TP group, on the critical path, so the TP part
-- grows by gp.comm's time for it (the same collective model) times the
-- extra count times 32 layers.  Sums of doubles: 1e-9 relative.
local job = { model = "llama3-8b", gpu = "h200-sxm", gpus = 4, tp = 4, sp = true,
              method = "pretrain", stack = "hf", kernels = "fused", seq = 4096, batch = 1,
              global_batch = 1, split_proj = true }
local B, L = 4096 * 4096 * 2, 32
local rs = gp.comm{ op = "reduce_scatter", gpu = "h200-sxm", gpus = 4, bytes = B }.time
local ag = gp.comm{ op = "all_gather", gpu = "h200-sxm", gpus = 4, bytes = B }.time
local function tp(o) return t.parts(gp.train(t.with(job, o)))["tp_comm"] end
local base = tp{}

-- Compiled, q, k, v and gate, up apart: the backward's input gradients are
-- reduce-scattered 3 + 2 = 5 times where once for the attention and once
-- for the MLP: 3 more a layer; the forward's identical gathers are one.
t.near(tp{ tp_input_per_linear = true } - base, 3 * L * rs, 1e-9,
  "compiled: 3 more reduce-scatters a layer")
-- Fused qkv and gate-up weights (split_proj off): one linear each already
-- gathers and reduce-scatters once; nothing more.
t.is(tp{ split_proj = false, tp_input_per_linear = true }, tp{ split_proj = false },
  "fused projections: nothing more")
-- Eager: the forward's gathers are 3 + 2 too, 3 more all-gathers a layer.
local eb = tp{ kernels = "eager" }
t.near(tp{ kernels = "eager", tp_input_per_linear = true } - eb, 3 * L * (rs + ag), 1e-9,
  "eager: 3 more reduce-scatters and 3 more all-gathers a layer")
-- Eager with full recompute: the recomputed forward gathers again, so 3
-- more all-gathers a layer twice.
local rb = tp{ kernels = "eager", recompute = "full" }
t.near(tp{ kernels = "eager", recompute = "full", tp_input_per_linear = true } - rb,
  3 * L * (rs + 2 * ag), 1e-9, "eager, full recompute: the recompute's gathers again")
-- Without SP the projections' inputs are replicated already: there is no
-- Shard(1) input to gather, so the option is refused by name (the engine
-- would price nothing for it, in silence).
local nok, nerr = pcall(gp.train, t.with(job, { sp = false, tp_input_per_linear = true }))
t.ok(not nok and tostring(nerr):find("tp_input_per_linear", 1, true)
  and tostring(nerr):find("needs sp", 1, true), "without sp: refused, naming the option")
-- The megatron stack's compiled layers are Transformer Engine's linears,
-- not PyTorch's ColwiseParallel: refused by name, not priced as nothing.
local mok, merr = pcall(gp.train, t.with(job, { stack = "megatron", tp_input_per_linear = true }))
t.ok(not mok and tostring(merr):find("tp_input_per_linear", 1, true)
  and tostring(merr):find("Transformer Engine", 1, true), "stack megatron: refused, naming the option")
-- A non-boolean value is refused, naming the option.
local ok, err = pcall(gp.train, t.with(job, { tp_input_per_linear = "yes" }))
t.ok(not ok and tostring(err):find("tp_input_per_linear", 1, true),
  "a non-boolean tp_input_per_linear is refused by name")
