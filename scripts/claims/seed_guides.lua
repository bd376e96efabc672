-- Spec claims made by the seed GPU-selection guides (a Chinese multimodal
-- fine-tuning / RFT selection guide and its tables), checked by
--   gpuplan run scripts/check_claims.lua [this file]
--
-- Each claim: gpu (catalog id), field (memory | mem_bw | peak.<precision> |
-- scaleup.bw), claim (the figure as printed, with its unit), where (which
-- table of the guide). A link figure without 'bidir' / 'per-dir' is taken
-- as printed by vendors (bidirectional) and the report says so.
return {
  { gpu = "a100-sxm-80gb", field = "memory",     claim = "80GB",       where = "A100/A800 table" },
  { gpu = "a100-sxm-80gb", field = "mem_bw",     claim = "2.0TB/s",    where = "A100/A800 table" },
  { gpu = "a100-sxm-80gb", field = "peak.bf16",  claim = "312TFLOPS",  where = "A100/A800 table" },
  { gpu = "a100-sxm-80gb", field = "scaleup.bw", claim = "600GB/s",    where = "A100/A800 table" },
  { gpu = "a800-sxm-80gb", field = "scaleup.bw", claim = "400GB/s",    where = "A100/A800 table" },
  { gpu = "h100-sxm",      field = "memory",     claim = "80GB",       where = "H100/H800 table" },
  { gpu = "h100-sxm",      field = "mem_bw",     claim = "3.35TB/s",   where = "H100/H800 table" },
  { gpu = "h100-sxm",      field = "peak.bf16",  claim = "989TFLOPS",  where = "H100/H800 table" },
  { gpu = "h100-sxm",      field = "scaleup.bw", claim = "900GB/s",    where = "H100/H800 table" },
  { gpu = "h800-sxm",      field = "scaleup.bw", claim = "400GB/s",    where = "H100/H800 table" },
  { gpu = "h20",           field = "memory",     claim = "96GB",       where = "H20 table" },
  { gpu = "h20",           field = "mem_bw",     claim = "4.0TB/s",    where = "H20 table" },
  { gpu = "h20",           field = "peak.bf16",  claim = "74TFLOPS",   where = "H20 table and export-variant table" },
  { gpu = "h20",           field = "scaleup.bw", claim = "900GB/s",    where = "H20 table" },
  { gpu = "b200",          field = "memory",     claim = "192GB",      where = "B200 table" },
  { gpu = "b200",          field = "mem_bw",     claim = "8.0TB/s",    where = "B200 table" },
  { gpu = "b200",          field = "peak.bf16",  claim = "4.5PFLOPS",  where = "B200 table" },
  { gpu = "b200",          field = "scaleup.bw", claim = "1800GB/s",   where = "B200 table" },
  { gpu = "h200-sxm",      field = "memory",     claim = "141GB",      where = "H200 mention" },
  { gpu = "h200-sxm",      field = "mem_bw",     claim = "4.8TB/s",    where = "H200 mention" },
  { gpu = "a100-sxm-80gb", field = "peak.fp16",  claim = "78TFLOPS",   where = "'dense FP16' comparison" },
  { gpu = "h200-sxm",      field = "peak.fp16",  claim = "495TFLOPS",  where = "'dense FP16 about 495' comparison" },
}
