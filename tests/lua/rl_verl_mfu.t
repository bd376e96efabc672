-- The `mfu` metric of an rl validation case is verl's perf/mfu/actor
-- computed the way verl computes it (verl/workers/megatron_workers.py
-- update_actor, verl/utils/flops_counter.py at f6f9100): its FlopsCounter's
-- FLOPs of the step's samples, times ppo_epochs, over the card's promised
-- peak, the world size and the update_policy time (the actor_update phase).
-- Run with ./gpuplan run tests/lua/rl_verl_mfu.t.
local t = require "tap"
local gp = require "gpuplan"
local rl = require "gpuplan.rl"
local predict = require "gpuplan.predict.rl"
local V = require "gpuplan.validate"

local cat = gp.catalog()

-- The prediction's own step, caught as the predictor makes it.
local orig, seen = rl.rl, nil
rl.rl = function(o) seen = orig(o); return seen end
local function actor_s(r)
  local p = t.phase(r, "actor_update")
  return p.seconds, p.gpus
end

-- A dense verl case: Qwen3-8B on 8 H100s, 32 prompts x 8 = 256 samples of
-- a 100-token prompt and a 900-token response (response_max 900: every
-- response that long), one optimizer step, no reference; full recompute
-- and the states offloaded for the rollout so that it fits.
local case = {
  id = "verl-mfu-test", kind = "rl",
  model = { name = "Qwen3 8B", layers = 36, hidden = 4096, heads = 32, kv_heads = 8,
            head_dim = 128, ffn_hidden = 12288, ffn_gated = true, vocab = 151936,
            tied_embeddings = false },
  hardware = { gpu = "h100-sxm", gpus = 8, gpus_per_node = 8 },
  parallel = { tp = 1, pp = 1, dp = 8, recompute = "full" },
  workload = { method = "grpo", precision = "bf16", seq_len = 1000, framework = "verl" },
  rl = { prompts = 32, group = 8, prompt_len = 100, response_len = 900, response_max = 900,
         train_global_batch = 256, colocated = true, rollout_tp = 1, ref_model = false,
         offload_states = true },
  measured = { metric = "mfu", unit = "fraction", value = 0.3 },
  source = { id = "github.com/volcengine/verl (test)", title = "verl", where = "test" },
}
local p, why = predict(case, cat)
if not p then t.diag(why) end
local ts, gpus = actor_s(seen)
-- verl's _estimate_qwen2_flops: N = (mlp + attention projections) layers
-- + embedding and LM head = (3 x 4096 x 12288 + 4096 x (4096 + 1024 +
-- 1024 + 4096)) x 36 + 2 x 151936 x 4096 = 192937984 x 36 + 1244659712 =
-- 8190427136; the step's tokens 256 x 1000; seqlen_square_sum 256 x
-- 1000^2; attention 12 x that x head_dim 128 x heads 32 x layers 36.
local N = 8190427136
local flops = 6 * N * 256 * 1000 + 12 * (256 * 1000 ^ 2) * 128 * 32 * 36
t.is(gpus, 8, "the world: the 8 GPUs the actor updates on")
-- promised_flops: H100 989e12 (verl's get_device_flops, the catalog's)
t.near(p and p.value or 0, flops / (989e12 * 8 * ts), 1e-12,
  "mfu = verl's FLOPs / (989 TFLOP/s x 8 GPUs x the actor_update seconds)")
-- Trained in fp8 the promised peak is still the bf16 one: verl's
-- get_device_flops looks the card up by name.
case.workload.precision = "fp8"
local p8 = predict(case, cat)
local t8 = actor_s(seen)
t.near(p8 and p8.value or 0, flops / (989e12 * 8 * t8), 1e-12, "fp8: over the bf16 989 TFLOP/s")

-- DeepSeek-V3 (the shipped 96-H20 case): _estimate_deepseek_v3_flops.
-- Per MoE layer the router 7168 x 256 and 3 x 7168 x 2048 x (8 + 1
-- shared); MLA: 7168 x 1536 + 128 x 192 x 1536 (q), 7168 x (512 + 64),
-- 128 x (192 - 64 + 128) x 512 (kv up), 128 x 128 x 7168 (out) =
-- 187105280; 58 MoE layers + 3 dense (3 x 7168 x 18432 + MLA) + 2 x 129280
-- x 7168: N = 37551276032.  Attention 12 x sum(s^2) x 61 x 192 x 128, the
-- sum over 768 samples of E[(150 + L)^2] with E[L] = 1960 and E[L^2] the
-- clipped exponential's (the step's response_m2).
local ds
local all = V.read("validation/cases.json")
for _, c in ipairs(all.cases or all) do
  if c.id == "verl-0.5-grpo-deepseek-v3-h20-96-mfu" then ds = c end
