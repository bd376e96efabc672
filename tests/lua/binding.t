-- gpuplan.core misuse from Lua: wrong types, missing tables, NaN,
-- integers out of range.  Every misuse must raise a Lua error whose text
-- names the argument or the field; none may crash the VM or return
-- garbage.  The tables are built by hand so that only the binding is
-- under test, not the catalog.
local t = require "tap"
local core = require "gpuplan.core"
-- The mixed-16 recipe and AdamW as gpuplan.memory passes them (catalog/recipes.lua).
local R = require("gpuplan.memory").recipe_record("recipe", "mixed-16")
local O = require("gpuplan.memory").recipe_record("optimizer", "adamw")

-- Llama-like: 2 layers, h 256, 8 heads (4 kv), f 512, vocab 1000.
local function model(over)
  local m = { layers = 2, hidden = 256, heads = 8, kv_heads = 4,
              ffn_hidden = 512, ffn_gated = true, vocab = 1000 }
  for k, v in pairs(over or {}) do m[k] = v end
  return m
end

-- Hopper-like: bf16 989 TFLOP/s at 0.8, 3.35 TB/s at 0.84.
local function device(over)
  local d = { peak = { bf16 = 989e12 }, gemm = { bf16 = 0.8 },
              mem_bw = 3.35e12, hbm = 0.84, launch = 4e-6,
              graph_launch = 1e-6, sms = 132 }
  for k, v in pairs(over or {}) do d[k] = v end
  return d
end

local topo = { gpus_per_node = 8, up_bw = 450e9, up_latency = 2e-6,
               up_achievable = 0.8 }

-- The valid calls succeed: the failures below are the misuse, not the
-- scaffolding.
t.ok(core.model_params(model()).total > 0, "model_params on a valid model")
t.ok(core.memory(model(), { capacity = 80e9, seq = 512, recipe = R, optimizer = O }).total > 0,
     "memory on a valid config")
t.ok(core.infer(model(), device(), { capacity = 70e9 }) ~= nil,
     "infer on a valid config")
t.ok(core.comm_cost(topo, "all_reduce", 1e6, 8).time > 0,
     "comm_cost on a valid topology")
t.ok(core.roof_op(device(), { flop = 1e9, bytes = 1e6 }).time > 0,
     "roof_op on a valid op")

-- Wrong type or missing table for the first argument.
t.raises(function() core.model_params() end, "table expected",
         "model_params(): table expected", true)
t.raises(function() core.model_params("llama") end, "table expected",
         "model_params('llama'): table expected", true)
t.raises(function() core.memory(model()) end, "table expected",
         "memory(model): config table expected", true)
t.raises(function() core.infer(model(), nil, {}) end, "table expected",
         "infer without a device: table expected", true)
t.raises(function() core.comm_cost(42, "all_reduce", 1, 8) end,
         "table expected", "comm_cost(42): table expected", true)
t.raises(function() core.roof_op(device(), "gemm") end, "table expected",
         "roof_op(device, 'gemm'): table expected", true)

-- Wrong field types name the field.
t.raises(function() core.model_params(model { layers = "32" }) end,
         "model.layers must be a number (got string)",
         "a string layer count names model.layers", true)
t.raises(function() core.model_params(model { ffn_gated = 1 }) end,
         "model.ffn_gated must be a boolean", "a numeric switch is refused",
         true)
t.raises(function() core.memory(model(), { capacity = 80e9, seq = {} })
         end, "memory.seq must be a number (got table)",
         "a table seq names memory.seq", true)
t.raises(function() core.roof_op(device { peak = 1e15 }, { flop = 1 })
         end, "device.peak must be a table", "a scalar peak is refused", true)

-- NaN and infinities are refused where they are read.
t.raises(function() core.model_params(model { hidden = 0 / 0 }) end,
         "model.hidden must be finite", "NaN hidden names the field", true)
