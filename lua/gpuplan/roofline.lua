-- gpuplan.roofline: a GPU as the roofline sees it, ridge points, and the
-- roofline chart.
--
--   local gp = require "gpuplan"
--   local r = gp.roofline{ gpu = "h100-sxm" }            -- or gpu = <catalog entry>
--   print(r.ridges.bf16.peak, r.ridges.bf16.achievable)  -- FLOP/byte
--   local t = gp.roofline{ gpu = "h200-sxm", op = { flop = 2e12, bytes = 1e9,
--                          m = 4096, n = 4096, k = 4096, prec = "bf16" } }
--   print(t.op.time, t.op.bound, t.op.intensity)
--   local m = gp.roofline{ gpu = "h100-sxm", model = "llama3-8b", infer = { batch = 8 } }
--   for _, o in ipairs(m.ops) do print(o.phase, o.name, o.intensity, o.tflops, o.bound) end
--   require("gpuplan.roofline").svg("roof.svg", { gpu = "h100-sxm", model = "llama3-8b" })
--
-- The device table (M.device) takes the GPU's dense peaks, its `achievable`
-- fractions (the GPU's own, else its arch's), the arch's launch overheads
-- and the SM count (gpu.sms, else its arch's `sms`).

local units = require "gpuplan.units"

local M = {}

local function core() return require "gpuplan.core" end
local function catalog(cat) return cat or require("gpuplan").catalog() end

-- Streaming multiprocessors (NVIDIA) / compute units (AMD) per GPU, for the
-- wave-quantisation term, come from the catalog entry (`sms`, with its source
-- in the entry's notes).  An entry without `sms` (a user's new part) takes its
-- architecture's flagship count (the arch entry's `sms`, catalog/archs.lua);
-- an architecture without one (Ada's parts differ too much, Gaudi has matrix
-- engines) gives 0: no wave term.

M.precisions = { "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp6", "int4", "fp4" }

-- ck: Transformer Engine's fused attention on ROCm (NVTE_FUSED_ATTN_CK),
-- the Composable Kernel / aiter kernels with their hand-written v3
-- forward and backward on CDNA 3 (NVTE_CK_USES_FWD_V3, _BWD_V3).
-- flex: PyTorch's FlexAttention (torch.nn.attention.flex_attention), the
-- Triton templates torch.compile generates for it (catalog/archs.lua:
-- priced as its published ratio to FlashAttention-2 on A100 and H100).
M.attention_kernels = { "fa1", "fa2", "fa3", "fa4", "cudnn", "triton", "efficient", "ck", "flex" }

-- The kernels that compute every tile of the s x s score square: PyTorch
-- SDPA's memory-efficient backend is what SDPA runs when it is handed an
-- attention mask ("Flash attention does not support ... attn_mask",
-- sdp_utils.cpp check_for_attn_mask; Hugging Face models pass their 4D
-- causal-and-padding mask whenever a row is padded), and it cannot tell
-- the masked tiles from the others.
M.square_kernels = { efficient = true }

-- The kernels that tile the head dim at the next power of two (at least
-- 16) and run the padded tile's MMAs whole: HazyResearch's Triton
-- FlashAttention, "BLOCK_HEADDIM = max(triton.next_power_of_2(d), 16)"
-- in its forward and backward launches (flash_attn/flash_attn_triton.py,
-- v1.0.4; the columns past d are loaded as zeros), so head dim 96 costs
-- what 128 does (engine/roofline.c head_block_use).  FlashAttention's
-- CUDA kernels are compiled per head dim (hdim 32, 64, 96, 128, ...).
-- FlexAttention's templates do the same: PyTorch's inductor lowering sets
-- "kernel_options.setdefault("QK_HEAD_DIM_ROUNDED",
-- next_power_of_two(qk_head_dim_static))" (torch/_inductor/kernel/flex),
-- the Q/K block shape "block_shape=(BLOCK_M, QK_HEAD_DIM_ROUNDED)" in its
-- Triton template, V's alike (V_HEAD_DIM_ROUNDED).
M.pow2_head_kernels = { triton = true, flex = true }

