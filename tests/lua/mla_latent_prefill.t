-- SGLang's MLA prefill in the latent (absorbed) form: an extend batch whose
-- requests' cached prefixes sum to 1..8191 tokens skips multi-head
-- attention (sglang deepseek_v2.py _handle_attention_backend, threshold
-- SGL_CHUNKED_PREFIX_CACHE_THRESHOLD 8192).  A burst of P-token prompts
-- packed into C-token chunks leaves such a step after every cut prompt
-- when P does not divide C (gp.infer's M.mla_latent_prefill_of;
-- engine/infer.c mla_latent_attn).
-- Run: ./gpuplan run tests/lua/mla_latent_prefill.t
local t = require "tap"
local gp = require "gpuplan"
t.plan(16)

local function run(extra)
  local a = { gpu = "h200-sxm", gpus = 8, tp = 8, weights = "fp8", runtime = "sglang",
              input = 1997, output = 100, requests = 500, model = "deepseek-v3" }
  for k, v in pairs(extra or {}) do a[k] = v end
  return gp.infer(a)
end
local function op(r, name)
  for _, o in ipairs(r.prefill_ops) do if o.name == name then return o end end
end
local function said(r)
  for _, d in ipairs(r.defaults) do
    if d:find("mla_prefill=latent", 1, true) then return d end
  end
end

-- DeepSeek-V3 at TP 8: 128 / 8 = 16 heads a GPU, kv_lora_rank r = 512,
-- rope dr = 64, MHA's qk 128 + 64 = 192 and v 128.  One 1997-token prompt
-- prefilled attends to (1997 + 1) / 2 = 999 keys on average (causal).
-- Latent form: 2 T kv nh (r + dr + r) = 2 x 1997 x 999 x 16 x 1088
-- = 69458024448 FLOP a layer; multi-head: 2 x 1997 x 999 x 16 x 320
-- = 20428830720.  Both are the engine's one product of the same factors:
-- exact (1e-9 relative for the float sums).
local on = run()
local off = run({ requests = 1 })   -- one prompt: 1997 < 8192, no step cut
local a1, a0 = op(on, "attention"), op(off, "attention")
t.ok(said(on), "a 500-prompt burst of 1997 tokens on an H200: latent form, said")
t.ok(said(on) and said(on):find("8192-token chunk", 1, true) and said(on):find("1997-token", 1, true),
     "... naming the 8192-token chunk and the 1997-token prompts")
t.ok(math.abs(a1.flop - 69458024448) <= 1e-9 * 69458024448,
     "latent attention: 2 x 1997 x 999 x 16 x 1088 FLOP a layer")
t.ok(math.abs(a0.flop - 20428830720) <= 1e-9 * 20428830720,
     "one prompt alone (no cut step): multi-head, 2 x 1997 x 999 x 16 x 320")
t.ok(math.abs(a1.flop / a0.flop - 1088 / 320) <= 1e-12, "the FLOP ratio is 1088 / 320 = 3.4")
-- The cache read (the latent's 576 elements a key) and the projections
-- (kv_b's up-projection traded for W_UK and W_UV, the same FLOP) stay.
t.is(a1.bytes, a0.bytes, "the attention's bytes are the multi-head row's")
t.is(op(on, "kv_b").flop, op(off, "kv_b").flop, "the kv_b (up-projection) row is unchanged")
t.ok(not said(off), "... and the single prompt says nothing")
t.ok(on.ttft_s > off.ttft_s, "the latent form costs the prompt time")

-- Where it does not apply.
t.ok(not said(run({ input = 4096 })), "4096-token prompts divide into 8192: multi-head")
t.ok(not said(run({ input = 31999, requests = 100 })),
     "32K prompts (a chunk or more): multi-head")
t.ok(not said(run({ runtime = "vllm" })), "vLLM: multi-head")
t.ok(not said(run({ gpu = "b200" })), "Blackwell (trtllm_mla): multi-head")
t.ok(not said(run({ model = "llama3-8b", gpus = 1, tp = 1, weights = "bf16" })),
     "no MLA: nothing")
t.ok(not said(run({ input = 2048, max_num_tokens = 16384 })),
     "a stated 16384-token chunk that 2048-token prompts divide: multi-head")
t.ok(said(run({ input = 2000, max_num_tokens = 16384 })),
     "... and 2000-token prompts it cuts: latent")
