-- A case's parallel fields are those its kind's predictor reads
-- (gpuplan.validate PARALLEL_READ): one of another kind's -- tp_overlap,
-- ep_overlap, cuda_device_max_connections, split_ends, cuda_graph_scope, moe_fp8_pad
-- in an rl or infer case -- is refused naming the case and the field,
-- where it passed the one schema of all kinds and was ignored in silence.
-- Run with ./gpuplan run tests/lua/validate_kind_fields.t.
local t = require "tap"
local cjson = require "cjson"
local gp = require "gpuplan"
local validate = require "gpuplan.validate"

local cat = gp.catalog()
local cases = validate.read("validation/cases.json")

-- 1. The sets hold every field the predictors read: each shipped case
-- predicted with its parallel table watched reads nothing outside its
-- kind's set (a read field missing from it would be refused in a case).
local outside = {}
for _, c in ipairs(cases) do
  local par = c.parallel
  if par then
    c.parallel = setmetatable({}, {
      __index = function(_, k)
        if k ~= "dp" and not validate.PARALLEL_READ[c.kind][k] then
          outside[#outside + 1] = c.kind .. " reads parallel." .. k .. " (" .. c.id .. ")"
        end
        return par[k]
      end,
      __pairs = function() return next, par, nil end })
  end
  validate.predict(c, cat)
  c.parallel = par
end
t.is(table.concat(outside, "; "), "", "no predictor reads a parallel field outside its kind's set")

-- 2. The shipped cases pass: validate.read above refused none.
t.ok(#cases > 0, "every shipped case's parallel fields are its kind's (" .. #cases .. " read)")

-- 3. A train-only field in an rl or infer case is refused, naming the
-- file, the case and the field, and which kinds read it.
local raw = cjson.decode(assert(io.open("validation/cases.json")):read("a"))
local function first(kind)
  for _, c in ipairs(raw) do if c.kind == kind then return c end end
end
local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p " .. dir))
local function read_with(kind, field, value)
  local c = first(kind)
  local saved = c.parallel[field]
  c.parallel[field] = value
  local path = dir .. "/" .. kind .. "-" .. field .. ".json"
  local f = assert(io.open(path, "w"))
  f:write(cjson.encode { c })
  f:close()
  c.parallel[field] = saved
  local ok, err = pcall(validate.read, path)
  return ok, tostring(err), c.id, path
end
for _, x in ipairs {
  { "rl", "tp_overlap", true }, { "rl", "ep_overlap", true }, { "rl", "cuda_device_max_connections", 1 },
  { "rl", "split_ends", true }, { "rl", "cuda_graph_scope", { "attn" } },
  { "rl", "moe_fp8_pad", cjson.decode('"' .. require("gpuplan.options").get("moe_fp8_pad").values[1] .. '"') },
  { "infer", "tp_overlap", true }, { "infer", "ep_overlap", false }, { "infer", "split_ends", true },
  { "infer", "cuda_graph_scope", { "attn" } }, { "rl", "zero3_gather", "per_param" },
} do
  local kind, field = x[1], x[2]
  local ok, err, id, path = read_with(kind, field, x[3])
  t.ok(not ok, kind .. " case with parallel." .. field .. ": refused")
  -- split_ends sizes a pipeline stage, so the memory kind reads it too
  local who = validate.PARALLEL_READ.memory[field] and "train and memory" or "train"
  t.is(err, string.format("%s:1: case '%s': field 'parallel.%s': %s cases do not use it (only "
    .. "%s cases do), so it would be ignored; remove it or model it for %s", path, id, field,
    kind, who, kind), kind .. " " .. field .. ": the message names the case, the field and who reads it")
end
-- The neutral values an unread field may state (no CP, no SP, no FSDP)
-- pass; another value of it is refused.
t.ok((read_with("infer", "cp", 1)), "infer: cp 1 (what the predictor takes) passes")
t.ok((read_with("infer", "fsdp", false)), "infer: fsdp false passes")
local ok, err = read_with("infer", "cp", 2)
t.ok(not ok and err:find("field 'parallel.cp': infer cases do not use it (only train, memory and "
  .. "rl cases do)", 1, true), "infer: cp 2 refused, naming the kinds that read it")
-- verl's FSDP workers: the rl predictor hands fsdp (and its version, the
-- shard groups and Ulysses) to gp.rl; a field it does not hand on, the
-- pipeline's interleaving, is refused
ok, err = read_with("rl", "fsdp", "full_shard")
t.ok(ok, "rl: fsdp full_shard read (gp.rl prices the actor's FSDP)")
ok, err = read_with("rl", "vpp", 2)
t.ok(not ok and err:find("field 'parallel.vpp': rl cases do not use it", 1, true),
  "rl: vpp 2 refused (gp.rl prices the actor's layout without it)")
-- The memory kind reads the training layout's fields that size the
-- breakdown, a subset of train's; one that only sets the step's time (the
-- TP collectives under the GEMMs) is refused in a memory case.
local sub = {}
for k in pairs(validate.PARALLEL_READ.memory) do
  if not validate.PARALLEL_READ.train[k] then sub[#sub + 1] = k end
end
t.is(table.concat(sub, ","), "", "memory's parallel fields are all train's")
for _, k in ipairs { "split_ends", "first_stage_layers", "last_stage_layers", "recompute_layers",
                     "activation_offload_layers", "fsdp", "grad_sync", "schedule" } do
  t.ok(validate.PARALLEL_READ.memory[k], "memory reads train's parallel." .. k)
end
ok, err = read_with("memory", "tp_overlap", true)
t.ok(not ok and err:find("field 'parallel.tp_overlap': memory cases do not use it (only train "
  .. "cases do)", 1, true), "memory: tp_overlap refused (a time, not bytes)")
os.execute("rm -rf " .. dir)

-- 4. The memory kind reads global_batch: the step's micro-batches on a
-- data-parallel rank are global_batch / (dp x micro_batch), and under
-- 1F1B the first stage holds min(pp, that) micro-batches' activations
-- (Narayanan et al. 2021 sec. 2.2.1; engine/memory_train.c).  BLOOM-176B's
-- case with selective recompute (so its first stage, not the last with
-- the head, peaks): dp 8 x micro_batch 2 = 16 sequences a micro-batch
-- step, pp 12.  192 and 2048 sequences (12 and 128 micro-batches) hold
-- 12 in flight, the same bytes exactly; 96 (6) holds fewer, so its peak is
-- lower.  Before, global_batch was ignored and all three were equal.
local bloom
for _, c in ipairs(cases) do if c.id == "bloom176b-mem-per-gpu" then bloom = c end end
bloom.parallel.recompute = "selective"
local peak = {}
for _, gb in ipairs { 96, 192, 2048 } do
  bloom.parallel.global_batch = gb
  peak[gb] = validate.predict(bloom, cat).predicted
end
t.is(peak[192], peak[2048], "memory: 12 and 128 micro-batches hold pp = 12 in flight alike")
t.ok(peak[96] < peak[192], string.format("memory: 6 micro-batches in flight peak lower (%.2f < %.2f GB)",
  peak[96] or 0, peak[192] or 0))

-- 5. peak_reserved_gib (torchtitan's Memory(GiB): torch.cuda.memory_stats
-- reserved_bytes.all.peak) is the allocated peak plus the allocator's
-- cache, the breakdown's fragmentation: frag 0.05 x the tensors (no paged
-- optimizer states here; engine/memory.c mem_reserve_default,
-- memory_int.h finish_pick), so reserved = 1.05 x allocated.  Tolerance
-- 1e-9 relative: the same sum in floating point.
local titan
for _, c in ipairs(cases) do
  if c.id == "torchtitan2412-h100-llama31-8b-8gpu-fsdp-mem" then titan = c end
end
t.ok(titan and titan.measured.metric == "peak_reserved_gib", "the torchtitan memory row is reserved's")
local reserved = validate.predict(titan, cat).predicted
titan.measured.metric = "peak_memory_gib"
local allocated = validate.predict(titan, cat).predicted
t.ok(reserved and allocated and math.abs(reserved / allocated - 1.05) < 1e-9,
  string.format("reserved %.3f GiB = 1.05 x allocated %.3f GiB", reserved or 0, allocated or 0))

-- 6. A memory case and its training sibling are sized on one stack: the
-- torchtitan rows take the train predictor's torchtitan profile (FSDP2 on
-- PyTorch modules: stack hf), not the pre-training default (megatron).
local r = validate.predict(titan, cat)
t.ok(r.defaults and r.defaults:find("stack=hf (FSDP2", 1, true),
  "torchtitan memory row: stack=hf from the train profile")

