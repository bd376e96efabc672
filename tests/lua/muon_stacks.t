-- Muon's DP sharding (the catalog entry's dp_shard) is Megatron-Core's
-- dist_muon (LayerWiseDistributedOptimizer: each DP rank keeps and steps
-- its share of the matrices, then all-gathers the parameters).  The hf
-- and deepspeed stacks were priced with it at zero 0 too, which neither
-- runs: Hugging Face's torch.optim.Muon (PyTorch 2.9) is a plain
-- per-process optimizer under DDP, and DeepSpeed shards Muon only inside
-- its ZeRO stage 1 and 2 optimizer.  Without ZeRO they are priced
-- unsharded now: every rank's momentum and Newton-Schulz work, no gather.
local t = require "tap"
local gp = require "gpuplan"

local base = { model = "llama3-8b", gpu = "h100-sxm", optimizer = "muon", zero = 0 }
local function mem(stack, gpus) return gp.memory(t.with(base, { stack = stack, gpus = gpus })) end

-- llama3-8b: 8030261248 parameters; embedding and output 2 x 128256 x 4096
-- = 1050673152 and 65 norms of 4096 = 266240 are Adam's (scalar_states
-- 2: 8 B each), the other 6979321856 Muon's momentum (4 B):
-- 4 x 6979321856 + 8 x 1050939392 = 36324802560 B on one GPU.
local whole = 4 * 6979321856 + 8 * (1050673152 + 266240)
t.is(t.part(mem("hf", 1), "optimizer"), whole, "hf, 1 GPU: the whole optimizer state")
local hf8 = mem("hf", 8)
t.is(t.part(hf8, "optimizer"), whole, "hf, 8 GPUs at zero 0: the same, unsharded (DDP)")
t.is(hf8.state_bytes.dp_shard, false, "hf at zero 0: no dist_muon sharding")
-- megatron keeps dist_muon's: the state / 8 (exact, a power of two)
local mg8 = mem("megatron", 8)
t.is(t.part(mg8, "optimizer"), whole / 8, "megatron, 8 GPUs at zero 0: dist_muon's share")
t.is(mg8.state_bytes.dp_shard, true, "megatron: dp_shard kept")

-- The step: hf at zero 0 gathers nothing after the step (no dist_muon
-- all-gather) and each rank runs every matrix's Newton-Schulz, 8 times
-- megatron's share of it.
local function step(stack) return gp.train(t.with(base, { stack = stack, gpus = 8 })) end
local hf, mg = step("hf"), step("megatron")
t.is(t.step_part(hf, "zero_gather").seconds, 0.0, "hf at zero 0: no parameter all-gather")
t.ok(t.step_part(mg, "zero_gather").seconds > 0, "megatron: dist_muon's all-gather")
t.ok(t.step_part(hf, "optimizer").seconds > 4 * t.step_part(mg, "optimizer").seconds,
     "hf: the whole Newton-Schulz work a rank, several times megatron's share")
-- Megatron-Core refuses Muon in fp16: its emerging-optimizer factory
-- raises "emerging optimizer with fp16 is not supported." when
-- config.fp16 is set (megatron/core/optimizer/__init__.py
-- _get_megatron_emerging_optimizer).  Mirrored on the megatron stack;
-- bf16 there, and fp16 on the hf stack, are priced.
local mg16 = t.with(base, { stack = "megatron", gpus = 8, precision = "fp16" })
t.raises(function() gp.train(mg16) end,
  "train: optimizer muon with precision = fp16 on stack megatron: Megatron-Core refuses it "
  .. "(\"emerging optimizer with fp16 is not supported.\"): give precision = bf16, or another optimizer",
  "megatron, muon, fp16: refused with the source's words", true)
t.raises(function() gp.memory(mg16) end, "emerging optimizer with fp16 is not supported",
  "gp.memory (fit) too", true)
t.raises(function() gp.sweep(t.with(mg16, { zero = nil, tokens = 1e9 })) end,
  "emerging optimizer with fp16 is not supported", "gp.sweep (plan) too", true)
t.ok(pcall(gp.train, t.with(mg16, { precision = "bf16" })), "megatron, muon, bf16: priced")
t.ok(pcall(gp.train, t.with(mg16, { stack = "hf" })), "hf, muon, fp16: priced (not Megatron's factory)")
t.done_testing()
