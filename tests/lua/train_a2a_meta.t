-- Megatron-Core's alltoall token dispatcher exchanges more than the
-- tokens (engine/train_layer.c a2a_meta): its preprocess all-gathers
-- every rank's per-expert token counts over the EP group (experts x 8
-- bytes a rank, int64) on the compute stream, a forward op of the layer
-- ("moe_counts"); and with the router's weights multiplied in the
-- experts' activation it sends the permuted probabilities, one value
-- per token copy in the activations' dtype, in an all-to-all of their
-- own each pass (their gradient back in the backward).
-- Run with ./gpuplan run tests/lua/train_a2a_meta.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(6)

local op = t.op
-- Qwen3-30B-A3B (128 experts, top 8), EP 8 on one DGX H100, one
-- sequence of 4096 tokens a micro-batch (tp 1: Tn = 4096), bf16.
-- capacity_factor 1: every rank runs the mean rows (the padded buffer), which the counts here take; the dropless default's chance skew is tests/lua/moe_balance.t's
local job = { model = "qwen3-30b-a3b", capacity_factor = 1, gpu = "h100-sxm", gpus = 8, ep = 8, batch = 1,
              seq = 4096, global_batch = 8, stack = "megatron", zero = 1 }
local function run(x) return gp.train(t.with(job, x)) end
local function coll(o, bytes)
  return gp.comm { system = "dgx-h100", gpus = 8, op = o, bytes = bytes }.time
end

local act, comb = run { moe_probs = "activation" }, run { moe_probs = "combine" }
-- The counts: 128 experts x 8 B from each of 8 ranks, an 8192-byte
-- all-gather (the total buffer, nccl-tests' size) on the node's NVLink,
-- priced by the collective model the job's other collectives use; the
-- job's placed EP group is the node's 8 GPUs, so the two agree to float
-- rounding.
t.near(op(act, "moe_counts").fwd, coll("all_gather", 128 * 8 * 8), 1e-12,
       "the counts' all-gather: experts x 8 B a rank over the EP group")
t.is(op(act, "moe_counts").bwd, 0, "the counts carry no gradient: no backward")
t.near(op(comb, "moe_counts").fwd, op(act, "moe_counts").fwd, 1e-15,
       "the counts are gathered wherever the probabilities multiply")
-- The probabilities: 4096 tokens x 8 copies x 2 B = 65536 B a rank, one
-- all-to-all more in each pass of the layer's EP time (the tokens'
-- dispatch and combine are the same in both jobs).
local pa = coll("all_to_all", 4096 * 8 * 2)
local ep = function(r) for _, p in ipairs(r.parts) do if p.name == "ep_comm" then return p.seconds end end end
-- ep_comm sums both passes over 48 layers x 1 micro-batch a GPU.
t.near(ep(act) - ep(comb), 2 * 48 * pa, 1e-9,
       "moe_probs activation: the probabilities' all-to-all, each pass")
-- The flex and all-gather dispatchers exchange their metadata inside
-- their own calls: neither has these ops.
t.is(op(run { moe_dispatcher = "flex" }, "moe_counts"), nil, "flex: none")
t.is(op(run { ep = 1 }, "moe_counts"), nil, "EP 1: no dispatcher exchange")

t.done_testing()
