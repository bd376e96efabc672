-- The validation harness: reading cases, percentiles, summaries.
local t = require "tap"
local v = require "gpuplan.validate"

local cases = v.read("tests/fixtures/validation/mini.json")
t.is(#cases, 2, "reads a case array")
t.is(cases[1].parallel.tp, 1, "fields survive")
t.is(cases[1].notes, nil, "JSON null becomes nil")
t.raises(function() v.read("tests/fixtures/validation/bad_case.json") end,
  "bad_case.json:1: case 'x': field 'measured.value': missing (the measured number)", "incomplete case named", true)
t.raises(function() v.read("tests/fixtures/validation/bad_json.json") end,
  "bad_json.json:2: invalid JSON: Expected object key string but found T_END at column 1", "bad JSON named by file:line", true)
t.raises(function() v.read("tests/fixtures/validation/none.json") end,
  "cannot open case file", "missing file named", true)

-- Nearest-rank percentile: for {1..10}, p50 is the 5th value, p90 the 9th.
local s = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 }
t.is(v.percentile(s, 0.5), 5, "median, nearest rank")
t.is(v.percentile(s, 0.9), 9, "p90, nearest rank")
t.is(v.percentile({}, 0.5), nil, "empty list has no percentile")

-- Summary: errors +10% and -30% -> |err| sorted {0.1, 0.3}: median 0.1
-- (rank ceil(0.5*2) = 1), p90 0.3 (rank ceil(0.9*2) = 2).
local rows = {
  { kind = "infer", error = 0.1 }, { kind = "infer", error = -0.3 },
  { kind = "infer", reason = "no inference model yet" },
}
local sum = v.summarise(rows)
t.is(sum[1].cases, 3, "summary counts every case")
t.is(sum[1].predicted, 2, "summary counts predicted ones")
t.near(sum[1].median, 0.1, 1e-12, "median |error|")
t.near(sum[1].p90, 0.3, 1e-12, "p90 |error|")

-- A predictor's refusal and a missing predictor both come back as reasons.
local row = v.predict({ id = "c", kind = "train", measured = { metric = "mfu", value = 0.5 } }, nil)
t.ok(row.predicted == nil and row.reason ~= nil, "unpredicted case has a reason")

-- Numbers JSON does not have, and shapes that are not a case list.
local V = "tests/fixtures/validation/"
t.raises(function() v.read(V .. "nan_value.json") end,
  "nan_value.json:1: invalid JSON: Expected value but found invalid token at column 84", "NaN is not JSON: file:line and column", true)
t.raises(function() v.read(V .. "inf_value.json") end,
  "inf_value.json:1: case 'inf-value': field 'measured.value': must be a positive finite number",
  "1e999 overflows to infinity: refused", true)
t.raises(function() v.read(V .. "object.json") end,
  "object.json:1: expected a JSON array of cases ([{...}, ...]), got an object", "an empty object is not an empty array", true)
t.is(#v.read(V .. "empty.json"), 0, "an empty array is no cases")
t.raises(function() v.read(V .. "duplicate.json") end,
  "duplicate.json:2: case 'twice' (case 2) repeats the id of case 1", "duplicate id named", true)
t.raises(function() v.read("tests/fixtures/validation") end,
  "cannot read case file 'tests/fixtures/validation'", "a directory named", true)
t.raises(function() v.read(V .. "wrong_kind.json") end,
  "wrong_kind.json:1: case 'wrong-kind': unknown kind 'training' (train, memory, infer, collective, rl)",
  "a kind outside the five named", true)

-- An encoder-decoder case: the shipped T0 3B case gives the T5 v1.1 XL
-- shape and is predicted; stripped to params_b (as it shipped before its
-- config was quoted) it is not predicted and the reason names every
-- missing field; given the shape back (encoder_layers given) it is.
-- The shipped cases, read once (each read checks all of validation/
-- cases.json, a second or more under the sanitizers) and found by id.
-- Each block below takes a case no other block takes and edits only that
-- one, so sharing the read table changes none of what a block sees.
local shipped_by_id
local function shipped(id)
  if not shipped_by_id then
    shipped_by_id = {}
    for _, c in ipairs(v.read("validation/cases.json")) do shipped_by_id[c.id] = c end
  end
  return assert(shipped_by_id[id], id)
end

local cat = require("gpuplan").catalog()
local t0
t0 = shipped("peft-mem-t0-3b-lora-ds-offload")
row = v.predict(t0, cat)
t.ok(row.predicted and row.predicted > 0, "T0 3B as shipped: predicted")
-- PEFT's default LoRA targets follow the model type (its
-- TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING: "t5": ["q", "v"]).
t.ok(row.defaults:find("lora_targets=q,v (PEFT default target for t5: q, v)", 1, true),
  "T0 3B: PEFT's t5 targets q, v")