t.raises(function() core.memory(model(), { capacity = 1 / 0, seq = 8 })
         end, "memory.capacity must be finite", "inf capacity is refused",
         true)
t.raises(function() core.comm_cost(topo, "all_reduce", 0 / 0, 8) end,
         "bytes", "NaN bytes is refused, naming bytes", true)
t.raises(function() core.model_flops_per_token(model(), 0 / 0) end,
         "bad argument #2", "NaN ctx: bad argument #2", true)

-- Integers out of range.
t.raises(function() core.model_params(model { layers = 2.5 }) end,
         "model.layers must be an integer", "a fractional count", true)
t.raises(function() core.model_params(model { vocab = 2 ^ 31 }) end,
         "model.vocab must be an integer", "vocab 2^31 does not fit an int",
         true)
t.raises(function() core.model_params(model { vocab = 2 ^ 31 - 1 }) end,
         "vocab must be at most", "vocab 2^31-1 is over the count bound",
         true)
t.raises(function() core.comm_cost(topo, "all_reduce", 1, 2 ^ 40) end,
         "bad argument #4", "gpus 2^40: bad argument #4", true)
-- tp * pp of 2^32 overflowed the default gpus = tp * pp (an int product).
t.raises(function()
           core.infer(model(), device(), { capacity = 70e9, tp = 65536,
                                           pp = 65536 })
         end, "infer.tp", "tp * pp over an int is refused, naming tp", true)
t.raises(function()
           core.memory(model(), { capacity = 80e9, seq = 512, dp = 2 ^ 30,
                                  cp = 2, recipe = R, optimizer = O })
         end, "dp", "dp 2^30 is refused, naming dp", true)

-- Kernel refusals reach Lua as errors naming the field.
t.raises(function() core.model_params(model { kv_heads = 3 }) end,
         "kv_heads (3) must divide heads (8)", "kv_heads not dividing heads",
         true)
t.raises(function() core.memory(model(), { capacity = 80e9, seq = 512,
                                           tp = 16, recipe = R, optimizer = O }) end,
         "tp 16 does not divide the 8 attention heads", "tp > heads", true)
t.raises(function() core.memory(model(), { capacity = 80e9, seq = 512,
                                           pp = 3, recipe = R, optimizer = O }) end,
         "pp 3 exceeds the 2 layers", "pp > layers", true)
t.raises(function() core.infer(model(), device(), { capacity = 70e9,
                                                    weight_bits = 1e308 })
         end, "weight_bits must be a number in [1, 32]",
         "weight_bits 1e308 names the field", true)

-- Options.
t.raises(function() core.comm_cost(topo, "allreduce!", 1, 8) end,
         "bad argument #2", "an unknown collective: bad argument #2", true)
t.raises(function() core.state_bytes({ weights = 2 }, O) end, "recipe.grads is required",
         "a recipe record missing a field is named", true)
t.raises(function() core.state_bytes(R, { states = 2, flavour = 1 }) end,
         "optimizer: unknown field 'flavour'", "an unknown optimizer field is named", true)
t.raises(function() core.roof_ridge(device(), "bf17") end,
         "unknown precision 'bf17'", "an unknown precision is named", true)

-- hidden near 2^31 with a LayerNorm: 2 * hidden overflowed an int in the
-- binding (UBSan, issue 13); now the engine's bound names the field.
t.raises(function() core.model_params(model { hidden = 2147483647, heads = 1, norm = "layer" }) end,
  "hidden must be at most 16777216 (got 2147483647)", "hidden 2^31 - 1 with LayerNorm", true)
t.raises(function() core.model_params(model { hidden = 2147483648 }) end,
  "model.hidden must be an integer in 1..2147483647 (got 2147483648)", "hidden 2^31 names the range",
  true)

