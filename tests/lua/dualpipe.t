-- DualPipe (DeepSeek-V3 report arXiv:2412.19437 sec. 3.2.1, Table 2): rank r
-- holds stages r and pp-1-r, PP+1 micro-batches in flight, a bubble of
-- (PP/2 - 1)(F&B + B - 3W), the all-to-all and the pipeline sends under the
-- paired chunk's compute.  Run with ./gpuplan run tests/lua/dualpipe.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(20)

local function comp(r, n)
  for _, c in ipairs(r.components) do if c.name == n then return c.bytes end end
end

-- pp 2: the one rank pair holds both stages, the whole model -- "two copies
-- of the model parameters" over the pipeline.  Its parameters and weights
-- are a pp 1 job's (exact: the same sums), and so are the logits (the head
-- is on the rank with the embedding).  Activations: (pp + 1) / 2 = 1.5 of
-- each chunk's per-micro-batch tensors, whose sum is the pp 1 job's one
-- micro-batch: 1.5 x its activations.
local j = { model = "llama3-8b", gpu = "h100-sxm", gpus = 16, pp = 2, method = "pretrain",
            seq = 4096, schedule = "dualpipe" }
local d = gp.memory(j)
local one = gp.memory(t.with(j, { pp = 1, gpus = 8, schedule = "1f1b" }))
t.near(d.params, one.params, 1e-12, "pp 2: a rank holds the whole model")
t.near(comp(d, "weights"), comp(one, "weights"), 1e-12, "and its weights")
t.near(comp(d, "logits"), comp(one, "logits"), 1e-12, "the head beside the embedding")
t.near(comp(d, "activations"), 1.5 * comp(one, "activations"), 1e-12,
       "pp + 1 = 3 micro-batches of a chunk, half each chunk's")
t.is(d.inflight, 3, "pp + 1 in flight")

-- The bubble, pp 4: (4/2 - 1)(F + B/2) with F, B the slowest stage's
-- forward and backward per micro-batch (F&B = F + B, W = B/2).  Its compute
-- is F + B = compute / micro-batches, so F = 2X - Y and B = 2(Y - X) with X
-- the bubble and Y that sum; the stage is 8 layers and the head, whose
-- backward is about twice the forward like the layers' (GEMMs: input and
-- weight gradients), so B / F lands within 10% of the layer ops' ratio.
local tj = { model = "llama3-8b", gpu = "h100-sxm", gpus = 32, pp = 4, method = "pretrain",
             seq = 4096, global_batch = 64, zero = 1 }
