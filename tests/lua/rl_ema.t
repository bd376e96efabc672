-- gp.rl's ema: the actor's exponential moving average, DeepSpeed-Chat's
-- --enable_ema (DeepSpeedExamples applications/DeepSpeed-Chat at 3a77097a:
-- rlhf_engine.py _init_ema builds a second copy of the actor, fp16 at ZeRO
-- stage 0 below an actor at stage 3; step3 main.py calls
-- utils.moving_average after each train_rlhf, a Python loop of
-- "param_ema.data.copy_(torch.lerp(data, param_ema.data, beta))" over the
-- parameter pairs).  engine/rl.c rl_ema prices each call as the longer of
-- the host's two eager ops a tensor and the GPU's two kernels a tensor
-- (10 B of HBM traffic a parameter between them); engine/rl_mem.c holds
-- the 16-bit copy on the actor's GPUs in every phase.
-- Run with ./gpuplan run tests/lua/rl_ema.t.
local t = require "tap"
local gp = require "gpuplan"
local rl = require "gpuplan.rl"

local with, phase = t.with, t.phase
local cat = gp.catalog()

t.plan(15)

-- The parameter tensors a loop over model.parameters() visits.
-- Llama 3.2 1B: 16 layers x (2 RMSNorms + q, k, v, o + gate, up, down) =
-- 144, the embedding and the final norm, the head tied to the embedding:
-- 146.
t.is(rl.param_tensors(cat:get("models", "llama3.2-1b")), 146, "Llama 3.2 1B: 146 tensors")
-- Qwen2.5-7B adds q, k and v biases: 28 x (9 + 3) + embedding, final
-- norm, untied head = 339.
t.is(rl.param_tensors(cat:get("models", "qwen2.5-7b")), 339, "Qwen2.5-7B: 339 tensors")
-- An OPT-shaped model (Megatron GPT 1.7B: LayerNorm, a bias on every
-- linear, learned positions, tied head): 24 x (2 x 2 norm tensors + 4 x 2
-- attention + 2 x 2 MLP) + embedding + positions + the final norm's 2 =
-- 388, as OPT-1.3B's model.parameters() yields.
t.is(rl.param_tensors(cat:get("models", "megatron-gpt-1.7b")), 388,
  "a LayerNorm model with biases and learned positions: 388 tensors")

-- PPO on Llama 3.2 1B, 8 H100s colocated at ZeRO-2 (dp 8), micro-batch 4,
-- DeepSpeed-Chat's hybrid engine;
-- 64 prompts x 8 = 512 samples of 1024 response tokens.
local base = { model = "llama3.2-1b", gpu = "h100-sxm", gpus = 8, algo = "ppo", zero = 2,
               prompts = 64, group = 8, response_len = 1024, batch = 4,
               rollout_engine = "hybrid", generation_batch = 4 }
local r0 = gp.rl(base)
local r1 = gp.rl(with(base, { ema = true }))
t.is(r0.ema_host, 0, "no ema: no updates")
-- Calls: 512 / (dp 8 x micro-batch 4) = 16 train_rlhf calls a rank, one
-- epoch.  Each: 2 x 146 = 292 kernels.  A mean kernel moves 10 B x
-- 1.2358e9 parameters / 292 = 42.3 MB, about 14 us at the H100's 3.35 TB/s
-- and 8 us of fill and launch: under GP_EAGER_OP_TIME 24.84 us
-- (engine/common.h), so the host's launches set the pace: 16 x 292 x
-- 24.84 us = 0.11605 s.  Tolerance 1e-9 relative: the same products of
-- doubles in another order.
local want = 16 * 292 * 24.84e-6
t.near(r1.ema_host, want, 1e-9,
  string.format("host-bound: 16 x 292 x 24.84 us = %.5f s (got %.5f)", want, r1.ema_host))
t.near(phase(r1, "actor_update").seconds - phase(r0, "actor_update").seconds, want, 1e-9,
  "the updates add to the actor's update")
t.is(phase(r1, "critic_update").seconds, phase(r0, "critic_update").seconds,
  "the actor-shaped critic has no average of its own")
t.is(r1.ema, true, "ema in the result, as given")

