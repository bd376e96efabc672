-- DualPipe's step paces on a rank's pair of stages (engine/train.c
-- dual_pair): rank r holds stage r of one model copy and stage pp-1-r of
-- the other and runs half the step's micro-batches through each
-- (DeepSeek-V3 report arXiv:2412.19437 sec. 3.2.1: "the shallowest layers
-- (including the embedding layer) and deepest layers (including the output
-- head) on the same PP rank").  Run with ./gpuplan run tests/lua/dualpipe_pairs.t.
local t = require "tap"
local gp = require "gpuplan"

-- Llama 3 8B (32 layers) over pp 4, the ends split 6/10 and 10/6 (the
-- middle stages 8 each).  Rank 0 holds stage 0 (embedding + first-stage
-- layers) and stage 3 (last-stage layers + head): 16 layers, the embedding
-- and the head either way, so its pair costs the same, and ranks 1-2
-- hold two middle stages of 8 in both.  Under DualPipe the two steps are
-- the same (tolerance 1e-9 relative: the same terms summed in another
-- order); under 1F1B the slowest single stage differs (10 layers + head
-- against 10 layers + embedding lookup), so they are not.
local j = { model = "llama3-8b", gpu = "h100-sxm", gpus = 32, pp = 4, method = "pretrain",
            seq = 4096, global_batch = 64, zero = 1, schedule = "dualpipe" }
local a = gp.train(t.with(j, { first_stage_layers = 6, last_stage_layers = 10 }))
local b = gp.train(t.with(j, { first_stage_layers = 10, last_stage_layers = 6 }))
t.near(a.step_s, b.step_s, 1e-9 * a.step_s, "dualpipe: the ends' pair costs the same either way")
local a1 = gp.train(t.with(j, { first_stage_layers = 6, last_stage_layers = 10,
                                schedule = "1f1b" }))
local b1 = gp.train(t.with(j, { first_stage_layers = 10, last_stage_layers = 6,
                                schedule = "1f1b" }))
t.ok(math.abs(a1.step_s - b1.step_s) > 1e-3 * a1.step_s,
  "1f1b: the slowest single stage differs (the head's stage against the embedding's)")

-- The pair's mean, not its heavier stage: ends of 4 and 12 layers.  Rank 0
-- holds 4 + 12 = 16 layers with the embedding and head, ranks 1-2 two
-- middle stages of 8: 16 layers each.  Under 1F1B the 12-layer stage sets
-- the pace, 12/8 of a middle stage's layers; under DualPipe the rank pair
-- is about the even split's (the ends' embedding and head are in both),
-- so its step is within 2% of the 8/8 split's and well under the 1F1B one.
local even = gp.train(t.with(j, { first_stage_layers = 8, last_stage_layers = 8 }))
local skew = gp.train(t.with(j, { first_stage_layers = 4, last_stage_layers = 12 }))
local skew1 = gp.train(t.with(j, { first_stage_layers = 4, last_stage_layers = 12,
                                   schedule = "1f1b" }))
t.near(skew.step_s, even.step_s, 0.02 * even.step_s,
  "dualpipe 4/12: the rank pair's 16 layers pace as the even split's")
t.ok(skew1.step_s > 1.2 * even.step_s, "1f1b 4/12: the 12-layer stage paces the step")
-- DeepSeek-V3 as the README prices it (61 layers, the first 3 dense, pp 16,
-- one MTP module on the last stage with the head).  Ends of 3 and 2 layers
-- leave 56 MoE layers, 4 to each middle stage: a middle rank holds 8 MoE
-- layers, rank 0 the embedding, 3 dense layers, 2 MoE layers, the MTP
-- module (one MoE layer and its projection) and the head -- lighter, so the
-- middle ranks pace the step and the MTP module does not move it (the same
-- step within 1e-9; the memory does grow).  On an even split the last
-- stage's rank pairs 3 or 4 layers with the module and the head and the
-- step grows.
local ds = { model = "deepseek-v3", gpu = "h800-sxm", gpus = 2048, tp = 1, pp = 16, ep = 64,
             zero = 1, precision = "fp8", seq = 4096, global_batch = 15360, stack = "megatron",
             recipe = "deepseek-fp8", recompute_modules = "layernorm,mla_up_proj,moe_act",
             fp8_activations = true, schedule = "dualpipe" }
local ends = t.with(ds, { first_stage_layers = 3, last_stage_layers = 2 })
local no_mtp = gp.train(ends)
local mtp = gp.train(t.with(ends, { mtp_layers = 1 }))
t.near(mtp.step_s, no_mtp.step_s, 1e-9 * no_mtp.step_s,
  "deepseek-v3 3/2 ends: the MTP module on the light end rank leaves the pace")
t.ok(mtp.memory.total > no_mtp.memory.total, "and it takes memory")
local even = gp.train(t.with(ds, { mtp_layers = 1 }))
t.ok(even.step_s > 1.05 * mtp.step_s, "even split: the MTP module's rank paces the step")
t.done_testing()
