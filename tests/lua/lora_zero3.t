-- LoRA under ZeRO-3 / FSDP: the frozen base is sharded like trained
-- weights (DeepSpeed's stage 3 partitions every parameter of the module it
-- wraps, requires_grad or not; FSDP shards a unit's frozen weights with
-- the rest), so every layer gathers it for its forward and again for its
-- backward.  Only the adapters' gradients are reduce-scattered.
-- Run with ./gpuplan run tests/lua/lora_zero3.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(5)

local function part(r, name)
  for _, p in ipairs(r.parts) do
    if p.name == name then return p.seconds, p.hidden or 0 end
  end
  return 0, 0
end

-- Llama 2 7B on 8 A100s, ZeRO-3, 4096 tokens, 2 micro-batches of 1.
-- DeepSpeed's reduce bucket holds one layer's adapters (rank 16 on q and
-- v: 2 x 16 x (4096 + 4096) = 262144 elements), so each layer reduces
-- its own as the derivation below reads (at the default 5e8 one bucket
-- carries every layer's: tests/lua/ds_bucket_size.t).
local job = { model = "llama2-7b", gpu = "a100-sxm-80gb", gpus = 8, zero = 3, seq = 4096,
              batch = 1, global_batch = 16, recompute = "full", stack = "deepspeed",
              overlap_param_gather = true, overlap_grad_reduce = true,
              reduce_bucket_size = 262144 }
local full = gp.train(t.with(job, { method = "full" }))
local lora = gp.train(t.with(job, { method = "lora", lora_rank = 16 }))

-- The forward gathers (zero_gather, shown and hidden) are the same
-- collectives in both: each layer's 16-bit weights, 2 B x 202.4M, over 8
-- ranks, per micro-batch, and the embedding's and the output layer's
-- (sharded too: train_stage.c ends_block).  Exact: the same collective
-- is priced twice.
local fz, fzh = part(full, "zero_gather")
local lz, lzh = part(lora, "zero_gather")
t.ok(lz + lzh > 0, "LoRA at ZeRO-3 gathers its frozen base")
t.near(lz + lzh, fz + fzh, 1e-9, "the same gathers as the full run's forward")

-- The backward (dp_comm, shown and hidden): the full run gathers each
-- layer again and reduce-scatters its gradients (202.4M x 2 B); LoRA
-- gathers it again but reduce-scatters only the adapters' (rank 16 on q
-- and v: 16 x (4096 + 4096) x 2 = 262k a layer, 0.13% of the layer):
-- more than the forward's gathers less the output layer's (32000 x 4096
-- 16-bit weights, kept from its forward to its backward; its gather hides
-- under a layer's forward, so it counts (1 + 0.189) of itself there),
-- less than the full run's.
local fd, fdh = part(full, "dp_comm")
local ld, ldh = part(lora, "dp_comm")
local head = gp.comm { op = "all_gather", bytes = 2 * 32000 * 4096, gpus = 8,
                       system = "dgx-a100" }.time
t.ok(ld + ldh > lz + lzh - 1.189 * head,
  "LoRA's backward: the gathers again and the adapters' reduce-scatter")
t.ok(ld + ldh < fd + fdh, "less than the full run's backward, which reduce-scatters the whole layer")

-- Without ZeRO-3 (replicated base, ZeRO 0) nothing is gathered.
local rep = gp.train(t.with(job, { method = "lora", lora_rank = 16, zero = 0 }))
local rz, rzh = part(rep, "zero_gather")
t.is(rz + rzh, 0, "a replicated base gathers nothing")