-- The 16-bit copy: 2 B a parameter of the actor's on each of its GPUs,
-- in every phase (1.2358e9 parameters: 2.47 GB).
local function comp(m, name)
  for _, c in ipairs(m.components) do if c.name == name then return c.bytes end end
  return 0
end
-- Llama 3.2 1B: embedding 128256 x 2048 = 262,668,288 (the head tied to
-- it); a layer q 2048 x 2048 + k, v 2048 x 512 each + o 2048 x 2048 =
-- 10,485,760, the MLP 3 x 2048 x 8192 = 50,331,648, two norms 4,096:
-- 60,821,504, x 16 = 973,144,064; the final norm 2,048.  Total
-- 1,235,814,400, whole on each GPU at ZeRO-2 (exact: integers).
local P = 262668288 + 16 * 60821504 + 2048
t.is(r1.memory.update.params, P, "Llama 3.2 1B: 1,235,814,400 parameters a GPU at ZeRO-2")
local held = true
for _, st in ipairs { "update", "forward", "rollout" } do
  held = held and comp(r1.memory[st], "ema") == 2 * P
    and r1.memory[st].total - r0.memory[st].total > 2 * P * 0.999
end
t.ok(held, "2 B x P held through the update, the forwards and the rollout")

-- GPU-bound: Llama 3 8B (8.03e9 parameters, 291 tensors, 582 kernels of
-- 138 MB each) on A100s, 8 train_rlhf calls a rank (256 samples / (8 x
-- 4)).  Each call moves 10 B x P at no more than the A100's 2.039 TB/s
-- (the streaming rate is a fraction of it) plus each kernel's fill and
-- launch, a few microseconds: at least 8 x 10 x P / 2.039e12 = 0.315 s,
-- and within 8 x (10 P / (0.7 x 2.039e12) + 582 x 20 us) = 0.543 s (the
-- streaming rate is above 70% of the datasheet's on every catalog GPU).
local big = gp.rl { model = "llama3-8b", gpu = "a100-sxm-80gb", gpus = 8, algo = "ppo",
                    zero = 2, prompts = 32, group = 8, response_len = 256, batch = 4,
                    rollout_engine = "hybrid", generation_batch = 4, ema = true }
local P8 = big.memory.update.params
local lo, hi = 8 * 10 * P8 / 2.039e12, 8 * (10 * P8 / (0.7 * 2.039e12) + 582 * 20e-6)
t.ok(big.ema_host >= lo and big.ema_host <= hi,
  string.format("GPU-bound: %.3f s within [%.3f, %.3f]", big.ema_host, lo, hi))

-- Refusals.
local ok, e = pcall(gp.rl, with(base, { zero = 3, ema = true }))
t.ok(not ok and tostring(e):find("ema under zero 3", 1, true),
  "ZeRO-3's gathered average is not priced: refused")
ok, e = pcall(gp.rl, with(base, { method = "lora", ema = true }))
t.ok(not ok and tostring(e):find("ema takes method full", 1, true),
  "a LoRA actor's average is not counted: refused")
-- OpenRLHF's --enable_ema averages on the CPU (openrlhf/utils/deepspeed.py
-- moving_average at 35865c7e: param.data.to("cpu") each optimizer step),
-- with its hf generation or its vLLM engines: another mechanism, refused
-- rather than priced as DeepSpeed-Chat's, whose rollout is the hybrid
-- engine.
ok, e = pcall(gp.rl, { model = "llama2-7b", gpu = "a100-sxm-80gb", gpus = 8, algo = "ppo",
                       zero = 2, prompts = 64, group = 1, response_len = 256, batch = 4,
                       rollout_engine = "hf", generation_batch = 16, ema = true })
t.ok(not ok and tostring(e):find("OpenRLHF's --enable_ema keeps its average in host memory", 1, true),
  "an OpenRLHF (hf engine) actor's average is refused")
local vo = with(base, { rollout_engine = "vllm", ema = true })
vo.generation_batch = nil
ok, e = pcall(gp.rl, vo)
t.ok(not ok and tostring(e):find("beside its hybrid engine", 1, true),
  "ema with vLLM engines (OpenRLHF's main path) is refused too")