-- The sustained tensor clock under a board power limit, as a share of
-- the clock at the card's TDP (what the achievable and sustained
-- fractions stand for), and the limit in W.  limit: W (gp.train's
-- power_limit), else the card's default limit (catalog power_limit),
-- else its TDP.  The arch's power_curve (catalog/archs.lua hopper, with
-- its measurements): the board's draw at full tensor load is static +
-- k f^e, so a limit L below the TDP holds the clock at
-- ((L - static) / (TDP - static)) ^ (1 / e) of the TDP's.  A limit at or
-- above the TDP: 1 (the TDP's sustained clock is already priced; boards
-- refuse a limit above their maximum).  Errors name what is missing.
-- The tensor clock a run held (sm_clock, MHz: a DCGM or nvidia-smi
-- trace's), as a share of the clock the sustained record stands for
-- (achievable.sustained.clock_mhz): the tensor-bound rates scale with the
-- SM clock, as under a power limit (M.clock_at), while the memory clock
-- and the links keep theirs.  KempnerForge's 175B run on 360 H200 SXMs
-- held "SM clock 1,840 MHz near boost" at "619 W mean (about 89% of the
-- 700 W TDP), 53 C" (benchmarks/175b_360gpu/README.md, b62d2e3): under
-- the cap, not at the 1500 MHz the hopper record stands for.  Errors name
-- what is missing.
function M.clock_at_mhz(g, sus, mhz, limit)
  if type(mhz) ~= "number" or mhz ~= mhz or mhz < 100 or mhz > 5000 then
    error("sm_clock must be a number of MHz in [100, 5000] (got " .. tostring(mhz) .. ")", 0)
  end
  if limit ~= nil then
    error("sm_clock and power_limit both set: give the clock the run held or the limit it "
      .. "ran under, not both", 0)
  end
  if not (sus and sus.clock_mhz) then
    error(string.format("sm_clock %g MHz: %s's sustained record (achievable.sustained) "
      .. "names no clock_mhz to scale its rates from", mhz, tostring(g.id)), 0)
  end
  return mhz / sus.clock_mhz
end

function M.clock_at(g, arch, limit)
  local tdp = g.tdp
  limit = limit or g.power_limit
  if limit == nil then return 1, tdp end
  -- "300W", "0.7kW" or a bare number of W: the power_limit option's kind
  -- (gpuplan.options), one parser for the CLI's flag and every planner's key.
  if type(limit) == "string" then
    local n, msg = require("gpuplan.options").quantity("power_limit", limit)
    if msg then error(msg, 0) end
    limit = n
  end
  if type(limit) ~= "number" or limit ~= limit or limit <= 0 or limit == math.huge then
    error("power_limit must be a positive number of W (got " .. tostring(limit) .. ")", 0)
  end
  if not tdp then
    error(string.format("power_limit %g W: the catalog gives %s no tdp to set it against",
      limit, tostring(g.id)), 0)
  end
  if limit > tdp then
    error(string.format("power_limit %g W is above %s's TDP, %g W (its board's maximum limit)",
      limit, tostring(g.id), tdp), 0)
  end
  if limit == tdp then return 1, limit end
  local pc = arch and arch.power_curve
  if not pc then
    error(string.format("power_limit %g W is below %s's TDP (%g W), and its arch '%s' gives "
      .. "no power_curve to price the lower clock by", limit, tostring(g.id), tdp,
      tostring(g.arch)), 0)
  end
  if limit <= pc.static then
    error(string.format("power_limit %g W is at or below the board's static draw, %g W "
      .. "(arch %s power_curve): no clock fits it", limit, pc.static, tostring(g.arch)), 0)
  end
  return ((limit - pc.static) / (tdp - pc.static)) ^ (1 / pc.exponent), limit
end

-- The achievable table a GPU's base fractions (gemm, hbm, stream) come
-- from: its own where it gives any of them, else its arch's.  A GPU whose
-- achievable holds only per-part records (non_tn, sustained, ...) states
-- how it differs from its arch and keeps the arch's fractions (a
-- TN-only fp8 opt-out alone: tests/lua/fp8_tn_only.t).  Each per-part
-- record is read the same way on its own below: the GPU's, else the
-- arch's.  nil where neither has one.
function M.base_achievable(g, arch)
  local own = g.achievable
  if own and (own.gemm or own.hbm or own.stream) then return own end
  return arch and arch.achievable or own
end

-- A per-part record of achievable (sustained, attention, block_scaled,
-- non_tn, eager, unsplit): the GPU's own, else its arch's -- even where
-- the GPU gives its base fractions (base_achievable).  nil where neither
-- has one.
function M.part_record(g, arch, key)
  return (g.achievable and g.achievable[key])
    or (arch and arch.achievable and arch.achievable[key]) or nil
