-- gp.train{}: the training step from Lua, its options, money and errors.
-- Run with ./gpuplan run tests/lua/train.t.
local t = require "tap"
local gp = require "gpuplan"
local train = require "gpuplan.train"

t.plan(132)

local part = t.step_part

-- Llama-3 8B on one DGX H100, ZeRO-1, selective recompute.
local base = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, zero = 1, seq = 4096,
               method = "pretrain", recompute = "selective", global_batch = 64 }
local r = gp.train(base)
t.ok(r.step_s > 0, "a step time")
local sum = 0
for _, p in ipairs(r.parts) do sum = sum + p.seconds end
t.near(sum, r.step_s, 1e-12, "the parts add up to the step")
t.is(#r.parts, 10, "ten parts, in the engine's order")
t.is(r.parts[1].name, "compute", "compute first")
-- 64 sequences of 4096 tokens per step.
t.is(r.tokens_per_step, 64 * 4096, "tokens per step = global batch x seq")
t.near(r.tokens_per_s_gpu * 8, r.tokens_per_s, 1e-12, "per GPU = total / 8")
-- dp 8, micro-batch 1: 64 / 8 = 8 micro-batches.
t.is(r.microbatches, 8, "micro-batches = gb / (dp x mb)")
-- microbatches sets the global batch: 4 x dp 4 x batch 2 = 32 on a
-- pipeline of 2 (16 GPUs), priced as that global batch given, step and
-- memory alike (exact: the same config).  It was passed to the memory
-- alone, which held 4 in flight while the step ran the default's 16.
do
  local pb = { model = "llama3-8b", gpu = "h100-sxm", gpus = 16, pp = 2, tp = 2, zero = 1,
    seq = 4096, method = "pretrain", recompute = "selective", batch = 2 }
  local m4 = gp.train(t.with(pb, { microbatches = 4 }))
  local g32 = gp.train(t.with(pb, { global_batch = 32 }))
  t.is(m4.microbatches, 4, "microbatches 4: 4 micro-batches")
  t.ok(m4.step_s == g32.step_s and m4.memory.total == g32.memory.total,
    "microbatches 4 is global_batch 4 x dp 4 x batch 2 = 32, step and memory")
  t.raises(function() gp.train(t.with(pb, { microbatches = 4, global_batch = 64 })) end,
    "microbatches 4 and global_batch 64 disagree: the global batch is the micro-batches x dp "
      .. "x batch = 4 x 4 x 2 = 32", "a global batch that disagrees is refused", true)
  t.raises(function() gp.sweep { model = "llama3-8b", gpu = "h100-sxm", gpus = { 16 },
    microbatches = 4 } end,
    "unknown option 'microbatches'", "gp.sweep takes the global batch", true)
end
t.is(r.groups.tp.ranks, 1, "groups are returned")
t.ok(r.mfu > 0 and r.mfu < 1, "MFU in (0, 1)")
t.ok(#r.ops > 5, "the layer's operators are listed")
t.is(r.memory.capacity ~= nil, true, "memory breakdown rides along")

-- The stack's overlaps are the defaults, and each can be turned off.
t.is(r.overlaps.overlap_grad_reduce, true, "megatron overlaps the grad reduction")
local o2 = {}
for k, v in pairs(base) do o2[k] = v end
o2.overlap_grad_reduce = false
local r2 = gp.train(o2)
t.ok(part(r2, "dp_comm").seconds > part(r, "dp_comm").seconds, "no overlap: the reduction is exposed")
-- The overlaps are what ran: at tp 1 and pp 1 there is no TP collective
-- and no pipeline send to hide, so tp_overlap and overlap_p2p read off
-- (megatron's overlap_p2p default read true at pp 1); at tp 2 and pp 2
-- with vpp 2 the settings stand (without vpp Megatron's 1F1B overlaps no
-- p2p: tests/lua/p2p_1f1b.t).
do
  local one = gp.train { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, stack = "megatron",
    tp_overlap = true }
  t.is(tostring(one.overlaps.tp_overlap) .. " " .. tostring(one.overlaps.overlap_p2p), "false false",
    "tp 1, pp 1: no TP overlap, no p2p overlap")
  local two = gp.train { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, stack = "megatron",
    tp = 2, pp = 2, vpp = 2, tp_overlap = true }
  t.is(tostring(two.overlaps.tp_overlap) .. " " .. tostring(two.overlaps.overlap_p2p), "true true",
    "tp 2, pp 2, vpp 2: both")
  -- DualPipe turns ep_overlap on by itself: at ep 1 (Mixtral on 8 GPUs,
  -- PP 2 x DP 4) there is no all-to-all to hide, so the result reads it
  -- off and the defaults do not say it; at ep 4 both say it.
  local function said(r, s) return table.concat(r.defaults, "; "):find(s, 1, true) ~= nil end
  local d1 = gp.train { model = "mixtral-8x7b", gpu = "h100-sxm", gpus = 8, stack = "megatron",
    schedule = "dualpipe", pp = 2 }
  t.ok(d1.overlaps.ep_overlap == false and not said(d1, "ep_overlap=true"),
    "dualpipe at ep 1: ep_overlap off, and not said on")
  local d4 = gp.train { model = "mixtral-8x7b", gpu = "h100-sxm", gpus = 8, stack = "megatron",
    schedule = "dualpipe", pp = 2, ep = 4 }
  t.ok(d4.overlaps.ep_overlap == true and said(d4, "ep_overlap=true (dualpipe overlaps it)"),
    "dualpipe at ep 4: ep_overlap on, and said")
end

-- Time and cost: 1e12 tokens at the given price.  days = tokens / (tokens/s)
-- / 86400; cost = days x 24 h x 8 GPUs x $2/h.
local o = {}
for k, v in pairs(base) do o[k] = v end
o.tokens, o.price = 1e12, "$2.00/h"
local rc = gp.train(o)
t.near(rc.days, 1e12 / rc.tokens_per_s / 86400, 1e-12, "days to train")
t.near(rc.cost, rc.days * 24 * 8 * 2.0, 1e-9, "cost = days x 24 x GPUs x price")
t.is(rc.currency, "USD", "cost in the catalog currency")
-- A CNY price stays CNY in a CNY report; a USD one is converted.
o.currency, o.price = "CNY", "12CNY/h"
local rn = gp.train(o)
t.near(rn.cost, rn.days * 24 * 8 * 12, 1e-9, "CNY price, CNY cost")

-- Scaling efficiency as the guides use it: tokens/s per GPU on 16 GPUs
-- against the job's fastest layout on the smallest count that fits (the
-- 8B at 4096 tokens: states of 16 B per parameter do not fit one or two
-- H100s even at ZeRO-3), checked against gp.sweep at that count and at
-- half of it (nothing fits there).
o = {}
for k, v in pairs(base) do o[k] = v end
o.gpus, o.global_batch, o.scaling = 16, 128, true
local rs = gp.train(o)
local function fastest(n)
  return gp.sweep { model = "llama3-8b", gpu = "h100-sxm", gpus = { n }, method = "pretrain",
                    seq = 4096, global_batch = 128, zero = { 1, 3 }, top = 1,
                    scaling = false }.results[1]
end
local b = rs.scaling.gpus
t.ok(b > 1 and b < 16 and fastest(b // 2) == nil, "base: nothing fits half of it (" .. b .. ")")
local fb = fastest(b)
t.near(rs.scaling.tokens_per_s_gpu, fb.tokens_per_s / b, 1e-12, "base: the fastest layout there")
t.is(rs.scaling.layout, fb.layout, "base: its layout named")
t.is(rs.scaling.base, "the smallest count that fits", "base: named")
t.near(rs.scaling.efficiency, rs.tokens_per_s_gpu / rs.scaling.tokens_per_s_gpu, 1e-12,
  "efficiency = per-GPU throughput / the base's")
o.scaling, o.scaling_base = nil, 8
local r8 = gp.train(o)
t.is(r8.scaling.gpus .. " " .. r8.scaling.base, "8 scaling_base", "scaling_base: the count given")
t.near(r8.scaling.tokens_per_s_gpu, fastest(8).tokens_per_s / 8, 1e-12, "its fastest layout")
o.scaling_base = 32
t.raises(function() gp.train(o) end,
  "train: scaling_base must be a GPU count in 1..16, the job's (got 32)", "base above the job",
  true)
-- A 1B model fits one GPU: scaling is measured from 1.
local r1 = gp.train { model = "llama3.2-1b", gpu = "h100-sxm", gpus = 8, scaling = true }
t.is(r1.scaling.gpus, 1, "1B: from 1 GPU")

-- Defaults are said.
local said = table.concat(r.defaults, ", ")
t.ok(said:find("system=dgx-h100", 1, true), "the node is a default said")
t.ok(said:find("attn_kernel=cudnn", 1, true), "the attention kernel is said")
-- transformers' modules (eager kernels) do not reach Hopper's cuDNN kernel
-- unless told: SDPA tries its flash backend (FlashAttention-2) first and
-- cuDNN's last, so the same job on the hf stack prices FlashAttention-2,
-- exactly what naming it prices; naming cudnn still gets cudnn, and
-- FlashAttention-2 (0.39 / 0.345 of peak against 0.53 / 0.45) is slower.
do
  local j = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, seq = 4096, stack = "hf",
              method = "full", global_batch = 64, recompute = "full", zero = 3 }
  local hf = gp.train(j)
  local hs = table.concat(hf.defaults, ", ")
  t.ok(hs:find("attn_kernel=fa2 (transformers' modules", 1, true), "hf stack: fa2 said, with why")
  j.attn_kernel = "fa2"
  t.is(gp.train(j).step_s, hf.step_s, "hf stack unstated = fa2 named")
  j.attn_kernel = "cudnn"
  local cu = gp.train(j)
  t.ok(cu.step_s < hf.step_s and not table.concat(cu.defaults, ", "):find("attn_kernel=", 1, true),
    "hf stack with cudnn named: cuDNN's faster kernel, not a default")
  j.attn_kernel, j.kernels = nil, "fused"
  t.ok(table.concat(gp.train(j).defaults, ", "):find("attn_kernel=cudnn", 1, true),
    "fused kernels on the hf stack (torch.compile, Liger): the arch's kernel")
  -- On Blackwell the eager job keeps cuDNN's kernel, exactly what naming
  -- it prices, and the defaults line says why: B200 has a FlashAttention-2
  -- measurement (catalog b200 fa2), but PyTorch's SDPA puts cuDNN first
  -- on sm100 once its cuDNN is new enough (train.lua); a part with none
  -- (the RTX 5090, sm120, the arch's fa4 and cudnn only) says that.
  j.kernels, j.gpu = nil, "b200"
  local bw = gp.train(j)
  t.ok(table.concat(bw.defaults, ", "):find("attn_kernel=cudnn (the arch's: PyTorch's SDPA "
    .. "takes cuDNN first on sm100 once its cuDNN is new enough", 1, true),
    "hf stack on B200: cudnn, said why")
  j.attn_kernel = "cudnn"
  t.is(gp.train(j).step_s, bw.step_s, "hf stack on B200: unstated = cudnn named")
  j.attn_kernel, j.gpu = nil, "rtx-5090"
  t.ok(table.concat(gp.train(j).defaults, ", "):find("attn_kernel=cudnn (the arch's: no "
    .. "FlashAttention-2 measurement on blackwell)", 1, true), "hf stack on an RTX 5090: cudnn, said why")
end

-- Warnings: ZeRO-1 over DP 1.
o = { model = "llama3-8b", gpu = "h100-sxm", gpus = 1, zero = 1, seq = 2048, method = "pretrain",
      recompute = "full", global_batch = 4 }
local rw = gp.train(o)
t.is(rw.warnings[1], "zero_dp1", "ZeRO at DP 1 warned")

-- Errors name the option.
t.raises(function() gp.train { model = "llama3-8b", gpu = "h100-sxm", tp_size = 2 } end,
  "unknown option 'tp_size'", "unknown option", true)
t.raises(function() gp.train { model = "llama3-8b", gpu = "a100-sxm-80gb", precision = "fp8" } end,
  "fp8 training needs fp8 tensor cores", "fp8 on A100", true)
t.raises(function() gp.train { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, global_batch = 12 } end,
  "not a multiple of dp x batch", "global batch", true)
t.raises(function() gp.train { model = "llama3-8b", gpu = "h100-sxm", method = "grpo" } end,
  "not a training step", "RL is gp.rl", true)
-- An unknown kernel is refused by the option's declared values, which are
-- gpuplan.roofline's list: the message names each of them.
t.raises(function() gp.train { model = "llama3-8b", gpu = "h100-sxm", attn_kernel = "fa9" } end,
  "attn_kernel must be " .. table.concat(require("gpuplan.roofline").attention_kernels, ", ", 1, 8)
    .. " or flex (got string 'fa9')", "unknown attention kernel: the declared values", true)
t.raises(function() gp.train { model = "llama3-8b", gpu = "h100-sxm", price = "12XYZ/h" } end,
  "price", "unknown currency", true)
t.raises(function() gp.train { model = "llama3-8b", gpu = "h100-sxm", tokens = -5 } end,
  "tokens must be a positive number", "negative tokens", true)
t.raises(function() gp.train { model = "llama3-8b", gpu = "h100-sxm", recompute = "selective",
                               recompute_layers = 2 } end,
  "recompute_layers applies to recompute", "recompute_layers without full", true)
t.ok(train.METHODS.lora, "LoRA is a training step")

-- gp.train_job: the job resolved once, layouts priced by job:step.  Each
-- step is the same train_step as gp.train (the memo changes nothing), so
-- the figures are equal exactly, not within a tolerance.
do
  local job_o = { model = "llama3-70b", gpu = "h100-sxm", gpus = 64, method = "pretrain",
                  seq = 8192, tokens = 1e12 }
  local job = gp.train_job(job_o)
  for _, l in ipairs { { tp = 8, pp = 2, zero = 1, batch = 1, recompute = "selective", sp = true },
                       { tp = 4, pp = 4, zero = 1, batch = 1, recompute = "full", sp = true },
                       { tp = 8, pp = 4, zero = 0, batch = 2, recompute = "none", sp = true,
                         vpp = 2 } } do
    local o = {}
    for k, v in pairs(job_o) do o[k] = v end
    for k, v in pairs(l) do o[k] = v end
    local g = gp.train(o)
    local r = job:step(l)
    local label = string.format("job:step tp %d pp %d %s", l.tp, l.pp, l.recompute)
    t.is(r.step_s, g.step_s, label .. ": step == gp.train's")
    t.is(r.mfu, g.mfu, label .. ": mfu == gp.train's")
    t.is(r.fits, g.fits, label .. ": fits == gp.train's")
    t.is(r.mem_bytes, g.memory.total, label .. ": memory == gp.train's")
    t.is(r:table().parts.bubble, g.parts[9].seconds, label .. ": r:table() has the parts")
  end
  -- A result given back is filled again: the same object, the new layout's figures.
  local fresh = job:step { tp = 4, pp = 4, zero = 1, batch = 1, recompute = "full", sp = true }
  local r1 = job:step { tp = 8, pp = 2, zero = 1, batch = 1, recompute = "selective", sp = true }
  local r2 = job:step({ tp = 4, pp = 4, zero = 1, batch = 1, recompute = "full", sp = true }, r1)
  t.ok(rawequal(r1, r2), "job:step(layout, r) returns r")
  t.is(r2.step_s, fresh.step_s, "and r holds the new layout's step")
  t.raises(function() job:step({ tp = 8 }, {}) end, "train_result expected", "r must be a result", true)
  t.raises(function() job:step { tpp = 2 } end, "step: unknown option 'tpp'", "unknown step field", true)
  t.raises(function() job:step { tp = 3 } end, "gpus 64 is not a multiple of tp*pp*cp = 3",
    "a layout that does not divide the job", true)
  t.raises(function() job:step { zero = 5 } end, "step.zero must be an integer in 0..3",
    "zero out of range", true)
  t.raises(function() return job:step { tp = 8 }.nope end, "train result: no field 'nope'",
    "an unknown result field", true)
  t.raises(function() gp.train_job { model = "llama3-70b", gpu = "h100-sxm", tp_size = 2 } end,
    "unknown option 'tp_size'", "train_job: gp.train's option check", true)
  -- Handles stand in for the tables in every core function.
  local core = gp.core()
  local cat = gp.catalog()
  local m = cat:get("models", "llama3-8b")
  t.is(core.model_params(core.model(m)).total, core.model_params(m).total,
    "core.model handle: the same parameter count as the table")
  t.raises(function() core.model { layers = 0, hidden = 64, heads = 2, vocab = 10 } end,
    "model.layers must be an integer in 1..2147483647 (got 0)", "a handle is checked when made",
    true)
end

-- The software the step runs on (engine/train.c; docs/train.md).
do
  local function run(o)
    local q = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, zero = 3, method = "pretrain",
                stack = "hf", seq = 8192, batch = 2, global_batch = 16, recompute = "selective" }
    for k, v in pairs(o) do q[k] = v end
    return gp.train(q)
  end
  local eager, fused = run {}, run { kernels = "fused" }
  local found = false
  for _, d in ipairs(eager.defaults) do found = found or d == "kernels=eager" end
  t.ok(found, "hf stack: kernels=eager by default, said")
  t.is(eager.kernels, nil, "kernels is a default, not a result field")
  found = false
  for _, d in ipairs(gp.train { model = "llama3-8b", gpu = "h100-sxm", gpus = 8,
                                method = "pretrain", seq = 4096 }.defaults) do
    found = found or d == "kernels=fused"
  end
  t.ok(found, "megatron stack: kernels=fused by default")
  -- The deepspeed stack: transformers' modules (the Trainer / Accelerate
  -- hand them to DeepSpeed), eager, said with why; the same step as
  -- kernels = "eager" given.
  local dq = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, zero = 3, stack = "deepspeed",
               seq = 2048, global_batch = 64 }
  local dd = gp.train(dq)
  found = false
  for _, d in ipairs(dd.defaults) do
    found = found or d:find("kernels=eager (stack deepspeed", 1, true) ~= nil
  end
  t.ok(found, "deepspeed stack: kernels=eager by default, said")
  t.is(dd.step_s, gp.train(t.with(dq, { kernels = "eager" })).step_s,
    "deepspeed stack: the default is kernels eager's step")
  -- torchtitan's Llama 3.1 8B on 8 H100s, FSDP, local batch 2 of 8192
  -- tokens, selective AC (benchmarks/llama3_h100_202412_torchtitan.md
  -- Table 1): torch.compile 6667 tokens/s per GPU, eager 5762, 1.157x.
  -- Its eager modules are not Hugging Face's (complex-multiply RoPE,
  -- nn.RMSNorm) and its H100s are 500 W HBM2e parts (2.4 TB/s, the
  -- eager kernels' share larger there): within 0.10 of it.
  local ratio = fused.tokens_per_s_gpu / eager.tokens_per_s_gpu
  t.ok(math.abs(ratio - 6667 / 5762) < 0.10,
    string.format("fused / eager %.3f against torchtitan's compile / eager 1.157", ratio))
  t.ok(eager.mfu < fused.mfu, "eager kernels: a lower MFU")
  -- The host floor: Llama 3.2 1B, one sequence of 2048 tokens per GPU:
  -- the eager forward of a layer is 39 launches x 24.84 us = 968.8 us,
  -- and, the hf stack at zero 3 being FSDP1, the unit's views of its 9
  -- parameters (q, k, v, o, gate, up, down, two norms) at 6.112 ms / 400
  -- each (engine/train_layer.c FSDP1_VIEW_S): 137.5 us more, 1106.3 us;
  -- the GPU's kernels less (the wait listed as an op), the fused 11
  -- launches (273 us) under its kernels.
  local small = run { model = "llama3.2-1b", seq = 2048, batch = 1, global_batch = 64,
                      recompute = "none" }
  local fwd, wait = t.layer_fwd(small)
  t.near(fwd, 39 * 24.84e-6 + 9 * 6.112e-3 / 400, 1e-9,
    "1B eager: a layer's forward is 39 host launches and FSDP1's 9 views")
  t.ok(wait > 0, "and the GPU waits for the host")
  -- docs/train.md states this layer's figures ("Llama 3.2 1B at 2048
  -- tokens on an H100 waits W ms of its F ms forward"), to two decimals.
  do
    local fh = assert(io.open("docs/train.md", "rb"))
    local doc = fh:read("a"):gsub("%s+", " ")
    fh:close()
    local said = string.format("Llama 3.2 1B at 2048 tokens on an H100 waits %.2f ms of its "
      .. "%.2f ms forward", wait * 1e3, fwd * 1e3)
    t.ok(doc:find(said, 1, true) ~= nil, "docs/train.md: '" .. said .. "'")
  end
  local sf = run { model = "llama3.2-1b", seq = 2048, batch = 1, global_batch = 64,
                   recompute = "none", kernels = "fused" }
  t.ok(not t.op(sf, "host_wait"), "1B fused: the kernels outlast 11 launches")
  t.raises(function() run { kernels = "compiled" } end,
    "train: kernels must be eager, fused or liger (got string 'compiled')", "kernels: a bad value", true)
end

-- A job that spans nodes without NICs (h800-pcie has no catalog system:
-- its node is built from the GPU, 8 on PCIe 5 and no NICs) is refused,
-- naming the node and what to give; given NICs, it runs and the defaults
-- no longer say "no NICs".
do
  local job = { model = "llama3-8b", gpu = "h800-pcie", gpus = 64 }
  t.raises(function() gp.train(job) end,
    "64 GPUs span 8 nodes of 8, but the node built from h800-pcie (pcie5, no catalog system) "
    .. "has no NICs: give nics = N and nic_fabric = ID", "no NICs: names the node and the fix",
    true)
  job.nics, job.nic_fabric = 4, "roce-400"
  local r = gp.train(job)
  t.is(r.gpus, 64, "with nics and nic_fabric the job runs")
  local d = table.concat(r.defaults, ", ")
  t.like(d, "gpus_per_node=8 (h800-pcie on pcie5)", "the defaults name the built node", true)
  t.ok(not d:find("no NICs", 1, true) and not d:find("nics=", 1, true),
    "and neither 'no NICs' nor a nics default once they are given")
end

-- The layout search's dimensions are one table (engine/sweep.h SWEEP_DIMS,
-- as core.SWEEP_DIMS): each is a key of every result, and train_options
-- hands each back to gp.train, which prices the same step bit for bit
-- (train.c: the sweep's memo gives train_step's results exactly).
do
  local core = require "gpuplan.core"
  local sw = require "gpuplan.sweep"
  local job = { model = "llama3-8b", seq = 4096, global_batch = 64 }
  local o = { gpu = "h100-sxm", gpus = 8, top = 1, tp_overlap = { false, true } }
  for k, v in pairs(job) do o[k] = v end
  local c = gp.sweep(o).results[1]
  local missing = {}
  for _, d in ipairs(core.SWEEP_DIMS) do
    if c[d.name] == nil then missing[#missing + 1] = d.name end
  end
  t.is(table.concat(missing, " "), "", "every searched dimension is a key of a result")
  -- gpuplan merge checks each of them by its type: ZeRO as 0..3 (the
  -- mask's top value), the overlaps and SP as booleans, a degree as a
  -- count.
  local R = require("gpuplan.cmd.merge").RESULT
  t.is(string.format("%s %s %s %s %.0f", R.zero[1], R.zero[3], R.tp_overlap[1], R.sp[1], R.tp[3]),
       "int 3 boolean boolean 16777216", "merge checks each dimension by the table's type")
  t.is(gp.train(sw.train_options(job, c)).step_s, c.step_s,
       "train_options gives gp.train the result's layout: the same step")
end

-- The offloaded optimizer's step (train.c offload_step): Llama-3 8B, TP 8
-- on one DGX H100, ZeRO-1, optimizer offloaded.  n, each GPU's partition,
-- is the host's fp32 master / 4 (memory: master 4 + grads 4 + states 8 =
-- 16 B per element on the host).  Per step: 4 B (fp32 grads) down and 2 B
-- (16-bit params) up over PCIe 5 x16 (16 x 0.985 GB/s x 4 x 0.8 = 50.432
-- GB/s), and 40 B of host DRAM traffic per element for each of the node's
-- 8 GPUs at host_bw 100 GB/s.  Tolerance 1e-3: n is memory's count of the
-- partition, the step's counts the stage's weights (the same parameters,
-- summed in another order and with the replicated norms apart).
do
  local o = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, tp = 8, zero = 1, seq = 4096,
              method = "full", global_batch = 8, offload = "optimizer", host_bw = "100GB/s" }
  local ro = gp.train(o)
  local n = ro.memory.cpu_bytes / 16
  local want = n * 6 / 50.432e9 + n * 8 * 40 / 100e9
  t.near(part(ro, "optimizer").seconds / want, 1, 1e-3,
    "offload: PCIe both ways plus the node's host DRAM traffic")
  -- The default host: 0.8 x DGX H100's 614.4 GB/s, said.
  o.host_bw = nil
  local rd = gp.train(o)
  t.ok(table.concat(rd.defaults, ", "):find("host_bw=492GB/s", 1, true),
    "the host bandwidth default is the system's, said")
  -- Delayed update: the CPU side runs beside the next step's GPU work, so
  -- the step is the larger of the two and only the excess shows.
  o.host_bw = "100GB/s"
  o.delayed_update = true
  local rdu = gp.train(o)
  local opt = part(ro, "optimizer").seconds
  local gpu_part = ro.step_s - opt
  t.near(rdu.step_s, math.max(gpu_part, opt), 1e-9, "delayed update: max(GPU step, CPU step)")
  t.near(part(rdu, "optimizer").hidden, math.min(gpu_part, opt), 1e-9,
    "delayed update: the overlapped part is hidden")
  -- Megatron-Core's offload (HybridDeviceOptimizer): a fused torch AdamW
  -- per parameter on the rank's thread, train.MEGATRON_CPU_ADAM_S = 0.926
  -- s / 0.596e9 (NeMo RL PR #3628) each, the copies (4 B down, 4 up:
  -- 8 / 50.432e9 s) beside it, the node's 8 ranks' DRAM traffic (36 B
  -- each: the fused step's 28 and the copies' 8) bounding them: the
  -- largest of the three.  At host_bw 1000 GB/s the thread is the
  -- slowest (1.554 ns against 0.288 and 0.159); at 100 GB/s the DRAM
  -- (2.88 ns).  n as above (the same layout and partition); 1e-3 as
  -- above.
  local om = {}
  for k, v in pairs(o) do om[k] = v end
  om.stack, om.delayed_update, om.host_bw = "megatron", nil, "1000GB/s"
  local rm = gp.train(om)
  local nm = rm.memory.cpu_bytes / 16
  t.near(nm / n, 1, 1e-3, "megatron offload: the same partition on the host")
  t.near(part(rm, "optimizer").seconds / (n * 0.926 / 0.596e9), 1, 1e-3,
    "megatron offload: the rank's thread steps each parameter in 1.554 ns")
  t.ok(table.concat(rm.defaults, ", "):find("HybridDeviceOptimizer", 1, true),
    "megatron offload: the optimizer it assumes is said")
  om.host_bw = "100GB/s"
  t.near(part(gp.train(om), "optimizer").seconds / (n * 8 * 36 / 100e9), 1, 1e-3,
    "megatron offload: the node's DRAM bounds its eight ranks")
  o.offload = nil
  t.raises(function() gp.train(o) end, "host_bw is what the offloaded optimizer steps at",
    "host_bw without offload", true)
  o.host_bw = nil
  t.raises(function() gp.train(o) end, "delayed_update delays the offloaded optimizer's step",
    "delayed_update without offload", true)
  o.offload, o.host_bw, o.delayed_update = "optimizer", "fast", nil
  t.raises(function() gp.train(o) end, "train: host_bw: bad bandwidth 'fast'",
    "a bad host_bw names the option", true)
