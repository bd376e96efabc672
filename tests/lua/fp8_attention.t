-- fp8_attention: the fused attention in FP8 (Transformer Engine's fp8_dpa,
-- Megatron's fp8_dot_product_attention; cuDNN's FP8 / MXFP8 kernel on
-- Blackwell).  cuDNN's FP8 backward walks every key tile up to the
-- diagonal in a sliding-window layer (cudnn-frontend's GPT-OSS results on
-- GB200 and GB300: its time grows 3.6 to 3.9 times per doubling of the
-- sequence, where the bf16 backward's doubles), and its forward walks the
-- band (engine/train_layer.c attn_layers_time).
-- Run with ./gpuplan run tests/lua/fp8_attention.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(12)

local op = t.op
-- A GPT-OSS-120B-shaped model (OpenAI's config.json: 36 layers, 2880
-- wide, 64 query and 8 KV heads of 64, 128 experts top 4, every second
-- layer a 128-token window), and the same without the window.
local function model(window)
  return { name = "gpt-oss-shape", layers = 36, hidden = 2880, heads = 64, kv_heads = 8,
           head_dim = 64, ffn_hidden = 2880, ffn_gated = true, vocab = 201088,
           tied_embeddings = false,
           moe = { experts = 128, top_k = 4, shared_experts = 0, ffn_hidden = 2880,
                   dense_layers = 0 },
           sliding_window = window and { size = 128, layers = 18 } or nil }
end
-- 64 GB200s, EP 64, four 4096-token sequences a micro-batch, MXFP8 (the
-- GPU, not the host, bounds the step).
local job = { gpu = "gb200", gpus = 64, ep = 64, batch = 4, seq = 4096, global_batch = 256,
              stack = "megatron", zero = 1, precision = "fp8", fp8_scaling = "block",
              method = "pretrain" }
local function run(window, x) return gp.train(t.with(t.with(job, { model = model(window) }), x)) end
local w16, w8 = run(true), run(true, { fp8_attention = true })
local f16, f8 = run(false), run(false, { fp8_attention = true })
local a16, a8, full = op(w16, "attention"), op(w8, "attention"), op(f16, "attention")

-- The attention op is a layer's average over the 36: 18 full layers at
-- the full causal time t and 18 sliding ones.  In FP8 a sliding layer's
-- backward is a full layer's, so the average is t: the windowless
-- model's backward.  Forward the FP8 kernel walks the band as the 16-bit
-- one does.  The same computation either way: float rounding only, 1e-12.
t.near(a8.bwd / full.bwd, 1, 1e-12, "FP8: a sliding layer's backward is a full layer's")
t.near(a8.fwd / a16.fwd, 1, 1e-12, "FP8: the forward still walks the window's band")
-- In 16 bits the sliding layers' backward walks the band (2 key tiles of
-- 128 a query tile where a full layer at 4096 walks 16.5 on average), so
-- the 16-bit average is between half the full time and the full time.
t.ok(a16.bwd > 0.5 * full.bwd and a16.bwd < full.bwd,
     "16 bits: the sliding layers' backward walks the band")
-- Without a window the option prices the 16-bit kernel's rate (cuDNN's
-- MXFP8 causal attention runs as fast: the llama3.1 results at 4096,
-- 0.326 + 1.305 ms against bf16's 0.391 + 1.198 ms).
t.is(op(f8, "attention").bwd, full.bwd, "no window: the FP8 kernel at the 16-bit rate")
-- The step: FP8 lengthens the windowed model's backward by its sliding
-- layers' band-to-triangle difference, and no further than the windowless
-- model's step (its forward keeps the band; in this job the forward waits
-- on the host's launches, host_wait, so the two steps meet); without a
-- window FP8 moves nothing.
t.ok(w8.step_s > w16.step_s and w8.step_s <= f16.step_s and f8.step_s == f16.step_s,
     "the step grows by the sliding layers' backward only")

-- Where nothing would run in FP8, or off the kernels it is priced from,
-- refused by name.
local function err(x, drop)
  local j = t.with(t.with(job, { model = model(true), fp8_attention = true }), x)
  if drop then j[drop] = nil end
  local ok, e = pcall(gp.train, j)
  return not ok and tostring(type(e) == "table" and e.msg or e) or ""
end
t.like(err({ precision = "bf16" }, "fp8_scaling"), "fp8_attention.*precision = fp8",
       "bf16: refused, no fp8 recipe")
-- On Hopper cuDNN's FP8 backward takes head dim 128 only (GPT-OSS's 64:
-- the H200 results' FP8 rows failed; fp8_attention_hopper.t prices 128).
t.like(err { gpu = "h100-sxm", ep = 8 }, "fp8_attention on h100%-sxm %(hopper%).*head dim 128 only",
       "Hopper, head dim 64: refused, no Hopper FP8 kernel measured")
t.like(err { stack = "hf" }, "fp8_attention.*stack = megatron", "hf stack: refused")
t.like(err { kernels = "eager" }, "fp8_attention.*kernels = fused", "eager kernels: refused")
-- Unfused attention (the math path's matmuls) has no FP8 fused kernel to
-- run: refused, where the engine would price nothing (attn_layers_time
-- walks the window for flash only).
t.like(err { flash = false }, "fp8_attention.*unfused %(flash = false%)", "unfused attention: refused")

-- RL: the policy update is a training pass of the same layers, so the
-- option reaches it as it reaches gp.train (GRPO on the same 64 GB200s,
-- 4096-token responses).  The update's attention op of the windowed model
-- in FP8 is the windowless model's backward (the argument above: 18 full
-- layers at t, 18 sliding ones now at t too); float rounding only, 1e-12.
local rjob = { gpu = "gb200", gpus = 64, ep = 64, zero = 1, precision = "fp8",
               fp8_scaling = "block", stack = "megatron", kernels = "fused",
               recompute = "full", prompts = 32, group = 8, prompt_len = 512,
               response_len = 4096, response_max = 4096 }
local function rl(window, x) return gp.rl(t.with(t.with(rjob, { model = model(window) }), x)) end
local rw8, rf16 = rl(true, { fp8_attention = true }), rl(false)
t.near(op(rw8.update, "attention").bwd / op(rf16.update, "attention").bwd, 1, 1e-12,
       "rl: the update's sliding layers' FP8 backward is a full layer's")
local ok, e = pcall(gp.rl, t.with(t.with(rjob, { model = model(true), fp8_attention = true }),
                                  { stack = "hf", kernels = "eager" }))
-- (the script's line in front, as gp.train's error under pcall has it)
t.like(not ok and tostring(type(e) == "table" and e.msg or e) or "",
       "^[^:]+:%d+: rl: fp8_attention.*stack = megatron", "rl: refused by name off Megatron's fused kernels")
