-- NVIDIA Ampere (GA100 data-centre parts, GA102 professional cards).
--
-- Tensor peaks are DENSE (no 2:4 sparsity). NVIDIA's Ampere datasheets print
-- dense and sparse pairs; the sparse figure is exactly twice the dense one.
-- The 78 TFLOPS FP16 figure that some guides quote for A100 is the non-tensor
-- (vector) rate; tensor FP16/BF16 is 312 dense.
--
-- Memory follows catalog/FORMAT.md "Memory capacity": `memory` is the
-- marketed size read as GiB (the vendors' "GB" is binary: nvidia-smi reports
-- 81920MiB for the 80GB A100 and A800, 81559MiB for the 80GB H100/H800,
-- 97871MiB for the 96GB H20, 143771MiB for the 141GB H200); `usable_memory`
-- is what CUDA lets PyTorch allocate, given where measured and otherwise
-- derived as memory x 0.989.

gpu {
  id = "a100-sxm-40gb", name = "NVIDIA A100 SXM4 40GB", vendor = "NVIDIA",
  arch = "ampere", form_factor = "SXM4", year = 2020,
  memory = "40GiB", memory_type = "HBM2",
  mem_bw = "1.555TB/s",
  sms = 108,
  nccl_p2p_read = true,  -- GA100, compute capability 8.0 (catalog/FORMAT.md)
  -- GA100: "Peak BF16 TFLOPS (non-Tensor)" 39 = 2 x FP32 19.5 (FP16 78 = 4x; the
  -- bf16 figure taken) -- NVIDIA "Hopper Architecture In-Depth" table 3
  vec16_x = 2,
  peak = {
    fp64 = "9.7TFLOPS", fp64_tensor = "19.5TFLOPS", fp32 = "19.5TFLOPS",
    tf32 = "156TFLOPS", bf16 = "312TFLOPS", fp16 = "312TFLOPS",
    int8 = "624TOPS",
  },
  scaleup = { fabric = "nvlink3", domain = 8 },
  pcie = { gen = 4, lanes = 16 },
  tdp = "400W",
  mig = { max = 7, profiles = { "1g.5gb", "2g.10gb", "3g.20gb", "4g.20gb",
                                "7g.40gb" } },
  source = "NVIDIA A100 datasheet as reproduced by glennklockwood.com/garden/processors/A100; "
        .. "stas00/ml-engineering network/README.md (NVLink 3: 12 links, 600 GB/s bidir)",
  notes = "Datasheet sparse figures: TF32 312, BF16/FP16 624, INT8 1248 (2x dense). "
       .. "MIG profile names are the NVIDIA MIG user guide's A100-40GB set; the "
       .. "count 7 was not read from the A100 datasheet itself."
       .. " SMs: 108 (NVIDIA A100 Tensor Core GPU Architecture whitepaper: 108 SMs).",
}

gpu {
  id = "a100-sxm-80gb", name = "NVIDIA A100 SXM4 80GB", vendor = "NVIDIA",
  arch = "ampere", form_factor = "SXM4", year = 2020,
  memory = "80GiB", memory_type = "HBM2e",
  usable_memory = "79.15GiB",
  mem_bw = "2.039TB/s",
  sms = 108,
  nccl_p2p_read = true,  -- GA100, compute capability 8.0 (catalog/FORMAT.md)
  -- GA100: "Peak BF16 TFLOPS (non-Tensor)" 39 = 2 x FP32 19.5 (FP16 78 = 4x; the
  -- bf16 figure taken) -- NVIDIA "Hopper Architecture In-Depth" table 3
  vec16_x = 2,
  peak = {
    fp64 = "9.7TFLOPS", fp64_tensor = "19.5TFLOPS", fp32 = "19.5TFLOPS",
    tf32 = "156TFLOPS", bf16 = "312TFLOPS", fp16 = "312TFLOPS",
    int8 = "624TOPS",
  },
  scaleup = { fabric = "nvlink3", domain = 8 },
  pcie = { gen = 4, lanes = 16 },
  tdp = "400W",
  mig = { max = 7, profiles = { "1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb",
                                "7g.80gb" } },
  source = "glennklockwood.com A100 page (NVIDIA datasheet); thundercompute.com A100 guide "
        .. "(2039 GB/s, 400 W, NVLink 600 GB/s); jax-ml/scaling-book gpus.md "
        .. "(12 NVLink ports, 300 GB/s per direction)",
  notes = "Guides round the bandwidth to 2.0 TB/s (within 2%). usable_memory: "
       .. "PyTorch OOM messages on A100 80GB report 'total capacity of 79.15 GiB' "
       .. "alongside nvidia-smi's 81920MiB; the figure moves by ~0.1-0.2 GiB "
       .. "with the driver. CTS SKUs run up to 500 W (ml-engineering power table)."
       .. " SMs: 108 (NVIDIA A100 whitepaper: 108 SMs).",
}

