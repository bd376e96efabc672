-- zero_gather_copies (engine/train.c gather_copy_host): nanotron's ZeRO-1
-- parameter all-gather copies every parameter's slice of every DP rank
-- back with its own copy_ from Python (optim/zero.py _all_gather_params
-- -> distributed.py all_gather_coalesced's update_output), one cat a
-- rank besides: dp x (tensors + 1) launches at GP_EAGER_NOGRAD_OP_TIME
-- (7.1 us, engine/common.h: zero.py's step runs under torch.no_grad, so
-- no autograd recording) on an x86 Hopper host (host_op_time /
-- GP_EAGER_OP_TIME = 1).  The step's tail is the longer of that loop
-- and the gather.
-- Run with ./gpuplan run tests/lua/zero_gather_copies.t.
local t = require "tap"
local gp = require "gpuplan"
local validate = require "gpuplan.validate"

t.plan(17)

local BARE = 7.1e-6

local function model(layers, hidden, ffn)
  return { layers = layers, hidden = hidden, heads = 32, kv_heads = 32,
    head_dim = hidden // 32, ffn_hidden = ffn, ffn_gated = true, vocab = 131072,
    tied_embeddings = true, norm = "rms", split_proj = "none" }
end
local function job(o)
  local j = { stack = "megatron", gpu = "h100-sxm", gpus = 512, gpus_per_node = 8,
    nic_fabric = "efa-100", nics = 32, tp = 4, pp = 1, zero = 1, sp = true, batch = 2,
    global_batch = 256, seq = 4096, precision = "bf16", grad_reduce = "fp32",
    recompute = "none", flash = true, attn_kernel = "fa2", unfused_act = true,
    overlap_param_gather = false, model = model(28, 3072, 8192) }
  for k, x in pairs(o or {}) do j[k] = x end
  return gp.train(j)
end
local function part(r, name)
  for _, p in ipairs(r.parts) do if p.name == name then return p end end
end

-- The 3.57B shape on 64 nodes, TP 4, DP 128, ZeRO-1, PP 1 (the
-- diagram's cell): 28 layers x 6 tensors (two norms, qkv_proj, o_proj,
-- gate_up_proj, down_proj) + the tied embedding + the final norm = 170;
-- 128 x (170 + 1) x 7.1 us = 0.1554048 s, longer than the gather of
-- 0.89B bf16 parameters (some 23 ms), so the tail is the loop.
-- Tolerance 1e-9 s: the same product in floating point.
local off, on = job(), job{ zero_gather_copies = true }
local want = 128 * (28 * 6 + 2 + 1) * BARE
local zg = part(on, "zero_gather")
t.ok(math.abs(zg.seconds - want) < 1e-9,
  string.format("3.57B, DP 128: the tail is the host loop, %.7f s (got %.7f)", want, zg.seconds))
t.ok(part(off, "zero_gather").seconds < want,
  "without the copies the gather alone is shorter than the loop")
t.ok(math.abs((on.step_s - off.step_s) - (want - part(off, "zero_gather").seconds)) < 1e-9,
  "the step grows by the loop less the gather it used to wait for")

-- The layer's norm tensors as the model has them (engine/model.c
-- model_layer_norms): with qk_norm two more a layer (Qwen3Attention's
-- q_norm and k_norm), 28 x 8 + 2 = 226 tensors, 128 x 227 x 7.1 us =
-- 0.2062976 s; a parallel layer with one shared norm (GPT-J's ln_1) one
-- fewer, 28 x 5 + 2 = 142, 128 x 143 x 7.1 us = 0.1299584 s.  Both
-- longer than the gather: the tail is the loop.  Tolerance 1e-9 s.
local function tail(o)
  return part(job{ zero_gather_copies = true, model = t.with(model(28, 3072, 8192), o) },
    "zero_gather").seconds
end
t.ok(math.abs(tail{ qk_norm = true } - 128 * 227 * BARE) < 1e-9,
  string.format("qk_norm: 226 tensors, %.7f s", tail{ qk_norm = true }))
t.ok(math.abs(tail{ parallel_attn = true, shared_norm = true } - 128 * 143 * BARE) < 1e-9,
  string.format("shared_norm: 142 tensors, %.7f s",
    tail{ parallel_attn = true, shared_norm = true }))

-- PP 2 (the 1.34B cell: 16 layers, TP 2, DP 128): stage 0 holds 8
-- layers and the embedding (49 tensors), stage 1 8 layers, the final
-- norm and its own copy of the tied output layer (50): the larger,
-- 128 x (50 + 1) x 7.1 us = 0.0463488 s.  Tolerance 1e-9 s.
local p2 = job{ zero_gather_copies = true, tp = 2, pp = 2, model = model(16, 2048, 8192) }
local want2 = 128 * (8 * 6 + 2 + 1) * BARE
t.ok(math.abs(part(p2, "zero_gather").seconds - want2) < 1e-9,
  string.format("PP 2: the last stage's 50 tensors set it, %.7f s (got %.7f)", want2,
    part(p2, "zero_gather").seconds))

-- ZeRO 0 gathers nothing (nanotron builds its ZeroDistributedOptimizer
-- only for zero_stage > 0): the flag priced nothing there, in silence.
-- Refused, a usage error naming the option and the stage, whether the
-- zero was given or is train's default (0).
local function job_no_zero(o)
  local j = { gpu = "h100-sxm", gpus = 8, model = model(28, 3072, 8192) }
  for k, x in pairs(o) do j[k] = x end
  return gp.train(j)
end
for _, case in ipairs { { job, "zero 0", "zero 0:" }, { job_no_zero, "zero left out",
    "zero 0 (the default):" } } do
  local okz, errz = pcall(case[1], { zero = case[1] == job and 0 or nil,
    zero_gather_copies = true })
  t.ok(not okz and tostring(errz):find("zero_gather_copies with " .. case[3], 1, true) ~= nil
    and tostring(errz):find("give zero = 1", 1, true) ~= nil,
    case[2] .. " is refused: " .. tostring(errz))
end

-- A layer kind it does not count is refused, naming the option.
local ok, err = pcall(job, { zero_gather_copies = true, tp = 8, ep = 8,
  model = { layers = 16, hidden = 2048, heads = 16, kv_heads = 16, head_dim = 128,
    ffn_hidden = 1024, ffn_gated = true, vocab = 50304, norm = "rms",
    moe = { experts = 64, top_k = 8, ffn_hidden = 1024 } } })
t.ok(not ok and tostring(err):find("zero_gather_copies", 1, true)
  and tostring(err):find("has MoE layers", 1, true),
  "a MoE model is refused: " .. tostring(err))

-- nanotron's ZeRO is stage 1 alone (helpers.py: ZeroDistributedOptimizer
-- for any zero_stage > 0): a job at zero 2 or 3 is refused, a usage error
-- naming the option and the stage.
for _, z in ipairs { 2, 3 } do
  local ok2, err2 = pcall(job, { zero_gather_copies = true, zero = z })
  t.ok(not ok2 and tostring(err2):find("zero_gather_copies with zero " .. z, 1, true) ~= nil,
    "zero " .. z .. " is refused: " .. tostring(err2))
