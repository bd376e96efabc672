-- An MoE router nothing balances (gp.train's moe_balance = "none": no
-- auxiliary loss, no bias updates, the router frozen, as NeMo RL's GRPO
-- recipes run it) sends the hottest expert-parallel rank more than the
-- mean, and every layer waits for it: its experts' GEMMs and the
-- all-to-all to and from it grow by model_ep_skew (engine/model.c, from
-- TensorRT-LLM's measurement without EPLB).
-- Run with ./gpuplan run tests/lua/moe_balance.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(12)

-- Qwen3-30B-A3B (128 experts, top 8) on 16 H100s in two DGX nodes, EP 16:
-- 8 experts a rank, 4096 tokens a micro-batch, 4 micro-batches (64 / 16).
local job = { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 16, ep = 16,
              method = "pretrain", seq = 4096, global_batch = 64 }
local bal = gp.train(job)
local none = gp.train(t.with(job, { moe_balance = "none" }))
t.is(gp.train(t.with(job, { moe_balance = "balanced" })).step_s, bal.step_s,
     "balanced is the default")

-- The skew (engine/model.c model_ep_skew_at, the rule serving without
-- EPLB uses too): 1 + t sqrt(ln N / ln 32) sqrt(p^2 8 / El + 1 / picks)
-- from TensorRT-LLM's measurement without EPLB (tech blog 4 Table 1, EP 32
-- with 8 experts a rank: std 491.6 over a mean of 1024 picks, hottest
-- excess 1.564): t = 1.564 / (491.6 / 1024), p^2 = (491.6 / 1024)^2 -
-- 1 / 1024 the placement's share.  A training step's picks are many (4096
-- x 8 a rank): no chance term.  Here El = 128 / 16 = 8, N = 16:
-- 1 + 3.257803 x 0.8944272 x 0.4790600 = 2.39592 (checked through the
-- all-to-all below: the engine's skew is not a result field).
local sd = 491.6 / 1024
local skew = 1 + 1.564 / sd * math.sqrt(math.log(16) / math.log(32)) *
  math.sqrt(sd * sd - 1 / 1024)

-- The all-to-all: each token's 8 copies out and back in each pass, 4096 x
-- 8 x 2048 hidden x 2 B per rank, the hottest rank's skew times that; 4
-- micro-batches x 48 layers x (2 forward + 2 backward) exchanges, each as
-- gp.comm prices it on the same 16 ranks (1e-12: the same collectives);
-- and the router's probabilities, one bf16 value a copy (4096 x 8 x 2 B,
-- skewed the same), in one all-to-all more each pass (engine/
-- train_layer.c a2a_meta).
local function ep_comm(r)
  for _, p in ipairs(r.parts) do if p.name == "ep_comm" then return p.seconds end end
end
local function a2a(bytes)
  return gp.comm { op = "all_to_all", bytes = bytes, gpus = 16, system = "dgx-h100" }.time
end
local disp, probs = 4096 * 8 * 2048 * 2, 4096 * 8 * 2
-- Balanced and dropless (the default: capacity_factor 0, Megatron-Core's
-- moe_expert_capacity_factor None), the busiest rank still receives what
-- chance leaves (engine/model.c model_ep_chance_skew): the EP group routes
-- 16 x 4096 = 65,536 tokens a pass, each sending a rank of 8 of the 128
-- experts a hypergeometric count, variance 8 (8/128)(120/128)(120/127) =
-- 0.4429134, mean 0.5; the hottest of 16 exchangeable normals summing to
-- a constant lies Tippett's 1.7659914 x sqrt(16/15) = 1.8239081 sds over
-- the mean: 1 + 1.8239081 sqrt(65536 x 0.4429134) / 32768 = 1.009483.
-- 1e-9: the hand constants' 8 digits against the engine's Simpson
-- integral, through an all-to-all close to linear in its bytes.
local cs = 1 + 1.8239081 * math.sqrt(65536 * 0.4429134) / 32768
t.near(ep_comm(bal), 4 * 48 * (4 * a2a(disp * cs) + 2 * a2a(probs * cs)), 1e-9,
       "balanced, dropless: the busiest rank by chance, 1.0095 the mean")
