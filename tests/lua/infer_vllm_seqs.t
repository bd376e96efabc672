-- runtime vllm caps the batch at vLLM's max_num_seqs where the user gives
-- no max_batch (lua/gpuplan/infer.lua, M.vllm_limits): the V1 scheduler
-- admits no request past it ("if len(self.running) ==
-- self.max_num_running_reqs: break", vllm/v1/core/sched/scheduler.py), and
-- EngineArgs' defaults make it 1024 on cards of >= 70 GiB other than A100,
-- else 256.  It was TensorRT-LLM's max_batch_size, 2048: a 40 GiB card's
-- as-many-as-fit batch of a small model reached 2048, beside vLLM's
-- 2048-token step budget no prompt token fit, and the job was refused
-- ("chunked prefill needs max_num_tokens (2048) above the decode batch
-- (2048)") for two defaults that vLLM never pairs.
-- Run with ./gpuplan run tests/lua/infer_vllm_seqs.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(5)

-- Llama 3.2 1B, 128 in / 128 out: its KV is 32 KiB a token (16 layers x
-- 8 kv heads x 64 x 2 x 2 B), 8 MiB a sequence, so some 3,000 sequences
-- fit a 40 GiB card and over 8,000 an H100: max_num_seqs binds on both.
local function run(gpu, extra)
  local a = { model = "llama3.2-1b", gpu = gpu, input = 128, output = 128, runtime = "vllm" }
  for k, v in pairs(extra or {}) do a[k] = v end
  return gp.infer(a)
end
local ok, a100 = pcall(run, "a100-sxm-40gb")
t.ok(ok and a100.batch == 256, "vllm on an A100 40GB: vLLM's max_num_seqs 256, not refused ("
  .. tostring(ok and a100.batch or a100) .. ")")
local said = false
for _, d in ipairs(ok and a100.defaults or {}) do
  said = said or d:find("max_batch=256 (vLLM's max_num_seqs", 1, true) ~= nil
end
t.ok(said, "... and the cap said among the defaults")
t.is(run("h100-sxm").batch, 1024, "vllm on an H100: vLLM's max_num_seqs 1024")
-- The user's max_batch is the user's; trtllm keeps TensorRT-LLM's 2048.
t.is(run("h100-sxm", { max_batch = 512 }).batch, 512, "a given max_batch stands")
t.is(run("h100-sxm", { runtime = "trtllm" }).batch, 2048, "trtllm: TensorRT-LLM's max_batch_size 2048")
