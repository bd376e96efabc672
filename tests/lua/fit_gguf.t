-- gp.memory (gpuplan fit --method infer) takes llama.cpp's GGUF types as
-- gp.infer does, by the same parser (gpuplan.infer gguf_mix): each tensor
-- at the type llama.cpp's quantize gives it, so fit sizes the file infer
-- serves.  fit refused `--weights Q4_K_M` that infer accepted.
-- Run: prove --exec './gpuplan run' tests/lua/fit_gguf.t
local t = require "tap"
local gp = require "gpuplan"

local function weights_of(r) return t.part(r, "weights") end
local job = { model = "llama3-8b", method = "infer", gpu = "h100-sxm", weights = "Q4_K_M" }
local r = gp.memory(job)
-- Llama 3 8B at Q4_K_M, by hand (tests/lua/gguf_types.t's sum): 32
-- layers x (155189248 x 4.5 + 62914560 x (4.5 + 6.5625) / 2) bits =
-- 4185391104 B; token_embd Q4_K 295501824 B; output Q6_K 430940160 B;
-- norms 532480 B.  4912365568 B, exact (the engine adds the same sums).
t.near(weights_of(r), 4912365568, 1e-9, "fit Q4_K_M: 4912365568 B, tensor by tensor")
-- the same bytes gp.infer prices for the replica
local inf = gp.infer { model = "llama3-8b", gpu = "h100-sxm", weights = "Q4_K_M", batch = 1 }
t.near(weights_of(r), inf.weights_total, 1e-12, "the weights gpuplan infer serves")
t.like(r.defaults[1], "^weights=Q4_K_M %(llama%.cpp's mix", "the defaults say the mix")
-- any case, as infer's: q8_0 is 8.5 bits everywhere (block_q8_0 34 B a
-- 32-weight block), the ends too: 8030261248 params - 65 x 4096 norms at
-- 16 bits = 8030261248 - 266240 = 8029995008 weights x 8.5 / 8 + 532480
local q8 = gp.memory(t.with(job, { weights = "q8_0" }))
t.near(weights_of(q8), 8029995008 * 8.5 / 8 + 532480, 1e-9, "q8_0: 8.5 bits a weight")
-- where infer refuses the type, so does fit, in its words
local ok, err = pcall(gp.memory, t.with(job, { model = "mixtral-8x7b" }))
t.ok(not ok, "an MoE model: refused")
t.like(tostring(err), "laid out for dense models", "says why")
-- ... naming what an MoE file's mix needs that is not laid out
-- (llama.cpp src/llama-quant.cpp's 8-expert rules; the MoE serving
-- model's experts and output head at bits of their own)
t.like(tostring(err), "an MoE file's own rules %(src/llama%-quant%.cpp: attn_k and attn_v Q8_0 "
  .. "and attn_output Q5_K with 8 experts", "an MoE model: the rules it would need")
t.raises(function() gp.infer { model = "deepseek-v3", gpu = "h200-sxm", gpus = 8, tp = 8,
                               weights = "Q4_K_M" } end,
  "an MLA model's attention tensors (attn_kv_b as attn_v", "an MLA model: says why", true)
ok, err = pcall(gp.memory, t.with(job, { weights = "IQ4_XS" }))
t.like(tostring(err), "gpuplan infer and fit %-%-method infer take Q4_0", "another type: the hint names fit")
-- A GGUF file is llama.cpp's, as gp.infer serves it (runtime llama.cpp
-- for a GGUF type): no fraction of the card held back (gpuplan.infer
-- runtime_memory, margin 0) and its f16 cache named as llama.cpp names
-- it, where fit held the catalog's 10% back and infer none.  Exact: the
-- budget is the capacity less 0.
local function said(rr, text)
  for _, d in ipairs(rr.defaults) do if d:find(text, 1, true) then return true end end
  return false
end
-- (r.margin: the bytes held back, the margin x the capacity)
t.is(r.margin, 0, "a GGUF type: llama.cpp's margin 0, as gpuplan infer's")
t.is(r.budget, r.capacity, "... the budget the whole usable capacity")
t.ok(said(r, "margin=0.00 (llama.cpp holds no fraction of the card back)"), "... said")
t.ok(said(r, "kv=fp16 (llama.cpp's default cache type"), "the cache f16, as infer names it")
-- a margin the user gives stands
local m5 = gp.memory(t.with(job, { margin = 0.05 }))
-- (1e-12 relative: one product in floating point)
t.near(m5.margin, 0.05 * m5.capacity, 1e-12, "a given margin stands: 5% of the capacity")
-- another format keeps the catalog's margin (10%)
local i4 = gp.memory(t.with(job, { weights = "int4" }))
t.near(i4.margin, 0.1 * i4.capacity, 1e-12, "int4: the catalog's 10%")
t.done_testing()
