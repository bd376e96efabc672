-- Group-limited MoE routing stated by the model (moe.groups,
-- moe.group_top_k: DeepSeek-V3's config.json "n_group": 8, "topk_group":
-- 4): a token's top_k experts come from its best group_top_k groups only,
-- which concentrates a rank's picks and raises the busiest EP rank's
-- dropless skew (engine/model.c model_moe_pick_var, model_ep_chance_skew;
-- tests/c/t_moe_skew.c checks the closed forms against a Monte Carlo).
-- Here: the field reaches the engine from a script's model table, the
-- catalog and a case file, and bad groups are refused with the reason.
-- Run with ./gpuplan run tests/lua/moe_groups.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(16)

-- DeepSeek-V3's routing (256 experts, top 8, 8 groups of 32, 4 picked) on
-- a small body (4 layers, hidden 1024), 32 H100s (four DGX nodes), EP 32:
-- 8 experts a rank, one micro-batch of 4096 tokens a rank (global batch
-- 32 over DP 32).  The EP group routes 32 x 4096 = 131,072 tokens a pass;
-- a rank receives 131072 x 8 x 8 / 256 = 32,768 picks on average.
local function model(g, gk)
  return { layers = 4, hidden = 1024, heads = 8, ffn_hidden = 4096, vocab = 32000,
           moe = { experts = 256, top_k = 8, ffn_hidden = 512, groups = g, group_top_k = gk } }
end
local job = { gpu = "h100-sxm", gpus = 32, ep = 32, method = "pretrain", seq = 4096,
              global_batch = 32 }
local grouped = gp.train(t.with(job, { model = model(8, 4) }))
local flat = gp.train(t.with(job, { model = model() }))

-- Per-token variance of a rank's picks (hand, as in t_moe_skew.c):
--  ungrouped, hypergeometric 8 of 256, 8 the rank's:
--    8 (8/256)(248/256)(248/255) = 0.2355392;
--  grouped, the rank's 8 experts inside one group of 32: the group is
--    picked with p = 4/8, then 8 of the 128 picked experts, mean
--    m = 8 x 8 / 128 = 0.5, variance v = 8 (8/128)(120/128)(120/127) =
--    0.4429134; var = p (v + m^2) - (p m)^2 = 0.2839567.
-- Skew = 1 + max_dev(32) sqrt(131072 var) / 32768, max_dev(32) =
-- Tippett's 2.0696688 x sqrt(32/31) = 2.1027856:
--  ungrouped 1 + 2.1027856 x 175.71 / 32768 = 1.011275 (docs/validation.md
--  quotes 1.0113), grouped 1 + 2.1027856 x 192.92 / 32768 = 1.012380
--  (1.0124).
local function skew(var) return 1 + 2.1027856 * math.sqrt(131072 * var) / 32768 end
local vu = 8 * (8 / 256) * (248 / 256) * (248 / 255)
t.near(vu, 0.2355392, 1e-6, "ungrouped variance 0.2355392 (hand rounding)")
t.near(skew(vu), 1.011275, 1e-6, "ungrouped skew 1.0113")
t.near(skew(0.2839567), 1.012380, 1e-6, "grouped skew 1.0124")

