-- DeepSpeed's hybrid engine (DeepSpeed-Chat's rollout_engine hybrid) below
-- ZeRO-3 generates on the trainer's own tensors: runtime/hybrid_engine.py
-- v0.9.0 builds an inference container per layer whose parameters point
-- at the training module's (module_inject/containers/base.py
-- set_params_wo_copy), except q, k and v, which a container fuses into new
-- tensors (containers/opt.py attention(): torch.cat((qw, kw, vw))) and
-- refreshes after each step (reset_qkv).  gp.rl holds the trainer's
-- weights once, as the engine's, and the fused copy beside them in every
-- phase (engine/rl.c rl_qkv_copy, engine/rl_mem.c).
-- Run with ./gpuplan run tests/lua/rl_hybrid_qkv.t.
local t = require "tap"
local gp = require "gpuplan"

local with = t.with

t.plan(19)

local function comp(m, name)
  for _, c in ipairs(m.components) do if c.name == name then return c.bytes end end
  return 0
end

-- PPO on Llama 3.2 1B (16 layers, hidden 2048, 32 heads and 8 key-value
-- heads of 64: q, k and v are (32 + 2 x 8) x 64 = 3072 rows of 2048, no
-- biases), 8 A100s at ZeRO-2, the hybrid engine at one TP rank.
-- The copy: 2 B x 16 x 3072 x 2048 = 201,326,592 B, exactly (integers).
local base = { model = "llama3.2-1b", gpu = "a100-sxm-80gb", gpus = 8, algo = "ppo", zero = 2,
               prompts = 64, group = 1, prompt_len = 256, response_len = 256, batch = 4,
               rollout_engine = "hybrid", generation_batch = 4 }
local copy = 2 * 16 * 3072 * 2048
local r = gp.rl(base)
local W = r.memory.update.params * 2
t.ok(r.fits, "the job fits")
t.is(comp(r.memory.update, "rollout_weights"), copy,
  "training: the engine's own fused q, k, v only (201 MB), not a second model")
t.is(comp(r.memory.rollout, "weights"), 0, "generating: the trainer's weights are the engine's")
t.is(comp(r.memory.rollout, "rollout_weights"), W + copy,
  "generating: the engine's weights are the trainer's (2 B x P) and the fused copy")

-- ZeRO-3 gathers the layers for each generate (GatheredParameters over
-- every layer at inference_tp_size 1) and frees them after: a whole
-- 16-bit model while generating, none while training or scoring
-- (hybrid_engine.py v0.9.0 generate; engine/rl_mem.c engine_released).
local z3 = gp.rl(with(base, { zero = 3 }))
t.ok(comp(z3.memory.rollout, "rollout_weights") > W * 0.99,
  "ZeRO-3 generating: a whole model's 16-bit weights gathered")
t.is(comp(z3.memory.update, "rollout_weights"), 0,
  "ZeRO-3 training: the gathered weights were freed after the generate")
t.is(comp(z3.memory.forward, "rollout_weights"), 0,
  "ZeRO-3 log-prob forwards: none held either")
-- Its host stalls: eval() under ZeRO-3 runs gc.collect() and
-- empty_cache() before each generate, and generate at inference_tp_size
-- > 1 once more after slicing.  64 prompts over 8 ranks of 4 a generate:
-- ceil(64 / (8 x 4)) = 2 generates a step; at TP 1, 2 x (0.172 + 0.080)
-- = 0.504 s; at TP 2, 2 x 2 x 0.252 = 1.008 s (peft PR #2894's rates,
-- gpuplan.rl GC_COLLECT and EMPTY_CACHE; the A100 node's host_op_scale
-- is 1).  Exact up to rounding: 1e-9.
t.ok(math.abs(z3.engine_cleanup - 0.504) < 1e-9, "ZeRO-3, TP 1: 2 x (gc + empty_cache)")
local z3t = gp.rl(with(base, { zero = 3, rollout_tp = 2 }))
t.ok(math.abs(z3t.engine_cleanup - 1.008) < 1e-9, "ZeRO-3, TP 2: 2 x 2 x (gc + empty_cache)")
t.is(r.engine_cleanup, 0, "below ZeRO-3: no clean-ups (eval's are ZeRO-3's)")
-- The TP engine's slices are cut on each rank from the gathered whole
-- tensors (apply_tensor_parallelism inside GatheredParameters): its
-- weight sync is the ZeRO-3 gather and the copy, where a vLLM engine of
-- the same TP 2 also receives its slice from a neighbour (a send).
local function phase(res, name)
  for _, p in ipairs(res.phases) do if p.name == name then return p.seconds end end
end
local vz = with(base, { zero = 3, rollout_tp = 2, rollout_engine = "vllm" })
vz.generation_batch = nil
t.ok(phase(gp.rl(vz), "weight_sync") > phase(z3t, "weight_sync"),
  "ZeRO-3, TP 2: the hybrid engine's sync sends nothing after the gather")

-- vLLM's engine keeps its own weights: no change there.
local vo = with(base, { rollout_engine = "vllm" })
vo.generation_batch = nil
local v = gp.rl(vo)
t.ok(comp(v.memory.update, "rollout_weights") > W * 0.99,
  "vLLM colocated: the engine's whole weights beside the trainer's")

-- Refusals.  Below ZeRO-3 the engine's weights are the trainer's:
-- offload_states would park them during the rollout.
local ok, e = pcall(gp.rl, with(base, { offload_states = true }))
t.ok(not ok and tostring(e):find("offload_states would park them", 1, true),
  "hybrid below ZeRO-3 with offload_states: refused")
-- No DeepSpeed inference container takes MLA attention.
ok, e = pcall(gp.rl, with(base, { model = "deepseek-v3", gpus = 16, zero = 3 }))
t.ok(not ok and tostring(e):find("no inference container for deepseek-v3's MLA", 1, true),
  "hybrid on an MLA model: refused")

-- rollout_engine hf (OpenRLHF without vLLM engines) generates through the
-- actor's own modules: under ZeRO-3 their partitions are gathered again by
-- each module's pre-forward hook on every decode step (DeepSpeed
-- parameter_offload.py pre_sub_module_forward_function), which the rollout
-- does not price; it is refused there, and runs at ZeRO-2.  The same
-- call fails or runs on zero alone, so the refusal is the zero rule's.
local hfb = with(base, { rollout_engine = "hf", algo = "grpo", group = 2 })
t.ok(gp.rl(hfb).rollout_engine == "hf", "hf at ZeRO-2 runs")
t.raises(function() gp.rl(with(hfb, { zero = 3 })) end,
  "rollout_engine = hf generates through the actor's own modules, whose ZeRO-3", "hf at ZeRO-3: refused, not priced as ZeRO-2's decode", true)

-- The hybrid engine is a DeepSpeed engine's (DeepSpeed-Chat's
-- rlhf_engine.py: deepspeed.initialize with "hybrid_engine": {"enabled":
-- true}): its actor trains under DeepSpeed ZeRO, stack deepspeed where
-- none is given (the default stack, hf, had priced it as PyTorch FSDP),
-- and another stack is refused.
t.is(r.stack, "deepspeed", "rollout_engine hybrid: the actor's stack is DeepSpeed's")
t.ok(table.concat(r.defaults, "; "):find("stack=deepspeed (rollout_engine hybrid", 1, true),
  "... said among the defaults")
t.raises(function() gp.rl(with(base, { stack = "megatron" })) end,
  "rollout_engine = hybrid is DeepSpeed's hybrid engine, whose actor trains under DeepSpeed ZeRO: "
    .. "stack = megatron is not it", "another stack refused", true)
