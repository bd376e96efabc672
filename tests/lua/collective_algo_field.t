-- A collective case's `algo` (validation/SCHEMA.md): NCCL_ALGO where the
-- run forced it, in gp.comm's names.  The predictor prices that
-- algorithm; notes that say "algorithm: Ring (forced)" without the field
-- change nothing (a prediction depends only on stated fields); the
-- reader refuses another name, and the field on another kind.
-- Run: ./gpuplan run tests/lua/collective_algo_field.t
local t = require "tap"
local gp = require "gpuplan"
local cat = gp.catalog()
local predict = require "gpuplan.predict.collective"
t.plan(7)

-- 1 GiB all-reduce over 8 H100s on one NVSwitch node: NCCL's tuner
-- picks NVLS there (the NVLink switch multicasts), so a forced ring is
-- priced differently.
local function case(extra, notes)
  local c = { id = "algo-field", kind = "collective", collective = "all_reduce",
              bytes = 1073741824,
              hardware = { gpu = "h100-sxm", gpus = 8, gpus_per_node = 8 },
              measured = { metric = "busbw_gbps", value = 1 }, notes = notes }
  for k, x in pairs(extra or {}) do c[k] = x end
  return c
end
local tuned = assert(predict(case(), cat))
local ring = assert(predict(case { algo = "ring" }, cat))
t.like(tuned.detail, "^nvls/", "unforced: the tuner's NVLS (" .. tuned.detail .. ")")
t.ok(t.said(ring, "algo=ring (the case's NCCL_ALGO)", true) and ring.detail:find("^ring/") ~= nil,
     "algo ring: a ring, said with its field (" .. ring.detail .. ")")
t.ok(ring.value ~= tuned.value,
     string.format("... and priced as one: %.1f vs the tuner's %.1f GB/s", ring.value, tuned.value))
local noted = assert(predict(case(nil, "algorithm: Ring (forced); NCCL 2.20"), cat))
t.is(noted.value, tuned.value, "the notes' words alone move nothing")

-- The reader.
local ok, e = t.read_case(case { algo = "Ring" })
t.ok(not ok and e:find("algo", 1, true) ~= nil and e:find("ring, tree, nvls", 1, true) ~= nil,
     "NCCL's spelling refused with gp.comm's names: " .. e)
local ok2 = t.read_case(case { algo = "tree" })
t.ok(ok2, "algo tree reads")
local trainc = { id = "algo-train", kind = "train", algo = "ring",
  model = { layers = 2, hidden = 256, heads = 4, ffn_hidden = 1024, vocab = 1000 },
  hardware = { gpu = "h100-sxm", gpus = 1 }, parallel = { tp = 1 },
  workload = { seq_len = 256, precision = "bf16", method = "pretrain" },
  measured = { metric = "step_time_s", value = 1 } }
local ok3, e3 = t.read_case(trainc)
t.ok(not ok3 and e3:find("field 'algo' (NCCL_ALGO) is a collective case's", 1, true) ~= nil,
     "on a train case: refused, " .. e3)