-- The skew is not a result field: read through the EP all-to-all, each
-- token's 8 copies out and back, 4096 x 8 x 1024 x 2 B a rank, times the
-- busiest rank's skew, and the router's probabilities (4096 x 8 x 2 B,
-- skewed the same): 4 layers x (4 + 2) exchanges, each as gp.comm prices
-- it on the same 32 ranks (tests/lua/moe_balance.t's rule).  1e-9: the
-- hand constants' 7-8 digits against the engine's Simpson integral of
-- Tippett's E[max], through an all-to-all close to linear in its bytes.
local function ep_comm(r)
  for _, p in ipairs(r.parts) do if p.name == "ep_comm" then return p.seconds end end
end
local function a2a(bytes)
  return gp.comm { op = "all_to_all", bytes = bytes, gpus = 32, system = "dgx-h100" }.time
end
local disp, probs = 4096 * 8 * 1024 * 2, 4096 * 8 * 2
local function want(s) return 4 * (4 * a2a(disp * s) + 2 * a2a(probs * s)) end
t.near(ep_comm(flat), want(skew(vu)), 1e-9, "no groups: the busiest rank at 1.0113 the mean")
t.near(ep_comm(grouped), want(skew(0.2839567)), 1e-9,
       "8 groups, 4 picked: the busiest rank at 1.0124 the mean")
t.ok(grouped.step_s > flat.step_s, "group-limited routing: a slower step")
-- One group limits nothing (Kimi K2's "n_group": 1, "topk_group": 1), nor
-- do all groups picked: the ungrouped step.
t.is(gp.train(t.with(job, { model = model(1, 1) })).step_s, flat.step_s, "1 group of 1: ungrouped")
t.is(gp.train(t.with(job, { model = model(8, 8) })).step_s, flat.step_s, "8 of 8 groups: ungrouped")

-- The catalog's DeepSeek-V3 states its config.json's groups.
local ds = gp.catalog():get("models", "deepseek-v3")
t.ok(ds.moe.groups == 8 and ds.moe.group_top_k == 4, "catalog deepseek-v3: 8 groups, 4 picked")

-- Bad groups: refused with the reason, in the one wording (engine/model.c
-- model_moe_groups_check, gpuplan.schema moe_groups_problem).
t.raises(function() gp.train(t.with(job, { model = model(6, 4) })) end,
  "moe.groups (6) must divide moe.experts (256): the router splits the experts into equal groups",
  "6 groups of 256 experts refused", true)
t.raises(function() gp.train(t.with(job, { model = model(8, 9) })) end,
  "moe.group_top_k must be in 1..groups (8), got 9", "9 of 8 groups refused", true)
local few = model(64, 2)
-- 64 groups of 4, 2 picked: 8 experts to pick 8 from, the bound itself
t.ok(pcall(gp.train, t.with(job, { model = few })), "top 8 from 2 groups of 4: at the bound, priced")
few.moe.top_k, few.moe.group_top_k = 8, 1
t.raises(function() gp.train(t.with(job, { model = few })) end,
  "moe.top_k (8) must be at most group_top_k x experts / groups (1 x 4 = 4): a token's experts "
  .. "come from its picked groups", "top 8 from 1 group of 4 refused", true)
t.raises(function() gp.train(t.with(job, { model = model(8) })) end,
  "moe.groups (8) and moe.group_top_k (0) go together", "groups without group_top_k refused", true)

-- A case file's model: the fields reach the prediction (a shipped
-- DeepSeek-V3 case without them predicts the ungrouped, faster step), and
-- bad ones are refused at read with the field's name.
local case
for _, c in ipairs(t.shipped_cases()) do
  if c.id == "mbridge2602-gb300-deepseekv3-fp8mx" then case = c end
end
local V = require "gpuplan.validate"
local _, cs = t.read_case(case)
local bare = t.copy(case)
bare.model.moe.groups, bare.model.moe.group_top_k = nil, nil
local _, bs = t.read_case(bare)
local pg, pb = V.predict(cs[1], gp.catalog()), V.predict(bs[1], gp.catalog())
-- the metric is a rate (tokens a second a GPU): the grouped step is slower
t.ok(pg.predicted < pb.predicted, string.format("case model's groups priced: %.2f < %.2f",
  pg.predicted, pb.predicted))
bare.model.moe.groups, bare.model.moe.group_top_k = 8, 5
bare.model.moe.top_k = 200
local okr, e = t.read_case(bare)
t.like(not okr and e or "", "field 'model.moe.top_k': moe.top_k (200) must be at most "
  .. "group_top_k x experts / groups (5 x 32 = 160)", "a case's bad top_k: refused, named", true)
