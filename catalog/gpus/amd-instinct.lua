-- AMD Instinct (CDNA 2/3/4), OAM modules on 8-GPU UBB boards.
--
-- AMD lists dense figures and, separately, "with structured sparsity"
-- figures at exactly 2x. For MI355X the "10.1 PF FP8" and "5 PF FP16"
-- headline numbers are the sparse ones; its FP6/FP4 10.1 PF are dense.
-- AMD FP64 figures were not found in the sources read (left out).

-- The K-stage walk of AMD's tuned 8-bit GEMMs on the gfx942 die (achievable
-- .unsplit): one stage of at most 512 B of K in the CU's 64 KiB LDS, and the
-- latency a CTA waits per stage, fitted on the MI300X's rows (its reason).
-- The MI325X is the same die running the same kernels (its reason), so both
-- entries take these three figures from here, each with its own reason.
local function gfx942_unsplit(reason, source)
  return { lds = "64KiB", stage_k = "512B", latency = "0.55us", reason = reason,
           source = source }
end

gpu {
  id = "mi250x", name = "AMD Instinct MI250X 128GB (2 GCDs)", vendor = "AMD",
  arch = "cdna2", form_factor = "OAM", year = 2021,
  memory = "128GiB", memory_type = "HBM2e",
  mem_bw = "3.28TB/s",
  sms = 220,
  peak = {
    fp32 = "47.9TFLOPS", bf16 = "383TFLOPS", fp16 = "383TFLOPS",
    int8 = "383TOPS",
  },
  scaleup = { fabric = "xgmi3", domain = 8 },
  tdp = "500W",
  source = "stas00/ml-engineering compute/accelerator/README.md (47.9/383/383; 128 GB "
        .. "HBM2e 3.28 TB/s; 500 W TDP, 560 W peak TBP) and network/README.md (xGMI "
        .. "50 GB/s x 7 = 350 per direction); cli99/llm-analysis mi250x-128gb.json "
        .. "(3200 GB/s, fp16 383)",
  notes = "All figures cover the two GCDs of the package. Software sees each "
       .. "GCD as its own device (64 GB, 1.64 TB/s, 191.5 TFLOPS); a single "
       .. "matmul uses one GCD. llm-analysis uses 3.2 TB/s. Year from the Nov "
       .. "2021 launch (not in the source table)."
       .. " SMs: 220 (AMD CDNA 2 whitepaper: MI250X 220 CUs (2 GCDs)).",
}

