-- A prefix-cache hit (gp.infer's prefix_hit; engine/infer.h
-- infer_new_prompt): the share of the prompt tokens the engine finds in its
-- prefix cache.  Their prefill is skipped -- the step computes the other
-- tokens, which attend to the whole prompt's keys -- while the KV stays
-- held and every decode step reads it.  Run with
-- ./gpuplan run tests/lua/prefix_hit.t.
local t = require "tap"
local gp = require "gpuplan"
local cjson = require "cjson"
local validate = require "gpuplan.validate"

t.plan(25)

local job = { model = "llama3.1-8b", gpu = "h100-sxm", input = 2048, output = 256 }
local function op(ops, name)
  for _, o in ipairs(ops) do if o.name == name then return o end end
end

-- No hit is the plain prefill: prefix_hit 0 and no prefix_hit price alike
-- (the engine's cached tokens 0 either way), exactly.
local plain = gp.infer(job)
local zero = gp.infer(t.with(job, { prefix_hit = 0 }))
t.is(zero.ttft_s, plain.ttft_s, "prefix_hit 0: the TTFT of no hit")
t.is(zero.tokens_per_s, plain.tokens_per_s, "prefix_hit 0: the tokens/s of no hit")

-- Half the prompt cached: the one-prompt prefill (TTFT) computes 2048 x
-- 0.5 = 1024 tokens, the last of them at context 2048 (they follow the
-- cached 1024).
local half = gp.infer(t.with(job, { prefix_hit = 0.5 }))
t.is(half.prefill.tokens, 1024.0, "hit 0.5 of 2048: the prefill computes 1024 tokens")
t.is(half.prefill.ctx, 2048.0, "... the last of them at context 2048, after the cached keys")

-- Their attention: q = 1024 queries at positions 1025 ... 2048, each over
-- its causal keys, mean ctx - (q - 1) / 2 = 2048 - 1023 / 2 = 1536.5
-- (engine/infer.c step_kv_mean), 4 FLOP a key a head dimension (QK^T and
-- PV, 2 each): 4 x 1024 x 1536.5 x 32 heads x 128 = 2.578e10 a layer.
-- Without the cache, 2048 queries at mean 1024.5 keys.  The same
-- arithmetic in another order: within 1e-12.
t.near(op(half.prefill_ops, "attention").flop, 4 * 1024 * 1536.5 * 32 * 128, 1e-12,
  "hit 0.5: the new tokens' attention over the cached keys and their own")
t.near(op(plain.prefill_ops, "attention").flop, 4 * 2048 * 1024.5 * 32 * 128, 1e-12,
  "no hit: the whole prompt's causal attention")

-- The linears run over the computed tokens only: the qkv and MLP GEMMs of
-- the hit-0.5 prefill are those of a plain 1024-token prompt (2 x 1024 x
-- 4096 x 6144 for qkv: the same product, exact).
local short = gp.infer(t.with(job, { input = 1024 }))
t.is(op(half.prefill_ops, "qkv").flop, op(short.prefill_ops, "qkv").flop,
  "hit 0.5 of 2048: the qkv GEMM of a 1024-token prompt")
t.is(op(half.prefill_ops, "mlp_up").flop, op(short.prefill_ops, "mlp_up").flop,
  "... and the MLP's")
t.ok(half.ttft_s < plain.ttft_s and half.ttft_s > short.ttft_s,
  "TTFT between a 1024-token prompt's and the 2048-token one's (the new tokens read the cached keys)")

-- The KV is still each request's and read whole: the memory, the batch the
-- KV holds and every decode step are those of no hit.
t.is(half.kv_per_seq, plain.kv_per_seq, "the KV a sequence holds is not changed by the hit")
t.is(half.max_batch_kv, plain.max_batch_kv, "... nor the batch the KV holds")
t.is(half.itl_s, plain.itl_s, "... nor the decode step, which reads the whole prompt's KV")

-- Without chunked prefill the steady state is B prompts' prefill shares
-- and output - 1 decode steps (engine/infer_run.c run_times): 256 B /
-- (B share + 255 itl) on runtime kernels (no graph: no eager term).  The
-- share is a pb-prompt prefill's time over pb, pb = floor(8192 / 512) =
-- 16 prompts of 512 computed tokens at hit 0.75: within 1e-9 (the
-- engine's arithmetic in another order).
local kj = t.with(job, { runtime = "kernels", prefix_hit = 0.75 })
local k = gp.infer(kj)
t.near(k.tokens_per_s, k.batch * 256 / (k.batch * k.prefill_share_s + 255 * k.itl_s), 1e-9,
  "hit 0.75, kernels: B x 256 / (B share + 255 itl)")
local kplain = gp.infer(t.with(kj, { prefix_hit = 0 }))
t.ok(k.prefill_share_s < kplain.prefill_share_s / 3,
  "hit 0.75: a prompt's prefill share under a third of the uncached one's "
  .. "(a quarter of the linears' work, more of attention's)")

-- Every prompt but its last token cached (prefix_hit 1): one token is
-- computed for its logits (vLLM's max_cache_hit_length = prompt_length -
-- 1), and the defaults say so.
local all = gp.infer(t.with(job, { prefix_hit = 1 }))
t.is(all.prefill.tokens, 1.0, "prefix_hit 1: the last prompt token computed")
local said = table.concat(all.defaults, "; ")
t.like(said, "2047 of 2048 prompt tokens from the prefix cache", "... said in the defaults")

-- vLLM (chunked prefill, the prompts in the decode steps): more of the
-- cache, fewer prompt tokens in the steps, more output tokens/s.
local v = t.with(job, { runtime = "vllm", gpu = "h100-sxm" })
local v0, v5, v9 = gp.infer(v), gp.infer(t.with(v, { prefix_hit = 0.5 })),
  gp.infer(t.with(v, { prefix_hit = 0.9 }))
t.ok(v0.tokens_per_s < v5.tokens_per_s and v5.tokens_per_s < v9.tokens_per_s,
  "vLLM: tokens/s rises with the hit (0, 0.5, 0.9)")

-- A finite run (requests, run_finite) prefills the computed tokens only.
local f0 = gp.infer(t.with(v, { requests = 64, batch = 64 }))
local f9 = gp.infer(t.with(v, { requests = 64, batch = 64, prefix_hit = 0.9 }))
t.ok(f9.tokens_per_s > f0.tokens_per_s, "64 requests at once: faster with hit 0.9")

-- The --target search: the ITL with the other requests' prompts falls
-- with the hit, so a batch within the limit is at least as large and the
-- GPUs no more.
local p0 = gp.infer_plan(t.with(job, { target = 50000, itl_max = 0.03, input = 4096 }))
local p8 = gp.infer_plan(t.with(job, { target = 50000, itl_max = 0.03, input = 4096,
                                       prefix_hit = 0.8 }))
t.ok(p8.gpus < p0.gpus, string.format("target 50000 tok/s: %d GPUs with hit 0.8, %d without",
  p8.gpus, p0.gpus))

-- Bad values are refused, naming the argument.
for _, bad in ipairs { -0.1, 1.5, "half" } do
  local ok, err = pcall(gp.infer, t.with(job, { prefix_hit = bad }))
  t.ok(not ok and tostring(err):find("prefix_hit", 1, true),
    "prefix_hit = " .. tostring(bad) .. " refused, naming it: " .. tostring(err))
end
-- ... with the MoE serving options too (which price it: prefix_hit_moe.t).
local ok, err = pcall(gp.infer, { model = "deepseek-v3", gpu = "h200-sxm", gpus = 16, tp = 16,
                                  ep = 16, dp_attention = true, prefix_hit = 1.5 })
t.ok(not ok and tostring(err):find("prefix_hit", 1, true),
  "MoE serving refuses prefix_hit 1.5, naming it: " .. tostring(err))

-- The validation reader: an infer case's workload.prefix_hit reaches
-- gp.infer (a ROCm benchmark_latency row with and without it), a train
-- case's is refused, naming it.
local cases = cjson.decode(io.open("validation/cases.json"):read("a"))
local function case(id)
  for _, c in ipairs(cases) do if c.id == id then return c end end
end
local cat = gp.catalog()
local c = case("rocm-vllm0100-llama31-405b-mi300x-tp8-fp8-2048-2048-bs128")
local with = validate.predict(c, cat)
c.workload.prefix_hit = nil
local without = validate.predict(c, cat)
t.ok(with.predicted > 1.2 * without.predicted,
  string.format("405B batch 128, 2048-token prompts: %.0f tok/s with the hit, %.0f without",
    with.predicted, without.predicted))
local tc
for _, x in ipairs(cases) do if x.kind == "train" then tc = x break end end
tc.workload.prefix_hit = 0.5
local path = os.tmpname()
local fh = io.open(path, "w")
fh:write(cjson.encode({ tc }))
fh:close()
local rok, rerr = pcall(validate.read, path)
os.remove(path)
t.ok(not rok and tostring(rerr):find("workload.prefix_hit", 1, true),
  "a train case stating prefix_hit is refused, naming it: " .. tostring(rerr))
