-- MLA's prompt projections at tp > 1: the q and kv latents' down-projection
-- (vLLM's fused_qkv_a_proj MergedReplicatedLinear, SGLang's
-- fused_qkv_a_proj_with_mqa ReplicatedLinear) runs whole on every rank,
-- only q_b and kv_b split over the heads (engine/infer.c mla_prefill_proj).
-- Run: ./gpuplan run tests/lua/mla_prefill_replicated.t
local t = require "tap"
local gp = require "gpuplan"
t.plan(10)

local base = { gpu = "h200-sxm", gpus = 8, tp = 8, weights = "fp8", runtime = "sglang",
              input = 4096, output = 100, model = "deepseek-v3" }
local function run(extra) return gp.infer(t.with(base, extra)) end
local function op(r, name) return t.op({ ops = r.prefill_ops }, name) end

-- DeepSeek-V3: hidden h = 7168, q_lora_rank 1536, kv_lora_rank 512, rope
-- 64, nope 128, v 128, 128 heads -> 16 a GPU at tp 8.  One 4096-token
-- prompt, T = 4096.  Each row is the engine's one product 2 T n k of
-- these integers: exact up to the float sums (1e-12 relative).
local T, h = 4096, 7168
local r8 = run()
local a, qb, kvb = op(r8, "q_kv_a"), op(r8, "q_b"), op(r8, "kv_b")
t.ok(a and qb and kvb, "tp 8: q_kv_a, q_b and kv_b rows")
t.ok(op(r8, "qkv") == nil, "... in place of the folded qkv row")
-- q_kv_a whole: 2 x 4096 x (1536 + 512 + 64) x 7168.
t.near(a.flop, 2 * T * (1536 + 512 + 64) * h, 1e-12, "q_kv_a: 2 T (1536 + 576) h, not divided by tp")
-- q_b on 16 heads of 192: 2 x 4096 x (16 x 192) x 1536.
t.near(qb.flop, 2 * T * 16 * 192 * 1536, 1e-12, "q_b: 2 T (16 x 192) 1536")
-- kv_b on 16 heads of 128 + 128: 2 x 4096 x (16 x 256) x 512.
t.near(kvb.flop, 2 * T * 16 * 256 * 512, 1e-12, "kv_b: 2 T (16 x 256) 512")

-- What the folded qkv row priced at tp 8 (all four projections split over
-- the 8 ranks): 2 T ((1536 + 576) h + 128 x 192 x 1536 + 128 x 256 x 512)
-- / 8.  The three rows exceed it by 7/8 of the down-projection.
local folded = 2 * T * ((1536 + 512 + 64) * h + 128 * 192 * 1536 + 128 * 256 * 512) / 8
t.near(a.flop + qb.flop + kvb.flop - folded, 2 * T * (1536 + 512 + 64) * h * 7 / 8, 1e-9,
       "tp 8 adds 7/8 of the down-projection's FLOP on each rank")
t.ok(a.time > 0 and qb.time > 0 and kvb.time > 0, "each row is priced")
-- tp 2 (pp 4 to hold the weights) on the same node: q_kv_a stays whole,
-- kv_b runs 64 heads instead of 16 (exact: the same integer products).
local r2 = run({ tp = 2, pp = 4, gpus = 8 })
t.near(op(r2, "q_kv_a").flop, a.flop, 1e-12, "tp 2: q_kv_a the same, whole")
t.near(op(r2, "kv_b").flop, kvb.flop * 4, 1e-12, "tp 2: kv_b on 64 heads, 4x tp 8's 16")
-- The decode step is unchanged: mla_decode already held q_kv_a whole.
local d = t.op(r8.decode, "q_kv_a")
-- (1e-12: one division of the step's FLOP by its batch.)
t.ok(d and math.abs(d.flop / r8.decode.batch / (2 * (1536 + 512 + 64) * h) - 1) < 1e-12,
     "decode's q_kv_a: 2 (1536 + 576) h a token, whole (mla_decode)")