local dp = gp.train(t.with(tj, { schedule = "dualpipe" }))
local f1 = gp.train(tj)
local function part(r, n) for _, p in ipairs(r.parts) do if p.name == n then return p.seconds end end end
local X = part(dp, "bubble")
local Y = part(dp, "compute") / dp.microbatches
local lf, lb = 0, 0
for _, o in ipairs(dp.ops) do lf, lb = lf + o.fwd, lb + o.bwd end
t.near((2 * (Y - X)) / (2 * X - Y), lb / lf, 0.10, "bubble: (pp/2 - 1)(F + B/2)")
t.ok(X < 0.5 * part(f1, "bubble"), "below 1F1B's (pp - 1)(F + B) fill and drain")
-- The all-to-all under the paired chunk's compute: a default of the
-- schedule (1F1B's default leaves it exposed), and said so.
local mj = { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 16, pp = 2, ep = 8,
             method = "pretrain", seq = 4096, global_batch = 64 }
local function hid(r, n) for _, p in ipairs(r.parts) do if p.name == n then return p.hidden or 0 end end end
local md = gp.train(t.with(mj, { schedule = "dualpipe" }))
t.ok(hid(md, "ep_comm") > 0 and hid(gp.train(mj), "ep_comm") == 0 and
     table.concat(md.defaults, " "):find("ep_overlap=true (dualpipe", 1, true) ~= nil,
     "dualpipe: the all-to-all under compute, a stated default")

-- Refusals, each naming the input.
t.raises(function() gp.train(t.with(tj, { pp = 3, gpus = 24, schedule = "dualpipe" })) end,
         "dualpipe needs an even pp", "odd pp", true)
t.raises(function() gp.train(t.with(tj, { vpp = 2, schedule = "dualpipe" })) end,
         "schedule dualpipe holds two chunks a rank by itself", "not with vpp", true)
-- The rule is the engine's alone (layout.c layout_check_dualpipe): the
-- binding gp.train_job asks before a step raises its words as a usage
-- refusal, and takes an even pp of 2 or more.
local core = require "gpuplan.core"
local okc, ec = pcall(core.check, "dualpipe", { pp = 3 })
t.ok(not okc and require("gpuplan.args").is_usage(ec), "core.check dualpipe: pp 3 refused as usage")
t.like(tostring(ec), "dualpipe needs an even pp of 2 or more and no vpp (got pp 3, vpp 1)",
       "... in layout_check's words", true)
t.ok(core.check("dualpipe", { pp = 2 }) and core.check("dualpipe", { pp = 4, vpp = 1 }),
     "... pp 2 and 4 taken")
t.raises(function() gp.train_job(t.with(tj, { pp = 3, gpus = 24, schedule = "dualpipe" })) end,
         "train: dualpipe needs an even pp of 2 or more and no vpp (got pp 3, vpp 1)",
         "gp.train_job refuses an odd pp before a step", true)

-- Each chunk holds what 1F1B's stage of its place holds, stage s pp - s
-- micro-batches (DualPipe's dualpipe.py: rank 0 runs pp - 2 forwards of
-- its own stage, one more with the mirror's first, then a backward and a
-- forward of the mirror each round: pp of stage 0 and 1 of stage pp-1 in
-- flight at the main step's first overlapped pair).  llama3-8b, pp 4, 32
-- layers, split 4 + 8 + 8 + 12: rank 0 holds 4 x 4 + 1 x 12 = 28 layer-
-- micro-batches of a (a = 1F1B's uniform stage 0, 4 x 8 layers, over 32);
-- split 12 + 8 + 8 + 4: 4 x 12 + 1 x 4 = 52.  Table 2's (pp + 1) / 2 of
-- each chunk would say 2.5 x 16 = 40 for both.  1e-12: the same sums.
local u = { model = "llama3-8b", gpu = "h100-sxm", gpus = 32, pp = 4, method = "pretrain",
            seq = 4096, global_batch = 64, zero = 1 }
local a = comp(gp.train(u).memory, "activations") / 32
local e1 = gp.train(t.with(u, { schedule = "dualpipe", first_stage_layers = 4,
                                last_stage_layers = 12 })).memory
local e2 = gp.train(t.with(u, { schedule = "dualpipe", first_stage_layers = 12,
                                last_stage_layers = 4 })).memory
t.near(comp(e1, "activations") / a, 28, 1e-12, "rank 0: 4 x stage 0 + 1 x stage 3 (4 + 12 layers)")
t.near(comp(e2, "activations") / a, 52, 1e-12, "rank 0: 4 x 12 + 1 x 4 layers")
t.is(e1.inflight, 5, "pp + 1 micro-batches of a chunk in flight in all")

-- DeepSeek-V3's pre-training layout (report sec. 3.2; tests/lua/
-- act_modules.t has its options).  DeepSeek's profile of it (deepseek-ai/
-- profile-data README: "Each chunk contains 4 MoE (Mixture of Experts)
-- layers", "aligns with DeepSeek-V3 pretraining settings") puts 14 x 4 of
-- the 58 MoE layers on the middle stages; the 3 dense layers open the
-- first stage and 2 MoE layers the last (NeMo RL's DeepSeek-V3 recipes on
-- pp 16 split it so too: the nemo-rl-*-deepseek-v3-h100-256 cases' 3 and 2
-- ends).  So split, every rank's two
-- chunks within the card's default 10% margin; a uniform split (4 layers
-- on stages 0-12, 3 on 13-15) puts 4 layers x 16 micro-batches on rank 0
-- and does not.
local ds = { model = "deepseek-v3", gpu = "h800-sxm", gpus = 2048, tp = 1, pp = 16, ep = 64,
             zero = 1, precision = "fp8", seq = 4096, global_batch = 15360, method = "pretrain",
             stack = "megatron", recipe = "deepseek-fp8",
             recompute_modules = "layernorm,mla_up_proj,moe_act", fp8_activations = true,
             schedule = "dualpipe" }
local split = gp.train(t.with(ds, { first_stage_layers = 3, last_stage_layers = 2 }))
t.ok(split.memory.fits, "DeepSeek-V3, 3 + 14 x 4 + 2 layers: fits at the default margin")
t.ok(not gp.train(ds).memory.fits, "uniform split: rank 0's first stage too deep to fit")
-- Its step against the published cost (act_modules.t): 2.664M H800
-- GPU-hours for 14.8T tokens is 19.9 s a step; within 10%.
t.near(split.step_s, 15360 * 4096 / (14.8e12 / (2.664e6 * 3600) * 2048), 0.10,
       "the split's step: the published 19.9 s within 10%")
