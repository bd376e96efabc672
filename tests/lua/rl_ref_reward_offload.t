-- gp.rl's ref_reward_offload: DeepSpeed's ZeRO-3 offload_param on PPO's
-- reference and reward model (DeepSpeed-Chat's --offload_reference_model
-- and --offload_reward_model).  Each rank's partition of the frozen
-- models waits in host memory, so none of their weights stay on the GPU,
-- and each forward call copies the partition in over the host link
-- (engine/rl_sched.c).  Run with ./gpuplan run tests/lua/rl_ref_reward_offload.t.
local t = require "tap"
local gp = require "gpuplan"
local comm = require "gpuplan.comm"

local with, phase = t.with, t.phase

local function component(mem, name)
  for _, c in ipairs(mem.components) do
    if c.name == name then return c.bytes end
  end
  return 0
end

t.plan(9)

-- Llama 2 7B PPO colocated on 16 A800s under ZeRO-3 (DP 16), the reward
-- model of the actor's shape, DeepSpeed-Chat's hybrid engine generating
-- 16 sequences a GPU at once, 1024 prompts of one sample.
local base = { model = "llama2-7b", gpu = "a800-sxm-80gb", gpus = 16, algo = "ppo",
               zero = 3, offload = "optimizer", recompute = "full", reward_model = "actor",
               rollout_engine = "hybrid", generation_batch = 16, prompts = 1024, group = 1,
               prompt_len = 256, response_len = 256, response_max = 512 }
local r0 = gp.rl(base)
local r1 = gp.rl(with(base, { ref_reward_offload = true }))
local P = gp.params("llama2-7b").total
local bw = comm.host_link_bw(gp.catalog():get("gpus", "a800-sxm-80gb"))
-- Hand: a rank's ZeRO-3 partition of a 16-bit model is P x 2 / 16 bytes;
-- the frozen models' forwards run on each generated batch, 1024 / (16
-- GPUs x 16) = 4 calls a rank, each copying the partition in at the host
-- link's rate: 4 x P x 2 / 16 / bw more for the reference and for the
-- reward model (every sample is scored).  Tolerance 1e-9 s: the sums of
-- seconds in double precision.
local part = P * 2 / 16
t.is(component(r0.memory.update, "ref_model"), part, "on the GPU: the reference's partition")
t.is(component(r0.memory.update, "reward_model"), part, "and the reward model's")
t.is(component(r1.memory.update, "ref_model"), 0, "offloaded: none of the reference")
t.is(component(r1.memory.update, "reward_model"), 0, "nor of the reward model")
local d = 4 * part / bw
t.near(phase(r1, "reference").seconds - phase(r0, "reference").seconds, d, 1e-9,
       "reference: 4 forwards x its partition over the host link")
t.near(phase(r1, "reward").seconds - phase(r0, "reward").seconds, d, 1e-9,
       "reward: the same")
t.near(phase(r1, "values").seconds, phase(r0, "values").seconds, 1e-12,
       "the critic's forward stays on the GPU")

-- Refused where DeepSpeed has no such thing: offload_param is "Valid only
-- with stage 3"; a model on a group of its own is not on the actor's GPUs.
t.raises(function() gp.rl(with(base, { ref_reward_offload = true, zero = 2 })) end,
         "rl: ref_reward_offload: ZeRO-3's parameter offload", "ZeRO-2", true)
t.raises(function()
  gp.rl(with(base, { ref_reward_offload = true, ref_gpus = 4, gpus = 20 })) end,
         "rl: ref_reward_offload: ZeRO-3's parameter offload", "own group", true)
