-- A user scripting gpuplan in Lua (round 10): extending the catalog and
-- reading results.  Run with ./gpuplan run tests/lua/luawalk10.t.
local t = require "tap"
local gp = require "gpuplan"

-- 1. currency { id = "USD", per_usd = 2 } was accepted and read by
-- nothing: every conversion takes 1 for USD (rates are units per US
-- dollar), so the user's figure was silently ignored and the catalog's
-- currencies read "CNY, USD, USD".  Now refused at the entry's file:line.
do
  local s = t.scratch()
  s.put("usd.lua", 'currency { id = "USD", per_usd = 2, date = "2026-11-02", source = "x" }\n')
  t.raises(function() return gp.catalog { dirs = { "catalog", s.dir } } end,
    "usd.lua:1: currency 'USD': field 'id': USD needs no currency entry", "a USD entry is refused", true)
  -- another currency still loads and converts: 2 USD at 0.92 EUR/USD = 1.84 EUR
  s.clean()
  s.put("eur.lua", 'currency { id = "EUR", per_usd = 0.92, date = "2026-11-02", source = "x" }\n')
  local cat = gp.catalog { dirs = { "catalog", s.dir } }
  t.near(cat:convert({ amount = 2, currency = "USD" }, "EUR"), 1.84, 1e-12, "EUR converts")
  s.remove()
end