end

-- Offloaded parameters (ZeRO-Infinity): each layer's partition comes up
-- over PCIe for the forward and again for the backward, so on one GPU
-- (nothing to gather over) ZeRO-3 with the parameters offloaded has a
-- zero_gather part that ZeRO-3 alone over one GPU lacks.
do
  local o = { model = "llama3.2-1b", gpu = "h100-sxm", gpus = 1, zero = 3, seq = 2048,
              method = "full", global_batch = 1, offload = "params+optimizer" }
  local rp = gp.train(o)
  -- A layer: 60.8M parameters (1.236e9 - 2 x 128256 x 2048 embed/head, /
  -- 16 layers, tied: one 262.7M embedding) x 2 B / 50.432 GB/s = 2.4 ms a
  -- pass; 16 layers x 2 passes ~ 77 ms before overlap; at least the first
  -- layer's forward fetch shows.
  t.ok(part(rp, "zero_gather").seconds > 2e-3, "param offload: the fetch shows")
  o.offload = "optimizer"
  t.is(part(gp.train(o), "zero_gather").seconds, 0, "no param offload: no fetch on one GPU")
end

-- Eager unfused attention (attn_time): Hugging Face's eager_attention_forward
-- runs scale, mask, softmax and the cast as their own kernels.  Llama-3 8B,
-- seq 4096, one sequence per GPU, TP 1: s2 = 32 heads x 4096^2 = 536,870,912
-- scores; Q, K, V, O: 4096 x 32 x 256 = 33,554,432 elements.  Fused
-- (op_attn's 4 transfers of the bf16 scores): forward (33.55M + 4 s2) x 2 B
-- = 4.362 GB, backward twice that.  Eager: forward 32 B a score (+24 B:
-- 24 of the kernels, and bf16's softmax converts to fp32 in a kernel of its
-- own, 8 more), 17.25 GB; backward 36 B (+20 B), 19.46 GB.  Both
-- memory-bound (2 x 256 FLOP per score against 8+ B), so the times go as
-- the bytes: 3.954 and 2.231.  Tolerance 4%: each op also pays the roofline's fixed fill time,
-- the same in both, and overlaps its compute with its bytes imperfectly
-- near the ridge (roof_overlap: the forward's 2.2e11 FLOP at H100's
-- sustained 0.656 x 989 TFLOP/s is 0.34 ms against the fused variant's
-- 1.55 ms of bytes), the same compute in both -- both pull the ratios
-- toward 1 (measured 0.968 of the byte ratio forward).
do
  local function att(kern)
    local r = gp.train { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, zero = 1, seq = 4096,
                         method = "full", global_batch = 8, flash = false, kernels = kern }
    return t.op(r, "attention")
  end
  local e, f = att("eager"), att("fused")
  local s2, qkvo = 32 * 4096 ^ 2, 4096 * 32 * 256
  local fwd = ((qkvo + 4 * s2) * 2 + 24 * s2) / ((qkvo + 4 * s2) * 2)
  local bwd = ((qkvo + 4 * s2) * 4 + 20 * s2) / ((qkvo + 4 * s2) * 4)
  t.near(e.fwd / f.fwd / fwd, 1, 0.04, "eager attention forward: 32 B a score in bf16, not 8")
  t.near(e.bwd / f.bwd / bwd, 1, 0.04, "eager attention backward: 36 B a score, not 16")
end

-- Dropout on the attention probabilities inside the fused kernel
-- (train_price.c train_attn_time): the kernel's time, less its 1 us graph
-- launch (the hopper arch's graph_launch_overhead), grows by the
-- catalog's measured slowdown, H100's cuDNN 1.034 (H200, TE issue
-- #3312: 0.614 / 0.594 ms forward + backward); the launch does not.
-- Llama-3 8B, seq 4096, TP 1, both passes.  1e-9: the same arithmetic.
-- FA3 has no dropout measurement (nor dropout): unchanged.
do
  local function att(dropout, kern)
    return t.op(gp.train { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, zero = 1, seq = 4096,
                           method = "pretrain", global_batch = 8, dropout = dropout,
                           attn_kernel = kern }, "attention")
  end
  local on, off = att(true), att(false)
  t.near((on.fwd - 1e-6) / (off.fwd - 1e-6), 1.034, 1e-9, "cudnn forward: x 1.034 with dropout")
  t.near((on.bwd - 1e-6) / (off.bwd - 1e-6), 1.034, 1e-9, "cudnn backward: x 1.034 with dropout")
  t.is(att(true, "fa3").fwd, att(false, "fa3").fwd, "fa3: no measurement, not priced")
end

-- An 8-bit AdamW stepping the offloaded partition on the CPU (torchao's
-- AdamW8bit with FSDP's CPU offload, as torchtune configures it) is
-- priced, not refused: the update moves 12 B (master read and write,
-- gradient read) plus its states read and written, 2 x 2 (1 + 4/2048) B,
-- and the copies 4 + 6 + 2 B: 28.0078 B a element, against fp32 Adam's 40.
-- Same job and tolerance as the offload test above.
do
  local o = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, tp = 8, zero = 1, seq = 4096,
              method = "full", global_batch = 8, offload = "optimizer", host_bw = "100GB/s",
              optimizer = "adam8bit" }
  local r8 = gp.train(o)
  local n = r8.memory.host.master / 4
  local hb = 12 + 4 * (1 + 4 / 2048) + 12
  t.near(part(r8, "optimizer").seconds / (n * 6 / 50.432e9 + n * 8 * hb / 100e9), 1, 1e-3,
    "offload with adam8bit: 8-bit states read and written on the host")
end

-- Ring context parallelism merges each step's partial attention output
-- (train_layer.c cp_merge, Transformer Engine's AttnFuncWithCP).  Llama-3
-- 8B, seq 8192, CP 2, micro-batch 1, TP 1 on H100 SXM: T = 4096 tokens a
-- rank; query elements 4096 x 4096 = 16,777,216, K and V 4096 x (2 x 8 x
-- 128) = 8,388,608; bf16 (A = 2).  Forward 2 steps x 2 B x (3 x 16.78M +
-- 2 x 8.39M) = 268,435,456 B, backward 2 x 2 x (3 x 16.78M + 5 x 8.39M) =
-- 369,098,752 B, each at 3.35 TB/s x 0.84 plus the kernel fill 3.9 us and
-- the 1 us launch: 100.29 us and 136.07 us.  1e-6: the same arithmetic.
-- Without CP there is nothing to merge.
do
  local o = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, cp = 2, seq = 8192,
              method = "pretrain", global_batch = 8, zero = 1 }
  local m = t.op(gp.train(o), "cp_merge")
  local bw = 3.35e12 * 0.84
  t.near(m.fwd, 268435456 / bw + 4.9e-6, 1e-6, "cp 2: the forward merges 3 A a query element, 2 A a K/V one, per step")
  t.near(m.bwd, 369098752 / bw + 4.9e-6, 1e-6, "cp 2: the backward accumulates dq (3 A) and dK, dV (5 A) per step")
  o.cp = 1
  t.ok(t.op(gp.train(o), "cp_merge") == nil, "cp 1: no merge")
end

-- PyTorch's context_parallel (cp_rotate allgather or alltoall;
-- train_layer.c cp_merge and torch_cp_comm) merges and accumulates in fp32
-- on K and V every query head wide (torchtitan's repeat_kv).  The job
-- above: query elements eq = 16,777,216, K and V 2 eq = 33,554,432 (not
-- the kv heads' 8,388,608).  The merge and the fp32 gradient sums run
-- on each of the cp = 2 steps, the K/V concatenation to send on all but
-- the last (1 step).  Forward 2 eq (A + 8) + 1 x 2 eq x 2 A = 335,544,320
-- + 134,217,728 = 469,762,048 B; backward 2 (eq (A + 8) + 2 eq (A + 16))
-- + 1 x 2 eq x 2 A = 2 x (167,772,160 + 603,979,776) + 134,217,728 =
-- 1,677,721,600 B; at 3.35 TB/s x 0.84 plus 4.9 us as above.  1e-6: the
-- same arithmetic (a cat counted on every step, cp x, is 29% and 8% off).
do
  local o = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, cp = 2, seq = 8192,
              method = "pretrain", global_batch = 8, zero = 1, cp_rotate = "allgather" }
  local m = t.op(gp.train(o), "cp_merge")
  local bw = 3.35e12 * 0.84
  t.near(m.fwd, 469762048 / bw + 4.9e-6, 1e-6, "allgather: the forward merges in fp32 on q-wide K and V")
  t.near(m.bwd, 1677721600 / bw + 4.9e-6, 1e-6, "allgather: the backward accumulates dq, dK, dV in fp32")
end

-- PyTorch's ring run eager (kernels eager: its collectives hand back
-- AsyncCollectiveTensors, waited at first use) exposes the last fp32
-- shift of dK and dV and hides the rest beside the steps' attention.
-- Same job on the eager Hugging Face modules, recompute none: 32 layers
-- x 2 micro-batches = 64 layer passes; K and V a rank 4096 tokens x 2 x
-- 4096 x 2 B = 64 MiB (kvb), their gradients in fp32 128 MiB.  allgather:
-- the forward's and the backward's all-gathers of 2 x 64 MiB (0.19 ms on
-- 2 H100s by gp.comm) each run beside one step's attention (0.33 ms
-- forward, 0.96 ms backward: hidden); the 2 dK/dV shifts (send_recv of 128
-- MiB, 0.61 ms) run the first beside the second step's kernel (hidden),
-- the last after the loop (exposed).  cp_comm = 64 x (t_dkv + 0.189 x
-- (2 t_ag + t_dkv)), hidden time costing OVERLAP_SLOWDOWN (0.189) of
-- itself.  alltoall: one shift of 64 MiB (send_recv) a pass in place of
-- the all-gather.  p2p, at the kv heads' 16 MiB, hides all of it: less.
-- 1e-3 relative: the same arithmetic, gp.comm's times unrounded.
do
  local o = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, cp = 2, seq = 8192,
              method = "pretrain", global_batch = 8, zero = 1, recompute = "none",
              cp_rotate = "allgather", stack = "hf", kernels = "eager" }
  local kvb = 4096 * 2 * 4096 * 2
  local function ct(op, b) return gp.comm { op = op, bytes = b, gpu = "h100-sxm", gpus = 2 }.time end
  local dkv = ct("send_recv", 2 * kvb)
  local ag = gp.train(o)
  t.near(part(ag, "cp_comm").seconds / (64 * (dkv + 0.189 * (2 * ct("all_gather", 2 * kvb) + dkv))),
    1, 1e-3, "allgather: the last dK/dV shift exposed, the all-gathers and the first shift hidden")
  o.cp_rotate = "alltoall"
  t.near(part(gp.train(o), "cp_comm").seconds / (64 * (dkv + 0.189 * (2 * ct("send_recv", kvb) + dkv))),
    1, 1e-3, "alltoall: one K/V shift a pass, hidden; the last dK/dV shift exposed")
  o.cp_rotate = nil
  local p2p = gp.train(o)
  t.ok(part(p2p, "cp_comm").seconds < part(ag, "cp_comm").seconds,
    "p2p: Transformer Engine's ring at the kv heads costs less")
  -- the ring left out is the declared default, said on the defaults line;
  -- given, or without a ring (cp 1), nothing is said
  local function says(r) return table.concat(r.defaults, ", "):find("cp_rotate=p2p", 1, true) ~= nil end
  t.ok(says(p2p) and not says(ag), "cp 2, cp_rotate left out: cp_rotate=p2p on the defaults line")
  o.cp, o.gpus = 1, 4
  t.ok(not says(gp.train(o)), "cp 1: no ring, nothing said")
