-- A user scripting gpuplan in Lua (round 9): the newest keys (itl_max,
-- ttft_max, max_batch, kv_free_fraction, prefill_tokens,
-- fused_linear_ce) as a script passes them, and the same inputs through
-- the command line.  Each case below was answered wrongly: a bound taken
-- where the command line refuses it, a note that names the wrong limit, a
-- TTFT of one chunk for a prompt of many, a job's key refused as unknown
-- by its step, a default stack named as if given, a refusal that named no
-- key, a script's flag read unlike the command's.  Section 4 holds the
-- command line and Lua to the same numbers on the same inputs.  Run with
-- ./gpuplan run tests/lua/luawalk8.t.
local t = require "tap"
local gp = require "gpuplan"
local cjson = require "cjson"

local check = t.raises_here
local GP = arg[-1] or "./gpuplan"

-- 1. itl_max and ttft_max alone on one model's replicas.  The command
-- line refuses them ("--itl-max needs --target or the MoE serving
-- options"); gp.infer took either as a request for the MoE serving model
-- and priced llama3-8b with it: TTFT 410 ms (a 16384-token prefill step)
-- where the replica's own prefill of one prompt is 53 ms.  Refused now
-- as a usage error naming the key and where it applies.
for _, k in ipairs { "itl_max", "ttft_max" } do
  local o = { model = "llama3-8b", gpu = "h100-sxm" }
  o[k] = "50ms"
  check(function() gp.infer(o) end, "infer: " .. k .. " needs the MoE serving options (ep, "
    .. "dp_attention, disagg ...) or a target: gp.infer_plan{target = ..., " .. k .. " = ...}",
    "infer: " .. k .. " alone is refused, naming it")
  local ok, e = pcall(gp.infer, o)
  t.ok(not ok and require("gpuplan.args").is_usage(e), "infer: " .. k .. " alone is a usage error (exit 2)")
  -- a list of cards is each card's gp.infer: refused the same way
  o.gpu = { "h100-sxm", "h200-sxm" }
  check(function() gp.infer(o) end, "infer: " .. k .. " needs the MoE serving options",
    "infer: " .. k .. " alone over a list of cards too")
end
do -- still taken where they apply: the MoE serving model and a target
  local r = gp.infer { model = "deepseek-v3", gpu = "h200-sxm", gpus = 16, ep = 16,
                       dp_attention = true, itl_max = "100ms", ttft_max = "5s" }
  t.ok(r.fits and r.itl_s <= 0.1 and r.ttft_s <= 5, "infer: the bounds with the MoE serving options")
  local p = gp.infer_plan { model = "llama3-8b", gpu = "h100-sxm", target = 1e4, itl_max = 0.02,
                            ttft_max = "100ms" }
  t.ok(p.itl_s <= 0.02 and p.ttft_s <= 0.1, "infer_plan: both bounds on a dense model")
end

-- 2. The note a capped concurrency prints named the KV where max_batch
-- held the batch: max_batch 8 with concurrency 16 read "8 a replica, what
-- its KV holds" of a KV that holds 205 sequences.
do
  local function note(r)
    for _, d in ipairs(r.defaults) do if d:find("^concurrency=") then return d end end
  end
  local r = gp.infer { model = "llama3-8b", gpu = "h100-sxm", max_batch = 8, concurrency = 16 }
  t.is(r.batch, 8, "max_batch 8 holds the batch")
  t.ok(r.kv_seqs > 8, "the KV holds more than max_batch")
  t.is(note(r), string.format("concurrency=16: 8 run at once (8 a replica, max_batch 8, the "
    .. "engine's sequences a step; its KV holds %d), the other 8 wait", r.kv_seqs),
    "concurrency past max_batch: the note names max_batch")
  local k = gp.infer { model = "llama3-8b", gpu = "h100-sxm", concurrency = 500 }
  t.like(note(k), "^concurrency=500: %d+ run at once %(%d+ a replica, what its KV holds%)",
    "concurrency past the KV: the note names the KV")
end

-- 3. The MoE serving model's TTFT is its prefill steps: a prompt longer
-- than prefill_tokens takes one step a chunk before its first token.  It
-- read one step: prefill_tokens 1 on a 2048-token prompt gave 25.6 ms.
-- Expected: ceil(new prompt tokens / prefill_tokens) x the prefill step
-- (r.prefill.time), plus the KV transfer disaggregated.  Tolerance 1e-12:
-- the same product the engine forms.  Colocated, the KV's batch decodes in
-- flight: ttft_s is the loaded TTFT (serve_plan.c coloc_loaded) and one
-- prompt's steps are ttft_one_s; SGLang's prefill steps of their own are
-- the loaded TTFT's steps too (wait + ttft_steps x the prefill step).
do
  local base = { model = "deepseek-v3", gpu = "h200-sxm", gpus = 16, ep = 16, dp_attention = true }
  local function run(extra)
    local o = {}
    for k, v in pairs(base) do o[k] = v end
    for k, v in pairs(extra) do o[k] = v end
    return gp.infer(o)
  end
  -- 2048 / 256 = 8 chunks
  local r = run { prefill_tokens = 256 }
  t.near(r.ttft_one_s, 8 * r.prefill.time, 1e-12, "ttft: 2048 / 256 = 8 prefill steps")
  t.near(r.ttft_s, r.ttft_wait_s + 8 * r.prefill.time, 1e-12,
    "under load: the step in flight, then the 8 prefill steps")
  -- 2000 / 256 = 7.8: 8 steps, the last a part chunk priced as a whole
  r = run { prefill_tokens = 256, input = 2000 }
  t.near(r.ttft_one_s, 8 * r.prefill.time, 1e-12, "ttft: ceil(2000 / 256) = 8 prefill steps")
  -- prefix_hit 0.5: 1024 new tokens, 4 chunks of 256
  r = run { prefill_tokens = 256, prefix_hit = 0.5 }
  t.near(r.ttft_one_s, 4 * r.prefill.time, 1e-12, "ttft: the prefix cache's tokens take no step")
  -- a chunk that holds the prompt: one step, as before
  r = run { prefill_tokens = 4096 }
  t.near(r.ttft_one_s, r.prefill.time, 1e-12, "ttft: a prompt within the chunk is one step")
  -- disaggregated: the prefill pool's steps and the KV transfer
  r = run { disagg = true, gpus = 32, prefill_tokens = 512 }
  t.near(r.ttft_s, 4 * r.prefill.time + r.kv_transfer_s, 1e-12,
    "ttft disaggregated: 2048 / 512 = 4 steps plus the KV transfer")
  -- the bound reads the same TTFT: between one step and eight it refuses
  local one = run { prefill_tokens = 256 }
  r = run { prefill_tokens = 256, ttft_max = 2 * one.prefill.time }
  t.ok(not r.fits, "ttft_max between one step and the prompt's eight: refused")
  t.like(r.why, "prefill steps", "the refusal says steps", true)
end

-- 5. An RL job's step given one of the job's options: job:step{max_batch
-- = 64} (gp.rl_job's rollout engine's sequences a step) read "unknown
-- field 'max_batch' (did you mean 'batch'?)", the actor's micro-batch,
-- where a training job's step{stack = ...} says the key is the job's.
do
  local job = gp.rl_job { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 16 }
  for _, k in ipairs { "max_batch", "prompts", "response_len" } do
    check(function() job:step { [k] = 64 } end, "step: '" .. k .. "' is the job's, not a step's: "
      .. "give it where the job is made", "rl_job step: " .. k .. " is the job's")
  end
  check(function() job:step { bogus = 1 } end, "step: unknown option 'bogus'",
    "rl_job step: a key no one takes is unknown")
  local tj = gp.train_job { model = "llama3-8b", gpu = "h100-sxm", gpus = 8 }
  check(function() tj:step { fused_linear_ce = true } end, "step: 'fused_linear_ce' is the job's",
    "train_job step: fused_linear_ce is the job's")
  check(function() tj:step { max_batch = 8 } end, "step: unknown option 'max_batch'",
    "train_job step: max_batch, no option of gp.train, is unknown")
end

-- 6. fused_linear_ce on the default stack of method pretrain (megatron):
-- the refusal said "stack = megatron runs ..." of a stack the script
-- never named (gp.sweep's default method is pretrain).  It says the
-- stack is the default; a stack given is said as before.
do
  check(function() gp.sweep { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, tokens = 1e9,
                              fused_linear_ce = true } end,
    "the default stack of method = pretrain, megatron, runs Megatron-Core's own",
    "sweep: fused_linear_ce on the default stack says it is the default")
  check(function() gp.train { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, stack = "megatron",
                              method = "full", fused_linear_ce = true } end,
    "fused_linear_ce is Liger-Kernel's, which patches transformers' models; stack = megatron runs",
    "train: a stack given is named as given")
end

-- 7. gp.comm's bytes as a string the parser does not read: "bad bytes
-- '1kg'" named neither the function nor the key, where up_bw's and
-- gp.infer's memory's refusals name both.
check(function() gp.comm { gpu = "h100-sxm", gpus = 8, bytes = "1kg" } end,
  "comm: bytes: bad bytes '1kg': unknown unit 'kg'", "comm: a bad bytes string names comm and bytes")
t.is(gp.comm { gpu = "h100-sxm", gpus = 8, bytes = "1GiB" }.time,
  gp.comm { gpu = "h100-sxm", gpus = 8, bytes = 2 ^ 30 }.time, "comm: '1GiB' is 2^30 B")

-- 8. scripts/moe_serving.lua's --itl-max, read as gpuplan infer reads it:
-- "20ms" was refused ("expects an integer") where gpuplan infer --itl-max
-- takes it, and 1e9 (past an hour) ran, each row "no layout: infer_plan:
-- itl_max must be ... (got 1000000.0)", exit 0.  Now 20ms and 0.02s give
-- the rows 20 gives; past an hour is refused naming the flag, exit 1.
do
  local function script(a)
    local fh = assert(io.popen(GP .. " run scripts/moe_serving.lua --gpu h200-sxm --format csv "
      .. a .. " 2>&1; echo rc=$?"))
    local out = fh:read("a")
    fh:close()
    return out
  end
  local ms = script("--itl-max 20")
  t.like(ms, "rc=0", "moe_serving --itl-max 20 runs")
  t.is(script("--itl-max 20ms"), ms, "moe_serving --itl-max 20ms: the rows of 20")
  t.is(script("--itl-max 0.02s"), ms, "moe_serving --itl-max 0.02s: the rows of 20")
  local big = script("--itl-max 1e9")
  t.like(big, "moe_serving: --itl-max must be a number of milliseconds in (0, 3600000] (got 1e9)",
    "moe_serving --itl-max past an hour is refused, naming the flag", true)
  t.like(big, "rc=1\n$", "and exits 1 (out of range)")
  t.like(script("--itl-max abc"), "expects a number of milliseconds or a time with its unit, "
    .. "got 'abc'", "moe_serving --itl-max abc: what it expects", true)
end

-- 4. The command line and Lua on the same inputs: the same numbers.
-- Each pair is one job; the CLI's --format json record against the Lua
-- table, field by field, to 1e-12 relative: one code path, but the
-- command's --target row is formed apart and lands an ulp away
-- (14938.591982645226 against 14938.591982645225 tokens/s).
local function cli(args)
  local fh = assert(io.popen(GP .. " " .. args .. " --format json 2>&1"))
  local out = fh:read("a")
  fh:close()
  -- one record a line (infer, train, fit), or an array (infer --target)
  local ok, v = pcall(cjson.decode, out)
  if not ok then ok, v = pcall(cjson.decode, out:match("^[^\n]*")) end
  if not ok or type(v) ~= "table" then return nil, out end
  return v[1] or v
end
local pairs_ = {
  { "infer llama3-8b --gpu h100-sxm --max-batch 64",
    { model = "llama3-8b", gpu = "h100-sxm", max_batch = 64 }, "infer",
    { "tokens_per_s", "itl_s", "ttft_s", "batch" } },
  { "infer llama3-8b --gpu h100-sxm --kv-free-fraction 0.5",
    { model = "llama3-8b", gpu = "h100-sxm", kv_free_fraction = 0.5 }, "infer",
    { "tokens_per_s", "itl_s", "batch", "max_batch_kv" } },
  { "infer llama3-70b --gpu h100-sxm --tp 4 --runtime trtllm",
    { model = "llama3-70b", gpu = "h100-sxm", tp = 4, runtime = "trtllm" }, "infer",
    { "tokens_per_s", "itl_s", "ttft_s", "batch" } },
  { "infer deepseek-v3 --gpu h200-sxm --gpus 16 --ep 16 --dp-attention --prefill-tokens 1024",
    { model = "deepseek-v3", gpu = "h200-sxm", gpus = 16, ep = 16, dp_attention = true,
      prefill_tokens = 1024 }, "infer", { "tokens_per_s", "itl_s", "ttft_s", "batch" } },
  { "infer deepseek-v3 --gpu h200-sxm --gpus 16 --ep 16 --dp-attention --itl-max 100 --ttft-max 5s",
    { model = "deepseek-v3", gpu = "h200-sxm", gpus = 16, ep = 16, dp_attention = true,
      itl_max = 0.1, ttft_max = "5000ms" }, "infer", { "tokens_per_s", "itl_s", "ttft_s", "batch" } },
  { "infer deepseek-v3 --gpu h200-sxm --gpus 16 --ep 16 --dp-attention --max-batch 64",
    { model = "deepseek-v3", gpu = "h200-sxm", gpus = 16, ep = 16, dp_attention = true,
      max_batch = 64 }, "infer", { "tokens_per_s", "itl_s", "ttft_s", "batch" } },
  { "infer deepseek-v3 --gpu h200-sxm --gpus 16 --ep 16 --dp-attention --kv-free-fraction 0.8",
    { model = "deepseek-v3", gpu = "h200-sxm", gpus = 16, ep = 16, dp_attention = true,
      kv_free_fraction = 0.8 }, "infer", { "tokens_per_s", "itl_s", "ttft_s", "batch" } },
  { "infer llama3-8b --gpu h100-sxm --target 10000 --ttft-max 50",
    { model = "llama3-8b", gpu = "h100-sxm", target = 1e4, ttft_max = "50ms" }, "infer_plan",
    { "gpus", "tokens_per_s", "itl_s", "ttft_s" } },
  { "infer llama3-8b --gpu h100-sxm --target 10000 --itl-max 20 --max-batch 16",
    { model = "llama3-8b", gpu = "h100-sxm", target = 1e4, itl_max = 0.02, max_batch = 16 },
    "infer_plan", { "gpus", "tokens_per_s", "itl_s", "ttft_s" } },
  { "train llama3-8b --gpu h100-sxm --gpus 8 --zero 3 --fused-linear-ce",
    { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, zero = 3, fused_linear_ce = true }, "train",
    { "step_s", "tokens_per_s", "mfu" } },
  { "fit llama3-8b --gpu h100-sxm --gpus 8 --zero 3 --fused-linear-ce",
    { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, zero = 3, fused_linear_ce = true }, "memory",
    { "total", "short_by" } },
}
for _, p in ipairs(pairs_) do
  local c, out = cli(p[1])
  local l = gp[p[3]](p[2])
  if not c then
    t.ok(false, "cli: " .. p[1])
    t.diag(out)
  else
    local bad = {}
    for _, f in ipairs(p[4]) do
      local same = c[f] == l[f] or (type(c[f]) == "number" and type(l[f]) == "number"
        and math.abs(c[f] - l[f]) <= 1e-12 * math.abs(l[f]))
      if c[f] == nil or not same then
        bad[#bad + 1] = string.format("%s: cli %s lua %s", f, tostring(c[f]), tostring(l[f]))
      end
    end
    t.is(table.concat(bad, "; "), "", "cli and gp." .. p[3] .. " agree: " .. p[1])
  end
end

t.done_testing()
