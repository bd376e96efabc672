-- Small items last round's reviewers found (followups14): one block a fix.
-- Run with ./gpuplan run tests/lua/followups14.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(6)

-- 1. A run whose prompts outgrow the step's token budget is budget-bound
-- (infer_run.c, mixed_steps): D = max_num_tokens steps / (input + steps)
-- decodes a step beside the prompt tokens.  At 6144 in / 2 out (steps 1)
-- in a 2048-token budget D = 2048 / 6145 = 1/3 of a decode, and the mixed
-- step priced it as a step of 1/3 sequence, which infer_step refuses
-- ("batch >= 1"), so the run failed with that internal message.  Now a
-- fraction of a decode pays that share of one decode's attention, as
-- mixed_time already did.  Here each request costs its 6144 prompt tokens
-- (3 full budgets of 2048) and a decode or two: one more output token
-- adds 1 token of ~6147 to the budget and one decode's attention read, so
-- requests/s (tokens/s / output) at 2 and 3 out agree within 2% (the
-- extra token is 0.02%; the rest is the attention of a decode at 6146
-- keys against the prompt chunks').
do
  local job = { model = "llama3-8b", gpu = "h100-sxm", input = 6144, runtime = "vllm",
                max_num_tokens = 2048 }
  local ok, r2 = pcall(gp.infer, t.with(job, { output = 2 }))
  t.ok(ok and r2.tokens_per_s > 0 and r2.tokens_per_s < math.huge,
       "6144 in / 2 out in a 2048-token budget prices: " .. tostring(ok and r2.tokens_per_s or r2))
  t.ok(ok and r2.ttft_s > 0 and r2.itl_s > 0 and r2.itl_s < math.huge, "its TTFT and ITL are finite")
  local r3 = gp.infer(t.with(job, { output = 3 }))
  t.near(ok and r2.tokens_per_s / 2 or 0, r3.tokens_per_s / 3, 0.02,
         "prefill-bound: requests/s at 2 out as at 3 out")
end

-- 3. fsdp_version picks PyTorch FSDP's implementation (FSDP1's flat
-- parameters or FSDP2's fully_shard), which the engine prices only in a
-- step that shards (train_stage.c fsdp_copies returns at once without
-- one).  On stack hf at zero 0 or 1 (DDP) it was accepted and changed
-- nothing; now it is a usage error naming what turns FSDP on.
do
  local job = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, stack = "hf", fsdp_version = 2 }
  t.raises(function() gp.train(job) end,
    "train: fsdp_version chooses PyTorch FSDP's implementation, and this step has no FSDP "
    .. "(zero 0 on stack hf): turn it on with fsdp = full_shard or shard_grad_op "
    .. "(or zero = 3 or 2), or leave fsdp_version out", "zero 0 on stack hf: refused", true)
  t.raises(function() gp.train(t.with(job, { zero = 1 })) end, "(zero 1 on stack hf)",
    "zero 1 (ZeRO-1 is no FSDP sharding of the weights): refused", true)
  t.ok(pcall(gp.train, t.with(job, { fsdp = "full_shard" })), "with fsdp = full_shard it is taken")
end
