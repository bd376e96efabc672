-- split_proj: q, k, v and the gated MLP's gate and up as linears of
-- their own (torchtitan's Llama), each its own GEMMs (train_layer.c
-- split_widths and gemm_costs).
local t = require("tap")
local gp = require("gpuplan")

t.plan(5)

-- A gated model of ffn F and its non-gated twin of the same F: the gated
-- mlp_up is one GEMM of width 2F, split into gate and up, two GEMMs of
-- width F each -- exactly the twin's mlp_up (same rows T, depth h, weights
-- F x h, input T x h, output T x F).  So split forward = 2 x the twin's
-- forward, and split backward = 2 x the twin's backward (dgrad, wgrad)
-- plus the input gradients' sum, read 2 and write 1 at A = 2 B over
-- T x h elements (eager: one add of two; compiled: one kernel of np + 1 =
-- 3 too): 3 x 2 x 2048 x 1024 = 12,582,912 B at H100 SXM's 3.35 TB/s x
-- 0.84 plus the kernel fill 3.9 us and the 1 us launch.  1e-9 relative:
-- the same arithmetic.
local function job(gated, split, kernels)
  return gp.train { model = { name = "t", layers = 4, hidden = 1024, heads = 8, kv_heads = 2,
                              ffn_hidden = 4096, ffn_gated = gated, vocab = 32000,
                              tied_embeddings = false },
                    gpu = "h100-sxm", gpus = 1, method = "pretrain", seq = 2048, batch = 1,
                    global_batch = 1, recompute = "none", precision = "bf16",
                    kernels = kernels, split_proj = split }
end
local up2 = t.op(job(false, false, "eager"), "mlp_up")
local gs = t.op(job(true, true, "eager"), "mlp_up")
local add = 12582912 / (3.35e12 * 0.84) + 4.9e-6
t.near(gs.fwd / (2 * up2.fwd), 1, 1e-9, "split gate and up: two GEMMs of the twin's width forward")
t.near((gs.bwd - add) / (2 * up2.bwd), 1, 1e-9,
  "split gate and up: two dgrads and wgrads and the input gradients' sum (3 A over T x h)")
local gc = t.op(job(true, true, "fused"), "mlp_up")
local upc = t.op(job(false, false, "fused"), "mlp_up")
t.near((gc.bwd - add) / (2 * upc.bwd), 1, 1e-9, "compiled: the sum one kernel reading 2, writing 1")

-- q, k and v split: at 8 heads and 2 kv heads of 128 the k and v GEMMs
-- are 256 wide, each reading the whole T x h input for a quarter of q's
-- columns: never cheaper than the one fused GEMM of 1536 columns, and
-- without split_proj nothing changes (the fused op as before).
local fused = t.op(job(true, false, "eager"), "qkv")
local split = t.op(job(true, true, "eager"), "qkv")
t.ok(split.fwd > fused.fwd, "split q, k, v: three narrower GEMMs cost more than the fused one")
t.ok(split.bwd > fused.bwd + 2 * 12582912 / (3.35e12 * 0.84),
  "split q, k, v backward: the sum of three input gradients (two adds, 6 A over T x h) on top")
