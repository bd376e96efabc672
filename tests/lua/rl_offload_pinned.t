-- gp.rl's offload_pinned: verl's FSDP workers copy the actor out with
-- .to("cpu", non_blocking=True) (utils/fsdp_utils.py at 94d681dce:
-- offload_fsdp2_model_to_cpu, offload_fsdp_optimizer), which PyTorch's
-- _to_copy allocates pinned ("bool pin_out = (non_blocking &&
-- self.is_cuda() && options.device().is_cpu() ...)"): every copy at the
-- host link's rate, and the parameters loaded and offloaded around each
-- of the three phases are the fp32 master (engine/rl_sched.c).  And the
-- verl profile's default for a colocated FSDP case that offloads.
-- Run with ./gpuplan run tests/lua/rl_offload_pinned.t.
local t = require "tap"
local gp = require "gpuplan"
local rl = require "gpuplan.rl"
local predict = require "gpuplan.predict.rl"

local with, phase, part = t.with, t.phase, t.part

-- Qwen2.5-7B GRPO on 8 H100s, FSDP full shard (the fp32 master and the
-- Adam moments sharded 8 ways), colocated.
local base = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, zero = 3, fsdp = "full_shard",
               recompute = "full", prompts = 64, group = 8, response_len = 1024 }
local cat = gp.catalog()
-- The host link: the H100's PCIe Gen5 x16, as gp.rl takes it.
local hb = require("gpuplan.train").pcie_bw(cat.gpus["h100-sxm"])

-- offload_states pinned: the states and the engine's weights each way at
-- the link's rate, 2 x swap_bytes / hb (against the pageable rate for
-- the optimizer states without it).  Exact but for the last bits.
local s0 = gp.rl(with(base, { offload_states = true }))
local s1 = gp.rl(with(base, { offload_states = true, offload_pinned = true }))
t.near(phase(s1, "offload").seconds, 2 * s1.swap_bytes / hb, 1e-9,
  "offload_states pinned: 2 swap_bytes / the link")
t.ok(phase(s1, "offload").seconds < phase(s0, "offload").seconds,
  "faster than into fresh pageable memory")

-- With param_offload: the parameters (the fp32 master under FSDP's
-- mixed precision, w = weights + master per GPU) go out and back three
-- times a step, one round trip already in swap_bytes: + 2 x 2 w / hb.
local m = part(s1.memory.update, "master") + part(s1.memory.update, "weights")
t.ok(m > 0, "the actor's parameters per GPU")
local p1 = gp.rl(with(base, { offload_states = true, param_offload = true, offload_pinned = true }))
t.near(phase(p1, "offload").seconds - phase(s1, "offload").seconds, 4 * m / hb, 1e-9,
  "param_offload pinned: two more round trips of the fp32 parameters")
-- Alone: the three round trips, 6 w / hb.
local a1 = gp.rl(with(base, { param_offload = true, offload_pinned = true }))
t.near(phase(a1, "offload").seconds, 6 * m / hb, 1e-9,
  "param_offload pinned alone: 3 round trips at the link's rate")

-- Bad input: one line naming the key.
t.raises(function() gp.rl(with(base, { offload_pinned = true })) end,
  "offload_pinned", "without offload_states or param_offload: refused", true)
t.raises(function() gp.rl(with(base, { offload_states = true, offload_pinned = 1 })) end,
  "offload_pinned", "a non-boolean is refused, named", true)

-- The verl profile sets it for a colocated FSDP case that offloads, and
-- not for its Megatron cases (offload_megatron_model_to_cpu's .cpu()).
local orig, opts = rl.rl, nil
rl.rl = function(o)
  opts = {}
  for k, x in pairs(o) do opts[k] = x end
  return orig(o)
end
local case = {
  id = "verl-pinned-test", kind = "rl",
  model = { name = "Qwen2.5-7B", layers = 28, hidden = 3584, heads = 28, kv_heads = 4,
            head_dim = 128, ffn_hidden = 18944, ffn_gated = true, vocab = 152064,
            tied_embeddings = false },
  hardware = { gpu = "h100-sxm", gpus = 8, gpus_per_node = 8 },
  parallel = { tp = 1, pp = 1, dp = 8, zero = 3, fsdp = true, fsdp_version = 2 },
  workload = { method = "grpo", precision = "bf16", seq_len = 4096, framework = "verl" },
  rl = { prompts = 64, group = 8, prompt_len = 128, response_len = 1000, colocated = true,
         rollout_tp = 1, offload_states = true, param_offload = true },
  measured = { metric = "step_time_s", unit = "s", value = 100 },
  source = { id = "test", title = "verl", where = "test" },
}
local p, why = predict(t.copy(case), cat)
if not p then t.diag(why) end
t.is(opts and opts.offload_pinned, true, "verl FSDP colocated with offloads: offload_pinned")
local mg = t.copy(case)
mg.parallel.fsdp, mg.parallel.fsdp_version, mg.rl.param_offload = false, nil, nil
mg.parallel.zero = nil
opts = nil
predict(mg, cat)
t.ok(opts ~= nil and not opts.offload_pinned, "verl Megatron: not pinned")
rl.rl = orig

t.done_testing()
