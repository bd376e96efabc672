-- A script's misuse of the API names the script's line (issue 13), as
-- luaL_argerror names the caller: never a line inside gpuplan, however
-- deep the check that found it.  Absurd values are errors, not answers.
local t = require "tap"
local gp = require "gpuplan"

local me = debug.getinfo(1, "S").short_src

-- fn (written on the caller's line) must raise "<this file>:<that
-- line>: " followed by text containing want, naming no gpuplan file
-- (tap's raises_here).
local check = t.raises_here

local M7, H = "llama2-7b", "h100-sxm"
check(function() gp.memory { model = M7, gpu = H, gpus = "eight" } end, "gpus must be a whole number 1..16777216 (got string 'eight')", "memory: gpus a string")
check(function() gp.memory { model = M7, gpu = H, tp = 0 } end, "tp must be a whole number 1..16777216 (got 0)", "memory: tp 0")
check(function() gp.memory { model = M7, gpu = H, method = "sft" } end, "unknown method 'sft'", "memory: unknown method")
check(function() gp.memory { model = M7, gpu = H, tp_size = 2 } end, "memory: unknown option 'tp_size'", "memory: misspelt option")
check(function() gp.memory { model = M7, gpu = H, seq = 1e15 } end, "seq must be a whole number of tokens, 1..16777216 (got 1e+15)", "memory: seq 1e15")
check(function() gp.memory { model = M7, gpu = H, method = "infer", weights = { bits = 4, group = 16, group_bits = 1e300 } } end, "weights: group_bits must be a number of bits in [0, 64] (got 1e+300)", "memory: group_bits 1e300")
check(function() gp.memory { model = M7, gpu = H, method = "infer", weights = 1e-300 } end, "weights: 1e-300 bits per weight is out of [1, 32]", "memory: weights 1e-300 bits")
check(function() gp.memory { model = M7, gpu = H, method = "infer", weights = { bits = 4, group = 0.5 } } end, "weights: group must be a whole number", "memory: fractional group")
check(function() gp.memory { model = M7, gpu = H, vpp = 2 } end, "vpp 2 needs a pipeline (pp > 1; got pp 1)", "memory: vpp without pp")
check(function() gp.memory { model = M7, gpu = H, capacity_factor = 1.25 } end, "capacity_factor applies to MoE models; llama2-7b has no experts", "memory: capacity_factor on a dense model")
check(function() gp.memory { model = "mixtral-8x7b", gpu = H, gpus = 8, tp = 8, capacity_factor = 1e300 } end, "capacity_factor must be a number in [0, 64] (got 1e+300)", "memory: capacity_factor 1e300")
-- The capacity factor is the job's (the option above); a model's
-- moe.capacity_factor was accepted and read by nothing, so a model that set
-- it planned as if it had not (catalog/FORMAT.md names no such field).
local moe_cf = { id = "x", name = "x", layers = 2, hidden = 512, heads = 8, ffn_hidden = 1024,
  vocab = 1000, params_b = 0.01152, source = "t",
  moe = { experts = 4, top_k = 2, ffn_hidden = 1024, capacity_factor = 1.25 } }
check(function() gp.memory { model = moe_cf, gpu = H, gpus = 4, ep = 4 } end, "model.moe.capacity_factor: not a model field: the MoE capacity factor is the job's (--capacity-factor F, Lua capacity_factor = F)", "memory: an inline model's moe.capacity_factor is refused")
check(function() gp.memory { model = "llama2-7bb", gpu = H } end, "unknown model 'llama2-7bb'", "memory: unknown model")
check(function() gp.memory { model = M7, gpu = H, method = "grpo", prompt_len = 2 ^ 30 } end, "prompt_len must be a whole number of tokens", "memory: prompt_len 2^30")
check(function() gp.memory(7) end, "expected a table of options", "memory: not a table")
-- A model table's misspelt field was read as absent: a misspelt moe
-- priced a silently dense model (issue 20.5).
check(function() gp.memory { model = { id = "m", name = "m", layers = 2, hidden = 256, heads = 8, ffn_hidden = 512, vocab = 1000, params_b = 0.01, source = "t", hiddn = 3 }, gpu = H } end, "model: unknown field 'hiddn' (did you mean 'hidden'?)", "memory: a model table's misspelt field")
check(function() gp.memory { model = { id = "m", name = "m", layers = 2, hidden = 256, heads = 8, ffn_hidden = 512, vocab = 1000, params_b = 0.01, source = "t", mo = { experts = 8, top_k = 2, ffn_hidden = 64 } }, gpu = H } end, "model: unknown field 'mo' (did you mean 'moe'?)", "memory: a misspelt moe is not a dense model")
-- pack_tokens is tokens per packed micro-batch: a whole number 0..2^24,
-- as its declaration says (a negative or fractional bin was priced, or
-- refused by the engine with a wrong bound).
local RL = { model = "qwen2.5-7b", gpu = H, gpus = 8, prompts = 64, group = 8, prompt_len = 512, response_len = 2048 }
local function rl(k, v) local o = {} for a, b in pairs(RL) do o[a] = b end o[k] = v return o end
check(function() gp.rl(rl("pack_tokens", -1)) end, "rl: pack_tokens must be a whole number of tokens, 0..16777216 (got -1)", "rl: pack_tokens -1")
check(function() gp.rl(rl("pack_tokens", 8192.5)) end, "rl: pack_tokens must be a whole number of tokens, 0..16777216 (got 8192.5)", "rl: pack_tokens 8192.5")
check(function() gp.rl(rl("pack_tokens", 1e30)) end, "rl: pack_tokens must be a whole number of tokens, 0..16777216 (got 1e+30)", "rl: pack_tokens 1e30")
check(function() gp.rl(rl("logprob_pack_tokens", -1)) end, "rl: logprob_pack_tokens must be a whole number of tokens, 0..16777216 (got -1)", "rl: logprob_pack_tokens -1")
-- The log-probability bins are those of a packed step: alone they size nothing.
check(function() gp.rl(rl("logprob_pack_tokens", 16384)) end, "rl: logprob_pack_tokens sizes the packed log-probability forwards; give pack_tokens too", "rl: logprob_pack_tokens without pack_tokens")
check(function() gp.infer { model = M7, gpu = H, tp = 3 } end, "infer: tp 3 does not divide the 32 attention heads", "infer: tp 3")
check(function() gp.infer { model = M7, gpu = H, weights = "int3" } end, "unknown weight format 'int3'", "infer: unknown weights")
check(function() gp.infer { model = M7, gpu = H, price = "12XYZ/h" } end, "infer: price: unknown currency 'XYZ'", "infer: unknown currency")
check(function() gp.infer { model = M7, gpu = H, input = 1e15 } end, "infer: input must be a whole number of tokens, 1..16777216", "infer: input 1e15")
check(function() gp.infer { model = M7, gpu = H, batch = 2, concurrency = 4 } end, "infer: give batch = N or concurrency = N, not both", "infer: batch and concurrency")
check(function() gp.infer { model = M7, gpu = H, gpuz = 2 } end, "infer: unknown option 'gpuz'", "infer: misspelt argument")
check(function() gp.infer { model = M7, gpu = H, kv = "fp3" } end, "infer: unknown kv dtype 'fp3'", "infer: unknown kv dtype")
check(function() require("gpuplan.infer").sweep { model = M7, gpu = H, tp = 0 } end, "infer: tp must be a whole number 1..16777216 (got 0)", "infer.sweep: tp 0")
check(function() gp.comm { op = "all_rdeuce", bytes = 1, system = "dgx-h100" } end, "comm: unknown op 'all_rdeuce'", "comm: unknown op")
check(function() gp.comm { op = "all_reduce", bytes = -1, system = "dgx-h100" } end, "comm: bytes must be a number >= 0", "comm: negative bytes")
check(function() gp.comm { op = "all_reduce", bytes = 1, gpus = 0, system = "dgx-h100" } end, "comm: gpus must be >= 1 (got 0)", "comm: gpus 0")
check(function() gp.comm { op = "all_reduce", bytes = 1, system = "dgx-h100", algo = "magic" } end, "comm: unknown algo 'magic'", "comm: unknown algo")
check(function() gp.comm { op = "all_reduce", bytes = 1, system = "dgx-h1000" } end, "unknown system 'dgx-h1000'", "comm: unknown system")
check(function() require("gpuplan.comm").sweep { op = "all_reduce", system = "dgx-h100", min = 8, max = 64, factor = 1 } end, "comm: factor must be a finite number > 1 (got 1)", "comm.sweep: factor 1")
check(function() require("gpuplan.comm").sweep { op = "all_reduce", system = "dgx-h100", max = 2 ^ 62 } end, "comm: max must be a size of 1 B to 2^50 B", "comm.sweep: max 2^62")
check(function() require("gpuplan.comm").sweep { op = "all_reduce", system = "dgx-h100", min = 1, max = 2 ^ 40, factor = 1.001 } end, "makes 27740 sizes (at most 4096)", "comm.sweep: too many sizes")
check(function() gp.roofline {} end, "roofline: gpu is required", "roofline: no gpu")
check(function() gp.roofline { gpu = H, op = 3 } end, "roofline: op must be a table", "roofline: op not a table")
check(function() gp.roofline { gpu = H, op = { flop = -1, bytes = 1 } } end, "roofline: op: flop must be a non-negative number", "roofline: negative flop, 'op' said once")
check(function() gp.roofline { gpu = H, op = { flop = 1e9, bytes = 1e6, count = 0 } } end, "roofline: op.count must be a whole number of calls 1..1e15 (got 0)", "roofline: count 0")
check(function() gp.roofline { gpu = H, op = { flop = 1e9, bytes = 1e6, count = 1.5 } } end, "roofline: op.count must be a whole number of calls 1..1e15 (got 1.5)", "roofline: count 1.5")
check(function() gp.parse("80 G", "bytes") end, "bad bytes '80 G': unknown unit 'G'", "parse: unknown unit")
check(function() gp.parse("1e300TB/s", "bandwidth") end, "bad bandwidth '1e300TB/s': too large", "parse: an infinite bandwidth")
check(function() gp.parse("1GB", "volume") end, "units.parse: unknown kind 'volume'", "parse: unknown kind")
check(function() gp.render({ { a = 1 } }, { format = "xml" }) end, "unknown format 'xml'", "render: unknown format")
check(function() gp.catalog():get("gpus", "h100-sxmm") end, "unknown gpu 'h100-sxmm' (did you mean", "cat:get: unknown id")
-- Ids are lower case: one typed in another case is that id, suggested
-- alone (H100-SXM found no suggestion); an empty id is near nothing.
check(function() gp.catalog():get("gpus", "H100-SXM") end, "unknown gpu 'H100-SXM' (did you mean h100-sxm?)", "cat:get: the id in upper case")
check(function() gp.catalog():get("models", "Llama3-8B") end, "unknown model 'Llama3-8B' (did you mean llama3-8b?)", "cat:get: a model id in mixed case")
check(function() gp.catalog():get("models", "") end, "unknown model '' (see 'gpuplan catalog list models')", "cat:get: an empty id lists nothing")
check(function() gp.catalog():get("gpuz", "x") end, "unknown catalog table 'gpuz'", "cat:get: unknown table")
check(function() gp.catalog():get("gpus", "a100\nsxm") end, "unknown gpu 'a100\\nsxm'", "cat:get: an id with a newline stays one line")
check(function() gp.model_from_hf(42) end, "model_from_hf: expected a config.json path or a table, got number", "model_from_hf: a number")
check(function() gp.model_from_hf({}, { idd = "x" }) end, "model_from_hf: unknown option 'idd'", "model_from_hf: misspelt option")
check(function() gp.model_from_hf("no/such/config.json") end, "no/such/config.json: cannot open", "model_from_hf: a missing file")
check(function() gp.params("llama2-7bb") end, "unknown model 'llama2-7bb'", "params: unknown model")
check(function() require("gpuplan.svg").plot():write("/nonexistent/dir/x.svg") end, "cannot write '/nonexistent/dir/x.svg'", "svg write: a missing directory")

-- A nested call (comm.sweep -> comm.comm -> the engine) names the same
-- line as a direct one, and a call through pcall names the line of the
-- pcall.
local line = debug.getinfo(1, "l").currentline; local ok, e = pcall(gp.comm, { op = "all_reduce", bytes = 1, gpus = 12, system = "dgx-h100", nodes = 1 })
if not t.ok(not ok and tostring(e):find("^" .. me:gsub("%p", "%%%0") .. ":" .. line .. ": comm: ") ~= nil,
  "through pcall: the line of the pcall") then
  t.diag(ok and "no error" or tostring(e))
end

-- A user callback's own error keeps its own position.
local cb = debug.getinfo(1, "l").currentline + 1
local okc, ec = pcall(gp.report, { { a = 1 } }, { columns = { { key = "a", fmt = function() error("in my fmt") end } } })
t.like(tostring(ec), me .. ":" .. cb .. ": in my fmt", "a callback's error names the callback's line", true)
t.ok(not okc, "and is raised")

-- Issue 24.6: an unknown key of any gp.* call names the nearest declared
-- one, at the script's line (comm, roofline, infer_plan, the catalog, the
-- policies and gp.vlm named nothing, or accepted the key in silence).
check(function() gp.comm { op = "all_reduce", byts = 1, gpus = 8, system = "dgx-h100" } end, "comm: unknown option 'byts' (did you mean 'bytes'?)", "comm: byts -> bytes")
check(function() gp.roofline { gpu = H, modle = M7 } end, "roofline: unknown option 'modle' (did you mean 'model'?)", "roofline: modle -> model")
check(function() gp.infer_plan { model = "deepseek-v3", gpu = "h200-sxm", target_tokens_per_s = 1e5 } end, "infer_plan: unknown option 'target_tokens_per_s' (did you mean 'target'?)", "infer_plan: named before the missing target")
check(function() gp.catalog { dir = { "x" } } end, "catalog: unknown option 'dir' (did you mean 'dirs'?)", "catalog: dir -> dirs")
check(function() gp.policy.cheapest { deadlin = "3d" } end, "policy.cheapest: unknown option 'deadlin' (did you mean 'deadline'?)", "policy: deadlin -> deadline")
check(function() gp.policy.monthly { budget = "1kCNY", dealine = 1 } end, "policy.monthly: unknown option 'dealine' (budget)", "policy.monthly: nothing near: the names it takes")
check(function() gp.vlm.tokens { model = "qwen2-vl-7b", imagez = 1 } end, "vlm.tokens: unknown option 'imagez' (did you mean 'images'?)", "vlm.tokens: imagez -> images")
check(function() gp.vlm.plan { model = "qwen2-vl-7b", gpu = H, sequence_len = 8192 } end, "vlm.plan: unknown option 'sequence_len' (did you mean 'seq'?)", "vlm.plan: a gp.train key, not rows of nothing")

-- Issue 19.14: a script's policy, its predicate and its lists are named in
-- what goes wrong with them, at the script's line.
local S = { model = M7, gpu = H, gpus = 8 }
local function with(extra)
  local o = {}
  for k, v in pairs(S) do o[k] = v end
  for k, v in pairs(extra) do o[k] = v end
  return o
end
-- A searched dimension given a value names its bound: ep has ep_max, no
-- list form (the message once offered "or a list", which ep does not take).
check(function() gp.sweep(with { ep = { 1, 2 } }) end,
  "sweep: ep is searched, not given; bound it with ep_max (e.g. ep_max = 2)", "sweep: ep a list")
check(function() gp.sweep(with { tp = 4 }) end,
  "sweep: tp is searched, not given; bound it with tp_max (e.g. tp_max = 4)", "sweep: tp 4")
check(function() gp.sweep(with { policy = function() error({}) end }) end,
  "sweep: error in the policy function: an error object that is a table, not a message",
  "sweep: a policy raising error({})")
check(function() gp.sweep(with { where = function() error({}) end }) end,
  "sweep: error in the where function: an error object that is a table, not a message",
  "sweep: a predicate raising error({})")
local pl = debug.getinfo(1, "l").currentline + 1
local function mine() error("my policy failed") end
check(function() gp.sweep(with { policy = mine }) end,
  "sweep: error in the policy function: " .. me .. ":" .. pl .. ": my policy failed",
  "sweep: a policy's own message keeps its line")
check(function() gp.sweep(with { recompute = { "x" } }) end,
  "sweep: recompute[1] must be none, selective, full or op (got 'x')", "sweep: recompute {'x'}")
check(function() gp.sweep(with { recompute = { "full", 3 } }) end,
  "sweep: recompute[2] must be none, selective, full or op (got a number)", "sweep: recompute {'full', 3}")
check(function() gp.sweep(with { policy = function() return 0 / 0 end }) end,
  "sweep: policy must return a finite number or nil (got nan)", "sweep: a NaN score")
check(function() gp.sweep(with { policy = function() return "1" end }) end,
  "sweep: policy must return a finite number or nil (got string)", "sweep: a string score")
check(function() gp.sweep(with { gpus = 1.5 }) end,
  "gpus[1] must be a whole number 1..16777216 (got 1.5)", "sweep: gpus 1.5")
-- One rule with the CLI (`plan --gpus 1e6`): a float holding a whole
-- number is a count.  1e6 GPUs of 8 per node: no layout of llama2-7b
-- fills them (dp 1e6 exceeds the global batch), an answer, not an error.
local okg, rg = pcall(gp.sweep, with { gpus = 1e6 })
t.ok(okg, "sweep: gpus = 1e6 is accepted as 1000000, as the CLI's 1e6 is")
if not okg then t.diag(tostring(rg)) end
local gl = { 8.0 }
gp.sweep(with { gpus = gl })
t.is(math.type(gl[1]), "float", "the script's own list is left as it was")

-- Answers, not hangs (found by tests/lua/fuzz_cases.t): DeepSpeed's
-- 'parameters' partition searched with an absolute 1e-3 step, below the
-- spacing of doubles past ~4.5e12 parameters, and never ended.  A model
-- of hidden 2^20 over 70 layers has 70 x 12 x 2^40 = 9.2e14 parameters.
local big = { layers = 70, hidden = 2 ^ 20, heads = 128, kv_heads = 128, ffn_hidden = 4096,
              vocab = 250880, tied_embeddings = true }
local r = gp.memory { model = big, capacity = 80e9, gpus = 384, tp = 4, pp = 12, zero = 1,
                      method = "pretrain", stack = "deepspeed", partition = "parameters" }
t.ok(r.fits == false and r.total == r.total and r.total < math.huge,
  "a 9e14-parameter model on 12 DeepSpeed stages: an answer (does not fit)")
t.ok(r.stage_layers >= 1 and r.stage_layers <= 70, "with a stage split of whole layers")

-- The helpers a script prints and prices with: a wrong type named at the
-- script's line, not "attempt to index a number value" at a line of
-- gpuplan's (report.lua, prices.lua, init.lua, validate.lua, vlm.lua).
check(function() gp.report(5) end, "report: rows must be a list of tables (got 5)", "report: rows a number")
check(function() gp.render({ 1 }) end, "render: row 1 must be a table (got 1)", "render: a row a number")
check(function() gp.render({ { a = 1 } }, "json") end, "render: opts must be a table (got string 'json')", "render: opts a string")
check(function() gp.report({ { a = 1 } }, { columns = "a" }) end, "report: opts.columns must be a list (got string 'a')", "report: columns a string")
check(function() gp.options({ n = { "count", 1 } }, 5) end, "gp.options: arg must be the script's arg table (got 5)", "options: arg a number")
check(function() gp.options(nil) end, "gp.options: params must be a table", "options: no params")
check(function() gp.prices.cheapest(nil, H) end, "prices.cheapest: cat must be a catalog, as gp.catalog() returns (got nil)", "prices.cheapest: no catalog")
check(function() gp.prices.quote("x", "y") end, "prices.quote: cat must be a catalog", "prices.quote: a string for the catalog")
check(function() gp.prices.offer(gp.catalog(), H, nil) end, "prices.offer: buyer must be gp.prices.buyer's", "prices.offer: no buyer")
check(function() gp.prices.origin(3) end, "prices.origin: q must be a quote", "prices.origin: a number")
check(function() gp.units.fmt_bytes(1e9, 5) end, "units.fmt_bytes: unknown unit 5", "fmt_bytes: a number for the unit")
check(function() gp.parse("1GB", {}) end, "units.parse: unknown kind a table", "parse: a table for the kind, not its address")
check(function() gp.validate.percentile({ 1, 2 }, 0 / 0) end, "validate.percentile: q must be a number in (0, 1] (got NaN)", "percentile: NaN q")
check(function() gp.validate.percentile(nil, 0.5) end, "validate.percentile: sorted must be a sorted list of numbers (got nil)", "percentile: no list")
check(function() gp.validate.summarise(5) end, "validate.summarise: rows must be", "summarise: a number")
check(function() gp.validate.predict({}) end, "validate.predict: case must be a case as gp.validate.read returns", "predict: an empty case")
check(function() gp.vlm.media(nil, {}) end, "vlm.media: model must be a model table (got nil)", "vlm.media: no model")
-- A job gp.train refuses in every layout (no tokens to train on) is its
-- reason, not an empty list the caller reads as "no layout fits".
check(function() gp.vlm.plan{ model = "qwen2-vl-7b", gpu = H, gpus = 8, images = 1, tokens = 0 } end, "vlm.plan: train: tokens must be a positive number up to 1e+15 (got 0)", "vlm.plan: a refused job, not rows of nothing")
check(function() gp.vlm.plan{ gpus = 8 } end, "vlm.plan: model must be a model id or table (got nil)", "vlm.plan: no model")
check(function() gp.vlm.plan{ model = "llava-1.5-7b", gpus = 0.5 } end, "vlm.plan: gpus must be a whole number 1..16777216 (got 0.5)", "vlm.plan: half a GPU")

-- job:step's batch and global_batch are named as job:step takes them: a
-- bad one reached the kernels' checks, which said "micro_batch" (and an RL
-- step's "minibatch") for a key the script never wrote.
do
  local tj = gp.train_job{ model = M7, gpu = H, gpus = 8 }
  local rj = gp.rl_job{ model = "qwen2.5-7b", gpu = H, gpus = 16, prompts = 64, group = 8,
                        response_len = 2048, response_max = 8192 }
  check(function() tj:step{ batch = -1 } end, "step.batch must be a number of sequences in (0, 16777216] (got -1)", "train step: batch -1")
  check(function() tj:step{ batch = 0 } end, "step.batch must be a number of sequences in (0, 16777216] (got 0)", "train step: batch 0")
  check(function() rj:step{ batch = 1e20 } end, "step.batch must be a number of sequences in (0, 16777216] (got 1e+20)", "rl step: batch 1e20")
  check(function() rj:step{ global_batch = -5 } end, "step.global_batch must be a number in [0, 1e+15] (got -5)", "rl step: global_batch -5, not 'minibatch'")
end

-- gp.catalog{dirs = ...} and cat:ids: a string for the list was a catalog of
-- nothing, in silence; a number in it, or an unknown table for ids, raised
-- inside gpuplan.  comm's NaN bytes said "-nan" (glibc's spelling).
check(function() gp.catalog{ dirs = "catalog" } end, "catalog: dirs must be a list of directories (got string 'catalog')", "catalog: dirs a string")
check(function() gp.catalog{ dirs = { 5 } } end, "catalog: dirs[1] must be a directory path (got 5)", "catalog: a number in dirs")
check(function() gp.catalog():ids("gpu") end, "unknown catalog table 'gpu'", "cat:ids of an unknown table")
check(function() gp.comm{ system = "dgx-h100", op = "all_reduce", bytes = 0 / 0 } end, "comm: bytes must be a number >= 0 (got NaN)", "comm: NaN bytes")

-- A GPU's own table, which gp.train and gp.infer take, read as an empty
-- list of ids: "gpu must name at least one GPU id".
check(function() gp.sweep{ model = "llama3-8b", gpu = gp.catalog():get("gpus", H), gpus = 8 } end,
  "sweep: gpu: a GPU's table (id 'h100-sxm') is not searched: put its entry in a catalog directory",
  "sweep: a GPU table says what to do")

t.done_testing()
