#!/usr/bin/env gpuplan
-- GRPO on a 7B and a 32B policy with 8k and 32k responses: H100, H200 or
-- B200, colocated or on separate rollout and training pools?
--
-- The seed guides say RL fine-tuning is "inference plus training": the
-- rollouts want HBM bandwidth and KV-cache room, the update wants the
-- interconnect, and memory must hold the actor and its reference at once.
-- This script prices one GRPO step of each job with gp.rl on each card,
-- colocated (trainer states offloaded during the rollout, as NeMo RL does)
-- and disaggregated (the split of the GPUs searched, one step of
-- staleness), each with the fastest of a few training layouts (TP with SP,
-- CP, full recompute, Megatron's distributed optimizer; the rollout engine
-- at the training TP), and says what the numbers support.
--
-- Response lengths: an exponential clipped at the limit, with the mean at
-- 3/8 of it (reasoning RL: most responses well under the limit, a tail of
-- long ones, the truncated ones piled at the limit).  Prices: each card's
-- cheapest catalog offer (gp.rl's defaults say which).
--
--   gpuplan run scripts/grpo.lua [--gpus 32] [--prompts 128] [--group 8]
--                                [--prompt-len 512] [--format markdown]
local gp = require "gpuplan"
local rl = require "gpuplan.rl"

local opt = gp.options({
  gpus = { "GPUs per job", 32 },
  prompts = { "prompts per step", 128 },
  group = { "responses per prompt", 8 },
  prompt_len = { "tokens per prompt", 512 },
  format = { "output format: text, markdown, csv or json", "text" },
}, arg)
-- gp.options hands the arguments that are no option back in opt[0]: this
-- script takes none, so one is refused, as guide.lua refuses it (grid_sweep's
-- --gpus 64 128 ran 64 alone and dropped the 128 in silence).
if #opt[0] > 0 then
  error(require("gpuplan.cli").usage("grpo: unexpected argument '" .. opt[0][1] .. "' (see --help)"), 0)
end

-- --group 1 was priced as GRPO, which compares each response with its
-- group's (the rl command refuses it: gpuplan.rl group_problem).
local cli = require "gpuplan.cli"
if opt.group < 2 then
  error(cli.usage(string.format("grpo: --group %d: GRPO needs at least 2 responses a prompt, "
    .. "its advantage is each response's reward against its group's", opt.group)), 0)
end

local MODELS = { "qwen2.5-7b", "qwen2.5-32b" }
local RESPONSES = { { name = "8k", max = 8192 }, { name = "32k", max = 32768 } }
local GPUS = { "h100-sxm", "h200-sxm", "b200" }
local TPS, CPS = { 1, 2, 4, 8 }, { 1, 2, 4 }

-- The fastest fitting layout of one placement (else the fastest of all);
-- extra: options that change the job (algo, rollout_tp, ...).
local function best(model, resp, gpu, colocated, extra)
  local top, why
  for _, tp in ipairs(TPS) do
    for _, cp in ipairs(CPS) do
      if opt.gpus % (tp * cp) == 0 then
        local o = {
          model = model, gpu = gpu, gpus = opt.gpus, tp = tp, cp = cp, sp = tp > 1,
          zero = 1, stack = "megatron", recompute = "full", prompts = opt.prompts,
          group = opt.group, prompt_len = opt.prompt_len,
          response_len = resp.max * 3 // 8, response_max = resp.max, currency = "USD",
        }
        if colocated then o.offload_states = true else o.rollout_gpus = "auto" end
        for k, v in pairs(extra or {}) do o[k] = v end
        local ok, r = pcall(gp.rl, o)
        if not ok then why = why or r end
        if ok and (not top or (r.fits and not top.fits) or
                   (r.fits == top.fits and (r.step_s or math.huge) < (top.step_s or math.huge))) then
          top = r
        end
      end
    end
  end
  -- Not one layout priced: gp.rl refused the job itself (--prompts 0,
  -- --gpus 3 that no rollout engine fills ...), which is the message; the
  -- tables below read a result of every cell.
  if not top then
    error(string.format("grpo: %s on %d x %s: %s", model, opt.gpus, gpu,
      tostring(why):gsub("^[^\n]-:%d+: ", "")), 0)
  end
  return top
end

-- Seconds of the rollout and of the training loop (the forwards and the
-- updates, those of models on groups of their own overlapping the
-- actor's) in one step: the training pool's busy time less the sync, and
-- colocated less the rollout and the offload it also runs.
local function seconds(r)
  local roll, other = 0, 0
  for _, p in ipairs(r.phases) do
    if p.name == "rollout" then roll = p.seconds end
    if p.name == "weight_sync" or (r.colocated and p.name == "offload") then
      other = other + p.seconds
    end
  end
  return roll, r.pools.train.busy - other - (r.colocated and roll or 0)
end

-- A job's times and cost as a table row (extra: its naming fields), and
-- the columns that show them; a job that does not fit has none.
local function times_row(r, extra)
  local roll, tr = seconds(r)
  local row = {
    step_s = r.fits and r.step_s or nil, rollout_s = r.fits and roll or nil,
    train_s = r.fits and tr or nil, usd_1k = r.fits and r.cost_1k_prompts or nil,
    fits = r.fits, note = r.fits and "" or ("does not fit: " .. tostring(r.why)),
  }
  for k, v in pairs(extra) do row[k] = v end
  return row
end
local function columns(first)
  local cols = {}
  for _, c in ipairs(first) do cols[#cols + 1] = c end
  for _, c in ipairs {
    { key = "step_s", label = "step (s)", fmt = "%.1f" },
    { key = "rollout_s", label = "rollout (s)", fmt = "%.1f" },
    { key = "train_s", label = "training (s)", fmt = "%.1f" },
    { key = "usd_1k", label = "USD per 1k prompts", fmt = "%.2f" },
    { key = "fits", label = "fits" }, { key = "note", label = "note" },
  } do cols[#cols + 1] = c end
  return cols
end

local rows, cell = {}, {}
for _, model in ipairs(MODELS) do
  for _, resp in ipairs(RESPONSES) do
    for _, gpu in ipairs(GPUS) do
      for _, colocated in ipairs { true, false } do
        local r = best(model, resp, gpu, colocated)
        local roll, tr = seconds(r)
        local row = {
          model = model, responses = resp.name, gpu = gpu,
          placement = colocated and "colocated" or "disaggregated",
          layout = string.format("tp%d cp%d%s", r.tp, r.cp, colocated and "" or
            string.format(" (%d+%d)", r.rollout_gpus, r.train_gpus)),
          step_s = r.step_s, rollout_s = roll, train_s = tr,
          rollout_share = colocated and r.step_s and roll / r.step_s or nil,
          samples_per_s = r.samples_per_s, usd_1k = r.cost_1k_prompts, fits = r.fits,
          note = r.fits and "" or ("does not fit: " .. tostring(r.why)),
        }
        if not r.fits then
          -- The times of a job that does not fit mean nothing.
          row.step_s, row.rollout_s, row.train_s, row.samples_per_s, row.usd_1k = nil
        end
        rows[#rows + 1] = row
        cell[model .. " " .. resp.name .. " " .. gpu .. " " .. row.placement] = row
      end
    end
  end
end

gp.report(rows, { format = opt.format, title = string.format(
  "GRPO step, %d prompts x %d, prompt %d tokens, responses exp-distributed (mean 3/8 of the "
  .. "limit), %d GPUs per job", opt.prompts, opt.group, opt.prompt_len, opt.gpus), columns = {
  { key = "model", label = "model" }, { key = "responses", label = "responses" },
  { key = "gpu", label = "gpu" }, { key = "placement", label = "placement" },
  { key = "layout", label = "layout" },
  { key = "step_s", label = "step (s)", fmt = "%.1f" },
  { key = "rollout_s", label = "rollout (s)", fmt = "%.1f" },
  { key = "train_s", label = "training (s)", fmt = "%.1f" },
  { key = "samples_per_s", label = "samples/s", fmt = "%.2f" },
  { key = "usd_1k", label = "USD per 1k prompts", fmt = "%.2f" },
  { key = "fits", label = "fits" }, { key = "note", label = "note" },
} })

if opt.format ~= "text" and opt.format ~= "markdown" then return end

-- The 7B with 8k responses on H100, colocated, three ways: GRPO as above;
-- PPO placed as OpenRLHF places it (train_ppo_ray: the critic and a reward
-- model of the actor's shape on half of the GPUs, a group of their own,
-- --critic_num_gpus_per_node with --colocate_critic_reward; the reference
-- with the actor, --colocate_actor_ref): the critic's and reward model's
-- forwards run beside the actor's and the critic trains while the actor
-- does; and a verl-style job after verl's
-- examples/grpo_trainer/run_qwen2-7b.sh (FSDP: ZeRO-3 on the HF stack,
-- gradient checkpointing, the vLLM engine at TP 2 holding 0.6 of a card,
-- the trainer's states resident through the rollout).
local JOBS = {
  { name = "GRPO (Megatron, states offloaded)", extra = {} },
  { name = "PPO, critic + reward model on their own GPUs", extra = { algo = "ppo",
    reward_model = true, critic_gpus = opt.gpus // 2, colocate_critic_reward = true } },
  { name = "verl-style GRPO (FSDP, vLLM TP 2)", extra = { stack = "hf", zero = 3,
    offload_states = false, rollout_tp = 2, rollout_memory = 0.6 } },
}
local jrows = {}
for _, j in ipairs(JOBS) do
  local r = best(MODELS[1], RESPONSES[1], GPUS[1], true, j.extra)
  jrows[#jrows + 1] = times_row(r, {
    job = j.name, layout = string.format("tp%d cp%d zero%d, rollout tp%d%s", r.tp, r.cp, r.zero,
      r.rollout_tp, r.critic_gpus and string.format(", actor %d + critic %d GPUs",
        r.train_gpus, r.critic_gpus) or ""),
  })
end
io.write("\n")
gp.report(jrows, { format = opt.format, title = string.format(
  "%s, %s responses, %d x %s, colocated: GRPO, PPO and a verl-style job", MODELS[1],
  RESPONSES[1].name, opt.gpus, GPUS[1]), columns = columns {
  { key = "job", label = "job" }, { key = "layout", label = "layout" } } })

-- The 7B with 32k responses on H100, separate pools, the rollouts k steps
-- ahead of training (gp.rl's staleness: NeMo RL's max_trajectory_age_steps
-- with in-flight weight updates): one step ahead each engine drains its
-- batch to its longest response; from two on the next steps' samples keep
-- its batch full, unless a batch's own drain over k is the longer.  With
-- refits that wait for every pending generation (refit_drain: NeMo RL's
-- in_flight_weight_updates left false) k steps ahead is one step ahead.
local AHEAD = { { k = 1 }, { k = 2 }, { k = 4 }, { k = 8 }, { k = 8, drain = true } }
local arows = {}
for _, a in ipairs(AHEAD) do
  local r = best(MODELS[1], RESPONSES[2], GPUS[1], false,
    { staleness = a.k, refit_drain = a.drain or nil })
  arows[#arows + 1] = times_row(r, {
    staleness = a.k, refits = a.drain and "drain" or "in flight",
    layout = string.format("tp%d cp%d (%d+%d)", r.tp, r.cp, r.rollout_gpus, r.train_gpus),
  })
end
io.write("\n")
gp.report(arows, { format = opt.format, title = string.format(
  "%s, %s responses, %d x %s, separate pools: the rollouts k steps ahead", MODELS[1],
  RESPONSES[2].name, opt.gpus, GPUS[1]), columns = columns {
  { key = "staleness", label = "steps ahead" }, { key = "refits", label = "refits" },
  { key = "layout", label = "layout" } } })

io.write("\nConclusion:\n")
-- 1. The cheapest and the fastest fitting run of each job.
for _, model in ipairs(MODELS) do
  for _, resp in ipairs(RESPONSES) do
    local cheap, fast
    for _, gpu in ipairs(GPUS) do
      for _, pl in ipairs { "colocated", "disaggregated" } do
        local c = cell[model .. " " .. resp.name .. " " .. gpu .. " " .. pl]
        if c.fits then
          if not cheap or c.usd_1k < cheap.usd_1k then cheap = c end
          if not fast or c.step_s < fast.step_s then fast = c end
        end
      end
    end
    if cheap then
      io.write(string.format("  %s, %s responses: cheapest %s %s (%.2f USD per 1k prompts); "
        .. "fastest %s %s (%.1f s a step).\n", model, resp.name, cheap.gpu, cheap.placement,
        cheap.usd_1k, fast.gpu, fast.placement, fast.step_s))
    else
      io.write(string.format("  %s, %s responses: fits on none of the cards at %d GPUs.\n",
        model, resp.name, opt.gpus))
    end
  end
end
-- 2. Colocated against disaggregated, card by card.
local wins, total = 0, 0
local longwins, longtotal = 0, 0
for _, model in ipairs(MODELS) do
  for _, resp in ipairs(RESPONSES) do
    for _, gpu in ipairs(GPUS) do
      local k = model .. " " .. resp.name .. " " .. gpu
      local a, b = cell[k .. " colocated"], cell[k .. " disaggregated"]
      if a.fits and b.fits then
        total = total + 1
        if b.step_s < a.step_s then wins = wins + 1 end
        if resp.name == "32k" then
          longtotal = longtotal + 1
          if b.step_s < a.step_s then longwins = longwins + 1 end
        end
      end
    end
  end
end
io.write(string.format("  Separate pools beat one colocated pool in %d of %d jobs where both fit "
  .. "(%d of %d with 32k responses).\n", wins, total, longwins, longtotal))
-- 3. Running the rollouts ahead: one step against eight, refits in flight
-- and draining.
local a1, a8, d8 = arows[1], arows[4], arows[5]
if a1.fits and a8.fits and d8.fits then
  io.write(string.format("  Eight steps ahead the 7B's 32k-response step takes %.1f s against "
    .. "%.1f s one step ahead (%.0f%% less); with refits that drain the engines it stays at "
    .. "%.1f s.\n", a8.step_s, a1.step_s, 100 * (1 - a8.step_s / a1.step_s), d8.step_s))
end
-- 4. How much of a colocated step is generation (rollout / step).
local shares = {}
for _, r in ipairs(rows) do
  if r.placement == "colocated" and r.fits then shares[#shares + 1] = r.rollout_s / r.step_s end
end
table.sort(shares)
if #shares > 0 then
  local med = shares[(#shares + 1) // 2]
  io.write(string.format("  The rollout is %.0f-%.0f%% of a colocated step (median %.0f%%): %s.\n",
    100 * shares[1], 100 * shares[#shares], 100 * med, med >= 0.5 and
      "RL fine-tuning is mostly inference, so decode bandwidth and KV-cache room weigh most"
      or "the update weighs as much as the generation"))
end
