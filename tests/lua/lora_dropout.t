-- PEFT's LoRA layer drops out its input before lora_A ("result = result +
-- lora_B(lora_A(dropout(x))) * scaling", peft/tuners/lora/layer.py), one
-- nn.Dropout per adapted matrix: a copy of the input and a 1-byte mask in
-- the forward, the gradient back through the mask in the backward.
-- Run with ./gpuplan run tests/lua/lora_dropout.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(9)

local function lora(r)
  for _, o in ipairs(r.ops) do if o.name == "lora" then return o end end
end

-- Llama 2 7B, LoRA on q and v (the default targets), one sequence of 4096
-- tokens on one A100-80GB.  The dropouts of q and v each read x (2 B),
-- write x' (2 B) and the mask (1 B): 2 x 4096 x 4096 x 5 B = 167.8 MB a
-- layer each way, at the A100's streaming rate 2.039 TB/s x 0.85 (the
-- catalog's hbm fraction): 96.8 us.  Tolerance 10%: roofline.c adds the
-- memory pipeline's fill to every kernel.
local job = { model = "llama2-7b", gpu = "a100-sxm-80gb", gpus = 1, method = "lora",
              seq = 4096, batch = 1, global_batch = 1 }
local on = gp.train(t.with(job, { lora_dropout = 0.05 }))
local off = gp.train(t.with(job, { lora_dropout = 0 }))
local want = 2 * 4096 * 4096 * 5 / (2.039e12 * 0.85)
t.near(lora(on).fwd - lora(off).fwd, want, 0.1, "forward: the two dropouts' copies and masks")
t.near(lora(on).bwd - lora(off).bwd, want, 0.1, "backward: the gradients through the masks")
-- q, k and v all adapted: three dropouts of the same input.
local qkv = gp.train(t.with(job, { lora_dropout = 0.05, lora_targets = "q,k,v" }))
local qkv0 = gp.train(t.with(job, { lora_dropout = 0, lora_targets = "q,k,v" }))
t.near(lora(qkv).fwd - lora(qkv0).fwd, 1.5 * want, 0.1, "q, k and v: three copies")

-- The eager modules' adapter path, kernel by kernel (lora_costs): forward
-- nd in + 2r + 6 out per token, each adapted matrix reading the input (nd
-- of them), against the fused stacks' one adapter over the fused op (NeMo's
-- on linear_qkv: the same A, B, scaling and add, in + 2r + 6 out): with q
-- and v adapted on the fused qkv op (in 4096, out q + 2 kv = 12288),
-- dropout off, the eager forward moves 4096 x (2 - 1) x 4096 x 2 B = 33.6
-- MB more, 19.4 us at 1.733 TB/s; the backward 5 nd in + 4 out + 3 r
-- against 5 in + 4 out + 3 r: 4096 x 5 x (2 - 1) x 4096 x 2 B = 167.8 MB,
-- 96.8 us.  Tolerance 10% (the pipeline fill, as above).
local eag = gp.train(t.with(job, { lora_dropout = 0, kernels = "eager" }))
local fus = gp.train(t.with(job, { lora_dropout = 0, kernels = "fused" }))
t.near(lora(eag).fwd - lora(fus).fwd, 33.6e6 / 1.733e12, 0.1,
       "eager forward: each adapted matrix reads the input")
t.near(lora(eag).bwd - lora(fus).bwd, 167.8e6 / 1.733e12, 0.1,
       "eager backward: each matrix's input gradient written and summed")

-- The host's launches: PEFT wraps each targeted nn.Linear in a LoRA layer
-- of its own (peft/tuners/lora/layer.py update_layer), and the eager
-- modules' q, k, v, gate and up are linears apart, so each of the seven
-- adapted matrices of a Llama layer launches dropout, lora_A, lora_B,
-- "* scaling" and "+=" (5), or 4 at lora_dropout 0 (nn.Identity launches
-- nothing).  Llama 3.2 1B, one sequence of 2048 tokens on an H100: the
-- layer's forward kernels are shorter than their launches, so the forward
-- is (39 + 7 x 5) x 24.84 us = 1838.2 us (common.h GP_EAGER_OP_TIME), and
-- (39 + 7 x 4) x 24.84 = 1664.3 us without dropout; q and v alone,
-- (39 + 2 x 5) x 24.84 = 1217.2 us.  Tolerance 1e-9: the host's count,
-- exact (train.t's host floor test).
do
  local small = { model = "llama3.2-1b", gpu = "h100-sxm", gpus = 1, method = "lora",
                  seq = 2048, batch = 1, global_batch = 8, recompute = "none",
                  kernels = "eager", lora_targets = "q,k,v,o,gate,up,down" }
  local f, wait = t.layer_fwd(gp.train(t.with(small, { lora_dropout = 0.05 })))
  t.ok(wait > 0, "1B eager LoRA: the GPU waits for the host")
  t.near(f, (39 + 7 * 5) * 24.84e-6, 1e-9, "seven adapted matrices: five launches each")
  f = t.layer_fwd(gp.train(t.with(small, { lora_dropout = 0 })))
  t.near(f, (39 + 7 * 4) * 24.84e-6, 1e-9, "lora_dropout 0: nn.Identity, four launches each")
  f = t.layer_fwd(gp.train(t.with(small, { lora_dropout = 0.05, lora_targets = "q,v" })))
  t.near(f, (39 + 2 * 5) * 24.84e-6, 1e-9, "q and v: two adapted matrices")
end
