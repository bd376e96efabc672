-- gp.rl with PPO's critic and reward model of their own shapes
-- (critic_model, reward_model: DeepSpeed-Chat's OPT-350M critic and
-- reward model beside a larger actor), each priced by its own forward,
-- backward and memory at the actor's layout.
-- Run with ./gpuplan run tests/lua/rl_models.t.
local t = require "tap"
local gp = require "gpuplan"

local with, phase, part = t.with, t.phase, t.part

-- PPO on Qwen2.5-7B, 8 H100s colocated, ZeRO-3 (dp 8), full recompute;
-- a Llama 3.2 1B critic and reward model on the actor's GPUs.
local base = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, algo = "ppo", zero = 3,
               recompute = "full", prompts = 64, group = 8, response_len = 1024 }
local own = with(base, { critic_model = "llama3.2-1b", reward_model = "llama3.2-1b" })
local r = gp.rl(own)
t.is(r.critic_model, "llama3.2-1b", "critic_model in the result")
t.is(r.reward_model, "llama3.2-1b", "reward_model in the result")

-- The critic's update is gp.train's step of the critic's own model on the
-- actor's layout: 8 GPUs, ZeRO-3, full recompute, 64 x 8 = 512 sequences
-- of 512 + 1024 tokens (the default prompt and the mean response) in one
-- optimizer step (opt_steps 1) -- the same train_step, so equal exactly.
local tr = gp.train { model = "llama3.2-1b", gpu = "h100-sxm", gpus = 8, zero = 3,
                      recompute = "full", method = "full", seq = 512 + 1024,
                      global_batch = 512 }
t.is(r.opt_steps, 1, "one optimizer step")
t.is(phase(r, "critic_update").seconds, tr.step_s,
  "critic_update = gp.train's step of the 1B critic on the actor's 8 GPUs")
local a = gp.rl(base)
t.ok(phase(r, "values").seconds < 0.5 * phase(a, "values").seconds,
  "the 1B critic's values forward: under half the 7B's (1.24B vs 7.6B parameters)")
t.is(phase(r, "reward").seconds, phase(r, "values").seconds,
  "the reward model's forward: the same 1B model's over the same samples")

-- Memory on the actor's GPUs.  The critic's states: mixed-16 AdamW, 2 + 2
-- + 4 + 8 = 16 bytes per parameter, sharded over dp 8 (ZeRO-3); the
-- frozen reward model's 16-bit weights, 2 bytes per parameter / 8; P is
-- the 1B model's parameters as gp.train counts them.
local P = tr.memory.params
t.near(part(r.memory.update, "critic"), 16 * P / 8, 1e-9, "critic states = 16 P / dp")
t.near(part(r.memory.update, "reward_model"), 2 * P / 8, 1e-9, "reward weights = 2 P / dp")
t.ok(r.memory.update.total < a.memory.update.total, "less than the actor-shaped ones hold")

-- The actor's own id prices as the actor's shape: the same step exactly.
local same = gp.rl(with(base, { critic_model = "qwen2.5-7b", reward_model = "qwen2.5-7b" }))
local shaped = gp.rl(with(base, { reward_model = true }))
t.is(same.step_s, shaped.step_s, "critic_model/reward_model = the actor's id: as its shape")
t.is(gp.rl(with(base, { reward_model = "actor" })).step_s, shaped.step_s,
  "reward_model = \"actor\" is true's")
t.is(shaped.critic_model, "actor", "the default critic: the actor's shape, said so")

