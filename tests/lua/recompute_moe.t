-- recompute_modules "moe" (Megatron-Core's MoELayer under
-- tensor_parallel.checkpoint, moe_layer.py): the whole MoE block re-runs in
-- the backward, its router and experts (FLOPs), and its dispatch and combine
-- all-to-alls.  Run with ./gpuplan run tests/lua/recompute_moe.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(7)

local base = { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 16, tp = 1, pp = 1,
               ep = 8, precision = "bf16", seq = 4096, global_batch = 256,
               batch = 1, stack = "megatron", method = "pretrain",
               recompute = "selective", recompute_modules = "layernorm" }
local r0 = gp.train(base)
local r1 = gp.train(t.with(base, { recompute_modules = "layernorm,moe" }))
local function part(r, n)
  for _, p in ipairs(r.parts) do if p.name == n then return p.seconds end end
  return 0
end

-- The re-run forward's FLOPs: every one of the 48 MoE layers runs its
-- router (2048 x 128 = 262144 weights) and 8 routed experts of 3 x 2048 x
-- 768 (37748736 in all) again, 2 FLOPs per weight per token: 256 x 4096
-- tokens x 2 x 48 x 38010880.  Exact but for rounding (1e-9).
t.near(r1.hw_flops - r0.hw_flops, 256 * 4096 * 2 * 48 * 38010880, 1e-9,
       "moe: the router's and the experts' forward FLOPs again")
t.ok(r1.model_flops == r0.model_flops, "moe: the model FLOPs unchanged")
t.ok(part(r1, "recompute") > part(r0, "recompute"),
     string.format("moe: recompute time grows (%.4f -> %.4f s)", part(r0, "recompute"),
       part(r1, "recompute")))
-- The dispatch and combine inside the checkpoint run again.  With no EP
-- overlap (this layout's default) every all-to-all is exposed; the
-- backward's dispatch and combine move what the forward's do (the
-- gradients of the combine's and the dispatch's tokens, same sizes), so
-- a step's EP time is fwd + bwd = 2 fwd before and 3 fwd with the re-run:
-- 1.5 times.  1e-9: the same sums.
t.near(part(r1, "ep_comm"), 1.5 * part(r0, "ep_comm"), 1e-9,
       string.format("moe: the forward all-to-alls again (%.4f -> %.4f s)",
         part(r0, "ep_comm"), part(r1, "ep_comm")))
local e0 = gp.train(t.with(base, { ep = 1 }))
local e1 = gp.train(t.with(base, { ep = 1, recompute_modules = "layernorm,moe" }))
t.ok(part(e0, "ep_comm") == 0 and part(e1, "ep_comm") == 0, "EP 1: no all-to-all, none again")
-- The memory side (exact derivations in tests/c/t_recomp_moe.c): fewer
-- saved bytes a layer.
t.ok(r1.memory.act_layer < r0.memory.act_layer,
     string.format("moe: fewer saved bytes a layer (%.0f -> %.0f)", r0.memory.act_layer,
       r1.memory.act_layer))
t.raises(function() gp.train(t.with(base, { model = "llama3-8b", ep = 1,
                                            recompute_modules = "moe" })) end,
         "recompute_modules: moe needs a MoE model; llama3-8b has no experts",
         "moe on a dense model: refused, naming the model", true)
