-- Fuzz target: `gpuplan plan`'s options.  Generated command lines -- a
-- model, cards (repeated, unknown, empty), GPU counts up to 2^24, every
-- --*-max at and past the node, the layers and 10^6, --top, --shard,
-- --tokens, --deadline, --budget, --policy and a few job options at and
-- past their ranges -- run in this process through cli.main.  Properties:
-- those of every command line (tests/lua/fuzz.lua cli_check: exit 0, 1 or
-- 2, one clean "gpuplan: ..." line, no nan or inf in an answer); an answer
-- in seconds, whatever the bounds (the grid is clamped before it is
-- enumerated); a JSON answer is JSON lines that `gpuplan merge` takes back
-- (one shard of one: the plan's own best layouts).
local t = require "tap"
local fz = require "fuzz"
local cjson = require "cjson"

local scratch = t.scratch()
local models = { "llama3-8b", "llama3-8b", "mixtral-8x7b", "llama2-7b", "no-such-model", "" }
local cards = { "h100-sxm", "b200", "a100-sxm-80gb", "a10", "h100-sxm,b200", "h100-sxm,h100-sxm",
                "h100-sxm,b200,h100-sxm", "", ",", "nosuch", "h100-sxm,,b200", " " }
local counts = { "8", "8", "8,16", "1..64", "16..128", "64", "1", "0", "-8", "1..16777216",
                 "16777217", "8,x", "1..2", "2..1", "1e6", "" }
local bounds = { "1", "2", "4", "8", "16", "64", "1000000", "0", "-1", "16777216", "2147483648",
                 "x" }
local values = {
  top = { "1", "2", "5", "0", "-1", "100000", "100001", "x" },
  shard = { "1/1", "1/2", "2/2", "3/2", "0/2", "1/65536", "1/65537", "1/0", "x", "1/-1" },
  tokens = { "1e10", "2e12", "1e15", "1e16", "1e300", "0", "-5", "nan", "x" },
  deadline = { "30d", "12h", "1s", "0d", "-1d", "1e300d", "x" },
  budget = { "$50k", "100kCNY", "$0", "$1e300", "5XYZ", "x" },
  policy = { "fastest", "cheapest", "fewest-gpus", "best-per-dollar", "x" },
  zero = { "1", "0,1", "0,1,2,3", "4", "-1", "x", "" },
  micro_batch = { "1", "1,2,4", "0", "3", "1e6", "x" },
  recompute = { "none", "none,full", "selective", "some", "" },
  seq = { "2048", "4096", "1", "0", "16777217", "x" },
  global_batch = { "512", "64", "1", "0", "3", "1e9", "x" },
  nics = { "0", "1", "8", "-1" },
  price = { "2", "$2.49/h", "0", "-1", "x" },
  method = { "pretrain", "full", "lora", "qlora", "grpo", "infer" },
  format = { "json", "text", "csv", "markdown", "html", "xml" },
}
local value_keys = fz.keys(values)

-- Mostly one of the first `valid` values (what a user gives, so that most
-- runs search), else any.
local function pick(list, valid)
  if math.random(4) > 1 then return list[math.random(math.min(valid or 2, #list))] end
  return fz.pick(list)
end

local function generate()
  local argv = { "plan" }
  if math.random(15) > 1 then argv[#argv + 1] = pick(models, 4) end
  if math.random(12) > 1 then
    argv[#argv + 1] = "--gpu"
    -- many repeats of one id now and then (a list with no bound was 314 s)
    argv[#argv + 1] = math.random(15) == 1 and ("h100-sxm,"):rep(3000) .. "b200" or pick(cards, 7)
  end
  if math.random(4) > 1 then argv[#argv + 1] = "--gpus"; argv[#argv + 1] = pick(counts, 7) end
  for _, d in ipairs { "tp", "pp", "cp", "ep", "vpp" } do
    if math.random(3) == 1 then
      argv[#argv + 1] = "--" .. d .. "-max"
      argv[#argv + 1] = pick(bounds, 7)
    end
  end
  for _ = 1, math.random(0, 3) do
    local k = fz.pick(value_keys)
    argv[#argv + 1] = "--" .. k:gsub("_", "-")
    argv[#argv + 1] = pick(values[k], 2)
  end
  if math.random(20) == 1 then argv[#argv + 1] = fz.pick { "--bogus", "--tp", "extra" } end
  return argv
end

-- One shard line set back through merge: the plan's own output.
local function merges(so, shown)
  local path = scratch.put("shard.jsonl", so)
  local code, mo, me = fz.cli_run({ "merge", path, "--format", "json" }, scratch)
  if code ~= 0 then
    fz.finding("merge refuses the plan's own JSON: " .. me, shown)
  elseif mo:match("\n(.*)") ~= so:match("\n(.*)") then
    fz.finding("merge of one whole plan changes its results", shown)
  end
end

local n = fz.start("plan", 40)
local answered, slowest = 0, 0
for _ = 1, n do
  local argv = generate()
  local shown = table.concat(argv, " ")
  if #shown > 300 then shown = shown:sub(1, 120) .. "...(" .. #shown .. " bytes)" end
  local t0 = os.clock()
  local code, so, se = fz.cli_run(argv, scratch)
  local dt = os.clock() - t0
  slowest = math.max(slowest, dt)
  -- Seconds of CPU, not minutes: the slowest generated search takes well
  -- under one on a quiet host; 5 leaves room for a loaded one.
  if dt > 5 then fz.finding(string.format("took %.1f s of CPU", dt), shown) end
  fz.cli_check(shown, code, so, se)
  if code == 0 then
    answered = answered + 1
    local json = false   -- the last --format given is the one in force
    for i = 1, #argv - 1 do if argv[i] == "--format" then json = argv[i + 1] == "json" end end
    if json then
      for line in so:gmatch("[^\n]+") do
        if not pcall(cjson.decode, line) then fz.finding("a JSON line that is not JSON", shown) break end
      end
      local sharded = shown:find("--shard", 1, true) and not shown:find("--shard 1/1", 1, true)
      if not sharded then merges(so, shown) end
    end
  end
end
t.diag(string.format("%d of %d plans answered (exit 0); the slowest took %.2f s of CPU", answered,
                     n, slowest))
scratch.remove()
fz.finish()
t.done_testing()