-- On a group of its own: the critic's update is gp.train's on that group
-- (the 8 GPUs of critic_gpus, the actor's layout); the reward model
-- beside it (colocate_critic_reward) is priced with its own 1B model
-- there: 2 P / 8 bytes per GPU of the critic's group.
local g = gp.rl(with(own, { gpus = 16, critic_gpus = 8, colocate_critic_reward = true }))
t.is(phase(g, "critic_update").seconds, tr.step_s, "critic_update = gp.train's on its 8 GPUs")
t.is(phase(g, "critic_update").pool, "critic", "on the critic's group")
t.near(part(g.memory.critic, "reward_model"), 2 * P / 8, 1e-9,
  "the reward model beside the critic: 2 P / dp")
t.is(phase(g, "reward").seconds, phase(r, "reward").seconds,
  "its forward: the 1B model's at dp 8, as on the actor's 8 GPUs")

-- gp.rl_job keeps the models for each step.
local job = gp.rl_job(own)
t.near(job:step { tp = 1, zero = 3, recompute = "full" }.step_s, r.step_s, 1e-12,
  "gp.rl_job prices the same step")

-- An inline architecture, as model takes: the catalog's table itself.
t.is(gp.rl(with(base, { critic_model = gp.catalog():get("models", "llama3.2-1b"),
  reward_model = "llama3.2-1b" })).step_s, r.step_s, "a model table as the id")

-- A case states the critic and reward model as model records
-- (validation/SCHEMA.md).
local predict = require "gpuplan.predict.rl"
local cat = gp.catalog()
local m1 = cat:get("models", "llama3.2-1b")
local case = {
  kind = "rl", model = cat:get("models", "qwen2.5-7b"), hardware = { gpu = "h100-sxm", gpus = 8 },
  parallel = { tp = 1, zero = 3, recompute = "full" },
  workload = { method = "ppo", seq_len = 512 + 1024 },
  rl = { prompts = 64, group = 8, prompt_len = 512, response_len = 1024, reward_model = m1,
         critic_model = m1 },
  measured = { metric = "step_time_s", value = 100 },
}
local p, why = predict(case, cat)
if not p then t.diag(why) end
local cm = require("gpuplan.predict.case").model
t.near(p and p.value or 0, gp.rl(with(base, { margin = 0, model = cm(case.model, cat),
  critic_model = cm(m1, cat), reward_model = cm(m1, cat) })).step_s, 1e-12,
  "a case's critic_model and reward_model: as gp.rl prices them")

-- DeepSpeed-Chat's shape (its blog's Table 2): an OPT-13B actor, an
-- OPT-350M critic and reward model, 2048 tokens of context, 256-token
-- prompts and answers, the hybrid engine at inference TP 2 on 64 A100s.
-- A context of 2048 holds the step's 256 + 256 tokens: priced, not
-- refused (the engine's setup once checked infer's own default lengths,
-- 2048 + 256).  Its critic update is gp.train's of the 350M model on the
-- actor's layout (ZeRO-3 over 64, micro-batch 16, 1024 sequences of 512
-- tokens in one optimizer step) and stack (DeepSpeed's: the hybrid engine
-- is a DeepSpeed engine's), exactly.
local function opt(id, l, h, a)
  return { id = id, name = id, family = "opt", layers = l, hidden = h, heads = a, kv_heads = a,
           ffn_hidden = 4 * h, ffn_gated = false, vocab = 50272, tied_embeddings = true,
           linear_bias = true, norm = "layer", max_seq = 2048, pos_embeddings = 2048 }
end
local o350 = opt("opt-350m", 24, 1024, 16)
local ds = gp.rl { model = opt("opt-13b", 40, 5120, 40), gpu = "a100-sxm-80gb", gpus = 64,
  algo = "ppo", zero = 3, recompute = "full", batch = 16, prompts = 1024, group = 1,
  prompt_len = 256, response_len = 256, rollout_engine = "hybrid", rollout_tp = 2,
  critic_model = o350, reward_model = o350 }
t.ok(ds.fits, "DeepSpeed-Chat's OPT-13B + OPT-350M step on 64 A100s is priced and fits")
local t350 = gp.train { model = o350, gpu = "a100-sxm-80gb", gpus = 64, zero = 3,
  recompute = "full", method = "full", batch = 16, seq = 512, global_batch = 1024,
  stack = "deepspeed" }
t.is(phase(ds, "critic_update").seconds, t350.step_s, "its critic update: gp.train's 350M step")

-- Bad input: one line naming the key.
t.raises(function() gp.rl(with(base, { algo = "grpo", critic_model = "llama3.2-1b" })) end,
  "critic_model is PPO's critic (algo = ppo)", "critic_model needs ppo", true)
t.raises(function() gp.rl(with(base, { critic_model = "llama9-1b" })) end,
  "rl: critic_model: unknown model 'llama9-1b'", "an unknown id named", true)
t.raises(function() gp.rl(with(base, { reward_model = 3 })) end,
  "reward_model must be a catalog model id or a model table (got 3)", "a bad value named", true)

t.done_testing()