-- 7. torchtitan 9dec370's loss runs eager (train.py: "TODO: compiling
-- loss function causes CUDA errors"; "del pred" before backward): at the
-- backward's start log_softmax's fp32 output and two fp32 gradients, 12 B
-- a logit, where the stack's eager default is 6 B (memory.lua: bf16
-- logits + fp32 log-softmax).  The row (local batch 2 x seq 8192 = 16384
-- tokens, tp 1, vocab 128256) with its source.commit 9dec370 against the
-- same row with the commit removed: allocated differs by
-- (12 - 6) x 128256 x 16384 B = 12,608,077,824 B = 11.742 GiB.  Tolerance
-- 1e-6 GiB: one component's bytes added in floating point.
titan.measured.metric = "peak_memory_gib"
local r12 = validate.predict(titan, cat)
t.ok(r12.defaults and r12.defaults:find("logit_bytes=12 (torchtitan 9dec370", 1, true),
  "torchtitan 9dec370 row: logit_bytes=12 from the eager-loss release")
t.is(titan.source.commit, "9dec370", "the row states the commit its source names")
local commit, date = titan.source.commit, titan.source.date
-- Without the commit and without the date (a date inside the eager-loss
-- window, 2024-12-18 to 2025-04-02, sets it too: predict/case.lua
-- EAGER_LOSS_DAYS, tests/lua/eager_loss.t).
titan.source.commit, titan.source.date = nil, nil
local r6 = validate.predict(titan, cat)
-- The notes alone do not set it: they are prose, source.commit is the field.
t.ok(titan.notes:find("9dec370", 1, true) and not r6.defaults:find("logit_bytes", 1, true),
  "notes naming the commit without source.commit: the stack's figure")
titan.source.commit, titan.source.date = commit, date
local want = 6 * 128256 * 16384 / 2^30
t.ok(math.abs((r12.predicted - r6.predicted) - want) < 1e-6,
  string.format("eager loss adds %.4f GiB (want %.4f)", r12.predicted - r6.predicted, want))
-- A later release (e7c0cae compiles the loss under --training.compile)
-- keeps the stack's figure.
local h200
for _, c in ipairs(cases) do
  if c.id == "torchtitan2506-h200-llama31-8b-fsdp32-mem" then h200 = c end
end
local rh = validate.predict(h200, cat)
t.ok(rh.defaults and not rh.defaults:find("logit_bytes", 1, true),
  "torchtitan e7c0cae row: no eager-loss logit_bytes")

t.done_testing()