end

-- Compiled (kernels fused), the ring is traced into the block and each
-- functional collective is waited for where it is issued
-- (_functional_collectives.py: "wait_tensor() op is immediately called"),
-- Inductor reordering nothing: all of it exposed, none hidden.  The job
-- above with its fused kernels, 64 layer passes: allgather, forward one
-- all-gather of 2 x 64 MiB, backward another and cp = 2 fp32 dK/dV shifts
-- of 128 MiB: 64 x (2 t_ag + 2 t_dkv); alltoall, one 64 MiB shift each
-- way in place of the all-gather: 64 x (2 t_sr + 2 t_dkv).  1e-3
-- relative: the same arithmetic, gp.comm's times unrounded.
do
  local o = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, cp = 2, seq = 8192,
              method = "pretrain", global_batch = 8, zero = 1, recompute = "none",
              cp_rotate = "allgather", stack = "hf", kernels = "fused" }
  local kvb = 4096 * 2 * 4096 * 2
  local function ct(op, b) return gp.comm { op = op, bytes = b, gpu = "h100-sxm", gpus = 2 }.time end
  local dkv = ct("send_recv", 2 * kvb)
  local r = gp.train(o)
  t.near(part(r, "cp_comm").seconds / (64 * (2 * ct("all_gather", 2 * kvb) + 2 * dkv)), 1, 1e-3,
    "compiled allgather: the all-gathers and every dK/dV shift exposed")
  t.is(part(r, "cp_comm").hidden, 0.0, "compiled: nothing hidden")
  o.cp_rotate = "alltoall"
  t.near(part(gp.train(o), "cp_comm").seconds / (64 * (2 * ct("send_recv", kvb) + 2 * dkv)), 1,
    1e-3, "compiled alltoall: the K/V shifts and every dK/dV shift exposed")
