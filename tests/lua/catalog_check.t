-- The catalog refuses what the commands refuse (issue 13): every error of
-- every file, the engine's checks after the schema, limits applied before
-- a file is read or compiled, warnings for what it skips.
local t = require "tap"
local catalog = require "gpuplan.catalog"
local lfs = require "lfs"

local F = "tests/fixtures/catalog/"

-- semantic/entries.lua: one entry per line that a command would refuse
-- (or a good one it needs); expected.txt: the message of each bad line.
local _, errs = catalog.load { F .. "good", F .. "semantic" }
local want = {}
for l in io.lines(F .. "semantic/expected.txt") do want[#want + 1] = l end
t.is(#errs, #want, "one error per bad entry, all in one file: " .. #want)
for i, w in ipairs(want) do
  local got = (errs[i] or ""):gsub("^" .. (F .. "semantic/entries.lua:"):gsub("%p", "%%%0"), "")
  t.is(got, w, "line " .. w:match("^%d+"))
end

-- The built-in catalog passes the same checks.
local _, built = catalog.load { require("gpuplan.config").root .. "/catalog" }
t.is(#built, 0, "the built-in catalog passes every check")
if #built > 0 then t.diag(built[1]) end

-- A scratch directory.
local scratch = t.scratch()
local tmp, put, clean = scratch.dir, scratch.put, scratch.clean

-- Limits before reading: a file past files.limits.catalog (4 MiB) is
-- refused by its size, whatever it holds.
local files = require "gpuplan.files"
put("big.lua", "-- " .. ("x"):rep(files.limits.catalog) .. "\n")
local _, eb = catalog.load { tmp }
t.is(eb[1], tmp .. "/big.lua: too large (4 MiB; the limit for a catalog file is 4 MiB)",
  "an oversized file is refused by its size")
clean()

-- Compiling counts against the memory limit: a 3 MB string literal needs
-- a 3 MB buffer in the lexer, past a limit lowered to 1 MiB.
put("literal.lua", "local s = '" .. ("y"):rep(3 * 1000 * 1000) .. "'\n")
local saved = catalog.limits.bytes
catalog.limits.bytes = 1024 * 1024
local _, el = catalog.load { tmp }
catalog.limits.bytes = saved
t.like(el[1], "literal.lua: catalog file uses too much memory (limit 1 MiB)",
  "compiling a huge literal hits the memory limit", true)
t.is(require("gpuplan.config").memory(), 0, "no memory limit left behind")
clean()

-- Compiling counts against the time limit too: the clock starts before
-- load.  A 2 MB file takes well over a millisecond to compile (the lexer
-- reads at ~100 MB/s), past a limit lowered to 1 ms.
put("slow_compile.lua", ("a = 1\n"):rep(2 * 1000 * 1000 // 6))
local saved_s = catalog.limits.seconds
catalog.limits.seconds = 0.001
local _, ec = catalog.load { tmp }
catalog.limits.seconds = saved_s
t.like(ec[1], "slow_compile.lua: catalog file takes too long to compile (limit 0.001 s)",
  "compiling counts against the time limit", true)
t.is(require("gpuplan.config").memory(), 0, "no memory limit left behind")
clean()

-- 100,000 nested parentheses: one line naming the file, no traceback.
put("deep.lua", "local x = " .. ("("):rep(100000) .. "1" .. (")"):rep(100000) .. "\n")
local _, ed = catalog.load { tmp }
t.is(ed[1], tmp .. "/deep.lua: nested too deeply to compile (C stack overflow)",
  "deep nesting: one line naming the file")
clean()

-- Every error of a file: three bad entries, three errors, in line order,
-- and the good entry between them is loaded.
put("three.lua", [[
fabric { id = "f1", name = "x", scope = "scaleup", kind = "nvlink", bw = "1GB/s", latency = "1us",
  achievable = 0.5, achievable_reason = "t", source = "t" }
fabric { id = "f2", name = "x", scope = "scaleup", kind = "nvlink", bw = "1GB/s bidir", latency = "1us",
  achievable = 0.5, achievable_reason = "t", source = "t" }
fabric { id = "f3", name = "x", scope = "sideways", kind = "nvlink", bw = "1GB/s bidir", latency = "1us",
  achievable = 0.5, achievable_reason = "t", source = "t" }
fabric { id = "f4", name = "x", scope = "scaleup", kind = "nvlink", bw = "1GB/s bidir", latency = "1us",
  achievable = 2, achievable_reason = "t", source = "t" }
]])
local c3, e3 = catalog.load { tmp }
t.is(#e3, 3, "three bad entries, three errors")
t.like(e3[1], "three.lua:1: fabric 'f1'", "the first", true)
t.like(e3[2], "three.lua:5: fabric 'f3': field 'scope'", "the second", true)
t.like(e3[3], "three.lua:8: fabric 'f4': field 'achievable'", "the third (at its field's line)", true)
t.ok(c3.fabrics.f2 ~= nil, "the good entry between them is in")
clean()

-- A reference to an entry that failed is not reported a second time.
put("ref.lua", [[
fabric { id = "badlink", name = "x", scope = "scaleup", kind = "nvlink", bw = "1GB/s", latency = "1us",
  achievable = 0.5, achievable_reason = "t", source = "t" }
gpu { id = "g", name = "x", vendor = "T", arch = "a", memory = "1GB", mem_bw = "1TB/s",
  peak = { bf16 = "1TFLOPS" }, scaleup = { fabric = "badlink", domain = 2 }, source = "t",
  achievable = { hbm = 0.5, reason = "t", source = "t" } }
]])
local _, er = catalog.load { tmp }
t.is(#er, 1, "the fabric's error, not a second one for the GPU that names it")
clean()

-- achievable.sustained is a fraction of the benchmark rates: above 1 (a
-- card faster under sustained load than in a burst) is refused, by path.
put("sus.lua", [[
arch { id = "sa", name = "x", launch_overhead = "4us",
  achievable = { gemm = { bf16 = 0.8 }, hbm = 0.85, reason = "t", source = "t",
    sustained = { gemm = 1.5, attention = 0.85, reason = "t", source = "t" } } }
]])
local _, es = catalog.load { tmp }
t.is(#es, 1, "a sustained factor above 1: one error")
t.like(es[1] or "", "sus.lua:3: arch 'sa': field 'achievable.sustained.gemm': expected a "
  .. "fraction in (0, 1], got 1.5", "names the field and the value", true)
clean()

-- achievable.block_scaled (a block-scaled fp8 GEMM's share of the
-- per-tensor one's rate) is a fraction, refused by path; the device
-- table takes the GPU's own, else its arch's even where the GPU gives its
-- other fractions (B200, GB200, B300, GB300 do), and none on Hopper.
put("bsc.lua", [[
arch { id = "sa", name = "x", launch_overhead = "4us",
  achievable = { gemm = { bf16 = 0.8 }, hbm = 0.85, reason = "t", source = "t",
    block_scaled = { fp8 = 1.2, reason = "t", source = "t" } } }
]])
local _, ebs = catalog.load { tmp }
t.is(#ebs, 1, "a block-scaled share above 1: one error")
t.like(ebs[1] or "", "bsc.lua:3: arch 'sa': field 'achievable.block_scaled.fp8': expected a "
  .. "fraction in (0, 1], got 1.2", "names the field and the value", true)
clean()
do
  local cb = catalog.load { require("gpuplan.config").root .. "/catalog" }
  local rf = require("gpuplan.roofline")
  t.is(rf.device("b200", cb).block_fp8, 0.951, "b200: the blackwell arch's block-scaled share")
  t.is(rf.device("gb300", cb).block_fp8, 0.951, "gb300: the arch's, beside its own fractions")
  t.is(rf.device("h100-sxm", cb).block_fp8, nil, "h100: none stated")
end

-- achievable.stream (memory-bound GEMMs' streaming fraction per
-- precision) is a fraction too, refused by path; a valid one reaches the
-- device table without its reason and source.
put("str.lua", [[
arch { id = "sa", name = "x", launch_overhead = "4us",
  achievable = { gemm = { bf16 = 0.8 }, hbm = 0.85, reason = "t", source = "t",
    stream = { fp4 = 1.2, reason = "t", source = "t" } } }
]])
local _, est = catalog.load { tmp }
t.is(#est, 1, "a stream fraction above 1: one error")
t.like(est[1] or "", "str.lua:3: arch 'sa': field 'achievable.stream.fp4': expected a "
  .. "fraction in (0, 1], got 1.2", "names the field and the value", true)
clean()
do
  local cb = catalog.load { require("gpuplan.config").root .. "/catalog" }
  local d = require("gpuplan.roofline").device("b200", cb)
  t.is(d.stream and d.stream.fp4, 0.70, "b200's device carries its fp4 streaming fraction")
  t.is(d.stream and d.stream.reason, nil, "... without the entry's reason")
  -- MI300X states 0.70 for fp8 (AMD's tuned CK GEMMs, ROCm/aiter PR
  -- 1092).  A one-token gate_up GEMM of Llama 3.1 405B at TP8 (N 13312,
  -- K 16384) reads 13312 x 16384 + 16384 + 2 x 13312 = 218,146,816 B:
  -- at 5.3 TB/s x 0.85 x 0.70 = 3.1535 TB/s that is 69.18 us, plus the
  -- 3.9 us fill and the 1 us graph launch = 74.08 us (the table's kernel:
  -- 71.8 us); its 2 x 13312 x 16384 FLOP on the unsplit 16 x 16 tile
  -- (achievable.unsplit: 832 tiles in 3 waves of 304 CUs, shape term
  -- 13312 / (3 x 304 x 256) = 0.0570) at 0.47 of the fp8 peak take 6.2 us,
  -- and its K walk, 3 waves x 32 stages x 0.55 us + 3.9 us = 56.7 us, is
  -- under the stream, so the memory-bound overlap adds 0.002 us.
  -- Tolerance 0.3% (0.2 us) for the rounding of the hand steps.
  local m3 = require("gpuplan.roofline").device("mi300x", cb)
  t.is(m3.stream and m3.stream.fp8, 0.70, "mi300x's device carries its fp8 streaming fraction")
  local n, k = 13312, 16384
  local op = require("gpuplan.core").roof_op(m3, { flop = 2 * n * k, bytes = n * k + k + 2 * n,
    m = 1, n = n, k = k, prec = "fp8" })
  t.near(op.time * 1e6, 74.08, 3e-3, "mi300x: a one-token fp8 405B gate_up GEMM at the fp8 stream rate")
  -- MI300X's tuned kernels never split K (achievable.unsplit: 64 KiB LDS,
  -- stages of at most 512 B of K, 0.55 us a stage).  The 405B qkv GEMM at
  -- 16 tokens (N 2304, K 16384) has few tiles: every tile of edges up to
  -- 64 + 64 runs in one wave with 512 B stages, 16384 / 512 = 32 stages x
  -- 0.55 us = 17.6 us + the 3.9 us fill = 21.5 us of walk; the 16 x 16
  -- tile (144 tiles, shape term 16 x 2304 / (304 x 256) = 0.47368) has the
  -- fewest MFMAs, 2 x 16 x 2304 x 16384 / (0.47 x 2614.9e12 x 0.47368) =
  -- 2.075 us, added to the walk: 23.575 us, above the device's stream
  -- (38,084,608 B at 3.1535 TB/s + 3.9 us = 15.98 us); with the 1 us graph
  -- launch 24.575 us (aiter's kernel: 23.27 us).  Split-K, as the other
  -- cards price it, would have put it at the stream's 16 us.  Tolerance
  -- 0.3% for the rounding of the hand steps.
  local q = require("gpuplan.core").roof_op(m3, { flop = 2 * 16 * 2304 * k,
    bytes = 2304 * k + 16 * k + 2 * 16 * 2304, m = 16, n = 2304, k = k, prec = "fp8" })
  t.near(q.time * 1e6, 24.575, 3e-3, "mi300x: the 405B qkv GEMM at 16 tokens walks its K stages unsplit")
  -- The walk is priced for 8-bit operands only (its source is AMD's
  -- a8w8 table): the same GEMM in bf16 is priced as on a device without
  -- achievable.unsplit, to the last bit (the same code path), while the
  -- fp8 one above is not (24.575 us against the stream's ~16 us).
  local m3s = {}
  for key, v in pairs(m3) do m3s[key] = v end
  m3s.cta_latency, m3s.cta_stage, m3s.cta_stage_k = nil, nil, nil
  local qb = { flop = 2 * 16 * 2304 * k, bytes = 2 * (2304 * k + 16 * k + 16 * 2304),
    m = 16, n = 2304, k = k, prec = "bf16" }
  t.is(require("gpuplan.core").roof_op(m3, qb).time, require("gpuplan.core").roof_op(m3s, qb).time,
    "mi300x: a bf16 GEMM keeps the split pricing (the unsplit walk is the a8w8 kernels')")
  local qf = { flop = q.flop or 2 * 16 * 2304 * k, bytes = 2304 * k + 16 * k + 2 * 16 * 2304,
    m = 16, n = 2304, k = k, prec = "fp8" }
  t.ok(require("gpuplan.core").roof_op(m3s, qf).time < q.time,
    "... and without the unsplit entry the fp8 one would be faster (the walk is what the test above prices)")
end

-- achievable.attention.fp8 (an FP8 attention kernel's share of the 16-bit
-- kernel's fraction) is a fraction, refused by path; the shipped values
-- reach the device table: Hopper's 0.85 (FP8 FlashMLA ~1.70x BF16 on
-- H20), Blackwell's and GB200's own 0.90 (SGLang's GB200 decode: FP8 MLA
-- 1.8x), none where no FP8 kernel was measured (Ampere).
-- achievable.unsplit (a GEMM library that never splits K) needs all three
-- of its bounds: a stage latency without its LDS is refused by path.
put("aun.lua", [[
arch { id = "su", name = "x", launch_overhead = "4us",
  achievable = { gemm = { bf16 = 0.8 }, hbm = 0.85, reason = "t", source = "t",
    unsplit = { stage_k = "512B", latency = "0.5us", reason = "t", source = "t" } } }
]])
local _, eun = catalog.load { tmp }
t.is(#eun, 1, "an unsplit entry without its LDS: one error")
t.like(eun[1] or "", "aun.lua:1: arch 'su': field 'achievable.unsplit.lds': required field "
  .. "is missing", "names the missing field", true)
clean()
put("af8.lua", [[
arch { id = "sa", name = "x", launch_overhead = "4us",
  achievable = { gemm = { bf16 = 0.8 }, hbm = 0.85, reason = "t", source = "t",
    attention = { kernel = "fa3", fa3 = { fwd = 0.6, bwd = 0.5 }, fp8 = 2 } } }
]])
local _, ea8 = catalog.load { tmp }
t.is(#ea8, 1, "an fp8 attention share above 1: one error")
t.like(ea8[1] or "", "af8.lua:3: arch 'sa': field 'achievable.attention.fp8': expected a "
  .. "fraction in (0, 1], got 2", "names the field and the value", true)
clean()
do
  local cb = catalog.load { require("gpuplan.config").root .. "/catalog" }
  local rf = require("gpuplan.roofline")
  t.is(rf.device("h20", cb).attn_fp8, 0.85, "h20: the hopper arch's fp8 share")
  t.is(rf.device("b200", cb).attn_fp8, 0.90, "b200: the blackwell arch's fp8 share")
  t.is(rf.device("gb200", cb).attn_fp8, 0.90, "gb200: its own fp8 share")
  t.is(rf.device("a100-sxm-80gb", cb).attn_fp8, nil, "a100: no fp8 kernel measured")
end

-- An attention kernel's dropout (its forward + backward with dropout on
-- the probabilities over without) is a slowdown, refused by path below 1;
-- the shipped measurements reach the device table: Hopper's cuDNN 1.034
-- (H200, TE issue #3312, 0.614 / 0.594 ms), Blackwell's and GB200's cuDNN
-- 1.094 (B300, 0.525 / 0.480 ms), FlashAttention-2 1.047 (GB200, TE PR
-- #3313, 0.728 / 0.695 ms) on Ampere and Hopper; none for a kernel
-- nobody measured with dropout (FA3, which has no dropout).
put("adr.lua", [[
arch { id = "sa", name = "x", launch_overhead = "4us",
  achievable = { gemm = { bf16 = 0.8 }, hbm = 0.85, reason = "t", source = "t",
    attention = { kernel = "fa3", fa3 = { fwd = 0.6, bwd = 0.5, dropout = 0.9 } } } }
]])
local _, edr = catalog.load { tmp }
t.is(#edr, 1, "a dropout slowdown below 1: one error")
t.like(edr[1] or "", "adr.lua:3: arch 'sa': field 'achievable.attention.fa3.dropout': must be "
  .. ">= 1, got 0.9", "names the field and the value", true)
clean()
do
  local cb = catalog.load { require("gpuplan.config").root .. "/catalog" }
  local rf = require("gpuplan.roofline")
  t.is(rf.device("h100-sxm", cb).attn_dropout, 1.034, "h100: cuDNN's dropout slowdown")
  t.is(rf.device("h100-sxm", cb, "fa2").attn_dropout, 1.047, "h100: FlashAttention-2's")
  t.is(rf.device("h100-sxm", cb, "fa3").attn_dropout, nil, "h100: FA3 measured with none")
  t.is(rf.device("a100-sxm-80gb", cb).attn_dropout, 1.047, "a100: FlashAttention-2's")
  t.is(rf.device("b200", cb).attn_dropout, 1.094, "b200: cuDNN's on Blackwell")
  t.is(rf.device("gb200", cb).attn_dropout, 1.094, "gb200: its own entry carries it")
end

-- achievable.attention.exp_dim (the head dim below which the softmax's
-- exponentials bound the fused kernel, roofline.c roof_attn_eff) is a
-- head dim, refused by path when it is none; the shipped values reach the
-- device table: Hopper's 64 (4096 MMA FLOP against 16 exponentials a clock
-- per SM), standard Blackwell's 97 on the b200 and gb200 entries (FA4's
-- head-dim-64 rate on a B200, 857 / 1302 = 0.658 of 128's, 64 / 0.658 =
-- 97, flash-attention PR #2605), Blackwell Ultra's 89 (the same PR's
-- GB300, twice the SFU rate: 0.716, 64 / 0.716 = 89) on the arch, which
-- the B300 inherits and the GB300 states, none where the H20 gives its
-- own attention entry without it.
put("aed.lua", [[
arch { id = "sa", name = "x", launch_overhead = "4us",
  achievable = { gemm = { bf16 = 0.8 }, hbm = 0.85, reason = "t", source = "t",
    attention = { kernel = "fa3", fa3 = { fwd = 0.6, bwd = 0.5 }, exp_dim = 0 } } }
]])
local _, eed = catalog.load { tmp }
t.is(#eed, 1, "an exp_dim of 0: one error")
t.like(eed[1] or "", "aed.lua:3: arch 'sa': field 'achievable.attention.exp_dim': must be >= 1, "
  .. "got 0", "names the field and the value", true)
clean()
do
  local cb = catalog.load { require("gpuplan.config").root .. "/catalog" }
  local rf = require("gpuplan.roofline")
  t.is(rf.device("h100-sxm", cb).attn_exp_dim, 64, "h100: the hopper arch's exp_dim")
  t.is(rf.device("b200", cb).attn_exp_dim, 97, "b200: its own exp_dim (standard Blackwell SFUs)")
  t.is(rf.device("gb200", cb).attn_exp_dim, 97, "gb200: its own exp_dim, B200's")
  t.is(rf.device("b300", cb).attn_exp_dim, 89, "b300: the blackwell arch's (Blackwell Ultra's) exp_dim")
  t.is(rf.device("gb300", cb).attn_exp_dim, 89, "gb300: its own exp_dim, Blackwell Ultra's")
  t.is(rf.device("h20", cb).attn_exp_dim, nil, "h20: its own attention entry gives none")
end

-- What the walk skips is a warning: a broken link, a link loop, a FIFO
-- named *.lua (reading it would block).
put("ok.lua", "")
lfs.link(tmp .. "/missing.lua", tmp .. "/broken.lua", true)
lfs.link(tmp .. "/loop-b.lua", tmp .. "/loop-a.lua", true)
lfs.link(tmp .. "/loop-a.lua", tmp .. "/loop-b.lua", true)
os.execute("mkfifo '" .. tmp .. "/fifo.lua'")
lfs.link(".", tmp .. "/self", true)
local cw, ew = catalog.load { tmp }
t.is(#ew, 0, "skipped entries are not errors")
local text = table.concat(cw.warnings, "\n")
t.like(text, tmp .. "/broken.lua: broken symbolic link (to " .. tmp .. "/missing.lua), skipped",
  "a broken link is a warning", true)
t.like(text, tmp .. "/loop-a.lua: symbolic link loop", "a link loop is a warning", true)
t.like(text, tmp .. "/fifo.lua: not a regular file (a named pipe), skipped",
  "a FIFO is skipped with a warning, not read", true)
t.like(text, tmp .. "/self: directory " .. tmp .. " already read, skipped",
  "a directory link back to an ancestor is a warning", true)
t.is(#cw.files, 1, "the regular file is still read")
clean()

-- An unreadable subdirectory is skipped with a warning (root reads every
-- directory, so there the case cannot be made).
assert(lfs.mkdir(tmp .. "/locked"))
put("locked/x.lua", "")
os.execute("chmod 000 '" .. tmp .. "/locked'")
if pcall(lfs.dir, tmp .. "/locked") then
  t.ok(true, "# skip an unreadable directory (running as root)")
else
  local cu = catalog.load { tmp }
  t.like(table.concat(cu.warnings, "\n"), "cannot read directory " .. tmp .. "/locked",
    "an unreadable subdirectory is a warning", true)
end
os.execute("chmod 755 '" .. tmp .. "/locked'")
clean()

-- Errors from gpuplan's own catalog search raise a catalog error: a
-- table that prints as its message, so no caller strips its position.
local e = catalog.error("x.lua:3: bad")
t.is(tostring(e), "x.lua:3: bad", "a catalog error prints as its message")
t.is(require("gpuplan.cli").clean(e), e, "cli.clean leaves it as it is")

scratch.remove()
t.done_testing()
