-- A GPU's own achievable.non_tn = { fp8 = false, ... } says its fp8 GEMMs
-- run TN only although its arch states a non-TN share: Transformer Engine
-- from v2.4 takes non-TN fp8 GEMMs on compute capability 10.0 to 11.x and
-- 13.0 up only (nvte_is_non_tn_fp8_gemm_supported), so on the RTX 5090
-- (sm120) it writes the fp8 transposes and runs dgrad and wgrad TN, as on
-- Hopper.  Its achievable also gives its own gemm / hbm fractions (its
-- measured sm120 GEMM rates, catalog/gpus/nvidia-blackwell.lua): the
-- opt-out is read beside them, as a per-part record
-- (roofline.part_record); the user entries below hold the opt-out alone.
-- Run with ./gpuplan run tests/lua/fp8_tn_only.t.
local t = require "tap"
local gp = require "gpuplan"
local catalog = require "gpuplan.catalog"
local rf = require "gpuplan.roofline"

t.plan(15)

local op = t.op
local root = require("gpuplan.config").root .. "/catalog"

-- The built-in RTX 5090: TN only; the B200 keeps the arch's 0.966; the
-- 5090's base fractions are its own (cat:achievable says "gpu"), which
-- carry the opt-out.
local cat = gp.catalog()
t.is(rf.device("rtx-5090", cat).fp8_non_tn, nil, "rtx-5090: no non-TN share (TN only)")
t.is(rf.device("b200", cat).fp8_non_tn, 0.966, "b200: the arch's 0.966")
local a, from = cat:achievable("rtx-5090")
t.ok(a == cat.gpus["rtx-5090"].achievable and from == "gpu" and a.non_tn.fp8 == false,
     "rtx-5090: its own gemm / hbm fractions, the opt-out among them")

-- A user catalog entry on the blackwell arch, once with the opt-out and
-- once without (B200's figures; 192 GiB holds llama3-8b on one GPU).
local scratch = t.scratch()
local function gpu(id, ach)
  return string.format([[
gpu { id = %q, name = "x", vendor = "NVIDIA", arch = "blackwell", memory = "192GiB",
  mem_bw = "8TB/s", sms = 148,
  peak = { bf16 = "2250TFLOPS", fp16 = "2250TFLOPS", fp8 = "4500TFLOPS" },
  pcie = { gen = 5, lanes = 16 }, source = "t"%s }
]], id, ach and (",\n  achievable = " .. ach) or "")
end
local OFF = [[{ non_tn = { fp8 = false, reason = "t", source = "t" },
    reason = "t", source = "t" }]]
scratch.put("u.lua", gpu("tn-off", OFF) .. gpu("tn-on"))
local cu, errs = catalog.load { root, scratch.dir }
t.is(errs and #errs or 0, 0, "the user entries load")
local job = { model = "llama3-8b", gpu = "tn-off", gpus = 1, seq = 4096, global_batch = 1,
              method = "pretrain", precision = "fp8", fp8_scaling = "delayed",
              stack = "megatron", cat = cu }
local off = gp.train(job)
local on = gp.train(t.with(job, { gpu = "tn-on" }))
-- Hopper-style: the same entry under an arch that states no share.
local arch = cu.archs.blackwell.achievable
local saved = arch.non_tn
arch.non_tn = nil
local hop = gp.train(t.with(job, { gpu = "tn-on" }))
arch.non_tn = saved

-- The transposes: mlp_down's input (T x ffn, its cast a kernel of its
-- own) is written twice over, 1 B an element more than with the arch's
-- share: T ffn / (8e12 x 0.85 B/s) = 4096 x 14336 / 6.8e12 = 8.64 us;
-- 1e-6, rounding.
local T, ffn = 4096, 14336
t.near(op(off, "mlp_down").fwd - op(on, "mlp_down").fwd, T * ffn / (8e12 * 0.85), 1e-6,
       "opt-out: mlp_down's input cast writes the fp8 transpose")
-- dgrad and wgrad at the TN rate: the opt-out prices every op as the
-- same card under an arch with no share (exact: the same device table).
t.is(op(off, "mlp_up").bwd, op(hop, "mlp_up").bwd, "opt-out: mlp_up backward at the TN rate")
t.is(off.step_s, hop.step_s, "opt-out: the step as Hopper-style TN pricing")
t.ok(off.step_s ~= on.step_s, "opt-out: not the arch's non-TN price")
-- The base fractions: the opt-out's bf16 step is the inheriting card's.
local bf = t.with(job, { precision = "bf16", fp8_scaling = false })
bf.fp8_scaling = nil
t.is(gp.train(bf).step_s, gp.train(t.with(bf, { gpu = "tn-on" })).step_s,
     "opt-out: bf16 untouched (the arch's gemm and hbm)")

-- A bad value is refused when the catalog loads, naming the file, the
-- line and the field.
local function bad(v, want, name)
  scratch.clean()
  scratch.put("b.lua", "\n" .. gpu("tn-bad", "{ non_tn = { fp8 = " .. v
    .. ", reason = \"t\", source = \"t\" }, reason = \"t\", source = \"t\" }"))
  local _, e = catalog.load { root, scratch.dir }
  t.like(e and e[1] or "", "b.lua:6: gpu 'tn-bad': field 'achievable.non_tn.fp8': " .. want,
         name, true)
end
bad("true", "expected a fraction in (0, 1], or false (none on this part), got true",
    "fp8 = true: refused at b.lua:6, the line of its field")
bad('"no"', 'expected a fraction in (0, 1], or false (none on this part), got "no"',
    "fp8 = \"no\": refused")
bad("0", "expected a fraction in (0, 1], or false (none on this part), got 0", "fp8 = 0: refused")
-- A GPU that gives gemm but no hbm replaces its arch's base fractions
-- together, so the arch's hbm is not read: refused naming achievable.hbm,
-- not as an arch without fractions.
scratch.clean()
scratch.put("b.lua", "\n" .. gpu("hbm-less", "{ gemm = { bf16 = 0.7 }, reason = \"t\", "
  .. "source = \"t\" }"))
local _, eh = catalog.load { root, scratch.dir }
t.like(eh and eh[1] or "", "b.lua:2: gpu 'hbm-less': field 'achievable.hbm': required where "
       .. "the gpu's achievable gives gemm or stream", "gemm without hbm: refused at the field",
       true)
scratch.remove()

-- The built-in RTX 5090 prices fp8 training TN: the same step with the
-- arch's share removed.
local j5 = { model = "llama3.2-1b", gpu = "rtx-5090", gpus = 1, seq = 2048, global_batch = 1,
             method = "pretrain", precision = "fp8", fp8_scaling = "current",
             stack = "megatron", cat = cat }
local s5 = gp.train(j5).step_s
local ab = cat.archs.blackwell.achievable
local sv = ab.non_tn
ab.non_tn = nil
local s5h = gp.train(j5).step_s
ab.non_tn = sv
t.is(s5, s5h, "rtx-5090: fp8 training priced TN, as Hopper")
-- Without its own opt-out it would take the arch's non-TN share.
local g5 = cat.gpus["rtx-5090"]
local own = g5.achievable
g5.achievable = nil
local s5n = gp.train(j5).step_s
g5.achievable = own
t.ok(s5n ~= s5, "rtx-5090: its own opt-out, not the arch's share, sets the price")