-- A capacity-bound dispatch (capacity_factor 1: each expert's buffer
-- padded to its even share, the rest dropped) runs the padded buffer on
-- every rank: the mean dispatch exactly (the same collectives: 1e-12).
t.near(ep_comm(gp.train(t.with(job, { capacity_factor = 1 }))),
       4 * 48 * (4 * a2a(disp) + 2 * a2a(probs)), 1e-12,
       "capacity_factor 1: the padded buffer, the mean dispatch")
t.near(ep_comm(none), 4 * 48 * (4 * a2a(disp * skew) + 2 * a2a(probs * skew)), 1e-12,
       "none: the hottest rank's dispatch, skew times the mean")

-- The experts' GEMMs take skew times the FLOPs on the same weights: at
-- 4096 x 8 / 8 = 4096 tokens an expert (compute-bound) nearly skew times
-- the time, never more (the weights' reads do not grow); the attention's
-- GEMMs do not change.
local ratio = t.op(none, "moe_up").fwd / t.op(bal, "moe_up").fwd
t.ok(ratio > 2.0 and ratio <= skew, string.format("moe_up forward x %.3f, in (2, %.3f]",
  ratio, skew))
ratio = t.op(none, "moe_down").bwd / t.op(bal, "moe_down").bwd
t.ok(ratio > 2.0 and ratio <= skew, string.format("moe_down backward x %.3f, in (2, %.3f]",
  ratio, skew))
t.is(t.op(none, "qkv").fwd, t.op(bal, "qkv").fwd, "attention's GEMMs unchanged")

-- Without expert parallelism every rank holds all experts: nothing to skew.
local one = t.with(job, { ep = 1, gpus = 8, global_batch = 32 })
t.is(gp.train(t.with(one, { moe_balance = "none" })).step_s, gp.train(one).step_s,
     "EP 1: the same step")

-- A rank takes at most min(top_k, El) of a token's top_k picks, so the
-- skew stops at N min(k, El) / k: 2 experts, top 2, over EP 2 sends every
-- token to both ranks alike -- the step is the balanced one.
local two = { model = { layers = 4, hidden = 1024, heads = 8, ffn_hidden = 4096, vocab = 32000,
                        moe = { experts = 2, top_k = 2, ffn_hidden = 1024 } },
              gpu = "h100-sxm", gpus = 2, ep = 2, method = "pretrain", seq = 4096,
              global_batch = 8 }
t.is(gp.train(t.with(two, { moe_balance = "none" })).step_s, gp.train(two).step_s,
     "every expert on every token: no skew")

-- The option's values are declared: anything else is an error naming it.
local ok, e = pcall(gp.train, t.with(job, { moe_balance = "aux" }))
t.like(not ok and tostring(e) or "", "moe_balance", "moe_balance aux: refused, named")
-- A dense model has no router to leave unbalanced: refused, not ignored.
ok, e = pcall(gp.train, t.with(job, { model = "llama3-8b", ep = 1, moe_balance = "none" }))
t.like(not ok and tostring(e) or "", "moe_balance none is how a MoE router spreads tokens; "
       .. "llama3%-8b has no experts", "moe_balance none on a dense model: refused, named")

-- NeMo RL's GRPO recipes set moe_router_load_balancing_type none: the
-- validation predictor assumes it for an MoE policy with EP, and says so.
local V = require "gpuplan.validate"
local row
for _, c in ipairs(V.read("validation/cases.json")) do
  if c.id == "nemo-rl-0.5-grpo-qwen3-30b-a3b-h100-32-onpolicy" then
    row = V.predict(c, gp.catalog())
  end
end
t.like(row and row.defaults or "", "moe_balance=none", "NeMo RL's MoE rows: moe_balance none")
