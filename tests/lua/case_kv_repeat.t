-- A case states that its model's own attention code copies K and V to
-- every query head (validation/SCHEMA.md workload.kv_repeat): gp.train's
-- and gp.memory's kv_repeat, which the train and memory predictors hand
-- on before the stack profile (torchtitan's and fms-fsdp's set it for a
-- GQA model), so a model whose code repeats outside those stacks --
-- nanoVLM's "k.repeat_interleave" -- can be stated.  The option's pricing
-- is tests/lua/kv_repeat.t's and kv_repeat_memory.t's; here, that the
-- case's field reaches it, and the reader's refusals.
-- Run with ./gpuplan run tests/lua/case_kv_repeat.t.
local t = require "tap"
local gp = require "gpuplan"
local cjson = require "cjson"
local validate = require "gpuplan.validate"
local ptrain = require "gpuplan.predict.train"
local pmem = require "gpuplan.predict.memory"

t.plan(8)

local cat = gp.catalog()
local raw = t.shipped_cases()
local shipped = t.shipped_case

-- Llama 3.2 3B (28 layers, 24 query heads and 8 KV heads of 128: q =
-- 3072, kv = 1024 elements a token), torchtune's flags rows on one A100
-- 80 GB: micro-batch 2 of 4096 tokens (T = 8192), full recompute, the
-- checkpoints offloaded on a side stream, compiled (kernels fused), bf16
-- (A = 2 B).
local TPS = "torchtune-flags-a100-llama32-3b-act-offload-tps"
local MEM = "torchtune-flags-a100-llama32-3b-act-offload-mem"

-- 1. Train.  Per layer (train_layer.c kv_repeat_costs, compiled): the
-- forward copy 2 q T A = 100.7 MB, run twice (full recompute re-runs
-- it), the backward's query-wide dK, dV and their sums (4 q - 2 kv) T A
-- = 167.8 MB; each pass at the A100's 2.039 TB/s x 0.85 (catalog
-- archs.lua ampere hbm) = 1.733 TB/s plus the memory pipeline's fill
-- (3.9 us, roofline.c ROOF_MEM_FILL) and a graph launch (1 us, ampere
-- graph_launch_overhead): 28 x (2 x 63.0 + 101.7 us) = 6.37 ms more a
-- step (one micro-batch).  The offload copies stay hidden under the
-- longer layer.  Tolerance 1%: the rate is the catalog's, the rest exact.
local function step(kv)
  local c = shipped(TPS)
  c.workload.kv_repeat = kv
  local r = assert(ptrain(c, cat))
  return gp.train(r.job).step_s, r
end
local s0, r0 = step(nil)
local s1, r1 = step(true)
local sf = step(false)
local rate = 2.039e12 * 0.85
local pass = 3.9e-6 + 1e-6
local T = 8192
local want = 28 * (2 * (2 * 3072 * T * 2 / rate + pass) + ((4 * 3072 - 2 * 1024) * T * 2 / rate + pass))
t.near(s1 - s0, want, 0.01, string.format("train: workload.kv_repeat adds the copies, %.2f ms", want * 1e3))
t.ok(r1.job.kv_repeat == true and not r0.job.kv_repeat and sf == s0,
     "unstated on torchtune: none (not a torchtune profile default); stated false: the same")
-- Stated on torchtitan (profile true), false stands over the profile.
local tt
for _, x in ipairs(raw) do
  local m = x.model or {}
  if x.kind == "train" and (x.workload or {}).framework == "torchtitan"
     and (m.kv_heads or m.heads or 0) < (m.heads or 0) then tt = cjson.decode(cjson.encode(x)); break end
end
local rp = assert(ptrain(tt, cat))
tt.workload.kv_repeat = false
local rn = assert(ptrain(tt, cat))
t.ok(rp.job.kv_repeat == true and rn.job.kv_repeat == false
     and not table.concat(rn.defaults, "; "):find("kv_repeat=", 1, true),
     "torchtitan (" .. tt.id .. "): the profile's true; stated false, the case's, no default said")

-- 2. Memory.  Full recompute keeps each layer's input; the copies come
-- back in the one layer re-run for its backward (kv_repeat_memory.t):
-- T (2 q - 2 kv) A = 8192 x 4096 x 2 = 67,108,864 B on the peak.  Sums
-- of byte counts: 1e-9 relative.
local function peak(kv)
  local c = shipped(MEM)
  c.workload.kv_repeat = kv
  return assert(pmem(c, cat)).value * 2 ^ 30
end
t.near(peak(true) - peak(nil), 8192 * (2 * 3072 - 2 * 1024) * 2, 1e-9,
       "memory: one re-run layer's query-wide K and V, 64 MiB")

-- 3. The case file reader: a non-boolean refused naming file:line and the
-- field; true read; an infer case stating it refused (its predictor
-- hands it to nothing).
local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p " .. dir))
local function read_text(text)
  local path = dir .. "/c.json"
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
  local ok, err = pcall(validate.read, path)
  return ok, tostring(err), path
end
-- the case one field a line, kv_repeat's value in place of a mark; its
-- line is one more than the newlines before the mark
local function with_value(c, value)
  c.workload.kv_repeat = "@@MARK@@"
  local text = cjson.encode { c }:gsub(",\"", ",\n\"")
  local n = select(2, text:sub(1, text:find("@@MARK@@", 1, true)):gsub("\n", "")) + 1
  return (text:gsub("\"@@MARK@@\"", value)), n
end
local text, line = with_value(shipped(TPS), "1")
local ok, err, path = read_text(text)
t.ok(not ok and err:find(path .. ":" .. line .. ":", 1, true)
     and err:find("workload.kv_repeat", 1, true),
     "1 refused naming file:" .. line .. " and the field (" .. err:gsub("^.-: ", "") .. ")")
ok = read_text((with_value(shipped(MEM), "true")))
t.ok(ok, "true is read on a memory case")
local inf
for _, x in ipairs(raw) do if x.kind == "infer" then inf = x; break end end
inf.workload.kv_repeat = true
ok, err = read_text(cjson.encode { inf })
t.ok(not ok and err:find("field 'workload.kv_repeat': infer cases do not use it (only train and "
     .. "memory cases do)", 1, true), "an infer case stating it is refused: " .. err:gsub("^.-: ", ""))
os.execute("rm -rf " .. dir)

-- 4. The CLI: one name on fit, train and plan (options.lua's declaration).
local opts = require "gpuplan.options"
t.ok(opts.takes("fit", "kv_repeat", "cli") and opts.takes("train", "kv_repeat", "cli")
     and opts.takes("plan", "kv_repeat", "cli"), "--kv-repeat on fit, train and plan")
