-- The built-in catalog's data: the figures the seed guides get wrong are
-- stored right, every entry is complete and every reference resolves.
-- Loads only the built-in directory so a user catalog cannot change the
-- outcome. Quantities are SI after loading (FLOP/s, B/s per direction,
-- bytes, seconds).
local t = require "tap"
local gp = require "gpuplan"

local cat = gp.catalog { dirs = { "catalog" } }

-- Parsing "148TFLOPS" multiplies two doubles; 1e-12 relative covers the
-- last-bit rounding and nothing else.
local EXACT = 1e-12

local function peak(id, p) return cat:get("gpus", id).peak[p] end

-- H20: press figures are dense; 148 TFLOPS BF16, 74 is TF32.
t.near(peak("h20", "bf16"), 148e12, EXACT, "h20 bf16 dense = 148 TFLOPS")
t.near(peak("h20", "tf32"), 74e12, EXACT, "h20 tf32 = 74 TFLOPS (the guide's 'bf16')")
t.near(peak("h20", "fp8"), 296e12, EXACT, "h20 fp8 dense = 2 x 148 = 296 TFLOPS")
-- H20 memory: the marketed 96 GB read as GiB (catalog/FORMAT.md: the
-- vendors' GB is binary; nvidia-smi shows 97871MiB) = 96 * 2^30 bytes;
-- 4.0 TB/s = 4e12 B/s.
t.is(cat.gpus.h20.memory, 96 * 2^30, "h20 memory 96 GiB")
t.near(cat.gpus.h20.mem_bw, 4e12, EXACT, "h20 bandwidth 4.0 TB/s")

-- B200: NVIDIA's 4.5 PFLOPS BF16 is sparse; dense 2.25e15. Ships with 180 GB.
t.near(peak("b200", "bf16"), 2.25e15, EXACT, "b200 bf16 dense = 4.5 PF / 2")
t.near(peak("b200", "fp4"), 9e15, EXACT, "b200 fp4 dense = 18 PF / 2")
t.is(cat.gpus.b200.memory, 180 * 2^30, "b200 shipping memory 180 GiB (192 announced)")
t.like(cat.gpus.b200.notes, "192", "b200 notes record the 192 GB launch figure")

-- A100: tensor FP16 312 dense (78 is the non-tensor rate, not stored).
t.near(peak("a100-sxm-80gb", "fp16"), 312e12, EXACT, "a100 fp16 tensor dense = 312")
t.near(peak("a100-sxm-80gb", "bf16"), 312e12, EXACT, "a100 bf16 dense = 312")
-- A100 80GB: nvidia-smi 81920 MiB = 80 GiB = 80 * 2^30 bytes.
t.is(cat.gpus["a100-sxm-80gb"].memory, 80 * 2^30, "a100 80GB is 80 GiB")
t.near(cat.gpus["a100-sxm-80gb"].mem_bw, 2.039e12, EXACT, "a100 80GB 2.039 TB/s")

-- H200 / H100: 989 dense BF16 (1979 sparse); ~495 is TF32.
t.near(peak("h200-sxm", "bf16"), 989e12, EXACT, "h200 bf16 dense = 989")
t.near(peak("h200-sxm", "tf32"), 494.5e12, EXACT, "h200 tf32 = 494.5 (the '495')")
t.near(peak("h100-sxm", "bf16"), 989e12, EXACT, "h100 bf16 dense = 989, not 1979")
-- usable: 79.1 GiB = 79.1 * 2^30 B, below the 80 GiB capacity. Byte counts
-- are rounded to whole bytes, so 1e-9 relative (0.08 B here would do).
local h100 = cat.gpus["h100-sxm"]
t.near(h100.usable_memory, 79.1 * 2^30, 1e-9, "h100 usable 79.1 GiB")
t.ok(h100.usable_memory < h100.memory, "h100 usable below capacity")

-- Memory capacity: one rule for every card (catalog/FORMAT.md).
local memory = require "gpuplan.memory"
-- 1. memory is written in GiB on every built-in card.
local not_gib = {}
for _, id in ipairs(cat:ids("gpus")) do
  if not tostring(cat.gpus[id]._raw.memory):match("GiB$") then not_gib[#not_gib + 1] = id end
end
t.is(table.concat(not_gib, ","), "", "every built-in GPU gives memory in GiB")
-- 2. The same board gets the same capacity: A800 SXM = A100 SXM 80GB
-- (79.15 GiB measured on A100, nvidia-smi 81920MiB on both); H800 = H100
-- (79.1 GiB, 81559MiB on both).
t.is(memory.capacity(cat.gpus["a800-sxm-80gb"]), memory.capacity(cat.gpus["a100-sxm-80gb"]),
     "a800 sxm usable = a100 sxm 80GB usable")
t.near(memory.capacity(cat.gpus["a800-sxm-80gb"]), 79.15 * 2^30, 1e-9, "a800 usable 79.15 GiB")
t.is(memory.capacity(cat.gpus["h800-sxm"]), memory.capacity(cat.gpus["h100-sxm"]),
     "h800 usable = h100 usable")
-- 3. Without a measurement the capacity is derived: H20 96 GiB x 0.989
-- = 94.944 GiB = 101,945,343,737.9 bytes; derived is flagged.  The
-- product of two doubles: 1e-12 relative.
local h20cap, derived = memory.capacity(cat.gpus.h20)
t.near(h20cap, 96 * 2^30 * 0.989, 1e-12, "h20 usable derived: 96 GiB x 0.989")
t.is(derived, true, "and flagged as derived")
t.is(select(2, memory.capacity(cat.gpus["h100-sxm"])), false, "a measured usable_memory is not derived")
-- H200: measured 139.80 GiB (PyTorch total capacity on 8x H200).
t.near(memory.capacity(cat.gpus["h200-sxm"]), 139.8 * 2^30, 1e-9, "h200 usable 139.8 GiB")
-- 4. ECC-on GDDR cards: memory x 15/16 x 0.989 (L40S: 48 x 15/16 x 0.989
-- = 44.505 GiB, written 44.5: 0.011% rounding; 1e-3 covers it).
for _, id in ipairs { "l4", "l40s", "l40", "l20", "a10", "a40" } do
  local g = cat.gpus[id]
  t.near(memory.capacity(g), g.memory * 15 / 16 * 0.989, 1e-3, id .. " usable = memory x 15/16 x 0.989")
end
-- 5. Every card lies in the rule's range: at most its memory, at least
-- memory x 15/16 x 0.989 (the ECC case, less 0.1% for rounding).
local out = {}
for _, id in ipairs(cat:ids("gpus")) do
  local g = cat.gpus[id]
  local c = memory.capacity(g)
  if c > g.memory or c < g.memory * 15 / 16 * 0.989 * 0.999 then out[#out + 1] = id end
end
t.is(table.concat(out, ","), "", "every card's usable memory is within the rule's range")

-- Links are stored per direction: "400GB/s bidir" = 200e9 B/s each way.
local F = cat.fabrics
t.is(F["nvlink4-h800"].bw, 200e9, "nvlink4-h800 400 bidir = 200 GB/s per dir")
t.is(F["nvlink3-a800"].bw, 200e9, "nvlink3-a800 400 bidir = 200 GB/s per dir")
t.is(F.nvlink3.bw, 300e9, "nvlink3 600 bidir = 300 GB/s per dir")
t.is(F.nvlink4.bw, 450e9, "nvlink4 900 bidir = 450 GB/s per dir")
t.is(F.nvlink5.bw, 900e9, "nvlink5 1800 bidir = 900 GB/s per dir")
-- 400 Gb/s = 400e9 / 8 = 50e9 B/s.
t.is(F["ib-ndr-400"].bw, 50e9, "ib-ndr-400 = 50 GB/s per dir")
t.is(F["ib-hdr-200"].bw, 25e9, "ib-hdr-200 = 25 GB/s per dir")
t.is(F.nvlink4.in_switch_reduction, "nvls", "nvlink4 NVSwitch has NVLS")
t.is(F["ib-ndr-400"].in_switch_reduction, "sharp", "NDR has SHARP")
t.is(F.nvlink3.in_switch_reduction, nil, "nvlink3 (NVSwitch gen 2) has no NVLS")
t.is(F.pcie4.crosses_cpu, true, "pcie4 crosses the CPU")
t.is(cat.gpus["h800-sxm"].scaleup.fabric, "nvlink4-h800", "h800 uses the cut NVLink")
t.is(cat.gpus["a800-sxm-80gb"].scaleup.fabric, "nvlink3-a800", "a800 uses the cut NVLink")

-- Every id of the shared id list exists.
local want = {
  gpus = { "a100-sxm-40gb", "a100-sxm-80gb", "a100-pcie-80gb", "a800-sxm-80gb",
    "a800-pcie-80gb", "h100-sxm", "h100-pcie", "h100-nvl", "h800-sxm",
    "h800-pcie", "h20", "h200-sxm", "h200-nvl", "b100", "b200", "gb200",
    "b300", "gb300", "l40s", "l40", "l20", "l4", "a10", "a40", "rtx-4090",
    "rtx-5090", "rtx-6000-ada", "rtx-a6000", "v100-sxm2-32gb", "mi250x",
    "mi300x", "mi325x", "mi355x", "gaudi2", "gaudi3" },
  fabrics = { "nvlink2", "nvlink3", "nvlink3-a800", "nvlink4", "nvlink4-h800",
    "nvlink5", "nvlink-bridge", "pcie3", "pcie4", "pcie5", "pcie6",
    "pcie4-p2p", "pcie5-p2p", "xgmi3",
    "xgmi4", "ib-edr-100", "ib-hdr-200", "ib-ndr-400", "ib-xdr-800",
    "roce-100", "roce-200", "roce-400", "efa-100", "opa-100" },
  systems = { "dgx-a100", "hgx-a800", "dgx-h100", "hgx-h800", "hgx-h20",
    "dgx-h200", "dgx-b200", "dgx-b300", "gb200-nvl72", "gb300-nvl72", "pcie-8x" },
}
for _, kind in ipairs { "gpus", "fabrics", "systems" } do
  local missing = {}
  for _, id in ipairs(want[kind]) do
    if not cat[kind][id] then missing[#missing + 1] = id end
  end
  t.is(table.concat(missing, ","), "", "every listed " .. kind .. " id exists")
end

-- Every GPU is complete enough for the engine.
local bad = {}
local function fail(id, why) bad[#bad + 1] = id .. ": " .. why end
local function frac(x) return type(x) == "number" and x > 0 and x <= 1 end
for _, id in ipairs(cat:ids("gpus")) do
  local g = cat.gpus[id]
  if not (g.mem_bw and g.mem_bw > 0) then fail(id, "mem_bw") end
  if not (g.memory and g.memory > 0) then fail(id, "memory") end
  if type(g.source) ~= "string" or #g.source < 10 then fail(id, "source") end
  local n = 0
  for p, v in pairs(g.peak) do
    n = n + 1
    if not (v > 0) then fail(id, "peak." .. p) end
  end
  if n == 0 then fail(id, "no peaks") end
  local a = cat:achievable(g)
  if not (a and frac(a.hbm)) then fail(id, "achievable.hbm") end
  -- Every tensor precision the GPU has must have a GEMM fraction, or the
  -- roofline would have nothing to scale that peak by.
  for _, p in ipairs { "bf16", "fp16", "fp8", "tf32" } do
    if g.peak[p] and not (a and frac(a.gemm[p])) then fail(id, "gemm." .. p) end
  end
end
t.is(table.concat(bad, "; "), "", "every gpu: memory, mem_bw, peaks, source, fractions")

-- Dense-vs-sparse slip detector: on NVIDIA parts a 16-bit tensor peak is
-- 2 x the TF32 tensor peak (B200: 2250/1100 = 2.045, hence 3%). A sparse
-- BF16 next to a dense TF32 would give 4x.
bad = {}
for _, id in ipairs(cat:ids("gpus")) do
  local g = cat.gpus[id]
  if g.vendor == "NVIDIA" and g.peak.bf16 and g.peak.tf32 then
    local r = g.peak.bf16 / g.peak.tf32
    if math.abs(r - 2) > 0.06 then fail(id, string.format("bf16/tf32 = %.3f", r)) end
  end
end
t.is(table.concat(bad, "; "), "", "NVIDIA bf16 = 2 x tf32 everywhere (dense both)")

-- Arch defaults: launch overheads positive, graphs cheaper than streams.
bad = {}
for _, id in ipairs(cat:ids("archs")) do
  local a = cat.archs[id]
  if not (a.launch_overhead > 0 and a.graph_launch_overhead > 0
          and a.graph_launch_overhead < a.launch_overhead) then
    fail(id, "launch overheads")
  end
  if not (frac(a.achievable.hbm) and #a.achievable.reason > 20) then
    fail(id, "achievable")
  end
end
t.is(table.concat(bad, "; "), "", "every arch: fractions with reasons, launch overheads")
-- Hopper's large-GEMM fraction: MAMF 794.5 / 989 = 0.8033, stored with two
-- decimals as 0.80: half a unit of the second decimal, 0.005 / 0.8033 =
-- 0.62% of the measured value, is the rounding allowed.
t.near(cat.archs.hopper.achievable.gemm.bf16, 794.5 / 989, 0.005 / (794.5 / 989),
       "hopper gemm bf16 = MAMF/peak")

-- Fabrics: fraction in (0,1] with a reason, a per-hop latency.
bad = {}
for _, id in ipairs(cat:ids("fabrics")) do
  local f = cat.fabrics[id]
  if not (frac(f.achievable) and #f.achievable_reason > 10) then fail(id, "achievable") end
  if not (f.latency > 0 and f.latency < 1e-4) then fail(id, "latency") end
  if not (f.bw > 0) then fail(id, "bw") end
end
t.is(table.concat(bad, "; "), "", "every fabric: bw, latency, fraction with reason")

-- Systems: references resolve (the loader checks too; this pins the data).
bad = {}
for _, id in ipairs(cat:ids("systems")) do
  local s = cat.systems[id]
  if not cat.gpus[s.gpu] then fail(id, "gpu " .. tostring(s.gpu)) end
  if not cat.fabrics[s.scaleup] then fail(id, "scaleup") end
  if s.nics > 0 and not cat.fabrics[s.nic_fabric] then fail(id, "nic_fabric") end
  if not (s.host_memory > 0 and s.host_mem_bw > 0) then fail(id, "host memory") end
  if s.gpus < 1 then fail(id, "gpus") end
end
t.is(table.concat(bad, "; "), "", "every system: gpu, fabrics, host memory resolve")
t.is(cat.systems["gb200-nvl72"].gpus, 72, "NVL72 is one 72-GPU domain")
-- GB300 NVL72's hosts are GB200 NVL72's Grace CPUs, 2 a tray of 4 GPUs:
-- the same per-launch cost and the same host of 4 GPUs.
t.is(cat.systems["gb300-nvl72"].host_op_scale, cat.systems["gb200-nvl72"].host_op_scale,
     "GB300 NVL72 launches from GB200's Grace")
t.is(cat.systems["gb300-nvl72"].host_gpus, 4, "GB300 NVL72: one host a tray of 4 GPUs")
-- ... and reaches it over GB200's NVLink-C2C: the same measured copy rate.
t.is(cat.gpus.gb300.host_link.bw, cat.gpus.gb200.host_link.bw, "gb300's host link is gb200's C2C")
-- GB300's cuDNN attention is GB200's scaled by one release's measured
-- ratio on both parts (cudnn-frontend SDPA benchmark, cuDNN 9.22, bf16,
-- causal 8192): forward 0.52 x 1856 / 1574 = 0.6132, backward 0.40 x
-- 1435 / 1332 = 0.4309; the catalog stores three decimals, so 0.001
-- relative (half its last digit of 0.43-0.61, 0.0005 / 0.43 = 0.0012,
-- rounded down) is the tolerance.
-- GB300's GEMMs are its sustained measurement (Azure ND GB300 v6,
-- cuBLASLt after 10,000 warm-up iterations, 16384^3) over the arch's
-- sustained factor: fp8 3308.5 / 5000 / 0.80 = 0.8271; fp4 is GB200's
-- catalog FP4 rate (0.60 x 10000) times the same harness's GB300/GB200
-- FP4 ratio 8640.3 / 7627.6 = 1.1328, over 15000: 0.4531 (the sustained
-- factor is FP8's and does not carry to FP4); bf16 is GB200's MAMF 0.729
-- times the GB300/GB200 sustained FP8 ratio 3308.5 / 2906.9 = 1.1382:
-- 0.8297.  Three stored decimals: 0.001 relative (half the last digit,
-- 0.0005 / 0.45 = 0.0011, rounded down; the fp4 value is 0.0002 off).
do
  local g3, g2 = cat.gpus.gb300.achievable, cat.gpus.gb200.achievable
  local sus = cat.archs.blackwell.achievable.sustained.gemm
  t.near(g3.gemm.fp8, 3308.5 / 5000 / sus, 0.001, "gb300 fp8 GEMM: sustained 3308.5 / 0.80")
  t.near(g3.gemm.fp4, g2.gemm.fp4 * 10000 * (8640.3 / 7627.6) / 15000, 0.001,
         "gb300 fp4 GEMM: gb200's fp4 rate x the Azure FP4 ratio 1.133")
  t.near(g3.gemm.bf16, 0.729 * 3308.5 / 2906.9, 0.001, "gb300 bf16 GEMM: gb200 x 1.138")
  -- The same harness on GB200 checks the factor there: sustained 2906.9
  -- of 5000 = 0.5814 against its fraction x the factor, 0.72 x 0.80 =
  -- 0.576: 0.93% apart, 0.01 relative (the catalog's 0.72 for MAMF's
  -- 0.723 is 0.4%, the measured 0.804 against 0.80 0.5%).
  t.near(g2.gemm.fp8 * sus, 2906.9 / 5000, 0.01, "gb200 sustained fp8 = its fraction x 0.80")
end
-- B300's FP4 GEMM, no B300 FP4 rate being published: its measured FP8
-- MAMF 3353.3 x B200's measured FP4 / FP8 proportion (DeepGEMM 5702 /
-- MAMF 3432.5 = 1.6612) x the Ultra die's FP4 gain over its FP8 gain on
-- one harness (Azure: (8640.3 / 7627.6) / (3308.5 / 2906.9) = 0.9952) =
-- 5544 TFLOP/s, over the stored 12600: 0.4400.  Two stored decimals:
-- 0.01 relative (half the last digit, 0.005 / 0.44 = 0.011, rounded
-- down).  It must sit below the fp8 fraction it was copied from before
-- (0.75): the regression this guards.
do
  local b3 = cat.gpus.b300.achievable.gemm
  local want = 3353.3 * (5702 / 3432.5) * ((8640.3 / 7627.6) / (3308.5 / 2906.9)) / 12600
  t.near(b3.fp4, want, 0.01, "b300 fp4 GEMM: fp8 MAMF x Blackwell's FP4/FP8 x the Ultra's gain")
  t.ok(b3.fp4 < b3.fp8, "b300 fp4 fraction below its fp8 one (not copied)")
end
-- MI355X (cdna4): AMD's Gluon GEMM tutorial on MI355, BF8 3257 TFLOPS of
-- 5000 = 0.6514, MXFP4 5255 of 10100 = 0.5203; bf16 the MAMF 1565.0 of
-- 2500 = 0.626.  Two stored decimals: 0.01 relative (0.005 / 0.52 =
-- 0.0096, rounded up).
do
  local c4 = cat.archs.cdna4.achievable.gemm
  t.near(c4.fp8, 3257 / 5000, 0.01, "cdna4 fp8 GEMM: Gluon BF8 3257 / 5000")
  t.near(c4.fp4, 5255 / 10100, 0.01, "cdna4 fp4 GEMM: Gluon MXFP4 5255 / 10100")
  t.near(c4.bf16, 1565.0 / 2500, 0.01, "cdna4 bf16 GEMM: MAMF 1565.0 / 2500")
end
-- DGX B300 host: 2 x 8 ch x 6400 MT/s x 8 B = 819.2 GB/s.
t.near(cat.systems["dgx-b300"].host_mem_bw, 2 * 8 * 6400e6 * 8, EXACT, "dgx-b300 host bw")
t.is(cat.gpus.gb200.scaleup.domain, 72, "gb200 NVLink domain 72")
-- DGX H100 host: 2 x 8 ch x 4800 MT/s x 8 B = 614.4 GB/s.
t.near(cat.systems["dgx-h100"].host_mem_bw, 2 * 8 * 4800e6 * 8, EXACT, "dgx-h100 host bw")

-- Prices: gpu exists, amount positive, price inside its range.
bad = {}
local guides = 0
for _, id in ipairs(cat:ids("prices")) do
  local p = cat.prices[id]
  if not cat.gpus[p.gpu] then fail(id, "gpu") end
  if not (p.price.amount > 0) then fail(id, "amount") end
  if p.range then
    local lo, hi = p.range[1], p.range[2]
    if lo.currency ~= p.price.currency or hi.currency ~= p.price.currency
       or not (lo.amount <= p.price.amount and p.price.amount <= hi.amount) then
      fail(id, "range")
    end
  end
  if p.provider_kind == "guide" then guides = guides + 1 end
end
t.is(table.concat(bad, "; "), "", "every price: known gpu, positive, inside its range")
t.is(guides, 3, "the three seed-guide ranges are labelled guide")
local g = cat.prices["h800-sxm/guide/cn"]
t.ok(g.price.currency == "CNY" and g.range[1].amount == 20 and g.range[2].amount == 40,
  "H800 guide range 20-40 CNY/h")

-- Currency: the PBOC central parity 7.0197 CNY/USD (2026-01-08);
-- 70.197 CNY / 7.0197 = 10 USD.
t.is(cat.currencies.CNY.per_usd, 7.0197, "CNY per USD")
t.near(cat:convert({ amount = 70.197, currency = "CNY" }, "USD"), 10.0, EXACT, "70.197 CNY = 10 USD")
t.is(cat.settings.currency, "USD", "default currency USD")
t.is(cat.settings.safety_margin, 0.10, "default safety margin 10%")

-- CDNA 3 matrix fractions from AMD's Max-Achievable FLOPs table (ROCm blog
-- "Measuring Max-Achievable FLOPs - Part 2", 2025-02-28): achieved = the
-- stored fraction x the stored peak.  MI300X bf16 708 TFLOPs; MI325X bf16
-- 843 (its fp8, below, is priced as the MI300X's).  The fractions are rounded to two places, so 0.005 / 0.49
-- = 1.1% relative is the most the product can miss by.
local function maf(id, p)
  local g = cat:get("gpus", id)
  return g.achievable.gemm[p] * g.peak[p]
end
t.near(maf("mi300x", "bf16"), 708e12, 0.011, "mi300x bf16 0.54 x 1307.4 = AMD's MAF 708")
-- The same GEMM the MAF was measured on, 4096 x 4864 x 32896 bf16, through
-- the engine: the unsplit K walk (achievable.unsplit) is AMD's a8w8 table's
-- and prices 8-bit GEMMs only, so this one keeps the split pricing.  256 x
-- 256 tiles: 16 x 19 = 304 tiles, one full wave of the 304 CUs, K past the
-- K-fill reference: 2 x 4096 x 4864 x 32896 = 1.31077e15 FLOP / 705.996e12
-- (0.54 x 1307.4) = 1856.63 us of MFMAs; the stream, (4864 + 4096) x 32896
-- x 2 B + 4096 x 4864 x 2 B = 629.34 MB at 5.3e12 x 0.85 x 0.94 = 148.62
-- us + the 3.9 us fill = 152.52 us, overlapped (1856.63 x sqrt(1 + (152.52
-- / 1856.63)^2) = 1862.88 us) and the graph launch 1 us: 1863.88 us, 703.2
-- TFLOPs against AMD's measured 708.  With the walk it comes out at 611
-- TFLOPs (2145 us), so this fails if 16-bit GEMMs take the walk again.  Tolerance 0.1% for the
-- rounding of the hand steps.
do
  local m3 = require("gpuplan.roofline").device("mi300x", cat)
  local M, N, K = 4096, 4864, 32896
  local op = require("gpuplan.core").roof_op(m3, { flop = 2 * M * N * K,
    bytes = 2 * (N * K + M * K) + 2 * M * N, m = M, n = N, k = K, prec = "bf16" })
  t.near(op.time * 1e6, 1863.88, 1e-3, "mi300x: AMD's bf16 MAF shape at 703 TFLOPs (measured 708), split pricing")
end
-- MI300X fp8 is stored at what AMD's tuned fp8 GEMMs reach on Llama shapes
-- (ROCm/aiter PR 1092) once their K stages' latency is priced apart
-- (achievable.unsplit): 0.47 x 2614.9 = 1229.0 TFLOPs, near the MAF's
-- 1273 (0.49).  Its gate_up GEMM of Llama 3.1 405B at TP8 over 16384
-- tokens (M 16384, N 13312, K 16384; aiter: 6940 us), unsplit: the
-- least time is the 256 x 256 tile, 64 x 52 = 3328 tiles in 11 waves of
-- 304 CUs (3328 / 3344 = 0.995215), K past the K-fill reference, so
-- 7.1468e12 FLOP / (1229.0e12 x 0.995215) = 5843.1 us of MFMAs; its
-- stage holds 512 rows, so K steps 65536 / 512 = 128 B at a time: 128
-- stages a wave at 0.55 us, 11 x 128 x 0.55 = 774.4 us + the 3.9 us
-- fill; added (one stage fills the LDS): 6621.4 us, above the device's
-- stream overlapped (sqrt(5843.1^2 + 296.5^2) = 5850.6); and the graph
-- launch 1 us: 6622.4 us, 4.6% below the kernel's 6940 (the 0.47 is the
-- median over 120 rows).  128 x 128 tiles take 44 waves x 64 stages:
-- 1548.8 us of latency, slower.  Tolerance 0.1% (7 us) for the rounding
-- of the hand steps.
t.near(maf("mi300x", "fp8"), 0.47 * 2614.9e12, 1e-9, "mi300x fp8 0.47 x 2614.9")
do
  local m3 = require("gpuplan.roofline").device("mi300x", cat)
  local M, N, K = 16384, 13312, 16384
  local op = require("gpuplan.core").roof_op(m3, { flop = 2 * M * N * K,
    bytes = N * K + M * K + 2 * M * N, m = M, n = N, k = K, prec = "fp8" })
  t.near(op.time * 1e6, 6622.4, 1e-3, "mi300x: Llama 405B TP8 gate_up over 16384 tokens, 6622 us")
end
t.near(maf("mi325x", "bf16"), 843e12, 0.011, "mi325x bf16 0.64 x 1307.4 = AMD's MAF 843")
-- MI325X fp8 is the MI300X's tuned-kernel fraction at the MI325X's clock:
-- 0.471 x 1519 / 1273 (AMD's fp8 MAFs of the two boards) = 0.562, stored
-- 0.56: 0.56 x 2614.9 = 1464.3 TFLOPs.  Tolerance 1e-9: a stored product.
t.near(maf("mi325x", "fp8"), 0.56 * 2614.9e12, 1e-9, "mi325x fp8 0.56 x 2614.9 (the MI300X's 0.47 at the MI325X's clock)")
-- The same die runs the same tuned 8-bit kernels (aiter's table is keyed on
-- cu_num 304), so the MI300X's gate_up GEMM above takes the same unsplit
-- walk on the MI325X: the same 256 x 256 tiles in 11 waves, 7.1468e12 FLOP
-- / (1464.34e12 x 0.995215) = 4904.0 us of MFMAs, plus the same 11 x 128
-- stages x 0.55 us = 774.4 us and the 3.9 us fill, 5682.3 us, above the
-- stream overlapped (922.7 MB at 6e12 x 0.85 x 0.94 = 192.5 us + 3.9 us:
-- sqrt(4904.0^2 + 196.4^2) = 4907.9 us); and the graph launch 1 us:
-- 5683.3 us.  Split pricing (no achievable.unsplit) gives 4909.0 us, so
-- this fails if the MI325X loses the walk.  Tolerance 0.1% for the
-- rounding of the hand steps.
do
  local m3 = require("gpuplan.roofline").device("mi325x", cat)
  local M, N, K = 16384, 13312, 16384
  local op = require("gpuplan.core").roof_op(m3, { flop = 2 * M * N * K,
    bytes = N * K + M * K + 2 * M * N, m = M, n = N, k = K, prec = "fp8" })
  t.near(op.time * 1e6, 5683.3, 1e-3, "mi325x: the same gate_up GEMM takes the MI300X's unsplit walk, 5683 us")
end

t.done_testing()