end
local pd = predict(ds, cat)
local tds, gds = actor_s(seen)
local sq = 768 * (150 ^ 2 + 2 * 150 * 1960 + seen.response_m2)
local fds = 6 * 37551276032 * 768 * (150 + 1960) + 12 * sq * 61 * 192 * 128
t.is(gds, 96, "DeepSeek-V3's world: 96 GPUs")
-- promised_flops: H20 148e12
t.near(pd and pd.value or 0, fds / (148e12 * 96 * tds), 1e-12,
  "DeepSeek-V3's mfu: verl's MLA count over 148 TFLOP/s x 96 x its actor_update")
t.ok(seen.response_m2 > 1960 ^ 2, "E[L^2] above the mean's square (an exponential's spread)")

-- Its recipe builds the model through mbridge (use_mbridge=True), whose
-- DeepseekV3Bridge routes in fp32, and overrides the actor's router to
-- fp32: the case states fp32, which beside the fused activation prices
-- as the 16-bit router and keeps the verl profile's fp64 (config_converter's,
-- the gating GEMMs at the H20's 1 TFLOPS of FP64) from applying.  Without
-- the statement the profile's fp64 applies and the update is slower.
local dds = table.concat(pd.defaults, "; ")
t.like(dds, "moe_router_dtype=fp32 %(stated; with the fused activation", "the stated fp32 said")
t.ok(not dds:find("moe_router_dtype=fp64", 1, true), "and the profile's fp64 not taken")
local d64 = {}
for k, v in pairs(ds) do d64[k] = v end
d64.parallel = t.with(ds.parallel, {})
d64.parallel.moe_router_dtype = nil
local p64 = predict(d64, cat)
local t64 = actor_s(seen)
t.like(table.concat(p64.defaults, "; "), "moe_router_dtype=fp64 %(config_converter",
  "not stated: the verl profile's fp64")
t.ok(t64 > tds, string.format("fp64's gating GEMMs lengthen the update: %.1f s over %.1f", t64, tds))