-- 2. A flag of the command line that the Lua function does not take
-- (cli_only) was answered with a near name that is another option:
-- gp.infer{target = 1000} "did you mean 'market'?", gp.sweep{svg = ...}
-- "did you mean 'seq'?", gp.infer{ops = true} "did you mean 'gpu'?",
-- gp.infer{sweep_batch = true} "did you mean 'batch'?".  Now the error
-- says the flag is the command line's and what a script does instead.
do
  local check = t.raises_here
  check(function() local _ = gp.infer { model = "llama2-7b", gpu = "h100-sxm", target = 1000 } end,
    "infer: unknown option 'target' (--target is a flag of gpuplan infer, not a key of "
      .. "gp.infer: gp.infer_plan{target = TPS, ...}", "infer target: points at gp.infer_plan")
  check(function() local _ = gp.sweep { model = "llama2-7b", gpu = "h100-sxm", svg = "x" } end,
    "sweep: unknown option 'svg' (--svg is a flag of gpuplan plan, not a key of gp.sweep",
    "sweep svg: the command line's flag, not 'seq'")
  check(function() local _ = gp.infer { model = "llama2-7b", gpu = "h100-sxm", ops = true } end,
    "(--ops is a flag of gpuplan infer, not a key of gp.infer: a dense model's result lists "
      .. "its decode operators in ops", "infer ops: the result's ops field")
  check(function() local _ = gp.infer { model = "llama2-7b", gpu = "h100-sxm", sweep_batch = true } end,
    "(--sweep-batch is a flag of gpuplan infer, not a key of gp.infer", "infer sweep_batch")
  check(function() local _ = gp.train { model = "llama2-7b", gpu = "h100-sxm", format = "json" } end,
    "(--format is a flag of gpuplan train, not a key of gp.train: a function returns a table",
    "train format")
  check(function() local _ = gp.comm { op = "all_reduce", gpus = 8, gpu = "h100-sxm", min = "1MiB" } end,
    "(--min is a flag of gpuplan comm, not a key of gp.comm: call gp.comm once per bytes = SIZE",
    "comm min")
  -- a near miss of a key the function takes keeps its did-you-mean
  check(function() local _ = gp.infer { model = "llama2-7b", gpu = "h100-sxm", batchh = 2 } end,
    "infer: unknown option 'batchh' (did you mean 'batch'?)", "a near miss still suggests")
  -- a dense model's result does carry ops, as the hint says
  t.ok(#gp.infer { model = "llama2-7b", gpu = "h100-sxm" }.ops > 0, "dense infer returns ops")
end

-- 3. A job that names its node (system) and not its card: a catalog
-- system holds one kind of GPU (a different gpu is refused), yet
-- gp.train, gp.memory, gp.sweep, gp.rl, gp.infer and gp.infer_plan said
-- "gpu is required"; gp.comm took the system's.  Now the system's card.
do
  local a = gp.train { model = "llama2-7b", system = "dgx-h100", gpus = 16, seq = 4096,
                       global_batch = 64 }
  local b = gp.train { model = "llama2-7b", gpu = "h100-sxm", system = "dgx-h100", gpus = 16,
                       seq = 4096, global_batch = 64 }
  t.is(a.gpu, "h100-sxm", "train: the system's card")
  t.is(a.step_s, b.step_s, "train: priced as with gpu given")
  t.is(gp.infer { model = "llama2-7b", system = "dgx-h100" }.itl_s,
       gp.infer { model = "llama2-7b", gpu = "h100-sxm", system = "dgx-h100" }.itl_s,
       "infer: the system's card")
  t.is(gp.memory { model = "llama2-7b", system = "dgx-h100", gpus = 8 }.total,
       gp.memory { model = "llama2-7b", gpu = "h100-sxm", system = "dgx-h100", gpus = 8 }.total,
       "memory: the system's card")
  t.is(gp.rl { model = "llama2-7b", system = "dgx-h100", gpus = 8 }.gpu, "h100-sxm", "rl")
  t.ok(#gp.sweep { model = "llama2-7b", system = "dgx-h100", gpus = 8 }.results > 0, "sweep")
  t.ok(gp.train_job { model = "llama2-7b", system = "dgx-h100", gpus = 8 }:step { tp = 2 }.step_s > 0,
       "train_job")
  t.ok(gp.infer_plan { model = "llama2-7b", system = "dgx-h100", target = 5000 }.gpus > 0,
       "infer_plan")
  -- a system the catalog lacks is refused as the catalog refuses it, at the line
  t.raises_here(function() local _ = gp.train { model = "llama2-7b", system = "dgx-h10", gpus = 8 } end,
    "unknown system 'dgx-h10' (did you mean dgx-h100", "an unknown system is named")
  -- a gpu the system does not hold is still refused
  t.raises_here(function() local _ = gp.train { model = "llama2-7b", gpu = "a100-sxm-80gb", system = "dgx-h100", gpus = 8 } end,
    "system 'dgx-h100' holds h100-sxm, not a100-sxm-80gb", "a card the system does not hold")
end

-- 4. A policy constructor given uncalled (policy = gp.policy.cheapest):
-- the sweep called it as the ranking function, with a candidate and the
-- catalog, and said "error in the policy function: policy.cheapest: takes
-- one table of options ... got 2 arguments", blaming the script's
-- function.  Now it says to call the constructor.
do
  t.raises_here(function() local _ = gp.sweep { model = "llama2-7b", gpu = "h100-sxm", gpus = 8, policy = gp.policy.cheapest } end,
    "sweep: policy = gp.policy.cheapest is the policy's constructor: call it, gp.policy.cheapest{}",
    "an uncalled constructor is named")
  t.raises_here(function() local _ = gp.sweep { model = "llama2-7b", gpu = "h100-sxm", gpus = 8, policy = gp.policy.monthly } end,
    "gp.policy.monthly{budget = ...}", "monthly: its budget")
  -- the script's own function still ranks
  local r = gp.sweep { model = "llama2-7b", gpu = "h100-sxm", gpus = 8,
                       policy = function(c) return c.step_s end }
  t.ok(#r.results > 0, "a ranking function of the script's still ranks")
end

-- 5. A script's model table whose params_b the fields miss by 2x or more
-- (a wrong field: hidden 10240 for 1024) was priced as the architecture it
-- wrote, in silence, where the catalog refuses the same entry in a file.
-- Now every command refuses it, in the catalog's words.
do
  local function m(extra)
    local t0 = { id = "m", name = "M", layers = 4, hidden = 1024, heads = 8, ffn_hidden = 4096,
                 ffn_gated = true, vocab = 32000, params_b = 0.1, max_seq = 4096 }
    for k, v in pairs(extra) do t0[k] = v end
    return t0
  end
  -- The count: 4 layers x (4 x 1024^2 attention + 3 x 1024 x 4096 MLP + 2 x 1024 norms)
  -- + 2 x 32000 x 1024 (embedding and lm_head, untied) + 1024 (final norm)
  -- = 4 x 16,779,264 + 65,536,000 + 1024 = 132,654,080: 0.1327 B, within 2x of 0.1.
  t.is(gp.params(m {}).total, 132654080, "the fields count 0.1327 B")
  local want = "model.params_b: 0.1 B, but the architecture (layers, hidden, heads, ffn_hidden, "
    .. "vocab, moe, vision) counts 2.836 B: a field is wrong"
  t.raises_here(function() local _ = gp.train { model = m { hidden = 10240 }, gpu = "h100-sxm", gpus = 1 } end,
    want, "train: hidden 10240 for 1024 is refused")
  t.raises_here(function() local _ = gp.infer { model = m { hidden = 10240 }, gpu = "h100-sxm" } end,
    want, "infer: the same")
  t.raises_here(function() local _ = gp.memory { model = m { params_b = 7 }, gpu = "h100-sxm" } end,
    "counts 0.1327 B: a field is wrong", "memory: params_b 7 for 0.13 B")
  -- without params_b, or within 2x, it prices as before
  local nob = m {}
  nob.params_b = nil
  t.ok(gp.train { model = nob, gpu = "h100-sxm", gpus = 1, seq = 1024, global_batch = 8 }.step_s > 0,
       "no params_b: priced")
  t.ok(gp.train { model = m { params_b = 0.26 }, gpu = "h100-sxm", gpus = 1, seq = 1024,
                  global_batch = 8 }.step_s > 0, "params_b within 2x: priced")
  -- the catalog says it as before, in a file
  local s = t.scratch()
  s.put("m.lua", 'model { id = "my-m", name = "M", family = "llama", layers = 4, hidden = 1024, '
    .. 'heads = 8, ffn_hidden = 4096, ffn_gated = true, vocab = 32000, params_b = 7, '
    .. 'max_seq = 4096, source = "x" }\n')
  t.raises(function() return gp.catalog { dirs = { "catalog", s.dir } } end,
    "m.lua:1: model 'my-m': field 'params_b': 7 B, but the architecture", "the catalog's words",
    true)
  s.remove()
end

-- 6. A report column written as a list ({"step_s", "step (s)", "%.2f"}),
-- as the reference's "columns {{key, label, fmt, align, csv}}" read, was
-- told "column 1: unknown option '1'".  Now the error says the fields go
-- by name, and the reference names them so.
do
  local rows = { { step_s = 1.5, mfu = 0.4 } }
  t.raises_here(function() gp.render(rows, { columns = { { "step_s", "step (s)", "%.2f" } } }) end,
    "render: column 1: its fields go by name, {key = 'step_s', label = ...}, not as a list",
    "a list column is named as one")
  t.like(gp.render(rows, { columns = { { key = "step_s", label = "step (s)", fmt = "%.2f" } } }),
    "1.50", "named fields render", true)
  local doc = assert(io.open("docs/lua.md")):read("a")
  t.like(doc, "{key = ..., label = ..., fmt = ..., align = ..., csv = ...}",
    "docs/lua.md names the column fields", true)
end

-- 7. A card whose entry and arch measure no fused attention kernel (a
-- user's new arch; the built-in Ada, Volta, Turing, Gaudi cards): train
-- priced the attention core as the GEMMs of its shape and said nothing,
-- where a measured card's line says attn_kernel=fa2 (...).  Now its
-- "defaults assumed" say so.
do
  local s = t.scratch()
  s.put("z.lua", [[
arch { id = "zeta", name = "Zeta", launch_overhead = "5us",
  achievable = { gemm = { bf16 = 0.75 }, hbm = 0.88, reason = "x", source = "x" } }
gpu { id = "zx", name = "ZX", vendor = "Zeta", arch = "zeta", memory = "128GiB", mem_bw = "5TB/s",
  peak = { bf16 = "1500TFLOPS" }, tdp = "1000W", scaleup = { fabric = "nvlink5", domain = 8 },
  source = "x" }
]])
  local cat = gp.catalog { dirs = { "catalog", s.dir } }
  local r = gp.train { model = "llama2-7b", gpu = "zx", gpus = 8, cat = cat }
  t.ok(t.said(r, "attn_kernel=none (no fused attention kernel measured on zx or its arch zeta",
    true), "train: a card with no attention measurement says so")
  -- a measured card keeps its kernel's line, and no flash attention says none
  t.ok(not t.said(gp.train { model = "llama2-7b", gpu = "h100-sxm", gpus = 8 }, "attn_kernel=none",
    true), "h100: no such line")
  t.ok(not t.said(gp.train { model = "llama2-7b", gpu = "zx", gpus = 8, cat = cat, flash = false },
    "attn_kernel=none", true), "flash off: no fused kernel to speak of")
  s.remove()
end

-- 8. A system's host_gpus that does not divide its gpus: 3 of 8 held each
-- host's DRAM share at 3/8 of the node's for 2.67 hosts, and 16 of 8 was
-- read as 8, both in silence.  Now refused at the entry's file:line.
do
  local s = t.scratch()
  local function sys(n)
    return string.format('system { id = "s1", name = "S", gpu = "h100-sxm", gpus = 8, host_gpus = %d, '
      .. 'scaleup = "nvlink4", nics = 8, nic_fabric = "ib-ndr-400", host_memory = "2TB", source = "x" }\n', n)
  end
  for _, n in ipairs { 3, 16 } do
    s.put("s.lua", sys(n))
    t.raises(function() return gp.catalog { dirs = { "catalog", s.dir } } end,
      "s.lua:1: system 's1': field 'host_gpus': " .. n .. " does not divide the system's 8 gpus",
      "host_gpus " .. n .. " of 8 is refused", true)
  end
  for _, n in ipairs { 1, 4, 8 } do
    s.put("s.lua", sys(n))
    t.ok(pcall(gp.catalog, { dirs = { "catalog", s.dir } }), "host_gpus " .. n .. " of 8 loads")
  end
  s.remove()
end

-- 9. gp.infer of a vision-language model serves text requests: the
-- tower's weights are held, its encoder never runs (engine/infer.c), and
-- infer takes no images -- the TTFT is its language model's alone, which
-- nothing said.  Now its "defaults assumed" say so (not as name=: the
-- line's names are options, tests/lua/job_options.t).
do
  local r = gp.infer { model = "qwen2.5-vl-7b", gpu = "h100-sxm" }
  t.ok(t.said(r, "text requests only: the vision tower's weights held, its encoder not run", true),
    "infer of a VLM: text only, said")
  t.ok(not t.said(gp.infer { model = "qwen2.5-7b", gpu = "h100-sxm" }, "vision tower", true),
    "a text model: no such line")
end

-- 10. A card's pcie.lanes took any count up to 32: lanes = 3 (a typo for
-- 16, or a width no PCIe link has) priced its host link at three lanes'
-- bandwidth in silence.  Now a link width the PCI Express Base
-- Specification defines (x1, x2, x4, x8, x12, x16, x32), in a catalog
-- file and in a script's card table alike.
do
  local function card(lanes)
    return { id = "mine", memory = "80GiB", mem_bw = "3.35TB/s", arch = "hopper",
             peak = { bf16 = "989TFLOPS" }, pcie = { gen = 5, lanes = lanes } }
  end
  t.raises_here(function() local _ = gp.infer { model = "llama3-8b", gpu = card(3) } end,
    "gpu 'mine': field 'pcie.lanes': expected one of 1, 2, 4, 8, 12, 16, 32, got 3",
    "lanes 3 is refused")
  local ok, r = pcall(gp.infer, { model = "llama3-8b", gpu = card(8) })
  t.ok(ok and r.itl_s > 0, "lanes 8 prices")
  local s = t.scratch()
  s.put("g.lua", 'gpu { id = "g1", name = "G1", vendor = "NVIDIA", arch = "hopper", memory = "80GiB", '
    .. 'mem_bw = "3.35TB/s", peak = { bf16 = "989TFLOPS" }, tdp = "700W", source = "x", '
    .. 'pcie = { gen = 5, lanes = 16.0 } }\n')
  local cat = gp.catalog { dirs = { "catalog", s.dir } }
  t.is(math.type(cat.gpus.g1.pcie.lanes), "integer", "lanes 16.0 is the integer 16")
  s.remove()
end

t.done_testing()
