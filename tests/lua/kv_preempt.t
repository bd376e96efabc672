-- vLLM V1's preemption in a finite burst (gp.infer's kv_policy preempt,
-- runtime vllm's default; engine/infer_run.c infer_burst_preempt, whose
-- steps tests/c/t_infer.c derives by hand): V1 admits a request on its
-- prompt's blocks, and when a running request's next token finds no block
-- it preempts the last-admitted one and recomputes it later.  A burst
-- whose requests' whole lengths overflow the cache is walked so; one whose
-- peak fits never preempts and keeps infer_burst's walk.
-- Run with ./gpuplan run tests/lua/kv_preempt.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(11)

-- Llama 3.1 8B on one H100 (bf16 KV: 32 layers x K and V x 8 heads x 128
-- x 2 B = 128 KiB a token), 1000 requests of 128 in / 4096 out sent at
-- once, max_num_seqs 1024.
local job = { model = "llama3.1-8b", gpu = "h100-sxm", runtime = "vllm", input = 128,
              output = 4096, requests = 1000, max_batch = 1024 }
local pre = gp.infer(t.with(job, { kv_policy = "preempt" }))
local mean = gp.infer(t.with(job, { kv_policy = "mean" }))
local max = gp.infer(t.with(job, { kv_policy = "max" }))

t.is(gp.infer(job).tokens_per_s, pre.tokens_per_s, "runtime vllm: kv_policy preempt is the default")
t.ok(t.said(gp.infer(job), "^kv_policy=preempt %(vLLM V1"), "the default is said")
-- The budget holds kv_budget / 131072 B = about 448K tokens.  kv_policy
-- mean admits kv_budget / (128 + 2048 tokens) = 205 requests and never
-- evicts, though at their end they hold 205 x 4224 = 866K tokens: too
-- fast.  kv_policy max (no eviction, each reserving its 4224 tokens) holds
-- 105 and idles the cache early in each request's life: too slow.  V1
-- fills the cache with more than 105 requests early and preempts as they
-- grow (their 128-token prompts cheap to recompute): between the two.
t.ok(pre.tokens_per_s < mean.tokens_per_s,
  string.format("overflowing burst: preemption slower than the mean-length admission (%.0f < %.0f)",
    pre.tokens_per_s, mean.tokens_per_s))
t.ok(pre.tokens_per_s > max.tokens_per_s,
  string.format("... and faster than reserving whole lengths (%.0f > %.0f)", pre.tokens_per_s,
    max.tokens_per_s))
-- 128 out: 1000 x 256 = 256K tokens at the peak fit the 448K: nothing is
-- preempted and the run is the mean policy's, the same walk.
local short = t.with(job, { output = 128 })
t.is(gp.infer(t.with(short, { kv_policy = "preempt" })).tokens_per_s,
  gp.infer(t.with(short, { kv_policy = "mean" })).tokens_per_s,
  "a burst whose peak fits: the same run")
-- Another runtime keeps its own: SGLang retracts by its own rule.
t.ok(t.said(gp.infer(t.with(job, { runtime = "sglang" })), "^kv_policy=mean$"),
  "runtime sglang: kv_policy mean")
local ok, err = pcall(gp.infer, t.with(job, { kv_policy = "evict" }))
t.ok(not ok and tostring(err):find("kv_policy must be 'mean', 'max' or 'preempt'", 1, true),
  "an unknown kv_policy is refused by name")
-- kv_policy preempt where the steps do not mix prompt chunks: the walk
-- (infer_run.c run_finite) needs V1's mixed steps, and the run was priced
-- as kv_policy mean in silence; refused, naming the runtime.
for _, o in ipairs { { runtime = "sglang" }, { runtime = "trtllm" },
                     { runtime = "vllm", chunked_prefill = false } } do
  local ok2, err2 = pcall(gp.infer, t.with(job, t.with(o, { kv_policy = "preempt" })))
  t.ok(not ok2 and tostring(err2):find("kv_policy preempt walks vLLM V1's steps", 1, true)
    and tostring(err2):find("runtime " .. o.runtime .. " here", 1, true),
    "kv_policy preempt under " .. o.runtime .. (o.chunked_prefill == false and
      " without chunked prefill" or "") .. " is refused: " .. tostring(err2))
end
-- TensorRT-LLM with chunked context stated mixes chunks: the walk runs,
-- and the overflowing burst is slower than its mean-length admission (as
-- vLLM's above).
local tc = t.with(job, { runtime = "trtllm", chunked_prefill = true })
t.ok(gp.infer(t.with(tc, { kv_policy = "preempt" })).tokens_per_s <
  gp.infer(t.with(tc, { kv_policy = "mean" })).tokens_per_s,
  "trtllm with chunked_prefill: kv_policy preempt walks the burst")