-- The same mbridge config leaves the router unbalanced: "moe_router_load_
-- balancing_type=none" with an expert bias that moves 0.001 an optimizer
-- step (ISEEKYAN/mbridge d7ddea6, quoted in the case's notes); the case
-- states parallel.moe_balance none, which the predictor hands on to gp.rl
-- as the option, and no profile default is said for it.  The hottest of
-- the 8 EP ranks (256 / 8 = 32 experts each) then receives model_ep_skew
-- = 1 + (1.564 / 0.48008) sqrt(ln 8 / ln 32) sqrt(8 / 32) 0.47906 = 1.6045
-- times the mean (engine/model.c: TensorRT-LLM's no-EPLB spread, 491.6 of
-- 1024, less chance's 1024, over El = 32; a training step's picks are
-- many): the experts' GEMMs and the dispatch grow by at most that, the
-- attention and the CPU optimizer step not at all, so the update
-- lengthens by more than 1 and less than 1.6045 times.
local opts_seen
rl.rl = function(o) opts_seen = o; seen = orig(o); return seen end
predict(ds, cat)
t.is(opts_seen.moe_balance, "none", "the stated moe_balance none handed on to gp.rl")
t.ok(not dds:find("moe_balance=", 1, true), "stated: no profile default said for it")
local dbal = {}
for k, v in pairs(ds) do dbal[k] = v end
dbal.parallel = t.with(ds.parallel, { moe_balance = "balanced" })
predict(dbal, cat)
local tbal = actor_s(seen)
local sd = 491.6 / 1024
local skew = 1 + 1.564 / sd * math.sqrt(math.log(8) / math.log(32)) *
  math.sqrt((sd * sd - 1 / 1024) * 8 / 32)
t.ok(tds > tbal and tds < skew * tbal, string.format(
  "unbalanced routing lengthens the update: %.1f s over %.1f balanced, under x %.4f",
  tds, tbal, skew))
rl.rl = function(o) seen = orig(o); return seen end

-- A policy from a base checkpoint (rl.base_checkpoint) without a stated
-- mean: the mean response is rl.BASE_RESPONSE_SHARE of the limit, the
-- median of 16 published base-checkpoint DAPO runs, (1827.308 +
-- 2819.061) / 2 / 20480 = 0.11344 (lua/gpuplan/rl.lua); of the shipped
-- Qwen3-30B-A3B rows' 8192-token limit floor(0.11344 x 8192 + 0.5) =
-- 929 tokens, where a checkpoint not said to be base takes RESPONSE_SHARE
-- 0.696: floor(0.696 x 8192 + 0.5) = 5702.
t.near(rl.BASE_RESPONSE_SHARE, 0.1134367432, 1e-9, "the base share: (1827.308 + 2819.061) / 2 / 20480")
local qb
for _, c in ipairs(all.cases or all) do
  if c.id == "verl-0.5-grpo-qwen3-30b-a3b-h20-8-mfu" then qb = c end
end
t.is(qb.rl.base_checkpoint, true, "the shipped row says its checkpoint is a base one")
local pb = predict(qb, cat)
t.is(seen.response_len, 929, "base checkpoint: the mean 0.11344 x 8192")
t.like(table.concat(pb.defaults, "; "), "response_len=929 %(assumed: 0.113 x response_max, "
  .. "the median mean/limit of published DAPO runs from base checkpoints", "and it says so")
-- Qwen3-30B-A3B (model_type qwen3_moe): verl's _estimate_qwen2_moe_flops.
-- Per layer the router 2048 x 128 = 262144 and top_k 8 experts of 3 x
-- 2048 x 768: 37748736; the attention projections 2048 x (32 x 128 + 2
-- x 4 x 128 + 32 x 128) = 18874368, head_dim 128 from the config's
-- head_dim (getattr(config, "head_dim", ...)), not hidden / heads = 64;
-- 56885248 x 48 layers + 2 x 151936 x 2048 = N = 3352821760.  Attention
-- 12 x sum(s^2) x 128 x 32 x 48 over 8192 samples of E[(150 + L)^2],
-- E[L] = 929; promised 148e12 (get_device_flops "H20"), world 8.
local tq, gq = actor_s(seen)
local sqq = 8192 * (150 ^ 2 + 2 * 150 * 929 + seen.response_m2)
local fq = 6 * 3352821760 * 8192 * (150 + 929) + 12 * sqq * 128 * 32 * 48
t.is(gq, 8, "Qwen3-30B-A3B's world: 8 GPUs")
t.near(pb and pb.value or 0, fq / (148e12 * 8 * tq), 1e-12,
  "Qwen3-30B-A3B's mfu: verl's qwen2_moe count over 148 TFLOP/s x 8 x its actor_update")
qb.rl.base_checkpoint = nil
predict(qb, cat)
t.is(seen.response_len, 5702, "no base checkpoint: RESPONSE_SHARE's 0.696 x 8192")
-- A stated mean wins over either share.
qb.rl.base_checkpoint, qb.rl.response_len = true, 2000
predict(qb, cat)
t.is(seen.response_len, 2000, "a stated response_len wins")

-- verl's rollout asks vLLM for each sampled token's log-probability
-- (vllm_rollout_spmd.py at 65c59c7: logprobs=0) in the worker's own
-- process (external_launcher): the profile charges logprob_host,
-- rl.ENGINE_LOGPROB a sequence a decode step.  The test case's 8 one-GPU
-- engines hold 256 / 8 = 32 samples each, every response 900 tokens
-- (response_max 900), so each engine runs 32 sequences through 900
-- decode steps: 28,800 sequence-steps; the host time beside the GPU's
-- grows by 28,800 x ENGINE_LOGPROB against the same options without it.
-- 0.2%: a prefill step of the 32 would add 32 sequence-steps (0.11%).
rl.rl = function(o)
  local r = orig(o)
  local o2 = {}
  for k, x in pairs(o) do o2[k] = x end
  o2.logprob_host = nil
  seen = { with = r, opts = o, without = orig(o2) }
  return r
end
local copy = t.copy
local cl = copy(case)
cl.workload.precision = "bf16"
cl.measured = { metric = "step_time_s", unit = "s", value = 100 }
predict(cl, cat)
t.is(seen.opts.logprob_host, rl.ENGINE_LOGPROB, "verl: the log-probabilities' host work charged")
t.near((seen.with.rollout.host - seen.without.rollout.host) / rl.ENGINE_LOGPROB, 32 * 900, 0.002,
  "about 32 x 900 sequence-steps of it")
rl.rl = function(o) seen = orig(o); return seen end

-- gp.rl's own base_checkpoint (the option the case field maps to): with
-- response_max alone the same 929 of 8192, said in its defaults; a
-- non-boolean refused by name.
rl.rl = orig
local jb = gp.rl { model = "qwen3-30b-a3b", gpu = "h20", gpus = 8, ep = 8, response_max = 8192,
                   base_checkpoint = true }
t.is(jb.response_len, 929, "gp.rl base_checkpoint: 0.11344 x 8192")
t.like(table.concat(jb.defaults, "; "), "response_len=929 %(assumed: 0.113 x response_max", "said")
t.raises(function() gp.rl { model = "qwen3-30b-a3b", gpu = "h20", gpus = 8, response_max = 8192,
                            base_checkpoint = "yes" } end,
  "rl: base_checkpoint must be true or false (got string 'yes')", "a non-boolean refused", true)
t.done_testing()
