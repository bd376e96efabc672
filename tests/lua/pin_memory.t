-- Pinned or pageable host layers under --offload (gp.infer pin_memory):
-- DeepSpeed ZeRO-3's offload_param "pin_memory" (ZeRO-Inference's
-- run_model.py --pin-memory 1) keeps the layers in pinned host memory,
-- which the DMA reads straight at the PCIe link's rate; pageable, the
-- driver stages each copy through host DRAM first.  The eager runtimes
-- default to pageable (HF accelerate's CPU state dict), vLLM to pinned.
-- Run with ./gpuplan run tests/lua/pin_memory.t.
package.path = "tests/lua/?.lua;" .. package.path
local t = require "tap"
local gp = require "gpuplan"

-- OPT-30B-like dense stack, every layer in host memory, one RTX A6000
-- (PCIe 4.0 x16: gpuplan.comm.pcie_bw = 16 x 0.985e9 x 2 x 0.8 = 25.216e9
-- B/s), no system: host_bw the workstation's 60e9 B/s.
local q = {
  gpu = "rtx-a6000", weights = 4.5, kv = "fp16",
  model = { id = "OPT-30B", layers = 48, hidden = 7168, heads = 56, kv_heads = 56,
            ffn_hidden = 28672, ffn_gated = false, ffn_act = "relu", vocab = 50272,
            tied_embeddings = true, positions = "learned", norm = "layer" },
  batch = 8, input = 512, output = 32, offload = true, offload_layers = 48,
  host_memory = "252GB", runtime = "eager-pytorch",
}
local link = 16 * 0.985e9 * 2 * 0.8
local pageable = gp.infer(q)
local pinned = gp.infer(t.with(q, { pin_memory = true }))
local bytes = pinned.offload_bytes

-- Pinned: the step copies its offloaded layers at the link's rate, the
-- same time as the link's 25.216e9 B/s stated as pcie_bw (1e-12: one
-- division either way).
local at_link = gp.infer(t.with(q, { pcie_bw = link }))
t.near(pinned.decode.offload_time, at_link.decode.offload_time, 1e-12,
       "pinned: the offloaded layers at PCIe's 25.2 GB/s")
-- about bytes / link: offload_bytes (what the layers hold in host
-- memory) and the bytes a step streams differ by 0.012% here, so 1e-3
t.near(pinned.decode.offload_time, bytes / link, 1e-3, "pinned: offload_bytes / 25.2 GB/s")
-- Pageable (the eager runtime's default): the staging copy reads and
-- writes host DRAM: 1/rate = 1/25.216e9 + 2/60e9 -> 13.71e9 B/s.
local staged = 1 / (1 / link + 2 / 60e9)
local at_staged = gp.infer(t.with(q, { pcie_bw = staged }))
t.near(pageable.decode.offload_time, at_staged.decode.offload_time, 1e-12,
       "pageable: staged at 13.7 GB/s")
-- pin_memory = false says the default out loud: the same prediction.
local stated = gp.infer(t.with(q, { pin_memory = false }))
t.near(stated.tokens_per_s, pageable.tokens_per_s, 1e-12, "pin_memory = false is the eager default")
-- The rates' ratio: 25.216 / 13.71 = 1.84 (the DRAM's two passes).
t.near(pageable.decode.offload_time / pinned.decode.offload_time, link / staged, 1e-9,
       "pinned copies 1.84x as fast as pageable")
t.ok(t.said(pinned, "from pinned host memory", true), "the pinned rate is said")

-- vLLM pins its copy by default (maybe_offload_to_cpu); pin_memory =
-- false stages it as the eager runtimes do.
local v = t.with(q, { runtime = "vllm" })
local vp = gp.infer(t.with(v, { pin_memory = false }))
t.near(vp.decode.offload_time, at_staged.decode.offload_time, 1e-12, "vllm with pin_memory = false: staged")

-- host_bw is the staging copy's DRAM: refused where the copy is pinned.
t.raises(function() gp.infer(t.with(q, { pin_memory = true, host_bw = "100GB/s" })) end,
         "with pin_memory copies them from pinned memory", "host_bw refused with pinned layers", true)
-- pin_memory without offload places nothing.
local none = t.with(q, { pin_memory = true })
none.offload, none.offload_layers = nil, nil
t.raises(function() gp.infer(none) end,
         "pin_memory says where offloaded layers sit", "pin_memory needs offload", true)
t.raises(function() gp.infer(t.with(q, { pin_memory = "yes" })) end,
         "pin_memory", "pin_memory must be a boolean", true)

-- The runtime's way said under the option's name where the run gives
-- none, and not where it does.
t.ok(t.said(pageable, "pin_memory=false (runtime eager-pytorch's: pageable host layers)", true),
     "eager-pytorch's pageable layers said as pin_memory=false")
t.ok(not t.said(pinned, "pin_memory=", true), "stated: not said")

t.done_testing()
