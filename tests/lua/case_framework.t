-- workload.framework: the software a validation case ran, by the name of
-- one of its kind's predictor profiles (validation/SCHEMA.md).  The
-- predictors read that field alone, never a word of the title or notes;
-- the reader refuses a name the kind's predictor does not profile, with
-- the kind's list; SCHEMA.md lists each kind's names as the predictors
-- export them.
-- Run: ./gpuplan run tests/lua/case_framework.t
local t = require "tap"
local gp = require "gpuplan"
local cat = gp.catalog()
t.plan(15)

-- 1-5. SCHEMA.md's lists are the predictors' own (frameworks), kind by kind.
local f = assert(io.open("validation/SCHEMA.md"))
local schema = f:read("a")
f:close()
local block = schema:match("\n(%- train: .-)\n\n")
t.ok(block ~= nil, "SCHEMA.md lists the names by kind")
local listed, kind = {}, nil
for line in ((block or "") .. "\n"):gmatch("(.-)\n") do
  local k, rest = line:match("^%- (%a+): (.*)$")
  if k then kind, listed[k] = k, {} else rest = line end
  for n in rest:gmatch("`([%w%.%-]+)`") do table.insert(listed[kind], n) end
end
for k, names in pairs(listed) do table.sort(names); listed[k] = table.concat(names, " ") end
for _, kind in ipairs { "train", "memory", "rl", "infer" } do
  local want = table.concat(require("gpuplan.predict." .. kind).frameworks, " ")
  if kind == "infer" then t.is(listed[kind], want, "infer: SCHEMA.md's names are the predictor's")
  else t.is(listed[kind], want, kind .. ": SCHEMA.md's names are the predictor's") end
end

-- A GPT-3 1.3B-shaped run on 8 H100s, its title naming NeMo.
local function case(wl)
  local w = { seq_len = 2048, precision = "bf16", method = "pretrain" }
  for k, x in pairs(wl or {}) do w[k] = x end
  return { id = "fw-case", kind = "train",
           model = { layers = 24, hidden = 2048, heads = 16, ffn_hidden = 8192,
                     ffn_gated = false, vocab = 51200 },
           hardware = { gpu = "h100-sxm", gpus = 8, gpus_per_node = 8 },
           parallel = { tp = 1, pp = 1, dp = 8, micro_batch = 4, global_batch = 256 },
           workload = w, measured = { metric = "step_time_s", value = 1 },
           source = { title = "NeMo Framework performance summary" },
           notes = "NeMo's gpt3 1.3B config, as the NeMo docs print it" }
end
local predict = require "gpuplan.predict.train"

-- 6-8. The title's word alone takes no profile; the field does (NeMo's
-- gpt3 yamls: dropout 0.1, distributed_fused_adam, TE attention), listed
-- as "stack profile=nemo", and the prediction differs (dropout's masks
-- alone add work the bare case does not do).
local bare = assert(predict(case(), cat))
local nemo = assert(predict(case { framework = "nemo" }, cat))
t.ok(not t.said(bare, "stack profile=", true), "a title naming NeMo takes no profile")
t.ok(t.said(nemo, "stack profile=nemo", true) and t.said(nemo, "dropout=true (gpt3 yamls", true),
     "workload.framework nemo: NeMo's profile, listed in the defaults")
t.ok(bare.value ~= nemo.value,
     string.format("... and priced on it (%.4g s without, %.4g s with)", bare.value, nemo.value))

-- 9-10. The reader: a stated name is read back; a misspelt one is refused
-- naming the field, the value and the kind's list.
local ok, cases = t.read_case(case { framework = "nemo" })
t.ok(ok and cases[1].workload.framework == "nemo", "the reader keeps workload.framework")
local ok2, e2 = t.read_case(case { framework = "nemo2" })
t.ok(not ok2 and e2:find("field 'workload.framework': 'nemo2' is not a train framework (", 1, true)
     and e2:find("megatron-core", 1, true) ~= nil, "a misspelt name is refused with the list: " .. e2)

-- 11. Another kind's name: vllm serves, it does not train.
local ok3, e3 = t.read_case(case { framework = "vllm" })
t.ok(not ok3 and e3:find("'vllm' is not a train framework", 1, true) ~= nil,
     "an inference runtime on a train case is refused: " .. e3)

-- 12-13. Infer: the runtime is the field's; a title naming vLLM alone
-- gives the CUDA-graph serving engine.
local pi = require "gpuplan.predict.infer"
local function icase(wl)
  local w = { weight_dtype = "bf16", batch = 1, input_len = 128, output_len = 128 }
  for k, x in pairs(wl or {}) do w[k] = x end
  return { id = "fw-infer", kind = "infer",
           model = { layers = 32, hidden = 4096, heads = 32, kv_heads = 8,
                     ffn_hidden = 14336, ffn_gated = true, vocab = 128256 },
           hardware = { gpu = "h100-sxm", gpus = 1 }, parallel = { tp = 1 },
           workload = w, measured = { metric = "decode_tokens_per_s", value = 1 },
           source = { title = "vLLM benchmark" } }
end
t.ok(t.said(assert(pi(icase(), cat)), "runtime=graphs (serving engine assumed)", true),
     "infer: a title naming vLLM alone is priced as a CUDA-graph engine")
t.ok(t.said(assert(pi(icase { framework = "vllm" }, cat)), "runtime=vllm (workload.framework)", true),
     "infer: workload.framework vllm gives runtime vllm, said with its field")

-- 14-15. Every shipped case reads (the reader checks each name), and
-- the field is on the cases whose stack is named: at least 1300 of them
-- (1316 when it was filled; a case naming no stack states none).
local all = require("gpuplan.validate").read("validation/cases.json")
local n = 0
for _, c in ipairs(all) do
  if type(c.workload) == "table" and type(c.workload.framework) == "string" then n = n + 1 end
end
t.ok(#all > 1700, "the shipped cases read: " .. #all)
t.ok(n >= 1300, "workload.framework stated on " .. n .. " of them")