-- Issue 20.5: one strict binding.  Every table core reads refuses a key
-- it does not take, naming it and the nearest name it does take (the
-- rule of gpuplan.args.nearest): before, each of these was accepted and
-- the misspelt field silently took its default (a dense model, tp 1).
t.raises(function() core.memory(model(), { capacity = 80e9, seq = 128, recipe = R, optimizer = O, tpp = 3 }) end,
  "memory: unknown field 'tpp' (did you mean 'tp'?)", "core.memory refuses tpp", true)
t.raises(function() core.model_params(model { hiddn = 256 }) end,
  "model: unknown field 'hiddn' (did you mean 'hidden'?)", "core.model_params refuses hiddn", true)
t.raises(function() core.model_params(model { moe = { experts = 8, top_k = 2, ffn_hidden = 64, shared_expert = 1 } }) end,
  "model.moe: unknown field 'shared_expert' (did you mean 'shared_experts'?)", "a sub-table is strict too", true)
t.raises(function() core.roof_op(device { peak = { bf16 = 1e15, bf61 = 1 } }, { flop = 1, bytes = 1 }) end,
  "device.peak: unknown field 'bf61' (did you mean 'bf16'?)", "device.peak refuses an unknown precision", true)
t.raises(function() core.roof_op(device(), { flop = 1, bytes = 1, cout = 2 }) end,
  "op: unknown field 'cout' (did you mean 'count'?)", "core.roof_op refuses cout", true)
t.raises(function() core.comm_cost({ gpus_per_node = 8, up_bw = 1e9, nic = 4 }, "all_reduce", 1, 8) end,
  "topology: unknown field 'nic' (did you mean 'nics'?)", "a topology refuses nic", true)
t.raises(function() core.sweep(model(), device(), topo, { capacity = 80e9, seq = 128, recipe = R, optimizer = O },
  { gpus = { 8 }, tpmax = 8 }) end,
  "sweep: unknown field 'tpmax' (did you mean 'tp_max'?)", "core.sweep refuses tpmax", true)
-- core.rl's config is a description too (rl_cfg_fields in engine/lgp_serve.c):
-- a misspelt flat field, a misspelt field of the rollout engine, a
-- missing part and a value out of its declared range are each named.
local function rlcfg(over)
  local c = { train = { capacity = 80e9, seq = 128, recipe = R, optimizer = O },
              rollout = { capacity = 80e9 }, prompts = 8, response_len = 128 }
  for k, v in pairs(over or {}) do c[k] = v end
  return c
end
t.ok(pcall(core.rl, model(), device(), topo, rlcfg()), "core.rl on a valid config")
t.raises(function() core.rl(model(), device(), topo, rlcfg { grop = 4 }) end,
  "rl: unknown field 'grop' (did you mean 'group'?)", "core.rl refuses grop", true)
t.raises(function() core.rl(model(), device(), topo, rlcfg { rollout = { capacity = 80e9, tpp = 2 } }) end,
  "rl.rollout: unknown field 'tpp' (did you mean 'tp'?)", "core.rl's rollout refuses tpp", true)
t.raises(function() core.rl(model(), device(), topo, rlcfg { train = false }) end,
  "rl.train must be a table (got boolean)", "core.rl: train must be a table", true)
t.raises(function() local c = rlcfg(); c.train = nil; core.rl(model(), device(), topo, c) end,
  "rl.train is required", "core.rl: train is required", true)
t.raises(function() core.rl(model(), device(), topo, rlcfg { rollout_ep = 0 }) end,
  "rl.rollout_ep must be an integer in 1..2147483647 (got 0)", "core.rl: rollout_ep's range", true)
t.raises(function() core.rl(model(), device(), topo, rlcfg { response_dist = "gauss" }) end,
  "response distribution", "core.rl: an unknown response distribution", true)
-- The dense cache's passes the host waits on (engine_wait_copies) are a
-- share of engine_cache_copies, and only an overlapped host can expose
-- them: serial with the GPU, every pass is already on the step's path.
t.raises(function() core.rl(model(), device(), topo, rlcfg { engine_cache_copies = 6,
  engine_wait_copies = 7, engine_host_overlap = true }) end,
  "engine cache copies waited on per decode step", "core.rl: wait_copies within cache_copies",
  true)
