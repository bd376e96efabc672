-- A concurrency the data-parallel replicas split unevenly (gpuplan.infer
-- split_replicas): N requests in flight over R replicas behind a router
-- that balances them (round-robin, or least-outstanding) leave ceil(N/R)
-- on N mod R replicas and floor(N/R) on the rest.  It was refused ("does
-- not split evenly over 8 replicas"), which left 13 of the 16 AIPerf
-- Qwen3-0.6B rows (eight vLLM replicas at concurrency 10, 50, 100, 500)
-- unpredicted.  The even runs are the engine's own at 2 and 1 a replica;
-- the split's figures are combinations of them, exact but for the
-- floating point of a few products and sums: 1e-9.
local t = require "tap"
local gp = require "gpuplan"
local base = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, tp = 1 }
local function at(n) return gp.infer(t.with(base, { concurrency = n })) end
local two, one, ten = at(16), at(8), at(10)
t.ok(two.fits and one.fits and ten.fits, "8 H100 replicas of Llama 3 8B fit at 16, 8 and 10")
-- 10 over 8: 10 mod 8 = 2 replicas at ceil(10/8) = 2 streams, the other
-- 6 at floor(10/8) = 1.
t.is(ten.batch_split.hi, 2, "10 over 8: 2 streams on the busier replicas")
t.is(ten.batch_split.hi_replicas, 2, "... on 10 mod 8 = 2 of them")
t.is(ten.batch_split.lo, 1, "1 stream on the rest")
t.is(ten.batch_split.lo_replicas, 6, "... 8 - 2 = 6 of them")
-- Throughput, the replicas' sum: the engine's tokens/s at 16 is 8
-- replicas at 2 each, at 8 is 8 at 1; two of the first and six of the
-- second make (2 x tps16 + 6 x tps8) / 8.
local tps = (2 * two.tokens_per_s + 6 * one.tokens_per_s) / 8
t.near(ten.tokens_per_s, tps, 1e-9, "tokens/s: 2/8 of the 2-stream run + 6/8 of the 1-stream run")
t.near(ten.per_gpu, tps / 8, 1e-9, "per GPU: the sum over 8 GPUs")
-- Per request: the mean over the 10 in flight, 2 x 2 = 4 at the
-- 2-stream replicas' ITL, 6 x 1 = 6 at the 1-stream ones'.
t.near(ten.itl_s, (4 * two.itl_s + 6 * one.itl_s) / 10, 1e-9, "ITL: the mean of 10 requests, 4 at batch 2, 6 at batch 1")
t.near(ten.stream_tokens_per_s, (4 * two.stream_tokens_per_s + 6 * one.stream_tokens_per_s) / 10,
  1e-9, "per-user rate: the requests' mean of their own")
t.near(ten.ttft_s, (4 * two.ttft_s + 6 * one.ttft_s) / 10, 1e-9, "TTFT: the requests' mean")
-- Under load (vLLM V1's chunked prefill, two a replica: ttft_loaded)
-- the TTFT's parts are the busier group's, the 16-in-flight run's
-- exactly, while ttft_s is the requests' mean as above, no longer wait +
-- steps x step: the 1-stream replicas' requests take one prompt's
-- prefill alone.
local function vat(n) return gp.infer(t.with(base, { concurrency = n, runtime = "vllm" })) end
local vtwo, vone, vten = vat(16), vat(8), vat(10)
t.ok(vtwo.ttft_loaded and vten.ttft_loaded and vone.ttft_loaded == nil,
  "vLLM: loaded at 2 a replica, not at 1")
t.ok(vten.ttft_wait_s == vtwo.ttft_wait_s and vten.ttft_steps == vtwo.ttft_steps
  and vten.ttft_step_s == vtwo.ttft_step_s, "the parts: the 2-stream replicas' own")
t.near(vten.ttft_s, (4 * vtwo.ttft_s + 6 * vone.ttft_s) / 10, 1e-9,
  "vLLM TTFT: the requests' mean, 4 loaded and 6 alone")
-- More in flight never serves fewer tokens/s nor a faster stream: the
-- split lies between its two even neighbours (ceil: 16 in flight
-- priced, the 519-for-395 error the refusal was made for).
t.ok(one.tokens_per_s < ten.tokens_per_s and ten.tokens_per_s < two.tokens_per_s,
  "tokens/s between 8 and 16 in flight")
-- Fewer than the replicas: 3 over 8 runs 3 at 1 stream, 5 idle: 3/8 of
-- the 1-stream run's throughput, its latencies unchanged.
local three = at(3)
t.is(three.batch_split.hi_replicas, 3, "3 over 8: three replicas at 1")
t.is(three.batch_split.lo, 0, "... the other five idle")
t.near(three.tokens_per_s, 3 / 8 * one.tokens_per_s, 1e-9, "3 over 8: 3/8 of eight 1-stream replicas")
t.near(three.itl_s, one.itl_s, 1e-9, "3 over 8: the 1-stream ITL")
t.like(table.concat(ten.defaults, "; "), "concurrency=10 over 8 replicas: 2 run 2 streams, 6 run 1", "the split is said", true)
-- An even split is the engine's own run, untouched.
t.ok(two.batch_split == nil, "16 over 8: no split")
-- A burst's requests over an uneven concurrency: its walk prices one
-- share a replica; refused, naming both.
t.raises(function() gp.infer(t.with(base, { concurrency = 10, requests = 100 })) end,
  "concurrency 10 does not split evenly over 8 replicas of 1 GPU with requests = 100", "requests with an uneven concurrency refused", true)
t.done_testing()