end

-- The roofline device table of a catalog GPU (id or entry).  attn_kernel
-- (optional) picks the fused attention kernel whose measured fractions
-- the training step uses; default the arch's `kernel`.  power_limit
-- (optional, W): the board's limit (M.clock_at); default the card's.
-- sm_clock (optional, MHz): the clock the GPUs held, as a trace states
-- it (M.clock_at_mhz); not with power_limit.
-- Returns the table, the clock share and the limit (W) it was priced at.
-- cudnn (optional, "X.Y" or "X.Y.Z"): the cuDNN release the run states;
-- its published rate over the reference release's (M.attn_release) where
-- the kernel is cuDNN's and its entry times releases apart.
function M.device(gpu, cat, attn_kernel, power_limit, sm_clock, cudnn)
  cat = catalog(cat)
  local g = type(gpu) == "table" and require("gpuplan.catalog").entry("gpu", gpu)
    or cat:get("gpus", gpu)
  local arch = g.arch and cat.archs and cat.archs[g.arch] or {}
  local ach = M.base_achievable(g, arch)
  if not ach or not ach.hbm then
    -- An arch the catalog does not have is named so, with the nearest
    -- known one, as a misspelt key is ("hoper": did you mean 'hopper'?).
    if g.arch ~= nil and cat.archs and cat.archs[g.arch] == nil then
      local ids = {}
      for id in pairs(cat.archs) do ids[#ids + 1] = id end
      table.sort(ids)
      local near = require("gpuplan.args").nearest(tostring(g.arch), ids)
      error("gpu '" .. tostring(g.id) .. "': unknown arch '" .. tostring(g.arch) .. "' ("
        .. (near and ("did you mean '" .. near .. "'?") or "see 'gpuplan catalog list archs'")
        .. "), and the gpu gives no achievable fractions of its own", 0)
    end
    -- A GPU that gives gemm or stream but no hbm: its own base fractions
    -- replace its arch's together (base_achievable), so the arch's hbm is
    -- not read; say so, not that the arch has none.
    if ach and ach == g.achievable and arch.achievable and arch.achievable.hbm then
      error("gpu '" .. tostring(g.id) .. "': field 'achievable.hbm': required where the gpu's "
        .. "achievable gives gemm or stream (they replace its arch '" .. tostring(g.arch)
        .. "''s base fractions together; give none of them to keep the arch's)", 0)
    end
    error("gpu '" .. tostring(g.id) .. "': no achievable fractions (neither the gpu nor its arch '"
          .. tostring(g.arch) .. "' has them)", 0)
  end
  local d = { id = g.id, name = g.name, peak = {}, gemm = {}, mem_bw = g.mem_bw,
              hbm = ach.hbm, launch = arch.launch_overhead or 4e-6,
              graph_launch = arch.graph_launch_overhead or 1e-6,
              sms = g.sms or arch.sms or 0, mma_n_step = arch.mma_n_step,
              vec16_x = g.vec16_x or arch.vec16_x, acc16_x = g.acc16_x,
              memory = (require("gpuplan.memory").capacity(g)) }
  -- Sustained load (achievable.sustained, the GPU's own, else its arch's):
  -- the GEMM and attention fractions are short-burst benchmark rates; a
  -- training step keeps the tensor cores busy at the power limit, where
  -- the SM clock settles lower (B200: 1965 -> ~1580 MHz).
  local sus = M.part_record(g, arch, "sustained")
  local sus_gemm, sus_attn = sus and sus.gemm or 1, sus and sus.attention or 1
  -- Under a board power limit below the TDP the tensor clock falls
  -- further (M.clock_at): the GEMM and attention fractions with it; the
  -- streaming fractions (hbm, stream, eager) keep theirs.
  local clock, limit
  if sm_clock ~= nil then
    clock, limit = M.clock_at_mhz(g, sus, sm_clock, power_limit), g.tdp
  else
    clock, limit = M.clock_at(g, arch, power_limit)
  end
  sus_gemm, sus_attn = sus_gemm * clock, sus_attn * clock
  -- The fused attention kernel's fractions: the GPU's own, else its arch's.
  local at = M.part_record(g, arch, "attention")
  if at then
    local k = attn_kernel or at.kernel
    local pair = at[k]
    if not pair then
      local have = {}
      for _, n in ipairs(M.attention_kernels) do if at[n] then have[#have + 1] = n end end
      error(string.format("no measurement of attention kernel '%s' on %s (%s has %s)",
        tostring(k), tostring(g.id), tostring(g.arch), table.concat(have, ", ")), 0)
    end
    d.attn_kernel, d.attn_fwd, d.attn_bwd = k, pair.fwd * sus_attn, pair.bwd * sus_attn
    d.attn_square = M.square_kernels[k] or nil
    d.attn_head_pow2 = M.pow2_head_kernels[k] or nil
    -- the exponentials' balance: the kernel's own where it gives one
    -- (a kernel far below the tensor cores' rate balances lower), else
    -- the entry's
    d.attn_fp8, d.attn_exp_dim = at.fp8, pair.exp_dim or at.exp_dim
    -- the kernel's forward + backward with dropout on the probabilities
    -- over without (its Philox mask drawn and regenerated); nil where
    -- nobody measured the kernel with dropout: not priced
    d.attn_dropout = pair.dropout
    d.attn_ref_q, d.attn_long = pair.seq, M.attn_long(pair, k)
    d.attn_narrow_dim, d.attn_narrow = M.attn_narrow(pair, k)
    d.attn_unmasked = M.attn_unmasked(pair, k)
    d.attn_rel, d.attn_release = M.attn_release(pair, k, cudnn)
  elseif attn_kernel then
    error(string.format("no attention kernel measurements for %s (arch %s)", tostring(g.id),
      tostring(g.arch)), 0)
  end
  for _, p in ipairs(M.precisions) do
    d.peak[p] = g.peak and g.peak[p] or nil
    d.gemm[p] = ach.gemm and ach.gemm[p] and ach.gemm[p] * sus_gemm or nil
  end
  -- A clock the run held cannot price a rate above the part's peak: the
  -- fractions are of the peak at its boost clock, so an sm_clock past the
  -- one that brings the largest to 1 is more than the board can clock (the
  -- engine's own range check on the scaled fraction named no option).
  if sm_clock ~= nil then
    local top = d.attn_fwd and math.max(d.attn_fwd, d.attn_bwd or 0) or 0
    for _, p in ipairs(M.precisions) do top = math.max(top, d.gemm[p] or 0) end
    if top > 1 then
      error(string.format("sm_clock %g MHz prices %s's tensor rates above its peak: its "
        .. "sustained record stands for %g MHz, at most %.0f MHz there", sm_clock,
        tostring(g.id), sus.clock_mhz, math.floor(sm_clock / top)), 0)
    end
  end
  d.stream = M.stream(ach)
  -- A block-scaled FP8 GEMM's share of the per-tensor FP8 GEMM's rate
  -- (achievable.block_scaled): the GPU's own, else its arch's -- even when
  -- the GPU gives its other fractions, as sustained; nil: the same rate.
  local bs = M.part_record(g, arch, "block_scaled")
  d.block_fp8 = bs and bs.fp8 or nil
  -- Per-tensor FP8 GEMMs in the NN / NT layouts (achievable.non_tn): the
  -- GPU's own, else its arch's; nil: the part runs FP8 TN only -- as a
  -- GPU whose own states fp8 = false does under an arch that states a
  -- share (the RTX 5090: Transformer Engine runs sm120 TN only).
  local ntn = M.part_record(g, arch, "non_tn")
  d.fp8_non_tn = ntn and ntn.fp8 ~= false and ntn.fp8 or nil
  -- A float64 GEMM's rate (a torch.mm in fp64 is cuBLAS's DGEMM: on the
  -- FP64 tensor cores where the GPU has them, fp64_tensor, else on its
  -- FP64 units, fp64); nil where the catalog gives neither.
  d.fp64 = g.peak and (g.peak.fp64_tensor or g.peak.fp64) or nil
  -- The share of the streaming rate eager PyTorch's own memory-bound
  -- kernels reach (achievable.eager): the GPU's own, else its arch's, as
  -- sustained; nil: the same rate.
  local eg = M.part_record(g, arch, "eager")
  d.eager_hbm = eg and eg.hbm or nil
  -- A GEMM library that never splits K (achievable.unsplit): the latency
  -- a CTA waits per K stage and the stage's bounds, the GPU's own, else
  -- its arch's; nil: the library splits K and no stage walk is priced.
  local us = M.part_record(g, arch, "unsplit")
  if us then
    d.cta_latency, d.cta_stage, d.cta_stage_k = us.latency, us.lds, us.stage_k
  end
  return d, clock, limit
end

-- A fused attention kernel's length curve (its catalog entry's `long`:
-- the kernel's published rates at causal prompts from the length its
-- fractions were read at, `seq`, 8192 when absent) as the device table
-- carries it: { {seq, rate over the first point's}, ... } past the first
-- (engine/roofline.c roof_attn_eff); nil without one.  The first point
-- must stand at the reference and the lengths must grow: a curve read
-- off another length would scale the fractions by the wrong rate.
function M.attn_long(pair, kernel)
  local pts = pair.long
  if not pts or #pts == 0 then return nil end
  local ref = pair.seq or 8192
  local function bad(fmt, ...)
    error(string.format("field 'achievable.attention.%s.long': " .. fmt, tostring(kernel), ...), 0)
  end
  if pts[1].seq ~= ref then
    bad("its first point (seq %s) must stand at the length its fractions were read at (seq %d)",
      tostring(pts[1].seq), ref)
  end
  if #pts - 1 > M.ATTN_LONG_MAX then
    bad("%d points past the reference (at most %d)", #pts - 1, M.ATTN_LONG_MAX)
  end
  local out = {}
  for i = 2, #pts do
    if not (pts[i].seq > pts[i - 1].seq) then
      bad("point %d (seq %s) must be longer than point %d (seq %s)", i, tostring(pts[i].seq),
        i - 1, tostring(pts[i - 1].seq))
    end
    out[#out + 1] = { pts[i].seq, pts[i].tflops / pts[1].tflops }
  end
  return out
end
-- A catalog curve's points (narrow, unmasked, a cuDNN release's table) as
-- the device table carries them: 1 to M.ATTN_LONG_MAX points, lengths
-- growing (the engine reads between them in log2 of the length), each made
-- a row by row(p); bad raises naming the field.
local function points(pts, bad, row)
  if #pts == 0 then bad("no points") end
  if #pts > M.ATTN_LONG_MAX then bad("%d points (at most %d)", #pts, M.ATTN_LONG_MAX) end
  local out = {}
  for i, p in ipairs(pts) do
    if i > 1 and not (p.seq > pts[i - 1].seq) then
      bad("point %d (seq %s) must be longer than point %d (seq %s)", i, tostring(p.seq),
        i - 1, tostring(pts[i - 1].seq))
    end
    out[#out + 1] = row(p)
  end
  return out
end

-- The stated cuDNN release's rate over the reference release's (the one
-- the kernel's fractions and curves stand for, the entry's `release`),
-- from the entry's `releases`: { { cudnn = "9.9", points = { {seq, x},
-- ... } }, ... }, oldest first, each the published table of that release
-- against the reference.  A stated release runs the table of the newest
-- release at or before it (a release no table times is taken to keep the
-- kernels of the last one timed); one before every table, or no release
-- stated, the reference (nil: the fractions as they stand).  Returns the
-- device's curve { {seq, x}, ... } and the release whose table it is.
function M.attn_release(pair, kernel, release)
  if release == nil or kernel ~= "cudnn" or not pair.releases then return nil end
  local version = require("gpuplan.version")
  if not version.plain(release) then
    error(string.format("cudnn must be a release, X.Y or X.Y.Z (got %s)",
      type(release) == "string" and ("'" .. release .. "'") or type(release)), 0)
  end
  local pick
  for i, r in ipairs(pair.releases) do
    if not version.plain(r.cudnn) then
      error(string.format("field 'achievable.attention.%s.releases[%d].cudnn': must be a release "
        .. "X.Y or X.Y.Z (got %s)", tostring(kernel), i, tostring(r.cudnn)), 0)
    end
    if i > 1 and version.compare(r.cudnn, pair.releases[i - 1].cudnn) <= 0 then
      error(string.format("field 'achievable.attention.%s.releases[%d]': release %s must come "
        .. "after %s", tostring(kernel), i, r.cudnn, pair.releases[i - 1].cudnn), 0)
    end
    if version.compare(release, r.cudnn) >= 0 then pick = r end
  end
  if not pick then return nil end
  local function bad(fmt, ...)
    error(string.format("field 'achievable.attention.%s.releases' (%s): " .. fmt,
      tostring(kernel), pick.cudnn, ...), 0)
  end
  return points(pick.points or {}, bad, function(p) return { p.seq, p.x } end), pick.cudnn
end

-- A fused attention kernel's rate at a narrow head dim (its catalog
-- entry's `narrow`: the published bars at head dim `dim` and at 128, the
-- head dim its fractions were read at, at the same causal prompts) as the
-- device table carries it: the head dim, and { {seq, tflops / wide}, ... }
-- (engine/roofline.c attn_narrow); nil without one.  The lengths must
-- grow: the ratio is interpolated between them.
function M.attn_narrow(pair, kernel)
  local nw = pair.narrow
  if not nw then return nil end
  local pts = nw.points
  local function bad(fmt, ...)
    error(string.format("field 'achievable.attention.%s.narrow': " .. fmt, tostring(kernel), ...), 0)
  end
  return nw.dim, points(pts, bad, function(p) return { p.seq, p.tflops / p.wide } end)
end

-- A fused attention kernel's measured rates on calls without a mask
-- beside its causal ones at the same lengths (its catalog entry's
-- `unmasked`) as the device table carries them: { {seq, forward without,
-- forward causal, backward without, backward causal}, ... }
-- (engine/roofline.c roof_attn_unmasked); nil without one.  The lengths
-- must grow.
function M.attn_unmasked(pair, kernel)
  local pts = pair.unmasked
  if not pts then return nil end
  local function bad(fmt, ...)
    error(string.format("field 'achievable.attention.%s.unmasked': " .. fmt, tostring(kernel), ...), 0)
  end
  return points(pts, bad, function(p) return { p.seq, p.fwd, p.causal_fwd, p.bwd, p.causal_bwd } end)
end

-- engine/roofline.h ROOF_ATTN_LONG_MAX
M.ATTN_LONG_MAX = 8

-- The per-precision streaming fractions of memory-bound GEMMs
-- (achievable.stream) without their reason and source, as the device
-- table carries them; nil when the entry gives none.
function M.stream(ach)
  if not (ach and ach.stream) then return nil end
  local s = {}
  for _, p in ipairs(M.precisions) do s[p] = ach.stream[p] end
  return s
end

-- The operators of a model's prefill and decode on one GPU, as the
-- roofline places them.  o = {gpu =, model = id|entry, infer = {gp.infer
-- args} (optional)}; gp.infer's defaults but batch 1 when neither batch
-- nor concurrency is given.  Returns the rows (phase, name, count, flop,
-- bytes per call, intensity FLOP/B, tflops attained = flop / (time less
-- the launch), bound, time_s per call, total_s = count x time_s,
-- shape_eff) and the infer result; no rows when the model does not fit
-- the GPU (res.fits false, res.why says why).
function M.model_ops(o, cat)
  local a = {}
  for k, v in pairs(o.infer or {}) do a[k] = v end
  a.model, a.gpu, a.cat = o.model, o.gpu, cat
  if a.batch == nil and a.concurrency == nil then a.batch = 1 end
  -- The prompt of the prefill points where none is given: gp.infer's
  -- default (2048 tokens), cut to what the model's context leaves beside the
  -- output, where it does not fit (a 2048-token GPT-3, BLOOM or
  -- Megatron-GPT: 2048 + 1 or 2048 + 256 tokens were refused as past
  -- max_seq, a roofline of the model unplaceable without an input, and the
  -- command line's output of 1 is none the user can change).
  local m = type(o.model) == "table" and o.model or (cat and cat.models or {})[o.model]
  if a.input == nil and type(m) == "table" and type(m.max_seq) == "number"
     and (m.encoder_layers or 0) == 0 then
    local options = require "gpuplan.options"
    local out = tonumber(a.output) or options.default("output")
    local inp = options.default("input")
    if inp + out > m.max_seq and m.max_seq > out then a.input = m.max_seq - out end
  end
  local res = require("gpuplan.infer").infer(a)
  local rows = {}
  if not res.fits then return rows, res end
  for _, ph in ipairs { "prefill", "decode" } do
    for _, op in ipairs(res[ph].ops) do
      local t = op.time - op.t_launch
      rows[#rows + 1] = { phase = ph, name = op.name, count = op.count, flop = op.flop,
                          bytes = op.bytes, intensity = op.intensity,
                          tflops = t > 0 and op.flop / t / 1e12 or 0, bound = op.bound,
                          time_s = op.time, total_s = op.total, shape_eff = op.shape_eff }
    end
  end
  return rows, res
end

-- gp.roofline{gpu = ID | entry, op = {...}?, model = id | entry?, infer =
-- {...}?, cat = ...} -> {device, ridges, op?, ops?, infer?}
-- ridges[prec] = {peak = FLOP/B, achievable = FLOP/B, flops = achievable FLOP/s}.
-- With a model: ops = M.model_ops's rows, infer = its gp.infer result.
function M.roofline(a)
  if type(a) ~= "table" then error("roofline: expected a table of arguments", 2) end
  require("gpuplan.args").check_keys(a, { "gpu", "op", "model", "infer", "cat", "catalog" },
    "roofline")
  if not a.gpu then error("roofline: gpu is required", 2) end
  if a.op ~= nil and type(a.op) ~= "table" then
    error("roofline: op must be a table {flop =, bytes =, ...} (got " .. type(a.op) .. ")", 2)
  end
  if a.infer ~= nil and (type(a.infer) ~= "table" or a.model == nil) then
    error("roofline: infer must be a table of gp.infer arguments, with model", 2)
  end
  local cat = a.cat or a.catalog
  if cat ~= nil then
    -- said as every planner says it (gpuplan.options check)
    local _, msg = require("gpuplan.options").check(a.cat and "cat" or "catalog", cat, "roofline")
    if msg then error("roofline: " .. msg, 2) end
  end
  -- gpu = 5 was told the catalog's "gpu must be an id, a string", with no
  -- function named, though a gpu table is taken too
  if type(a.gpu) ~= "string" and type(a.gpu) ~= "table" then
    error("roofline: gpu must be an id or a table (got " .. require("gpuplan.args").shown(a.gpu)
      .. ")", 2)
  end
  -- model = 3 was told the catalog's "model must be an id, a string",
  -- with no function named, as gpu was
  if a.model ~= nil and type(a.model) ~= "string" and type(a.model) ~= "table" then
    error("roofline: model must be an id or a table (got " .. require("gpuplan.args").shown(a.model)
      .. ")", 2)
  end
  local d = M.device(a.gpu, cat)
  local r = { device = d, ridges = {} }
  for _, p in ipairs(M.precisions) do
    if d.peak[p] and d.gemm[p] then
      r.ridges[p] = { peak = core().roof_ridge(d, p, false),
                      achievable = core().roof_ridge(d, p, true),
                      flops = d.peak[p] * d.gemm[p] }
    end
  end
  if a.op then
    -- count is how many GEMMs of the shape m x n x k the op's flop and
    -- bytes total (engine/roofline.h roof_op.count: a batched GEMM, one per
    -- head, whose waves it prices): a whole number of them; 0 priced a
    -- total of 0 s for an op given to price.
    local n = a.op.count
    if n ~= nil and (type(n) ~= "number" or n ~= math.floor(n) or n < 1 or n > 1e15) then
      error("roofline: op.count must be a whole number of calls 1..1e15 (got "
        .. require("gpuplan.args").shown(n) .. ")", 2)
    end
    -- A GEMM is its whole shape: m alone, m and n, or m = 0 with n and k
    -- was read as no GEMM at all (the engine's 0 = no shape) and priced on
    -- the fp32 vector units, 9x slower on an H100 than the bf16 GEMM the
    -- op describes; a fraction of a row is no shape either.  Other types
    -- are the C reader's to refuse.
    local dims, given = { "m", "n", "k" }, {}
    for _, k in ipairs(dims) do
      if a.op[k] ~= nil then given[#given + 1] = k end
    end
    -- Without a shape there is nothing to repeat: count 2 priced the op
    -- as count 1 (the same time), in silence.
    if #given == 0 and n ~= nil and n ~= 1 then
      error("roofline: op.count counts the GEMMs of the shape m x n x k that flop and bytes "
        .. "total (a batched GEMM): an op without m, n and k has no shape to repeat (got count "
        .. require("gpuplan.args").shown(n) .. ")", 2)
    end
    if #given > 0 then
      for _, k in ipairs(dims) do
        local v = a.op[k]
        if v == nil then
          error(string.format("roofline: op: a GEMM needs m, n and k (got %s only; an op "
            .. "without all three runs on the vector units)", table.concat(given, ", ")), 2)
        end
        if type(v) == "number" and v == v and v ~= math.huge
          and (v ~= math.floor(v) or v < 1) then
          error(string.format("roofline: op.%s must be a whole number >= 1 (got %s)", k,
            require("gpuplan.args").shown(v)), 2)
        end
      end
    end
    local ok, res = pcall(core().roof_op, d, a.op)
    if not ok then error("roofline: " .. tostring(res), 2) end
    -- An op that moves no bytes has no finite intensity (FLOP per byte):
    -- math.huge with FLOP (compute-bound on any ridge; gp.json writes it
    -- null), none without; the engine's 0 read as the least intense op.
    if a.op.bytes == 0 then res.intensity = a.op.flop > 0 and math.huge or nil end
    r.op = res
  end
  if a.model ~= nil then
    r.ops, r.infer = M.model_ops({ gpu = a.gpu, model = a.model, infer = a.infer }, catalog(cat))
  end
  return r
end

local function fmt_roof(v) return string.format("%.0f", v) end

-- Write the roofline chart of a GPU to path (whole or nothing).
-- o = {gpu =, model = id|entry (optional), infer = {gp.infer args} (optional),
--      cat =}.  With a model, the prefill and decode operators of gp.infer
-- (default: batch 1 decode and a 2048-token prompt) are plotted as points.
-- Returns path and the infer result (or nil).
function M.svg(path, o)
  local svg = require "gpuplan.svg"
  local cat = catalog(o.cat)
  local d = M.device(o.gpu, cat)
  local ops, res = {}, nil
  if o.model then ops, res = M.model_ops(o, cat) end
  local p = svg.plot {
    title = "Roofline: " .. (d.name or d.id) .. (res and (" - " .. res.model) or ""),
    xlabel = "arithmetic intensity (FLOP/byte)",
    ylabel = "attainable TFLOP/s (dense, achievable)",
    xlog = true, ylog = true, xmin = 0.1, xmax = 1e4,
    note = string.format("HBM %.2f TB/s x %.2f achievable; compute roofs = dense peak x achievable GEMM fraction",
                         d.mem_bw / 1e12, d.hbm),
  }
  local bw = d.mem_bw * d.hbm
  local roofs, ymax = {}, 0
  for _, prec in ipairs { "fp4", "fp8", "int8", "bf16", "tf32", "fp32" } do
    if d.peak[prec] and d.gemm[prec] then
      local f = d.peak[prec] * d.gemm[prec]
      if not roofs[f] then
        roofs[f] = true
        roofs[#roofs + 1] = { prec = prec, f = f }
        ymax = math.max(ymax, f)
      end
    end
  end
  -- one bandwidth slope, then each compute roof from its ridge point
  p:line({ { 0.1, 0.1 * bw / 1e12 }, { ymax / bw, ymax / 1e12 } },
         { label = string.format("HBM %.2f TB/s achievable", bw / 1e12), color = "#333", width = 2.5 })
  for i, r in ipairs(roofs) do
    local ridge = r.f / bw
    p:line({ { ridge, r.f / 1e12 }, { 1e4, r.f / 1e12 } },
           { label = string.format("%s %s TFLOP/s (ridge %s)", r.prec, fmt_roof(r.f / 1e12),
                                   fmt_roof(ridge)),
             color = svg.palette[(i % #svg.palette) + 1], dash = i > 1 and "6,3" or nil })
  end
  if res and res.fits then
    for _, ph in ipairs { { "prefill", "#d62728", "circle" }, { "decode", "#1f77b4", "square" } } do
      local pts = {}
      for _, op in ipairs(ops) do
        -- GEMMs, attention and logits; the elementwise ops (norms, rope,
        -- activation, sampling) all sit at ~1 FLOP/B and would bury them
        if op.phase == ph[1] and op.flop > 0 and op.bytes > 0 and op.tflops > 0
           and (op.shape_eff < 1 or op.intensity > 2 or op.name == "attention"
                or op.name == "logits" or op.name:match("^moe_")) then
          pts[#pts + 1] = { op.intensity, op.tflops, op.name }
        end
      end
      p:points(pts, { label = ph[1] .. (ph[1] == "prefill" and string.format(" (%d tokens)", res.input)
                                        or string.format(" (batch %d)", res.batch)),
                      color = ph[2], shape = ph[3] })
    end
  end
  p.ymin = 0.1
  p.ymax = 10 ^ math.ceil(math.log(ymax / 1e12, 10))
  p:write(path)
  return path, res
end

-- A misuse found anywhere inside names the caller's line (gpuplan.args).
return require("gpuplan.args").api_module(M)