for _, k in ipairs { "layers", "encoder_layers", "hidden", "heads", "kv_heads", "head_dim",
                     "ffn_hidden", "ffn_gated", "ffn_act", "vocab", "tied_embeddings",
                     "rel_buckets" } do
  t0.model[k] = nil
end
row = v.predict(t0, cat)
-- the shipped record's case: its refusal placed (harden79b), the words kept
t.is(tostring(row.reason):gsub("^validation/cases%.json:%d+: case '[^']+': ", ""),
  "model layers, hidden, heads, vocab, ffn_hidden, encoder_layers not given: "
  .. "architecture unknown (the case states params_b only; an encoder-decoder needs both "
  .. "stacks' layer counts)", "T0 3B without its shape: the missing fields named")
for k, x in pairs { layers = 24, encoder_layers = 24, hidden = 2048, heads = 32, head_dim = 64,
                    ffn_hidden = 5120, ffn_gated = true, vocab = 32128 } do
  t0.model[k] = x
end
t0.workload.input_len, t0.workload.output_len = 64, 4
row = v.predict(t0, cat)
t.ok(row.predicted and row.predicted > 0, "T0 3B with its shape: predicted")

-- A MoE case whose inline model does not state mtp_layers, with MTP asked
-- for: the catalog model of the same architecture (deepseek-r1 and
-- deepseek-v3 share it: one MTP layer, their config.json's
-- num_nextn_predict_layers; the case's "DeepSeek-V3 / R1 671B" begins
-- with deepseek-v3's id, so that one) lends its module, and
-- the prediction equals the one with mtp_layers = 1 stated.  A shape no
-- catalog model has (62 layers) has no module to take, and says so.
local ant
ant = shipped("ant-dsr1-h20-ep16-decode-bs32-mtp1")
local stated = v.predict(ant, cat)
ant.model.mtp_layers = nil
row = v.predict(ant, cat)
t.near(row.predicted, stated.predicted, 0, "MTP layers from the architecture: same prediction")
t.like(row.defaults or "", "; mtp_layers=1 %(the MTP module of deepseek%-v3's architecture%);",
       "and the assumption names the catalog model")
-- Where the model names itself after one of the ids that share the
-- architecture, that one is named: V3's shape called "DeepSeek-V3" names
-- deepseek-v3, called "deepseek-r1" names deepseek-r1 (both one layer).
do
  local arch = require("gpuplan.predict.case").architecture_mtp
  local m = {}
  for k, x in pairs(cat:get("models", "deepseek-v3")) do m[k] = x end
  m.mtp_layers, m.id, m.name = nil, nil, "DeepSeek-V3"
  local n, id = arch(m, cat)
  t.is(id, "deepseek-v3", "a shape shared by two ids: the one the model is named after")
  t.is(n, 1, "and its one MTP layer")
  m.name = "deepseek-r1"
  n, id = arch(m, cat)
  t.is(id, "deepseek-r1", "named after the other: that one")
  -- the id and more past a word's end: a release or a size after it
  m.name = "DeepSeek-R1-0528"
  t.is(select(2, arch(m, cat)), "deepseek-r1", "DeepSeek-R1-0528: deepseek-r1's")
  m.name = "DeepSeek-V3 671B"
  t.is(select(2, arch(m, cat)), "deepseek-v3", "DeepSeek-V3 671B: deepseek-v3's")
  -- no word's end after the id: not named after it (the first id)
  m.name = "deepseek-v3x"
  t.is(select(2, arch(m, cat)), "deepseek-r1", "deepseek-v3x: the first id, deepseek-r1")
  m.name = nil
  t.is(select(2, arch(m, cat)), "deepseek-r1", "no name: the first id in the catalog's order")
end
ant.model.layers = 62
row = v.predict(ant, cat)
t.like(row.reason or "", "has no MTP module", "another shape: no module to take")

-- An inference case with layers in host memory (workload.offload): the
-- framework it states, llama.cpp, sets the runtime that computes them on
-- the CPU, which reads them at 0.8 of the host DRAM bandwidth the case
-- states.  Llama 2 13B in bf16 (26 GB) on a 24 GB RTX 4090 offloads
-- layers; doubling the stated bandwidth takes B/(2 x 0.8 x bw) off each
-- token (B the offloaded bytes: B/bw' - B/2bw' = B/2bw'), to the
-- microsecond (the rest of the step is the same arithmetic).
local off = { id = "offload", kind = "infer",
  model = { name = "Llama 2 13B", layers = 40, hidden = 5120, heads = 40, kv_heads = 40,
            ffn_hidden = 13824, ffn_gated = true, vocab = 32000 },
  hardware = { gpu = "rtx-4090", gpus = 1, host_mem_bw = 60e9, host_memory = 64e9 },
  workload = { method = "infer", weight_dtype = "bf16", batch = 1, input_len = 512,
               output_len = 128, offload = true, framework = "llama.cpp" },
  source = { title = "a llama.cpp run" },
  measured = { metric = "decode_tokens_per_s", value = 5 } }
local slow = v.predict(off, cat)
t.like(slow.defaults or "", "runtime=llama%.cpp %(workload%.framework%)",
       "offload case: llama.cpp stated, llama.cpp's runtime")
t.like(slow.defaults or "", "host_bw=48GB/s %(0%.8 of the host's stated DRAM bandwidth%)",
       "and the host's stated bandwidth at 0.8")
local r13 = require("gpuplan.infer").infer { model = "llama2-13b", gpu = "rtx-4090",
  offload = true, runtime = "llama.cpp", host_bw = 48e9, host_memory = 64e9, batch = 1,
  input = 512, output = 128 }
off.hardware.host_mem_bw = 120e9
local fast = v.predict(off, cat)
t.near(1 / slow.predicted - 1 / fast.predicted, r13.offload_bytes / (2 * 48e9), 1e-6,
       "twice the host bandwidth: the offloaded bytes' CPU read halves")
off.workload.offload = nil
t.like(v.predict(off, cat).reason or "", "does not fit", "without offload it does not fit")
off.workload.offload, off.workload.phase = true, "decode"
off.measured.metric = "output_tokens_per_s_per_gpu"
t.like(v.predict(off, cat).reason or "", "workload.offload: MoE serving",
       "a serving-pool case does not offload, and says so")

-- A collective case that states its host's DRAM: traffic staged through
-- host memory (RTX 5090s, no P2P) shares it, 0.8 of it streaming, every
-- byte written and read once.  8 GPUs on a host stating 100 GB/s: each
-- ring flow gets 0.8 x 100 / (2 x 8) = 5 GB/s, below the staged Gen5
-- link's 43 / 2 / 38.5 x 64 x 0.8 = 28.59 (the both-ways share two RTX
-- 5090s without P2P measure, nccl-tests#287); unstated, the link's 28.59.
-- 8 GiB makes the latency negligible: tolerance 1%.
local pc = { id = "pcie-host", kind = "collective", collective = "all_reduce", bytes = 2 ^ 33,
  hardware = { gpu = "rtx-5090", gpus = 8, gpus_per_node = 8, intra_node = "pcie5" },
  source = { title = "a host-staged run" }, measured = { metric = "busbw_gbps", value = 25 } }
t.near(v.predict(pc, cat).predicted, 43 / 2 / 38.5 * 64 * 0.8, 0.01,
  "staged Gen5 ring, host unstated: 28.6 GB/s")
pc.hardware.host_mem_bw = 100e9
t.near(v.predict(pc, cat).predicted, 5.0, 0.01, "the case's host DRAM binds: 0.8 x 100 / 16 = 5 GB/s")

-- A collective case run by one nccl-tests thread driving its 8 GPUs (-g 8,
-- hardware.gpus_per_thread): 8 B on one DGX A100 then takes the 8 launches,
-- 8 x 4.2 = 33.6 us, not NCCL's 15 us LL ring, and says it assumed so.
local g = { id = "g8", kind = "collective", collective = "all_reduce", bytes = 8,
  hardware = { gpu = "a100-sxm-80gb", gpus = 8, gpus_per_node = 8, gpus_per_thread = 8 },
  source = { title = "a -g 8 run" }, measured = { metric = "time_us", value = 40 } }
local gr = v.predict(g, cat)
t.near(gr.predicted, 33.6, 1e-9, "-g 8: eight launches of 4.2 us")
t.like(gr.defaults or "", "gpus_per_thread=8 %(the case's %-g%)", "and the assumption is said")
-- A case file's numbers are JSON's (floats): said as the count the case
-- file wrote, not "8.0".
g.hardware.gpus_per_thread = 8.0
t.like(v.predict(g, cat).defaults or "", "gpus_per_thread=8 %(", "a JSON 8.0 said as 8")
g.hardware.gpus_per_thread = 8
-- A thread drives the GPUs of its own node: 16 on 8-GPU nodes is not a
-- run that can be, and the reason names the case's fields.
g.hardware.gpus, g.hardware.gpus_per_thread, g.hardware.inter_node = 16, 16, "ib-hdr-200"
local gn, gwhy = v.predict(g, cat)
t.ok(gn == nil or gn.predicted == nil, "-g 16 over two 8-GPU nodes: not predicted")
t.like(gwhy or (gn and gn.reason) or "", "hardware.gpus_per_thread 16 exceeds the 8 GPUs of a node",
       "named by its field", true)
g.hardware.gpus, g.hardware.inter_node = 8, nil
g.hardware.gpus_per_thread = nil
t.near(v.predict(g, cat).predicted, 15.0, 1e-3, "a GPU a thread: NCCL's LL ring")

-- Malformed cases (issue 13): an error naming the case and the field,
-- never a prediction that fails inside a predictor.
local scratch = t.scratch()
local put = scratch.put
local good = [[{"id": "c1", "kind": "memory",
  "model": {"name": "m", "layers": 2, "hidden": 64, "heads": 2, "vocab": 100, "ffn_hidden": 256},
  "hardware": {"gpu": "h100-sxm", "gpus": 1}, "parallel": {"tp": 1},
  "workload": {"method": "full", "seq_len": 128},
  "measured": {"metric": "peak_memory_gib", "value": 1.5, "unit": "GiB"}}]]
t.is(#v.read(put("good.json", "[" .. good .. "]")), 1, "the base case reads")
-- the catalog's id, adam8bit, is the case file's name for 8-bit Adam
t.is(v.read(put("a8.json", "[" .. good:gsub('"method": "full"', '"method": "full", '
  .. '"optimizer": "adam8bit"') .. "]"))[1].workload.optimizer, "adam8bit",
  "workload.optimizer adam8bit (the catalog id) is read")
t.raises(function() v.read(put("null.json", "[null, " .. good .. "]")) end,
  "null.json:1: case 1: expected a case object, got null", "[null, case] is an error, not 0 cases", true)
t.raises(function() v.read(put("num.json", "[" .. good .. ", 3]")) end,
  "num.json:5: case 2: expected a case object, got a number", "a number among the cases", true)
t.raises(function() v.read(put("arr.json", "[[1, 2]]")) end,
  "arr.json:1: case 1: expected a case object, got an array", "an array as a case", true)
-- One field at a time made wrong: {JSON text replaced, new text, the
-- message expected, the line of good's text the refused field is on (the
-- case file's "[" adds none)}.
local bad = {
  { '"layers": 2', '"layers": "2"', "field 'model.layers': expected a finite number, got \"2\"", 2 },
  { '"layers": 2', '"layers": 2.5', "field 'model.layers': expected an integer, got 2.5", 2 },
  { '"layers": 2', '"layers": 0', "field 'model.layers': must be >= 1, got 0", 2 },
  { '"layers": 2', '"layers": 1e300', "field 'model.layers': must be <= 16777216, got 1e+300", 2 },
  { '"hidden": 64', '"hidden": {"a": 1}', "field 'model.hidden': expected a finite number, got a table", 2 },
  { '"ffn_hidden": 256}', '"ffn_hidden": 256, "max_seq": [4096]}', "field 'model.max_seq': expected "
    .. "a finite number, got a table", 2 },
  { '"model": {"name": "m", "layers": 2, "hidden": 64, "heads": 2, "vocab": 100, "ffn_hidden": 256}',
    '"model": 7', "field 'model': expected a table, got 7", 2 },
  { '"gpus": 1', '"gpus": -8', "field 'hardware.gpus': must be >= 1, got -8", 3 },
  { '"gpu": "h100-sxm"', '"gpu": 12', "field 'hardware.gpu': expected a string, got a number", 3 },
  { '"tp": 1', '"tp": true', "field 'parallel.tp': expected a finite number, got true", 3 },
  { '"tp": 1', '"tp_size": 1', "field 'parallel.tp_size': unknown field", 3 },
  { '"tp": 1', '"tp": 1, "fsdp": "hybrid"', "field 'parallel.fsdp': expected one of false, true, "
    .. "full_shard, shard_grad_op, hybrid_shard, got \"hybrid\"", 3 },
  { '"tp": 1', '"tp": 1, "grad_sync": true', "field 'parallel.grad_sync': expected one of "
    .. "micro_batch, step, got true", 3 },
  { '"seq_len": 128', '"seq_len": 1e15', "field 'workload.seq_len': must be <= 16777216", 4 },
  { '"method": "full"', '"method": "fine-tune"', "field 'workload.method': expected one of pretrain", 4 },
  { '"method": "full"', '"method": "full", "lora": 8', "field 'workload.lora': expected a table, got 8", 4 },
  { '"method": "full"', '"method": "full", "attn_kernel": "sdpa"', "field 'workload.attn_kernel': "
    .. "expected one of fa1, fa2, fa3, fa4, cudnn, triton, efficient, ck, flex, got \"sdpa\"", 4 },
  { '"method": "full"', '"method": "full", "lora": {"targets": "q"}', "field 'workload.lora.targets': expected a list", 4 },
  { '"value": 1.5', '"value": 1e-320', "field 'measured.value': must be >= 1e-06, got ", 5 },
  { '"value": 1.5', '"value": 1e300', "field 'measured.value': must be <= 1e+15", 5 },
  { '"metric": "peak_memory_gib"', '"metric": "busbw_gbps"', "field 'measured.metric': 'busbw_gbps' is not a memory metric", 5 },
  { '"unit": "GiB"', '"unit": 3', "field 'measured.unit': expected a string, got a number", 5 },
  { '"seq_len": 128', '"seq_len": 128, "weight_dtype": "int4-gx"', "field 'workload.weight_dtype': "
    .. "expected one of fp32, bf16, fp16, fp8, int8, int4, nf4, nf4-dq, fp4, got \"int4-gx\"", 4 },
  { '"seq_len": 128', '"seq_len": 128, "weight_dtype": 40', "field 'workload.weight_dtype': "
    .. "expected one of fp32, bf16, fp16, fp8, int8, int4, nf4, nf4-dq, fp4, a group variant (int4-g32-bf16) "
    .. "or bits per weight (4.5): weights: 40.0 bits per weight is out of [1, 32]", 4 },
  -- the catalog's optimizer id is adam8bit; the old case-file spelling
  -- adamw8bit is refused with the nearest name, where it stands
  { '"method": "full"', '"method": "full", "optimizer": "adamw8bit"', "field 'workload.optimizer': "
    .. "expected one of adamw, adam8bit, sgd, muon, got \"adamw8bit\" (did you mean 'adam8bit'?)", 4 },
  { '"kind": "memory",', '"kind": "memory", "notes": [1],', "field 'notes': expected a string, got a table", 1 },
  { '"kind": "memory",', '"kind": "memory", "source": "paper",', "field 'source': expected a table", 1 },
  { '"kind": "memory",', '"kind": "collective",', "field 'measured.metric': 'peak_memory_gib' is not a collective metric", 5 },
}
for i, b in ipairs(bad) do
  local text = good:gsub(b[1]:gsub("%p", "%%%0"), (b[2]:gsub("%%", "%%%%")), 1)
  local path = put("bad" .. i .. ".json", "[" .. text .. "]")
  t.raises(function() v.read(path) end, "bad" .. i .. ".json:" .. b[4] .. ": case 'c1': " .. b[3],
    "malformed " .. b[2], true)
end
-- A weight format stated beyond its name, as gp.infer's --weights takes it
-- (gpt-fast's int4 at group 32, llama.cpp's Q4_0 as 4.5 bits): read, and
-- predicted as the option predicts it -- the same call, so equal to the
-- last digit.
do
  local inf = [[{"id": "w", "kind": "infer",
    "model": {"name": "m", "layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 32,
              "ffn_hidden": 11008, "ffn_gated": true, "vocab": 32000},
    "hardware": {"gpu": "a100-sxm-80gb", "gpus": 1},
    "workload": {"method": "infer", "weight_dtype": WD, "batch": 1, "input_len": 5, "output_len": 200},
    "measured": {"metric": "decode_tokens_per_s", "value": 200}}]]
  local cat_ = require("gpuplan.catalog").get()
  for _, w in ipairs { { '"int4-g32-bf16"', "int4-g32-bf16" }, { "4.5", 4.5 } } do
    local c = v.read(put("w.json", "[" .. inf:gsub("WD", w[1]) .. "]"))[1]
    t.is(c.workload.weight_dtype, w[2], "weight_dtype " .. w[1] .. " is read")
    local r = require("gpuplan.infer").infer { model = { layers = 32, hidden = 4096, heads = 32,
      kv_heads = 32, ffn_hidden = 11008, ffn_gated = true, vocab = 32000 },
      gpu = "a100-sxm-80gb", weights = w[2], batch = 1, input = 5, output = 200 }
    t.near(v.predict(c, cat_).predicted, 1 / r.itl_s, 1e-9,
      "weight_dtype " .. w[1] .. ": gp.infer's --weights " .. w[1])
  end
end
local coll = put("coll.json", [=[[{"id": "k", "kind": "collective", "hardware": {"gpu": "h100-sxm", "gpus": 8},
  "measured": {"metric": "busbw_gbps", "value": 100}}]]=])
t.raises(function() v.read(coll) end, "coll.json:1: case 'k': a collective case needs 'collective' and 'bytes'",
  "a collective case without its message", true)
scratch.remove()
-- An RL case whose step does not fit the model's memory is not predicted,
-- with what did not fit as its reason (it was an internal error): NeMo RL's
-- Qwen3-235B one-off on 256 H100s with its rollout engine (vLLM TP 8, 58.8
-- GB of weights a GPU) given 0.65 of the card (55.2 GB) instead of 0.8.
do
  local rl_case
  rl_case = shipped("nemo-rl-0.5-grpo-qwen3-235b-h100-256-1off")
  rl_case.rl.rollout_memory = 0.65
  local r = v.predict(rl_case, require("gpuplan.catalog").get())
  t.ok(r.predicted == nil and tostring(r.reason):match("^validation/cases%.json:%d+: case '[^']+': does not fit: rollout engine: needs")
    ~= nil, "an RL step that does not fit: not predicted, the reason named")
end

-- NeMo 24.07's fine-tuning rows ran the launcher's examples/peft/llama/h100
-- scripts: the 70B SFT layout (TP 4, PP 4) gets 70b_2node.sh's interleaving
-- (virtual_pipeline_model_parallel_size=20), sequence parallelism and
-- Userbuffers overlap; the same model at a layout no script ran (PP 8)
-- gets none of them.
do
  local sft
  sft = shipped("nemo2407-finetune-llama2-70b-sft")
  local cat_ = require("gpuplan.catalog").get()
  local r = v.predict(sft, cat_)
  for _, want in ipairs { "vpp=20 (", "sp=true (", "tp_overlap=true (", "overlap_p2p=true (",
                          "grad_reduce=bf16 (peft/llama/sft.yaml" } do
    t.ok(r.defaults:find(want, 1, true), "NeMo 70B SFT: " .. want .. "...)")
  end
  sft.parallel.pp, sft.parallel.tp = 8, 2
  local other = v.predict(sft, cat_)
  t.ok(not other.defaults:find("vpp=", 1, true) and not other.defaults:find("tp_overlap=", 1, true),
    "NeMo 70B SFT at TP 2, PP 8 (no launcher script): no interleaving, no overlap assumed")
end

-- NeMo 24.07's GPT-3 pretraining rows state TP overlap from their own
-- launcher yamls (conf/training/gpt3): 20b.yaml "ub_tp_comm_overlap: True",
-- 175b.yaml "False" -- stated, so not among the defaults; the 5B row runs
-- TP 1 and gets no setting.  With the overlap the 20B step hides its TP
-- collectives, so it predicts more tokens/s than the same case with the
-- field stated false.
do
  local by = {}
  for _, id in ipairs { "nemo2407-pretrain-gpt3-20b-64", "nemo2407-pretrain-gpt3-175b-512",
                        "nemo2407-pretrain-gpt3-5b-64" } do by[id] = shipped(id) end
  local cat_ = require("gpuplan.catalog").get()
  local r20 = v.predict(by["nemo2407-pretrain-gpt3-20b-64"], cat_)
  local r175 = v.predict(by["nemo2407-pretrain-gpt3-175b-512"], cat_)
  local r5 = v.predict(by["nemo2407-pretrain-gpt3-5b-64"], cat_)
  t.ok(by["nemo2407-pretrain-gpt3-20b-64"].parallel.tp_overlap == true
    and not r20.defaults:find("tp_overlap=", 1, true), "NeMo GPT3-20B: 20b.yaml's TP overlap, stated")
  t.ok(by["nemo2407-pretrain-gpt3-175b-512"].parallel.tp_overlap == false
    and not r175.defaults:find("tp_overlap=", 1, true), "NeMo GPT3-175B: 175b.yaml's none, stated")
  t.ok(not r5.defaults:find("tp_overlap=", 1, true), "NeMo GPT3-5B (TP 1): no TP overlap setting")
  local off = by["nemo2407-pretrain-gpt3-20b-64"]
  off.parallel.tp_overlap = false
  local r20off = v.predict(off, cat_)
  t.ok(r20.predicted > r20off.predicted and not r20off.defaults:find("tp_overlap=", 1, true),
    "the stated tp_overlap reaches the step: hiding the TP collectives is faster")
end

-- workload.attn_kernel reaches gp.train: the cuDNN-frontend H200 row
-- (transformers' modules, SDPA's CUDNN_ATTENTION, stated) prices cuDNN,
-- Hopper's own kernel (catalog/archs.lua); without the field its eager
-- modules run what SDPA tries first, FlashAttention-2 (PyTorch tries
-- cuDNN's backend last: gp.train), so the unstated case prices what
-- naming fa2 does, and FlashAttention-2 (0.39 / 0.345 of peak against
-- cuDNN's 0.53 / 0.45) only slows the attention.  By hand: a layer's causal forward is
-- 4 B s^2 (heads x head_dim) / 2 = 2 x 3 x 4096^2 x 2048 = 2.06e11 FLOP,
-- its backward 2.5 times that; at the sustained 989 x 0.82 = 811 TFLOP/s
-- the forward takes 0.480 ms (cuDNN) or 0.652 (FA2), the backward 1.412 or
-- 1.842 ms: 0.602 ms a layer, 0.00963 s over 16 layers (the shape terms
-- scale both kernels alike).
do
  local fe
  fe = shipped("cudnnfe-h200-llama32-1b-cudnn-bs3-s4096")
  local cat_ = require("gpuplan.catalog").get()
  local stated = v.predict(fe, cat_)
  t.ok(not (stated.defaults or ""):find("attn_kernel=", 1, true),
    "a stated attn_kernel is not listed among the defaults")
  fe.workload.attn_kernel = nil
  local unstated = v.predict(fe, cat_)
  t.ok((unstated.defaults or ""):find("attn_kernel=fa2 (transformers' modules", 1, true),
    "unstated on transformers' modules: FlashAttention-2, said among the defaults")
  fe.workload.attn_kernel = "fa2"
  local fa2 = v.predict(fe, cat_)
  t.is(unstated.predicted, fa2.predicted, "unstated = fa2 named, not Hopper's cuDNN")
  -- 10% around the hand figure (the model prints ~4.7% more: the causal
  -- diagonal and head_dim 64 tiles lengthen both kernels a little).
  t.near(fa2.predicted - stated.predicted, 0.00963, 0.10, "fa2 named: the attention slows")
end

t.done_testing()
