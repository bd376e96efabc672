-- A prefix-cache hit on the MoE serving model (gp.infer's prefix_hit with
-- ep / dp_attention / disagg: gpuplan.serve).  The prompt tokens a prefill
-- computes are input - cached, one rule (engine/infer.h infer_new_prompt)
-- that gp.infer's replicas and the MoE serving model both call: a prefill
-- chunk of prefill_tokens then carries more prompts, each of fewer
-- tokens, whose queries also see the cached keys.  Run with
-- ./gpuplan run tests/lua/prefix_hit_moe.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(13)

local function with(base, x)
  local a = {}
  for k, v in pairs(base) do a[k] = v end
  for k, v in pairs(x) do a[k] = v end
  return a
end
local function op(ops, name)
  for _, o in ipairs(ops) do if o.name == name then return o end end
end

-- DeepSeek-V3 on 16 H20, EP16, DP attention, two-batch overlap, batch 32
-- a GPU (fixed, so the decode side is the same at every hit), 4096 / 1536.
local job = { model = "deepseek-v3", gpu = "h20", weights = "fp8", input = 4096, output = 1536,
              gpus = 16, ep = 16, dp_attention = true, batch = 32, two_batch_overlap = true }
local r0 = gp.infer(job)
local z = gp.infer(with(job, { prefix_hit = 0 }))
t.is(z.prefill_share_s, r0.prefill_share_s, "prefix_hit 0: the prefill share of no hit, exactly")
local h = gp.infer(with(job, { prefix_hit = 0.5 }))
t.is(h.cached_tokens, 2048.0, "hit 0.5 of 4096: 2048 prompt tokens from the prefix cache")

-- The prefill step (16384 tokens a GPU with DP attention, the default
-- prefill_tokens): whole prompts of 4096 computed tokens, 4 a step, at no
-- hit; of 4096 - 2048 = 2048 at hit 0.5, 8 a step.  Exact.
t.is(r0.prefill.batch, 4.0, "no hit: 16384 / 4096 = 4 prompts a prefill step")
t.is(h.prefill.batch, 8.0, "hit 0.5: 16384 / 2048 = 8 prompts a prefill step")
t.is(h.prefill.tokens, r0.prefill.tokens, "... the same 16384 tokens computed a step")
-- Its linears see the same 16384 tokens: the MoE experts' GEMM FLOPs are
-- equal, exactly.
t.is(op(h.prefill_ops, "experts_up").flop, op(r0.prefill_ops, "experts_up").flop,
  "the routed experts' up GEMM: the same FLOPs (16384 tokens either way)")
-- The attention core (MHA form): FLOPs go as tokens x mean keys a token.
-- No hit: a 4096-token causal prompt, mean keys (4096 + 1) / 2 = 2048.5;
-- hit 0.5: 2048 computed tokens after 2048 cached keys, 2048 + (2048 +
-- 1) / 2 = 3072.5.  Ratio 3072.5 / 2048.5 = 1.49988; 1e-9 for rounding.
local ra = op(h.prefill_ops, "attention").flop / op(r0.prefill_ops, "attention").flop
t.near(ra, 3072.5 / 2048.5, 1e-9 * ra, string.format("attention FLOPs x%.5f (3072.5 / 2048.5)", ra))
-- The logits run once a prompt: twice the prompts, twice the FLOPs.
t.near(op(h.prefill_ops, "logits").flop / op(r0.prefill_ops, "logits").flop, 2.0, 1e-12,
  "the logits of 8 prompts a step against 4")