gpu {
  id = "a100-pcie-80gb", name = "NVIDIA A100 PCIe 80GB", vendor = "NVIDIA",
  arch = "ampere", form_factor = "PCIe dual-slot", year = 2021,
  memory = "80GiB", memory_type = "HBM2e",
  mem_bw = "1.935TB/s",
  sms = 108,
  nccl_p2p_read = true,  -- GA100, compute capability 8.0 (catalog/FORMAT.md)
  -- GA100: "Peak BF16 TFLOPS (non-Tensor)" 39 = 2 x FP32 19.5 (FP16 78 = 4x; the
  -- bf16 figure taken) -- NVIDIA "Hopper Architecture In-Depth" table 3
  vec16_x = 2,
  peak = {
    fp64 = "9.7TFLOPS", fp64_tensor = "19.5TFLOPS", fp32 = "19.5TFLOPS",
    tf32 = "156TFLOPS", bf16 = "312TFLOPS", fp16 = "312TFLOPS",
    int8 = "624TOPS",
  },
  achievable = {
    gemm = { bf16 = 0.81, fp16 = 0.81, tf32 = 0.81, int8 = 0.81 },
    hbm = 0.85,
    reason = "MAMF (best large bf16 matmul) 252.9 of 312 TFLOPS = 0.81: the "
          .. "300 W card cannot hold the boost clock the SXM part holds; "
          .. "tf32/int8 not measured, assumed equal to bf16; hbm as the ampere arch",
    source = "stas00/ml-engineering compute/accelerator/README.md, Maximum "
          .. "Achievable Matmul FLOPS table (torch 2.5.1+cu124)",
  },
  scaleup = { fabric = "nvlink-bridge", domain = 2 },
  pcie = { gen = 4, lanes = 16 },
  tdp = "300W",
  mig = { max = 7 },
  source = "thundercompute A100 guide (1935 GB/s, 300 W); stas00/ml-engineering "
        .. "(same TFLOPS as SXM, 300 W, 1.94 TB/s); winston-zhang-orz/gpu-specs",
  notes = "The NVLink bridge is optional and pairs 2 cards; without it the "
       .. "cards talk over PCIe (use the pcie4 fabric). nvplay.ru lists 250 W "
       .. "for the launch SKU; NVIDIA says 300 W (chosen)."
       .. " SMs: 108 (NVIDIA A100 whitepaper: 108 SMs).",
}