t.raises(function() core.rl(model(), device(), topo, rlcfg { engine_cache_copies = 6,
  engine_wait_copies = 2 }) end,
  "need the host's overlap", "core.rl: wait_copies with a serial host refused", true)
-- core.memory's inference config and core.roof_op's operator are
-- descriptions too (infer_mem_fields, roof_op_fields): a misspelt key of
-- the config, of its weights sub-table and of the operator is named.
local icfg = { kind = "infer", capacity = 80e9, ctx = 1024 }
t.ok(pcall(core.memory, model(), icfg), "core.memory kind infer on a valid config")
t.raises(function() core.memory(model(), { kind = "infer", capacity = 80e9, ctx = 1024, blok = 16 }) end,
  "memory: unknown field 'blok' (did you mean 'block'?)", "core.memory infer refuses blok", true)
t.raises(function() core.memory(model(), { kind = "infer", capacity = 80e9, ctx = 1024,
  weights = { bits = 4, grup = 128 } }) end,
  "weights: unknown field 'grup' (did you mean 'group'?)", "the weights sub-table refuses grup", true)
t.raises(function() core.memory(model(), { kind = "infer", capacity = 80e9, ctx = 1024, tp = 0 }) end,
  "memory.tp must be an integer in 1..2147483647 (got 0)", "core.memory infer: tp's declared range", true)
t.raises(function() core.memory(model(), { kind = "infer", capacity = 80e9 }) end,
  "memory.ctx is required", "core.memory infer: ctx is required", true)
t.raises(function() core.roof_op(device(), { flop = 1, bytes = 1, m_tlie = 64 }) end,
  "op: unknown field 'm_tlie' (did you mean 'm_tile'?)", "core.roof_op refuses m_tlie", true)
