-- SGLang's expert parallelism without DeepEP (its default --moe-a2a-backend
-- none, serve.lua a2a_runtime, engine SERVE_A2A_NONE): with TP attention
-- every GPU of the EP group holds the step's tokens, its StandardDispatcher
-- exchanges none, and the MoE output is all-reduced over the group.
-- Run: ./gpuplan run tests/lua/sglang_ep_none.t
local t = require "tap"
local gp = require "gpuplan"
t.plan(13)

local base = { gpu = "b200", gpus = 8, tp = 8, ep = 8, weights = "fp8", runtime = "sglang",
              input = 1024, output = 1024, concurrency = 8, model = "deepseek-v3" }
local function run(extra) return gp.infer(t.with(base, extra)) end

local none = run()
t.ok(t.said(none, "a2a=none (SGLang's default", true), "SGLang with TP attention: a2a none, said")
t.is(none.decode.a2a, 0, "no dispatch or combine in the decode step")
t.is(none.decode.dispatch_bytes, 0, "no dispatched bytes")
-- The collectives: DeepSeek-V3's 3 dense and 58 MoE layers.  Under DeepEP
-- (two-batch overlap off, one micro-batch) a MoE layer's TP traffic is one
-- all-reduce's worth (reduce-scatter after the attention, all-gather after
-- the combine), a dense layer's two: 3 x 2 + 58 x 1 = 64 all-reduces of the
-- step's tokens.  With no exchange both of a MoE layer's stay: 3 x 2 +
-- 58 x 2 = 122 of the same size.  Ratio 122 / 64; 1e-9 relative (sums).
local deepep = run({ a2a = "deepep", two_batch_overlap = false })
t.ok(deepep.decode.a2a > 0, "a2a deepep: the all-to-all priced")
t.near(none.decode.tp_comm / deepep.decode.tp_comm, 122 / 64, 1e-9,
       "tp_comm: 122 all-reduces against 64")
-- vLLM keeps DeepEP's default, and says it as assumed; stated, not said.
local vl = gp.infer(t.with(base, { runtime = "vllm", two_batch_overlap = false }))
t.ok(vl.decode.a2a > 0, "runtime vllm: the all-to-all still priced")
t.ok(t.said(vl, "a2a=deepep (DeepEP's all-to-all", true), "runtime vllm: a2a=deepep said")
t.ok(not t.said(deepep, "a2a=deepep (", true), "a2a deepep stated: not said")
-- Refused where tokens must move: DP attention, and two-batch overlap.
t.raises(function() run({ a2a = "none", dp_attention = true }) end,
         "a2a none exchanges no tokens", "a2a none with DP attention: refused")
t.raises(function() run({ two_batch_overlap = true, a2a = "none" }) end,
         "there is no all-to-all to hide", "a2a none with two-batch overlap: refused", true)
-- two-batch overlap asked of SGLang's default (a2a not given): refused
-- under two_batch_overlap, naming none as the runtime's default, not as an
-- a2a the caller gave; with a2a deepep it runs.
t.raises(function() run({ two_batch_overlap = true }) end,
         "two_batch_overlap under runtime sglang with TP attention: its default a2a none",
         "two-batch overlap on SGLang's default a2a: refused, the default named", true)
t.ok(run({ two_batch_overlap = true, a2a = "deepep" }).decode.a2a > 0,
     "two-batch overlap with a2a deepep: the all-to-all priced")
-- DP attention under SGLang keeps DeepEP (its runs state it).
t.ok(run({ dp_attention = true }).decode.a2a > 0, "SGLang with DP attention: DeepEP's all-to-all")
