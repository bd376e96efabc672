-- ZeRO-3 / FSDP shard the embedding and the output layer like the layers:
-- each micro-batch gathers them and reduce-scatters their gradients
-- (engine/train_stage.c ends_block).  DeepSpeed's stage 3 gathers the
-- embedding twice (its forward, and its pre-backward hook fetches it
-- again), FSDP's root unit once.
-- Run with ./gpuplan run tests/lua/zero3_ends.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(5)

-- Llama 3 70B on 32 H100s (4 DGX H100 nodes), ZeRO-3, one micro-batch of
-- 1024 tokens, both overlaps off (the deepspeed stack's default at stage
-- 3): every collective is on the path, so each part is a sum of
-- collectives priced one by one -- gp.comm on the same 32 ranks prices
-- each (the engine's own collective model, so 1e-6).  The model's
-- parameters (gp.params): layer 855.65M, embedding and output layer
-- 1050.67M each (untied), 16-bit gathers, bf16 reduce-scatters.
local P = gp.params("llama3-70b")
local function ag(b) return gp.comm { op = "all_gather", bytes = b, gpus = 32, system = "dgx-h100" }.time end
local function rs(b) return gp.comm { op = "reduce_scatter", bytes = b, gpus = 32, system = "dgx-h100" }.time end
local L, E, H = 2 * P.per_layer_max, 2 * P.embedding, 2 * P.lm_head
local job = { model = "llama3-70b", gpu = "h100-sxm", gpus = 32, zero = 3, batch = 1,
              global_batch = 32, seq = 1024, recompute = "full", method = "full",
              stack = "deepspeed", margin = 0 }
local parts = t.parts
local ds = parts(gp.train(job))
-- Under full recompute DeepSpeed also gathers again in the backward the
-- 3/17 of each layer (q, k, v, o) its recompute forward released
-- (tests/lua/zero3_reuse.t): R a layer.
local R = 3 / 17 * ag(L)
-- DeepSpeed reduces the layers' gradients in buckets of 5e8 elements
-- (its default reduce_bucket_size; tests/lua/ds_bucket_size.t): the
-- backward hands it down, up and gate (8192 x 28672 = 234,881,024 each),
-- then the rest of the layer as four equal weights of about 37.7M.  Down
-- and up fit (469.8M), gate would pass 5e8 and closes the bucket, and gate
-- with the four (385.9M) stays open for the next layer: n = 1 + (P - 2 x
-- 234,881,024) / 5e8 = 1.772 reductions a layer of L / n bytes each.
local W = 8192 * 28672
local n = 1 + (P.per_layer_max - 2 * W) / 5e8
-- zero_gather: each layer's forward gather, the embedding's and the
-- output layer's; dp_comm: each layer's backward gather and
-- reduce-scatters, the embedding's second gather, both ends' reduce-
-- scatters.
t.near(ds.zero_gather, 80 * ag(L) + ag(E) + ag(H), 1e-6, "DeepSpeed: the ends' forward gathers")
t.near(ds.dp_comm, 80 * (ag(L) + R + n * rs(L / n)) + ag(E) + rs(E) + rs(H), 1e-6,
  "DeepSpeed: the embedding gathered again for its backward, both ends reduced")

-- FSDP (full_shard on the hf stack, overlaps off as Accelerate's profile
-- has them): the root unit is gathered once a micro-batch.  FSDP1 (the
-- hf stack's default fsdp_version) also divides each layer's bf16
-- gradient in place ahead of its reduce-scatter, on the path with it: a
-- read and a write of L bytes, one memory-bound pass on the roofline
-- (bytes / (mem_bw x hbm) + ROOF_MEM_FILL 3.9 us + the graph-launch gap,
-- as tests/lua/fsdp_version.t).  Autograd's backward of the flat
-- parameter's split views concatenates each layer's bf16 gradient into
-- the flat gradient: the same pass again, D, on the compute stream.  The
-- root unit's flat parameter (the embedding and the output layer) gets
-- the same two passes over its own gradient: DE, DH for E and H bytes,
-- both on the path here.
local dev = gp.roofline { gpu = "h100-sxm" }.device
local function pass(b) return 2 * b / (dev.mem_bw * dev.hbm) + 3.9e-6 + dev.graph_launch end
local D, DE, DH = pass(L), pass(E), pass(H)
local fs = parts(gp.train(t.with(job, { stack = "hf", fsdp = "full_shard",
  overlap_param_gather = false, overlap_grad_reduce = false })))
t.near(fs.dp_comm, 80 * (ag(L) + rs(L) + 2 * D) + rs(E) + rs(H) + 2 * (DE + DH), 1e-6,
  "FSDP: the root gathered once; FSDP1's divide and gradient concatenation each layer and end")

-- LoRA: the frozen ends are gathered as before, never reduced; the
-- layers reduce-scatter only their adapters' gradients (gp.train's
-- memory.trainable over the 80 layers, bf16: the defaults' rank 8 on q
-- and v, 204800 a layer), 16.4M in all, below DeepSpeed's 5e8 bucket:
-- one reduce-scatter of them all a micro-batch.
local lr = gp.train(t.with(job, { method = "lora" }))
local lo = parts(lr)
local A = 2 * lr.memory.trainable
t.near(lo.zero_gather, ds.zero_gather, 1e-9, "LoRA: the same gathers")
t.near(lo.dp_comm, 80 * (ag(L) + R) + rs(A) + ag(E), 1e-6, "LoRA: no reduce-scatter of the ends")
