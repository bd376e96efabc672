-- MTP speculative decoding at large batch on SGLang: the runtime's cap on
-- running requests while it speculates (serve.lua M.SPEC_RUNNING, engine
-- serve.h spec_running) and the same server without drafts reported
-- beside it (r.no_mtp).
local t = require "tap"
local gp = require "gpuplan"
local serve = require "gpuplan.serve"

-- a copy of o with the fields of x set over it and those named in drop
-- left out
local function but(o, x, drop)
  local c = t.with(o, x)
  for _, k in ipairs(drop or {}) do c[k] = nil end
  return c
end

-- gpustack's DeepSeek-R1 run on one 8 x H200 node (SGLang v0.5.3, TP8,
-- 1000 ShareGPT prompts at once, no --max-running-requests), DeepSeek-V3's
-- shape: the catalog model.
local a = { model = "deepseek-v3", gpu = "h200-sxm", gpus = 8, tp = 8, weights = "fp8",
            runtime = "sglang", input = 219, output = 201, requests = 1000, mtp = 1 }

t.is(serve.SPEC_RUNNING, 48, "SGLang's max_running_requests under speculation: 48")

-- TP attention: the instance (8 GPUs) runs 48 requests at once; a GPU's
-- share of its attention group's batch is 48 / 8 = 6 (exact).  The KV
-- alone holds far more (the run without drafts decodes the burst's
-- 1000 / 8 = 125 a GPU).
local r = gp.infer(a)
t.ok(r.fits, "the burst fits")
t.is(r.batch_per_gpu, 6, "TP8 with MTP: 48 / 8 = 6 sequences per GPU")
t.is(r.max_batch_kv, 48, "... 48 an instance, the runtime's cap")
t.ok(r.kv_seqs > 48, "the KV holds more than the cap (the cap binds, not the KV)")
t.is(r.no_mtp.batch_per_gpu, 125, "without drafts: the burst's 1000 / 8 = 125 per GPU")

-- Both are reported: the run without drafts is the same server priced with
-- mtp off, so it equals gp.infer of the same arguments without mtp
-- (exact: the same engine call).
-- (prefill_tokens at its default for runtime sglang on an H200, 8192:
-- SGLang's chunked_prefill_size for a card under 160 GiB, gpuplan.infer
-- M.sglang_chunk; given, it keeps the MoE serving model: gp.infer without
-- any serving option prices one model's replicas).
local r0 = gp.infer(but(a, { prefill_tokens = 8192 }, { "mtp" }))
t.is(r0.moe, true, "without mtp, prefill_tokens given: the serving model")
t.near(r.no_mtp.tokens_per_s, r0.tokens_per_s, 1e-12, "no_mtp is the server without drafts")
t.ok(r.tokens_per_s < r.no_mtp.tokens_per_s,
     "at the burst's batch MTP loses: 48 running requests against 1000")

-- DP attention: SGLang's scheduler divides max_running_requests by
-- dp_size, so each of the 8 ranks runs floor(48 / 8) = 6, one GPU's (exact);
-- on 16 GPUs of one EP16 instance floor(48 / 16) = 3.
local dp = gp.infer(but(a, { dp_attention = true, ep = 8 }, { "tp" }))
t.is(dp.batch_per_gpu, 6, "DP attention over 8 ranks: floor(48 / 8) = 6 a rank")
local dp16 = gp.infer(but(a, { gpus = 16, ep = 16, dp_attention = true, requests = 2000 },
                                { "tp" }))
t.is(dp16.batch_per_gpu, 3, "DP attention over 16 ranks: floor(48 / 16) = 3 a rank")
-- ... and over more ranks than 48 none is left a rank: SGLang asserts
-- "max_running_request is zero"; here a no-fit answer that says so.
local dp64 = gp.infer(but(a, { gpu = "h100-sxm", gpus = 64, ep = 64, dp_attention = true,
                                  requests = 6400 }, { "tp" }))
t.ok(not dp64.fits and dp64.why:find("fewer than the 64 DP attention ranks", 1, true),
     "64 DP ranks: 48 / 64 floors to none, said")

-- What the user sets is the user's --max-running-requests: a batch, a
-- max_batch, or another runtime (TensorRT-LLM and vLLM keep their own
-- limits under speculation) lifts the 48.
local given = gp.infer(but(a, { batch = 32 }, { "requests" }))
t.is(given.batch_per_gpu, 32, "a batch given is run as given")
local mb = gp.infer(t.with(a, { max_batch = 512 }))
t.is(mb.batch_per_gpu, 64, "max_batch 512 on TP8: 512 / 8 = 64 per GPU (the KV holds more)")
local tr = gp.infer(t.with(a, { runtime = "trtllm" }))
t.is(tr.batch_per_gpu, 125, "TensorRT-LLM: no such cap, the burst's 125 per GPU")
t.ok(not table.concat(tr.defaults, " "):find("max running requests", 1, true),
     "... and no word of it")
t.ok(table.concat(r.defaults, " "):find("max running requests 48", 1, true),
     "SGLang's cap is said in the defaults")

-- At small batches MTP still gains (the decode step reads the weights
-- either way): batch 1 per GPU given, the drafts' tokens ride the same
-- weight reads.
local small = gp.infer(but(a, { batch = 1 }, { "requests" }))
t.ok(small.tokens_per_s > small.no_mtp.tokens_per_s, "batch 1 per GPU: MTP gains")
t.is(r0.no_mtp, nil, "no comparison without drafts")

-- gp.infer_plan with mtp runs the same search without drafts beside it
-- (p.no_mtp).  DeepSeek-V3 on H200, 1024 in / 1024 out, fp8.  The plan
-- without drafts is the plan of the same arguments without mtp (exact:
-- the same search).
local pa = { model = "deepseek-v3", gpu = "h200-sxm", weights = "fp8", input = 1024,
             output = 1024, target = 20000, itl_max = "50ms" }
local p = gp.infer_plan(t.with(pa, { mtp = 1 }))
local q = gp.infer_plan(pa)
t.is(p.no_mtp.gpus, q.gpus, "no_mtp.gpus: the plan without mtp")
t.is(p.no_mtp.layout, q.layout, "... and its layout")
t.is(q.no_mtp, nil, "no comparison without drafts")
-- At a 50 ms ITL the search without drafts runs hundreds of sequences an
-- instance; with them SGLang runs 48: MTP needs more GPUs.
t.ok(p.gpus > q.gpus, "ITL 50 ms, 20000 tok/s: MTP needs more GPUs than without")
-- At a 20 ms ITL the batch is small either way and the drafts' tokens ride
-- the weight reads: MTP needs fewer.
local p2 = gp.infer_plan(t.with(pa, { mtp = 1, target = 2000, itl_max = "20ms" }))
t.ok(p2.no_mtp.fits and p2.gpus < p2.no_mtp.gpus,
     "ITL 20 ms, 2000 tok/s: MTP needs fewer GPUs than without")

t.done_testing()