end
-- A sweep over zero 1, 2 and 3 prices the copies at zero 1 alone
-- (engine/train.c post_of): every ZeRO-2/3 row's step is the same with
-- and without the flag (exact: the same arithmetic), every ZeRO-1 row's
-- longer (the 16-layer shape at DP 64: 64 x (16 x 6 + 2 + 1) x 7.1 us =
-- 0.045 s of loop against a gather of some 7 ms).
local function sweep(f)
  local by = {}
  for _, r in ipairs(gp.sweep { model = model(16, 2048, 8192), gpu = "h100-sxm", gpus = 64,
      seq = 4096, global_batch = 256, method = "pretrain", stack = "deepspeed", tp_max = 1,
      pp_max = 1, zero = { 1, 2, 3 }, recompute = "none", top = 1000,
      zero_gather_copies = f }.results) do
    by[r.zero .. " " .. r.micro_batch .. " " .. tostring(r.sp)] = r
  end
  return by
end
local plain, copies = sweep(nil), sweep(true)
local same, longer, rows = true, true, 0
for k, r in pairs(plain) do
  local c = copies[k]
  rows = rows + 1
  if r.zero >= 2 then same = same and c ~= nil and c.step_s == r.step_s
  else longer = longer and c ~= nil and c.step_s > r.step_s end
end
t.ok(rows >= 6 and same and longer,
  string.format("sweep (%d rows): the copies at ZeRO-1 alone", rows))

-- A sweep whose zero list has no stage 1 (or whose fsdp fixes 2 or 3)
-- searched no layout the copies are priced on: the flag changed nothing,
-- in silence.  Refused, naming the option and the list.
for _, o in ipairs { { zero = { 0 }, want = "the zero list (0) holds no stage 1" },
    { zero = { 2, 3 }, want = "the zero list (2, 3) holds no stage 1" },
    { fsdp = "full_shard", want = "fsdp's ZeRO list (3) holds no stage 1" } } do
  local oks, errs = pcall(gp.sweep, { model = model(16, 2048, 8192), gpu = "h100-sxm",
    gpus = 64, zero = o.zero, fsdp = o.fsdp, zero_gather_copies = true })
  t.ok(not oks and tostring(errs):find("zero_gather_copies", 1, true) ~= nil
    and tostring(errs):find(o.want, 1, true) ~= nil,
    "sweep: " .. o.want .. ": " .. tostring(errs))
end

-- The profile sets it on the diagram's ZeRO-1 cells only.
local cat = gp.catalog()
local rows = {}
for _, c in ipairs(validate.read("validation/cases.json")) do rows[c.id] = c end
local function has(p, s) return p.defaults:find(s, 1, true) ~= nil end
local z1 = validate.predict(rows["nanotron-bench-3.57b-64n-dp128-tp4-pp1-mbs2-z1"], cat)
local z0 = validate.predict(rows["nanotron-bench-8.86b-64n-dp128-tp4-pp1-mbs2-z0"], cat)
t.ok(has(z1, "zero_gather_copies=true (optim/zero.py") and not has(z0, "zero_gather_copies"),
  "stack profile nanotron: zero_gather_copies at ZeRO-1 only")
-- The 3.57B cell's predicted step is the loop's, as above (its job is
-- the one built here, with the profile's ZeRO-1 gradient reduction: no
-- DDP, one all-reduce after the backward -- and its op-by-op loss,
-- tests/lua/nanotron_profile.t): 1048576 tokens / 512 GPUs / the
-- prediction.
local case_job = job{ zero_gather_copies = true, overlap_grad_reduce = false,
  zero_reduce = "allreduce", unfused_loss = true }
t.ok(math.abs(1048576 / 512 / z1.predicted - case_job.step_s) < 1e-6,
  string.format("the case prices the step above (%.4f s)", 1048576 / 512 / z1.predicted))