gpu {
  id = "mi300x", name = "AMD Instinct MI300X 192GB", vendor = "AMD",
  arch = "cdna3", form_factor = "OAM", year = 2023,
  memory = "192GiB", memory_type = "HBM3",
  mem_bw = "5.3TB/s",
  sms = 304,
  peak = {
    fp32 = "163.4TFLOPS", tf32 = "653.7TFLOPS",
    bf16 = "1307.4TFLOPS", fp16 = "1307.4TFLOPS",
    fp8 = "2614.9TFLOPS", int8 = "2600TOPS",
  },
  achievable = {
    -- fp8 (and int8, taken as fp8) at the rate AMD's tuned fp8 GEMMs reach
    -- on real model shapes once their K stages' latency is priced apart
    -- (unsplit below): 0.47, near the best shape's 0.49 (reason below).
    gemm = { bf16 = 0.54, fp16 = 0.50, tf32 = 0.54, fp8 = 0.47, int8 = 0.47 },
    hbm = 0.85,
    -- A memory-bound fp8 GEMM (decode's linears) streams its weights
    -- well below the common weight-streaming rate (ROOF_GEMV_BW 0.94):
    -- AMD's tuned CK kernels for the Llama 70B/405B serving shapes reach
    -- 0.66-3.9 TB/s at 1 and 16 tokens, not the 4.2 TB/s of a copy.
    stream = {
      fp8 = 0.70,
      reason = "AMD's tuned a8w8 (fp8 e4m3fnuz, rowwise-scaled) CK GEMMs on "
            .. "MI300X (gfx942, 304 CUs), the fastest kernel of each shape: at "
            .. "M = 1 and 16 tokens over the 24 N x K of Llama 2/3 70B and "
            .. "405B at TP 1/4/8, bytes (N K + M K + 2 M N) / (us - the "
            .. "model's 3.9 us fill) / (5.3 TB/s x 0.85) has median 0.70 "
            .. "(0.19 at N = 1280, 0.92 at 16384 x 13312); Llama 3.1 405B "
            .. "TP8's four linears (qkv 2304 x 16384 28.7 us, o 16384 x 2048 "
            .. "12.3, gate_up 13312 x 16384 71.8, down 16384 x 6656 31.3 at "
            .. "M = 1) sum to 0.69, Llama 2 70B TP1's to 0.69 (0.71 and 0.69 "
            .. "at M = 16). Tuned kernels of 2025; the hipBLASLt fp8 path "
            .. "vLLM ran on ROCm in 2024 is taken to stream no faster. Other "
            .. "precisions (not in the table) keep ROOF_GEMV_BW",
      source = "ROCm/aiter PR 1092 '[MI300X] tune Gemm performance for llama "
            .. "70b/405b' (2025-09-26, commit fbb52dd): aiter/configs/"
            .. "a8w8_tuned_gemm.csv rows of cu_num 304 (M, N, K, us, tflops, bw)",
    },
    -- The tuned kernels never split K and hold one K stage in the CU's
    -- LDS: a CTA waits a memory latency per stage on top of its MFMAs
    -- (roofline.c unsplit_time), so a GEMM of few tiles is slow.
    unsplit = gfx942_unsplit(
      "AMD's tuned a8w8 CK GEMMs on MI300X: splitK is 0 in every row of "
            .. "cu_num 304, and each kernel's stage, KPerBlock x (MPerBlock + "
            .. "NPerBlock) bytes, fits the CU's 64 KiB LDS with KPerBlock at most "
            .. "512 (names 'a8w8_rowwise_256x16x64x512', 32x128x256, 128x128x256, "
            .. "256x256x128: block size, MPerBlock, NPerBlock, KPerBlock). The "
            .. "latency is what the table's GEMMs of at most 40 tiles (N 1280, "
            .. "2304, 2560 at M = 1-32: 20-40 of the 304 CUs busy, their stream "
            .. "far below the device's) take per 512 B stage in this model: "
            .. "median 0.55 us over the 7 rows (0.49-0.75; 405B qkv, N 2304 K "
            .. "16384, 23.3 us at M = 16 for 32 stages). Fitted jointly with "
            .. "gemm.fp8 (each held, the other's median reproduces itself); "
            .. "a per-stage latency, not a measured memory latency",
      "ROCm/aiter PR 1092 (commit fbb52dd) aiter/configs/a8w8_tuned_gemm.csv, "
            .. "cu_num 304 rows (splitK, kernelName, us); ROCm docs 'AMD GPU "
            .. "specifications' (reference/gpu-specs): CDNA3 gfx942, 304 CUs, "
            .. "LDS (KiB) 64"),
    reason = "AMD's own Max-Achievable FLOPs (hipBLASLt-bench, normal-like "
          .. "'trig_float' data, cold caches, thermally settled, 4096x4864x32896 "
          .. "bf16/fp16 and 4096x3648x32896 fp8): MI300X fp16 654 TFLOPs at a "
          .. "1115 MHz median clock, bf16 708 (1207 MHz), fp8 1273 (1230 MHz). "
          .. "Of the stored peaks: bf16 708/1307.4 = 0.54, fp16 654/1307.4 = "
          .. "0.50, fp8 1273/2614.9 = 0.49 (fp8 gains 1.80x over bf16, not "
          .. "the 2x of the peaks). AMD gives these as the targets 'you can "
          .. "expect to achieve ... from our libraries'; a best shape, so "
          .. "serving GEMMs reach no more. They reach less in fp8: AMD's tuned "
          .. "a8w8 GEMMs for Llama 2/3 70B and 405B at TP 1/4/8 (aiter, the "
          .. "fastest kernel of each shape) run 697-1055 TFLOPs at M = 16384 "
          .. "(8192 x 1024 lowest; gate_up 13312 x 16384 6.94 ms, down 16384 "
          .. "x 6656 3.59 ms); "
          .. "the fraction at which this model's GEMM (an unsplit kernel's "
          .. "tile, waves and K-fill, its K stages' latency, the stream rate "
          .. "above: unsplit below) reproduces each measured time has median "
          .. "0.471 over the 120 rows of M >= 2048 (0.32-0.61 a row; 0.380 "
          .. "before the stage latency was priced apart); stored 0.47 for fp8. "
          .. "int8 taken as "
          .. "fp8 and tf32 as bf16 (not measured); memory not measured "
          .. "(cdna3 value)",
    source = "rocm.blogs.amd.com 'Measuring Max-Achievable FLOPs - Part 2' "
          .. "(Sander, Masters, Poursartip, Ho; 2025-02-28), Table 1 and Appendix "
          .. "B (hipBLASLt commit db8e93b, ROCm 6.5 target); ROCm/aiter PR 1092 "
          .. "(commit fbb52dd) aiter/configs/a8w8_tuned_gemm.csv, cu_num 304 rows",
  },
  scaleup = { fabric = "xgmi4", domain = 8 },
  pcie = { gen = 5, lanes = 16 },
  tdp = "750W",
  source = "stas00/ml-engineering (163.4/653.7/1300/2610/2600; 192 GB 5.3 TB/s; 750 W; "
        .. "xGMI 448 per direction); aiwiki.ai amd_instinct_mi355x (MI300X 192 GB "
        .. "5.3 TB/s 750 W, late 2023)",
  notes = "gpu.blog lists FP16 330.6 and 5.2 TB/s: wrong. No MIG (spatial "
       .. "partitioning instead)."
       .. " SMs: 304 (AMD CDNA 3 whitepaper: MI300X 304 CUs).",
}

gpu {
  id = "mi325x", name = "AMD Instinct MI325X 256GB", vendor = "AMD",
  arch = "cdna3", form_factor = "OAM", year = 2024,
  memory = "256GiB", memory_type = "HBM3e",
  mem_bw = "6TB/s",
  sms = 304,
  peak = {
    fp32 = "163.4TFLOPS", tf32 = "653.7TFLOPS",
    bf16 = "1307.4TFLOPS", fp16 = "1307.4TFLOPS",
    fp8 = "2614.9TFLOPS", int8 = "2600TOPS",
  },
  achievable = {
    -- fp8 (and int8, taken as fp8): the MI300X's 0.47 at the MI325X's
    -- clock, with the same unsplit K-stage pricing (reason below).
    gemm = { bf16 = 0.64, fp16 = 0.61, tf32 = 0.64, fp8 = 0.56, int8 = 0.56 },
    hbm = 0.85,
    -- The same die as the MI300X (gfx942, 304 CUs, 64 KiB LDS a CU) runs
    -- the same tuned 8-bit kernels: AMD keys its tuned GEMM tables on the
    -- CU count, not the board, so the MI300X's unsplit stage pricing holds.
    unsplit = gfx942_unsplit(
      "MI325X is the MI300X's CDNA 3 die (gfx942, 304 CUs, 64 KiB LDS "
            .. "a CU) with HBM3E and a 1000 W limit. AMD's tuned a8w8 GEMM "
            .. "table is keyed on cu_num (rows of cu_num 304 serve both boards), "
            .. "so the same kernels run: splitK 0, one K stage of at most 512 B "
            .. "in the LDS. The stage latency is the MI300X's (0.55 us, fitted "
            .. "there on the table's few-tile rows), not measured on this board",
      "ROCm/aiter PR 1092 (commit fbb52dd) aiter/configs/a8w8_tuned_gemm.csv "
            .. "(column cu_num; rows of 304); ROCm docs 'AMD GPU specifications' "
            .. "(reference/gpu-specs): MI325X and MI300X both CDNA3 gfx942, "
            .. "304 CUs, LDS (KiB) 64"),
    reason = "AMD's own Max-Achievable FLOPs (method as for the MI300X): MI325X "
          .. "fp16 794 TFLOPs (1354 MHz median clock), bf16 843 (1447 MHz), fp8 "
          .. "1519 (1464 MHz); of the stored peaks bf16 843/1307.4 = 0.64, fp16 "
          .. "794/1307.4 = 0.61, fp8 1519/2614.9 = 0.58. The 1000 W part holds a "
          .. "higher clock than the 750 W MI300X on the same die. fp8 is priced "
          .. "as the MI300X's is, the tuned kernels' fraction with their K "
          .. "stages' latency apart (unsplit above), at this board's clock: the "
          .. "MI300X's 0.471 (its reason) x 1519/1273 (the two boards' fp8 "
          .. "Max-Achievable FLOPs, 1464 vs 1230 MHz median clock) = 0.562, "
          .. "stored 0.56; 0.58, the best shape's fraction with no stage latency, "
          .. "priced this board's fp8 GEMMs 1.2x faster than the MI300X's at "
          .. "equal clocks (MLPerf Training v5.0/v5.1 AMD Llama 2 70B LoRA: "
          .. "measured MI300X/MI325X step 1.35x, 1.34x with 21 layers' recompute "
          .. "on the MI300X only; priced 1.57x). int8 taken as "
          .. "fp8 and tf32 as bf16 (not measured); memory not measured (cdna3 value)",
    source = "rocm.blogs.amd.com 'Measuring Max-Achievable FLOPs - Part 2' "
          .. "(2025-02-28), Table 1; for fp8 also the MI300X entry's aiter "
          .. "a8w8_tuned_gemm.csv fit (ROCm/aiter commit fbb52dd)",
  },
  scaleup = { fabric = "xgmi4", domain = 8 },
  pcie = { gen = 5, lanes = 16 },
  tdp = "1000W",
  source = "awesomeagents.ai amd-mi325x (256 GB HBM3e, 6 TB/s, FP8 2614.9 / 5229.8 "
        .. "sparse, FP16 1307.4, TF32 653.7, FP32 163.4, Oct 2024); stas00/ml-engineering "
        .. "(1000 W peak TBP; xGMI); wiaix.com (PCIe Gen5 x16, 7 IF links)",
  notes = "INT8 taken equal to MI300X (same CDNA 3 compute die)."
       .. " SMs: 304 (AMD CDNA 3: MI325X 304 CUs (same die as MI300X)).",
}

gpu {
  id = "mi355x", name = "AMD Instinct MI355X 288GB", vendor = "AMD",
  arch = "cdna4", form_factor = "OAM (liquid-cooled)", year = 2025,
  memory = "288GiB", memory_type = "HBM3e",
  mem_bw = "8TB/s",
  sms = 256,
  peak = {
    fp32 = "157.3TFLOPS", bf16 = "2500TFLOPS", fp16 = "2500TFLOPS",
    fp8 = "5000TFLOPS", fp6 = "10100TFLOPS", fp4 = "10100TFLOPS",
    int8 = "5000TOPS",
  },
  scaleup = { fabric = "xgmi-mi355x", domain = 8 },
  tdp = "1400W",
  source = "stas00/ml-engineering (dense table and its note 22 on AMD sparsity labels; "
        .. "288 GB 8 TB/s; 1400 W TBP; xGMI 535.5 per direction); aiwiki.ai "
        .. "amd_instinct_mi355x (1400 W, GA Oct 2025)",
  notes = "The ml-engineering MAMF table uses 2300 as MI355X's bf16 'theory' "
       .. "while its dense table says 2500 (stored). PCIe generation not found."
       .. " SMs: 256 (AMD CDNA 4 whitepaper: MI355X 256 CUs).",
}