-- A request's prefill share: the step's time x computed tokens / 16384
-- (DP attention: its own GPU's chunk), serve_plan.c prompt_share.  No hit
-- 4096 / 16384 of a step, hit 0.5 2048 / 16384 of its (longer) step; 1e-12
-- relative for rounding.
t.near(h.prefill_share_s, h.prefill.time * 2048 / 16384, 1e-12 * h.prefill_share_s,
  string.format("hit 0.5: prefill share %.4g s = step %.4g s x 2048 / 16384",
    h.prefill_share_s, h.prefill.time))
-- TTFT: one prefill step of 16384 tokens (the model's TTFT, a full chunk),
-- which a hit fills with more prompts: not shorter; longer by the attention
-- over the cached keys and the head of the extra prompts alone, and by
-- the SMs DeepEP's prefill kernels hold slowing that longer compute
-- (the step's sm_loss).  1e-9 relative for rounding.  One prompt's TTFT
-- (ttft_one_s): the runs decode a batch in flight, whose ttft_s is the
-- loaded TTFT (serve_plan.c coloc_loaded).
local dt = h.ttft_one_s - r0.ttft_one_s
local da = h.prefill.sm_loss - r0.prefill.sm_loss
for _, n in ipairs { "attention", "logits", "sample", "final_norm" } do
  da = da + op(h.prefill_ops, n).total - op(r0.prefill_ops, n).total
end
t.near(dt, da, 1e-9 * h.ttft_one_s, string.format("TTFT %.4g -> %.4g s: + %.4g s, the attention "
  .. "and head rows' and the SM loss's %.4g s", r0.ttft_one_s, h.ttft_one_s, dt, da))
-- Throughput rises: the GPUs' prefill share shrinks, the decode is the same.
t.ok(h.tokens_per_s > r0.tokens_per_s * 1.3 and h.step_ms == r0.step_ms,
  string.format("tok/s %.0f -> %.0f at the same decode step", r0.tokens_per_s, h.tokens_per_s))

-- Disaggregated: the prefill pool takes in input / (input - cached) as
-- many prompt tokens a second as it computes.  Its step computes the same
-- 16384 tokens; in tok/s = 16384 / step time x 4096 / 2048.  1e-12.
local dj = { model = "deepseek-v3", gpu = "h800-sxm", weights = "fp8", gpus = 96, ep = 64,
             dp_attention = true, disagg = true, prefill_ep = 32, prefill_tp = 32,
             prefill_dp_attention = true, input = 2000, output = 100, batch = 256 }
local dh = gp.infer(with(dj, { prefix_hit = 0.5 }))
t.near(dh.prefill_per_gpu, dh.prefill.tokens / dh.prefill.time * 2000 / 1000,
  1e-12 * dh.prefill_per_gpu, string.format("disagg, hit 0.5 of 2000: %.0f prompt tok/s a prefill GPU",
    dh.prefill_per_gpu))

-- The same deployment priced by both models: Mixtral 8x7B on 2 H100 as a
-- TP2 replica (gp.infer), and as a TP2 instance of the MoE serving model
-- (prefill_tokens given).  Both compute 2048 of 4096 prompt tokens; the
-- share of a request's prefill a hit leaves, hit 0.5 over no hit, is the
-- linears' 2048 / 4096 = 0.5 plus the attention over the cached keys in
-- both, 0.508 (replica) and 0.512 (MoE model).  Tolerance 3%: the two
-- price a prompt's attention apart (the replica's pb prompts a step, the
-- MoE model's chunk of whole prompts at their mean keys).
local mj = { model = "mixtral-8x7b", gpu = "h100-sxm", tp = 2, gpus = 2, input = 4096,
             output = 512, batch = 16 }
local p0, p5 = gp.infer(mj), gp.infer(with(mj, { prefix_hit = 0.5 }))
local m0 = gp.infer(with(mj, { prefill_tokens = 16384 }))
local m5 = gp.infer(with(mj, { prefill_tokens = 16384, prefix_hit = 0.5 }))
local rp, rm = p5.prefill_share_s / p0.prefill_share_s, m5.prefill_share_s / m0.prefill_share_s
t.ok(m5.moe and not p5.moe and p5.cached_tokens == m5.cached_tokens
  and math.abs(rm / rp - 1) < 0.03,
  string.format("Mixtral TP2, hit 0.5: prefill share x%.4f (replica) and x%.4f (MoE model)", rp, rm))
