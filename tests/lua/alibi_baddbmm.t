-- Megatron-DeepSpeed's ALiBi on its fused (non-flash) attention path:
-- BigScience's ParallelAttention passes the [b * np, 1, sk] bias as
-- torch.baddbmm's input with beta 1, and PyTorch expands it and copies it
-- into the result ("result.copy_(self)", baddbmm_out_cuda_impl) before the
-- batched GEMM reads it back as C: a write and a read of A a score more,
-- in the forward only.
-- Run with ./gpuplan run tests/lua/alibi_baddbmm.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(3)

local function part(r, name) return t.parts(r)[name] end  -- tap.lua's parts
local function run(pos, flash)
  return gp.train { model = { name = "t", layers = 24, hidden = 1024, heads = 16, kv_heads = 16,
                              ffn_hidden = 4096, ffn_gated = false, vocab = 32768,
                              tied_embeddings = true, positions = pos },
                    gpu = "a100-sxm-80gb", gpus = 1, method = "pretrain", seq = 2048, batch = 1,
                    global_batch = 1, stack = "megatron", flash = flash, kernels = "fused",
                    recompute = "none", precision = "bf16" }
end

-- The same model with ALiBi and with a learned table: the table's own
-- costs (its add at the input, its gradient and step) are what the flash
-- runs differ by, the bias being the kernel's own there.
local off = part(run("learned", true), "compute") - part(run("alibi", true), "compute")
t.ok(off >= 0 and off < 1e-4, "flash: ALiBi costs nothing beside a learned table's add")
-- Unfused: 24 layers x 2 x 2 B x (1 x 16 heads x 2048^2 scores) = 6.44 GB
-- at the A100's streaming rate (2.039 TB/s x 0.85): 3.72 ms.  The
-- attention op is priced as the larger of its GEMM time and its memory
-- time, so the bytes show in full only where it was memory-bound
-- already: between 90% and 100% of that (here 95%).
local want = 24 * 2 * 2 * 16 * 2048 * 2048 / (2.039e12 * 0.85)
local d = part(run("alibi", false), "compute") - part(run("learned", false), "compute") + off
t.ok(d <= want * 1.001, string.format("no more than the copy and the read of C (%.3f ms)", 1e3 * d))
t.ok(d >= 0.9 * want, string.format("at least 90%% of %.3f ms", 1e3 * want))
