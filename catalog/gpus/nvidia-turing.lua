-- NVIDIA Turing (TU102). FP16 tensor cores (FP16 or FP32 accumulate), INT8/INT4;
-- no BF16, no TF32.

gpu {
  id = "titan-rtx", name = "NVIDIA TITAN RTX 24GB", vendor = "NVIDIA",
  arch = "turing", form_factor = "desktop PCIe dual-slot", year = 2018,
  memory = "24GiB", memory_type = "GDDR6",
  mem_bw = "672GB/s",
  sms = 72,
  peak = {
    fp32 = "16.3TFLOPS", fp16 = "130.5TFLOPS",
  },
  scaleup = { fabric = "pcie3", domain = 8 },
  pcie = { gen = 3, lanes = 16 },
  tdp = "280W",
  source = "Tom's Hardware 'Nvidia Titan RTX specs, pricing' (2018-12-03: TU102, 4608 "
        .. "CUDA cores, 576 tensor cores, 72 RT cores, 16.3 TFLOPS FP32, 130 TFLOPS of "
        .. "deep learning performance, 24GB GDDR6 at 672 GB/s, 280 W); Quadro RTX 8000 "
        .. "datasheet, the same full TU102 (130.5 Tensor TFLOPS, 'FP16 matrix multiply "
        .. "with FP16 or FP32 accumulate', PCI Express 3.0 x16)",
  notes = "Unlike GeForce Turing, the TITAN RTX runs FP16 tensor math with FP32 "
       .. "accumulate at the full 130 TFLOPS, as the Quadro RTX 8000 of the same die. "
       .. "INT8/INT4 tensor rates not stored (no source at hand). "
       .. "A two-card NVLink bridge exists (100 GB/s); the catalog's fabric is the "
       .. "PCIe 3.0 host link. SMs: 72 (one RT core per SM).",
}
