-- capacity_factor F > 0 pads every local expert's buffer to F x its even
-- share (Megatron-Core's moe_pad_expert_input_to_capacity): the experts'
-- GEMMs run that buffer at any EP size (engine/train_layer.c, the layer's
-- op config: skew x F).  They ran the even share whatever F was, and at
-- EP 1 the factor moved the activation memory alone.
-- Run with ./gpuplan run tests/lua/capacity_gemm.t.
local t = require "tap"
local gp = require "gpuplan"
t.plan(9)

local function ops(ep, cf)
  local r = gp.train { model = "mixtral-8x7b", gpu = "h100-sxm", gpus = 16, tp = 8, ep = ep,
                       stack = "megatron", batch = 8, seq = 4096, capacity_factor = cf }
  return t.op(r, "moe_up").fwd, t.op(r, "moe_down").fwd
end

-- Hand derivation: the rows of every expert GEMM are F x T k / E a local
-- expert (T = 8 x 4096 tokens, k = 2, E = 8), so F = 2 doubles them; at
-- these sizes (8192 rows an expert and more) a GEMM's time is its FLOPs
-- over a rate that barely moves with M, and the launch (microseconds
-- against hundreds) is the rest: 2x within 5% (measured 1.96-1.98).
for _, ep in ipairs { 1, 2 } do
  local up1, down1 = ops(ep, 1.0)
  local up2, down2 = ops(ep, 2.0)
  t.near(up2 / up1, 2.0, 0.05, "ep " .. ep .. ": moe_up at capacity 2 runs twice the rows")
  t.near(down2 / down1, 2.0, 0.05, "ep " .. ep .. ": moe_down at capacity 2 runs twice the rows")
end
-- Capacity 1.0 at EP 1 is the even share, as dropless is there (no other
-- rank to wait for): the same GEMMs exactly.
local up0 = ops(1, 0)
local up1 = ops(1, 1.0)
t.is(up0, up1, "ep 1: capacity 1.0 and dropless run the same rows")
-- Capacity 0.5 drops half the rows: each expert runs half its share.
local uph = ops(1, 0.5)
t.ok(uph < 0.55 * up1 and uph > 0.45 * up1, "ep 1: capacity 0.5 runs half the rows: "
  .. tostring(uph / up1))
-- The step follows: capacity 2 at EP 1 is slower than the even share.
local s1 = gp.train { model = "mixtral-8x7b", gpu = "h100-sxm", gpus = 16, tp = 8, ep = 1,
                      stack = "megatron", capacity_factor = 1.0 }.step_s
local s2 = gp.train { model = "mixtral-8x7b", gpu = "h100-sxm", gpus = 16, tp = 8, ep = 1,
                      stack = "megatron", capacity_factor = 2.0 }.step_s
t.ok(s2 > s1, "ep 1: the step at capacity 2 is slower: " .. s2 .. " > " .. s1)

-- No capacity where the Hugging Face MoE block runs (stack hf, or the
-- eager kernels): it routes dropless, so a factor is refused by name.
t.raises(function()
  gp.train { model = "mixtral-8x7b", gpu = "h100-sxm", gpus = 8, ep = 8, stack = "hf",
             capacity_factor = 1.25 } end,
  "runs the model's own Hugging Face MoE block, which routes dropless", "stack hf: refused", true)
t.ok(pcall(gp.train, { model = "mixtral-8x7b", gpu = "h100-sxm", gpus = 8, ep = 8, stack = "hf",
                       capacity_factor = 0 }), "stack hf, capacity_factor 0 (dropless): accepted")