gpu {
  id = "a800-sxm-80gb", name = "NVIDIA A800 SXM4 80GB", vendor = "NVIDIA",
  arch = "ampere", form_factor = "SXM4", year = 2022,
  memory = "80GiB", memory_type = "HBM2e",
  usable_memory = "79.15GiB",
  mem_bw = "2.039TB/s",
  sms = 108,
  nccl_p2p_read = true,  -- GA100, compute capability 8.0 (catalog/FORMAT.md)
  -- GA100: "Peak BF16 TFLOPS (non-Tensor)" 39 = 2 x FP32 19.5 (FP16 78 = 4x; the
  -- bf16 figure taken) -- NVIDIA "Hopper Architecture In-Depth" table 3
  vec16_x = 2,
  peak = {
    fp64 = "9.7TFLOPS", fp64_tensor = "19.5TFLOPS", fp32 = "19.5TFLOPS",
    tf32 = "156TFLOPS", bf16 = "312TFLOPS", fp16 = "312TFLOPS",
    int8 = "624TOPS",
  },
  scaleup = { fabric = "nvlink3-a800", domain = 8 },
  pcie = { gen = 4, lanes = 16 },
  tdp = "400W",
  source = "hahnyuan/LLM-Viewer hardware_params.py (A800 80G SXM: 2039e9 B/s, FP16 "
        .. "312e12, INT8 624e12); citsjtu2020/LLM-Prof hardware_spec.md (interconnect "
        .. "400 GB/s); techpowerup news (A800 differs from A100 only in chip-to-chip "
        .. "bandwidth, 600 -> 400 GB/s)",
  notes = "No NVIDIA A800 datasheet was found. FP64/FP32/TF32 and the 400 W TDP "
       .. "are taken equal to A100 SXM 80GB on techpowerup's 'only difference is "
       .. "the NVLink' statement, not read directly."
       .. " SMs: 108 (same GA100 configuration as A100 (A100 whitepaper: 108 SMs))."
       .. " usable_memory: as A100 SXM4 80GB, the same GA100 board: nvidia-smi shows 81920MiB on both (A800-SXM4-80GB nvidia-smi transcripts on GitHub).",
}

gpu {
  id = "a800-pcie-80gb", name = "NVIDIA A800 PCIe 80GB", vendor = "NVIDIA",
  arch = "ampere", form_factor = "PCIe dual-slot",
  memory = "80GiB", memory_type = "HBM2e",
  mem_bw = "1.935TB/s",
  sms = 108,
  nccl_p2p_read = true,  -- GA100, compute capability 8.0 (catalog/FORMAT.md)
  -- GA100: "Peak BF16 TFLOPS (non-Tensor)" 39 = 2 x FP32 19.5 (FP16 78 = 4x; the
  -- bf16 figure taken) -- NVIDIA "Hopper Architecture In-Depth" table 3
  vec16_x = 2,
  peak = {
    fp64 = "9.7TFLOPS", fp64_tensor = "19.5TFLOPS", fp32 = "19.5TFLOPS",
    tf32 = "156TFLOPS", bf16 = "312TFLOPS", fp16 = "312TFLOPS",
    int8 = "624TOPS",
  },
  scaleup = { fabric = "pcie4", domain = 8 },
  pcie = { gen = 4, lanes = 16 },
  tdp = "300W",
  source = "hmc-tech.com A800 page (aggregator: 311.87 TFLOPS FP16 tensor, 19.49 "
        .. "FP32, computed from clocks); other fields as A100 PCIe 80GB",
  notes = "LOW CONFIDENCE. Memory bandwidth and TDP were not found for the A800 "
       .. "PCIe; the A100 PCIe 80GB figures (1.935 TB/s, 300 W) are used. "
       .. "hmc-tech gives 250 W and a 2021 date, which look wrong. Bridge "
       .. "bandwidth unknown, so the scale-up fabric is plain PCIe."
       .. " SMs: 108 (same GA100 configuration as A100 (A100 whitepaper: 108 SMs)).",
}