-- An integer list's value past 32 bits is refused, not wrapped: 2^32 + 8
-- would have been read as (int) 8, a search of 8 GPUs nobody asked for.
t.raises(function() core.sweep(model(), device(), topo, { capacity = 80e9, seq = 128, recipe = R, optimizer = O },
  { gpus = { 2 ^ 32 // 1 + 8 } }) end,
  "sweep.gpus[1] must be an integer of at most 32 bits", "a list value past 32 bits is refused", true)
-- With no near name the message lists the names the table takes.
t.raises(function() core.roof_op(device(), { flop = 1, bytes = 1, zzzzzz = 1 }) end,
  "op: unknown field 'zzzzzz' (flop, bytes, m, n, k, count, prec, gemv, dequant, dequant_rep, m_tile, stream, bf16_x, graphs)",
  "no near name: the names it takes", true)
-- A key beginning with '_' is the Lua side's own (the catalog loader's).
t.ok(pcall(core.model_params, model { _file = "x.lua", _line = 3 }),
  "a '_' key is the Lua side's, not refused")
-- The same table read twice is judged afresh each time.
local cfg = { capacity = 80e9, seq = 128, recipe = R, optimizer = O }
t.ok(pcall(core.memory, model(), cfg) and pcall(core.memory, model(), cfg),
  "a table read twice is accepted twice")

-- core.check runs the kernels' checks on a catalog-shaped table.
t.ok(core.check("model", model()) and core.check("device", device()) and
  core.check("topology", topo), "core.check accepts good tables")
t.raises(function() core.check("model", model { kv_heads = 3 }) end,
  "kv_heads (3) must divide heads (8)", "core.check model: the engine's message", true)
t.raises(function() core.check("device", device { mem_bw = 1e30 }) end,
  "device mem_bw must be", "core.check device", true)
t.raises(function() core.check("topology", { gpus_per_node = 2 ^ 25, up_bw = 1e9 }) end,
  "gpus_per_node must be at most 16777216", "core.check topology", true)
t.raises(function() core.check("train", {}) end, "invalid option 'train'", "core.check: unknown kind", true)

-- The topology's bandwidths are required where their link is used
-- (issue 20.5: the reader is a description; NaN marks "not given", which
-- no user can give since a value must be finite).
t.raises(function() core.comm_cost({ gpus_per_node = 8 }, "all_reduce", 1e6, 8) end,
  "topology.up_bw is required", "NVLink bandwidth required with 8 GPUs a node", true)
t.raises(function() core.comm_cost({ gpus_per_node = 8, up_bw = 1e11, nics = 2 }, "all_reduce",
  1e6, 16) end, "topology.nic_bw is required", "NIC bandwidth required with NICs", true)
t.ok(pcall(core.comm_cost, { gpus_per_node = 1, nodes = 2, nics = 1, nic_bw = 5e10 },
  "all_reduce", 1e6, 2), "one GPU a node needs no NVLink bandwidth")
t.raises(function() core.comm_cost({ gpus_per_node = 8, up_bw = 0 / 0 }, "all_reduce", 1e6, 8) end,
  "topology.up_bw must be finite", "a NaN bandwidth is refused, not taken as absent", true)

-- A sub-table is judged where its description reads it, and leaves no
-- names behind for a later table: the same table passed next as a config
-- must not have the optimizer's keys ("states", "foreach_adamw") accepted
-- as core.memory's own.  Before, the optimizer's names stayed noted on its
-- address and a config there took them (with enough of them, a config's
-- own names were crowded out: "memory: unknown field 'eager_softmax'").
do
  local opt = {}
  for k, v in pairs(O) do opt[k] = v end
  t.ok(core.memory(model(), { capacity = 80e9, seq = 512, recipe = R, optimizer = opt }).total > 0,
       "memory with a copied optimizer table")
  opt.capacity, opt.seq, opt.recipe, opt.optimizer = 80e9, 512, R, O
  t.raises(function() core.memory(model(), opt) end, "memory: unknown field",
           "an optimizer's keys in a memory config are refused after the table served as an optimizer",
           true)
  t.raises(function()
             core.memory(model(), { capacity = 80e9, seq = 512, recipe = R,
                                    optimizer = { states = 2, state = 4, bogus = 1 } })
           end, "optimizer: unknown field 'bogus'",
           "an optimizer sub-table's unknown key is refused naming it", true)
end

-- A read that raises under pcall leaves its notes behind; the next reader
-- of that table (or of a table later at its address) must not take them.
-- (1) 300 raised reads of one config, then the config fixed: before, the
-- stale names (gpus, kind, capacity, ... 300 times) filled lgp_strict's
-- 256-name list and the config's own 'frag', noted after them, was
-- refused: "memory: unknown field 'frag' (gpus, kind, capacity, gpus, ...)".
do
  local cfg = { capacity = 80e9, seq = 512, recipe = R, optimizer = O, gpus = "x", frag = 0.1 }
  for _ = 1, 300 do pcall(core.memory, model(), cfg) end
  cfg.gpus = 8
  local ok, r = pcall(core.memory, model(), cfg)
  t.ok(ok and r.total > 0, "a config read after 300 raised reads of it is taken")
end
-- (2) an infer config whose read raised at batch, after noting the keys
-- before it (weight_bits ...), then passed as a training memory config:
-- weight_bits is no training field, and before it was accepted in silence
-- on the infer read's notes.
do
  local cfg = { capacity = 80e9, batch = -1, weight_bits = 4 }
  t.raises(function() core.infer(model(), device(), cfg) end, "infer.batch must be an integer",
           "the infer read raises at batch", true)
  cfg.batch, cfg.seq, cfg.recipe, cfg.optimizer = nil, 512, R, O
  t.raises(function() core.memory(model(), cfg) end, "memory: unknown field 'weight_bits'",
           "an infer read's notes left by its raise are not a memory config's names", true)
end

t.done_testing()