end

-- The embedding table's gradient is dense (train_layer.c train_ends_costs):
-- torch's embedding backward fills a whole V x h table of zeros (A = 2 B
-- an element, bf16) before scattering the T rows into it, and the table is
-- then added into the fp32 main grad (read A, read and write 4 + 4).
-- Llama-3 8B on 2 H100s, PP 2 with 31 layers on the first stage, so the
-- first stage (the embedding's) is the slowest and its micro-batch time
-- (stage_time_s) holds the embedding.  Doubling the vocabulary from
-- 128256 changes nothing else on that stage, so its time grows by
-- 128256 x 4096 x (2 + 2 + 8) B / (3.35 TB/s x 0.84) = 2.240 ms: the two
-- passes' fills cancel, 1e-9 relative is float rounding.  LoRA freezes
-- the table: no gradient, no change.
do
  local m = gp.catalog():get("models", "llama3-8b")
  local function run(V, method)
    local c = {}
    for k, v in pairs(m) do c[k] = v end
    c.vocab = V
    return gp.train({ model = c, gpu = "h100-sxm", gpus = 2, pp = 2, tp = 1, seq = 4096,
                      global_batch = 8, method = method, stack = "megatron",
                      first_stage_layers = 31, recompute = "none" })
  end
  local a, b = run(128256, "pretrain"), run(2 * 128256, "pretrain")
  t.is(a.stage, 0, "31 of 32 layers: the embedding's stage is the slowest")
  t.near(b.stage_time_s - a.stage_time_s, 128256 * 4096 * (2 + 2 + 8) / (3.35e12 * 0.84), 1e-9,
    "the embedding's dense gradient: a V x h zero fill and its add into the main grad")
  t.is(run(2 * 128256, "lora").stage_time_s, run(128256, "lora").stage_time_s,
    "lora: a frozen table has no gradient")
end