gpu {
  id = "a10", name = "NVIDIA A10 24GB", vendor = "NVIDIA",
  arch = "ampere", form_factor = "PCIe single-slot FHFL", year = 2021,
  memory = "24GiB", memory_type = "GDDR6",
  usable_memory = "22.25GiB",
  mem_bw = "600GB/s",
  sms = 72,
  peak = {
    fp64 = "0.488TFLOPS", fp32 = "31.2TFLOPS", tf32 = "62.5TFLOPS",
    bf16 = "125TFLOPS", fp16 = "125TFLOPS", int8 = "250TOPS",
  },
  scaleup = { fabric = "pcie4", domain = 8 },
  pcie = { gen = 4, lanes = 16 },
  tdp = "150W",
  source = "NVIDIA A10 datasheet via the 'Data Center PCIe Cards' table and "
        .. "winston-zhang-orz/gpu-specs; lamonoai/gpumap (FP64 0.488)",
  notes = "cli99/llm-analysis a10-pcie-28gb.json says 28 GB: wrong, A10 is 24 GB. "
       .. "Datasheet sparse figures are 2x the dense ones stored here."
       .. " SMs: 72 (NVIDIA GA102 whitepaper: A10 72 SMs)."
       .. " usable_memory: ECC on the GDDR6 is on by default and holds 1/16 of it (nvidia-smi: L4 23034MiB, L40S 46068MiB; an A10 shows 23028MiB with ECC on, 24564MiB with it off), then x 0.989 (catalog/FORMAT.md): 24 x 15/16 x 0.989 = 22.25 GiB.",
}

gpu {
  id = "a40", name = "NVIDIA A40 48GB", vendor = "NVIDIA",
  arch = "ampere", form_factor = "PCIe dual-slot", year = 2020,
  memory = "48GiB", memory_type = "GDDR6",
  usable_memory = "44.5GiB",
  mem_bw = "696GB/s",
  sms = 84,
  peak = {
    fp64 = "0.585TFLOPS", fp32 = "37.4TFLOPS", tf32 = "74.8TFLOPS",
    bf16 = "149.7TFLOPS", fp16 = "149.7TFLOPS", int8 = "299.3TOPS",
  },
  scaleup = { fabric = "nvlink-bridge-ga102", domain = 2 },
  pcie = { gen = 4, lanes = 16 },
  tdp = "300W",
  source = "hahnyuan/LLM-Viewer (A40: 696e9 B/s, FP16 149.7e12, INT8 299.3e12); "
        .. "lamonoai/gpumap (TF32 74.8, 300 W, PCIe 4.0, NVLink); topcpu.net (Oct 2020)",
  notes = "The 2-way NVLink bridge bandwidth was not read for the A40; it is "
       .. "taken equal to the RTX A6000's 112.5 GB/s bidirectional (same GA102 "
       .. "die and bridge). Without a bridge use pcie4."
       .. " SMs: 84 (NVIDIA GA102 whitepaper: A40 84 SMs)."
       .. " usable_memory: ECC on the GDDR6 is on by default (assumed for this card as for the other data-centre GDDR6 parts) and holds 1/16 of it (nvidia-smi: L4 23034MiB, L40S 46068MiB; an A10 shows 23028MiB with ECC on, 24564MiB with it off), then x 0.989 (catalog/FORMAT.md): 48 x 15/16 x 0.989 = 44.5 GiB.",
}

gpu {
  id = "rtx-a6000", name = "NVIDIA RTX A6000 48GB", vendor = "NVIDIA",
  arch = "ampere", form_factor = "workstation PCIe dual-slot", year = 2020,
  memory = "48GiB", memory_type = "GDDR6",
  mem_bw = "768GB/s",
  sms = 84,
  peak = {
    fp32 = "38.7TFLOPS", bf16 = "154.8TFLOPS", fp16 = "154.8TFLOPS",
    int8 = "309.7TOPS",
  },
  scaleup = { fabric = "nvlink-bridge-ga102", domain = 2 },
  pcie = { gen = 4, lanes = 16 },
  tdp = "300W",
  source = "servethehome.com RTX A6000 launch article (NVIDIA spec table: 48 GB GDDR6 "
        .. "ECC, 768 GB/s, 300 W, PCIe 4.0 x16, NVLink 112.5 GB/s bidirectional, "
        .. "2-way); llmperf.net A6000 page citing Microway (FP16/BF16 tensor 154.8 "
        .. "dense, 309.7 sparse; INT8 309.7 TOPS); sysrqmts.com (FP32 38.71 TFLOPS)",
  notes = "Not in the shared GPU table; added because validation cases use it. "
       .. "TF32 and FP64 not read. Without a bridge use pcie4."
       .. " SMs: 84 (NVIDIA GA102 whitepaper: RTX A6000 84 SMs).",
}
