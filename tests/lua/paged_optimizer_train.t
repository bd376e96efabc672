-- gp.train's paged_optimizer: bitsandbytes' paged optimizer states in CUDA
-- managed memory, paged over the host link each step where they do not
-- fit beside the rest of the step (engine/train.c paged_state_time), and
-- the torchtune train profile that takes it for PagedAdamW8bit.
-- Run with ./gpuplan run tests/lua/paged_optimizer_train.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(7)

-- torchtune's single-device full fine-tune of Llama 3.1 8B (the README's
-- "Memory and training speed" row): batch 2 packed to 2048, full
-- checkpointing, optimizer_in_bwd, the 8-bit AdamW's states paged or not.
local function run(gpu, paged)
  return gp.train { model = "llama3.1-8b", gpu = gpu, gpus = 1, seq = 2048, batch = 2,
                    global_batch = 2, method = "full", recompute = "full", kernels = "fused",
                    precision = "bf16", stack = "hf", recipe = "bf16", optimizer = "adam8bit",
                    grads_in_bwd = true, paged_optimizer = paged, margin = 0 }
end

-- On a 24 GB RTX 4090 the bf16 weights (16.1 GB) and the step's
-- activations leave ~3.6 GB of the card; the states, 8,030,261,248
-- parameters x (2 x 1 B + 2 x 4 B absmax a 2048-element block) =
-- 8,030,261,248 x 2.00390625 = 16.0919e9 B, do not fit, so all of them
-- page in and out every step (the UVM driver evicts the least recently
-- migrated chunk, and the optimizer's order repeats: every chunk is gone
-- before its next visit).  The two directions run beside each other, so
-- the step grows by the states once over the card's PCIe Gen4 x16 link,
-- 16 lanes x 0.985 GB/s x 2 x 0.8 = 25.216 GB/s each way
-- (gpuplan.comm pcie_bw): 16.0919e9 / 25.216e9 = 0.63816 s.  Unpaged,
-- the states are PyTorch tensors: no traffic (the run does not fit, but
-- its step is priced the same).  Tolerance 1e-4 relative: the two steps
-- share every other term; the difference is the one division.
local p, u = run("rtx-4090", true), run("rtx-4090", false)
t.ok(p.fits and not u.fits, "paged states fit the 4090 outside PyTorch's peak; unpaged they do not")
t.near((p.step_s - u.step_s) / 0.63816, 1, 1e-4,
       "4090: the 16.09 GB of states page through the 25.2 GB/s link once a step")
-- The paging is priced as the optimizer's (its step waits on it): the
-- optimizer part carries it on top of the unpaged step's, 1e-4 as above.
local function opt_part(r)
  for _, q in ipairs(r.parts) do if q.name == "optimizer" then return q.seconds end end
end
t.near((opt_part(p) - opt_part(u)) / 0.63816, 1, 1e-4, "the paging is in the step's optimizer part")

-- On an 80 GB A100 the same states fit beside the rest (16.1 + 16.1 GB
-- and the activations, well under 80 GB): nothing pages, the step is the
-- unpaged one exactly.
local a, b = run("a100-sxm-80gb", true), run("a100-sxm-80gb", false)
t.is(a.step_s, b.step_s, "A100 80 GB: the paged states stay resident, no traffic")

-- The torchtune train profile: PagedAdamW8bit (8B_full_single_device.yaml's
-- optimizer) is paged and optimizer_in_bwd frees each gradient in its hook;
-- a case that states torchao's AdamW8bit says paged_optimizer false.
local case = {
  id = "t", kind = "train",
  model = { name = "Llama 3.1 8B", layers = 32, hidden = 4096, heads = 32, kv_heads = 8,
            ffn_hidden = 14336, ffn_gated = true, vocab = 128256, tied_embeddings = false,
            params_b = 8 },
  hardware = { gpu = "rtx-4090", gpus = 1, gpus_per_node = 1 },
  parallel = { tp = 1, pp = 1, dp = 1, micro_batch = 2, global_batch = 2 },
  workload = { seq_len = 2048, precision = "bf16", method = "full", optimizer = "adam8bit",
               kernels = "fused", framework = "torchtune" },
  measured = { metric = "tokens_per_s_per_gpu", value = 1650 },
  source = { title = "torchtune README 'Memory and training speed' table" },
}
local seen = t.handed(case)
t.ok(seen and seen.paged_optimizer == true and seen.grads_in_bwd == true,
     "torchtune full fine-tune with adam8bit: paged states, optimizer_in_bwd")
case.workload.paged_optimizer = false
seen = t.handed(case)
t.ok(seen and seen.paged_optimizer == false, "a case's paged_optimizer false wins over the profile")
case.workload.paged_optimizer = nil
case.workload.optimizer = "adamw"
seen = t.handed(case)
t.ok(seen and seen.paged_optimizer == nil, "torch's AdamW: nothing paged")
