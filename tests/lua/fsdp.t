-- FSDP's sharding strategies and gradient sync (gpuplan.memory's
-- sharding; --fsdp, --grad-sync).  Run with ./gpuplan run tests/lua/fsdp.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(15)

local function part(r, name)
  for _, p in ipairs(r.parts) do if p.name == name then return p end end
end

-- FSDP's sharding strategies (gpuplan.memory's sharding).  llama3-8b
-- pretraining on 16 H100s, tp = pp = 1: dp 16.
do
  local base = { model = "llama3-8b", gpu = "h100-sxm", gpus = 16, method = "pretrain",
                 seq = 2048 }
  local function with(extra)
    local o = {}
    for k, v in pairs(base) do o[k] = v end
    for k, v in pairs(extra) do o[k] = v end
    return gp.train(o)
  end
  local function gathered(r)
    local p = part(r, "zero_gather")
    return p.seconds + p.hidden
  end
  -- shard_grad_op gathers the layers once per micro-batch's forward and
  -- keeps them to its backward: with the micro-batches doubled (global
  -- batch 64 -> 128 at dp 16, micro-batch 1: 4 -> 8) the gather time
  -- doubles exactly (every micro-batch's gathers are the same
  -- collectives); DeepSpeed's ZeRO-2 (no --fsdp, stack megatron) gathers
  -- once per step after the optimizer, the same for 4 or 8.
  local s4 = with { fsdp = "shard_grad_op", global_batch = 64 }
  local s8 = with { fsdp = "shard_grad_op", global_batch = 128 }
  t.is(s4.zero, 2, "shard_grad_op is zero 2")
  t.near(gathered(s8) / gathered(s4), 2, 1e-9, "shard_grad_op: a gather per micro-batch")
  local d4 = with { zero = 2, global_batch = 64 }
  local d8 = with { zero = 2, global_batch = 128 }
  t.near(gathered(d8), gathered(d4), 1e-12, "DeepSpeed ZeRO-2: one gather per step")
  t.ok(gathered(s4) > gathered(d4), "shard_grad_op's gathers exceed one per step")
  -- full_shard gathers again for the backward: more than shard_grad_op
  -- at the same micro-batches (the forward's gathers alone are equal).
  local f4 = with { fsdp = "full_shard", global_batch = 64 }
  t.is(f4.zero, 3, "full_shard is zero 3")
  t.ok(f4.step_s > s4.step_s, "full_shard re-gathers for the backward")
  t.is(with { fsdp = true, global_batch = 64 }.step_s, f4.step_s, "fsdp = true is full_shard")
  -- shard_grad_op with one gradient sync per step keeps whole parameters
  -- and whole gradients over the micro-batches: zero 1's sends and
  -- states, so the same step and memory to the bit.
  local st = with { fsdp = "shard_grad_op", grad_sync = "step", global_batch = 64 }
  local z1 = with { zero = 1, global_batch = 64 }
  t.is(st.step_s, z1.step_s, "shard_grad_op + grad_sync step: zero 1's step")
  t.is(st.memory.total, z1.memory.total, "shard_grad_op + grad_sync step: zero 1's memory")
  t.ok(st.step_s < s4.step_s, "one sync per step: fewer collectives than per micro-batch")
  t.raises(function() with { fsdp = "hybrid" } end,
    "fsdp must be full_shard or shard_grad_op (got string 'hybrid')", "unknown strategy", true)
  t.raises(function() with { fsdp = "full_shard", zero = 2 } end,
    "fsdp full_shard is zero 3, not 2", "strategy against its stage", true)
  t.raises(function() with { grad_sync = "step" } end,
    "grad_sync step needs fsdp", "grad_sync without fsdp", true)
  t.raises(function() with { fsdp = "shard_grad_op", grad_sync = "once" } end,
    "grad_sync must be micro_batch or step (got string 'once')", "unknown grad_sync", true)
  t.raises(function() with { fsdp = "full_shard", grad_sync = "step" } end,
    "full_shard with grad_sync step is not modelled", "full_shard + step refused", true)
end
