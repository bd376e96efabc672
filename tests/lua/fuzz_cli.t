-- Fuzz target: the command line (gpuplan.cli and the commands' options).
-- Generated argument lists -- each command with catalog ids and a few of
-- its own options, given values at and past their ranges, garbage, NaN,
-- unknown options, --svg files -- run in this process through cli.main
-- with stdout and stderr captured.  Properties: the exit code is 0, 1 or
-- 2; every message is one line "gpuplan: ..." without a position inside
-- gpuplan or a traceback; an answer (exit 0) prints no nan or inf; an
-- --svg file is a whole SVG after exit 0 and no temporary is left behind;
-- no run passes an instruction budget (a hang).
local t = require "tap"
local fz = require "fuzz"
local cat = require("gpuplan").catalog()
local lfs = require "lfs"

local models = cat:ids("models")
local gpus = cat:ids("gpus")
local systems = cat:ids("systems")
local prices = cat:ids("prices")
local scratch = t.scratch()

-- Values by option type, and by option name where the values are names.
local ints = { "0", "1", "2", "3", "4", "8", "16", "64", "4096", "-1", "1e3", "x", "1.5",
               "16777216", "16777217", "2147483648", "9223372036854775808" }
local numbers = { "0", "0.1", "0.5", "0.95", "1", "1.25", "-1", "1e300", "1e-300", "nan", "inf", "x" }
local garbage = { "", "x", "-", "--", "bf16", "1", "1e300", "nan", ("q"):rep(200), "a\nb", "%s%d" }
local names = {
  method = { "pretrain", "full", "lora", "qlora", "grpo", "ppo", "infer", "sft" },
  recompute = { "none", "selective", "full", "auto", "some" },
  precision = { "bf16", "fp16", "fp8", "fp32", "fp12" },
  recipe = { "mixed-16", "megatron-18", "deepspeed-bf16", "fp32", "bf16", "fp8", "x" },
  stack = { "megatron", "deepspeed", "hf", "jax" },
  optimizer = { "adamw", "adam8bit", "sgd", "lion" },
  lora_targets = { "q,v", "q,k,v,o", "all", "mlp", "q,,v", "z" },
  weights = { "bf16", "fp8", "int8", "int4", "gptq", "awq", "nf4", "nf4-dq", "fp4", "4.85",
              "1e-300", "33", "gptq-g64", "awq-g32-fp32", "gptq-g0", "gptq-g99999999", "w3" },
  rollout_weights = { "bf16", "fp8", "int4", "x" },
  kv = { "bf16", "fp16", "fp8", "int8", "fp4", "fp3" },
  offload = { "optimizer", "params+optimizer", "layers", "none", "x" },
  partition = { "auto", "uniform", "parameters", "type:transformer", "type:transformer|embedding", "x" },
  runtime = { "graphs", "kernels", "eager", "trtllm", "vllm", "litgpt", "llama.cpp", "x" },
  memory = { "6GB", "80GiB", "0GB", "1e300GB", "-1GB", "x" },
  host_bw = { "60GB/s", "1e300TB/s", "0B/s", "x" },
  host_memory = { "32GB", "0GB", "2PB", "x" },
  price = { "2.49", "$2.49/h", "12CNY/h", "12XYZ/h", "$0/h", "0", "-1", "x", prices[1], prices[#prices] },
  op = { "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "send_recv", "x" },
  algo = { "ring", "tree", "nvls", "sharp", "hierarchical", "p2p", "pxn", "x" },
  min = { "8", "1", "0", "1MiB", "1PiB", "2PiB", "5000PB", "-1", "x" },
  max = { "8", "1MiB", "8GiB", "1PiB", "2PiB", "5000PB", "4611686018427387904", "x" },
  system = systems, systems = { "dgx-h100,dgx-a100", "x,y", "dgx-h100" },
  gpu = gpus, model = models, format = { "text", "markdown", "csv", "json", "xml" },
  id = { "my-model", "Bad Id", "" }, name = { "x" },
}

-- A few options of spec, each with a value of its type.
local function options(spec, argv)
  local keys = fz.keys(spec)
  for _ = 1, math.random(0, 4) do
    local k = fz.pick(keys)
    local ty = spec[k]
    local flag = "--" .. k:gsub("_", "-")
    if ty == "flag" then
      argv[#argv + 1] = math.random(4) == 1 and ("--no-" .. k:gsub("_", "-")) or flag
    elseif k == "svg" then
      argv[#argv + 1] = flag
      argv[#argv + 1] = math.random(5) == 1 and scratch.dir or (scratch.dir .. "/out.svg")
    else
      local pool = names[k] or (ty == "int" and ints) or (ty == "number" and numbers) or garbage
      -- Mostly values a user would give, so that many runs answer.
      if math.random(3) > 1 then
        pool = (names[k] and { names[k][1], names[k][2] or names[k][1] }) or
          (ty == "int" and { "1", "2", "4", "8" }) or (ty == "number" and { "0.1", "1", "1.25" }) or pool
      elseif math.random(8) == 1 then
        pool = garbage
      end
      argv[#argv + 1] = flag
      argv[#argv + 1] = fz.pick(pool)
    end
  end
  if math.random(10) == 1 then argv[#argv + 1] = "--" .. fz.pick { "bogus", "tp-size", "gpu" } end
end

local function spec_of(name) return require("gpuplan.cmd." .. name).options or {} end

local function generate()
  local c = fz.pick { "fit", "fit", "fit", "infer", "infer", "infer", "comm", "roofline",
                      "model", "catalog", "validate" }
  local argv = { c }
  if c == "fit" or c == "infer" then
    argv[#argv + 1] = math.random(12) == 1 and fz.pick(garbage) or fz.pick(models)
    if math.random(10) > 1 then argv[#argv + 1] = "--gpu"; argv[#argv + 1] = fz.pick(gpus) end
  elseif c == "comm" then
    argv[#argv + 1] = "--system"; argv[#argv + 1] = fz.pick(systems)
    if math.random(3) > 1 then argv[#argv + 1] = "--max"; argv[#argv + 1] = "1MiB" end
  elseif c == "roofline" then
    argv[#argv + 1] = "--gpu"; argv[#argv + 1] = fz.pick(gpus)
  elseif c == "model" then
    argv[#argv + 1] = fz.pick { "params", "import", "bogus" }
    argv[#argv + 1] = fz.pick { fz.pick(models), "tests/fixtures/hf/llama-3.1-8b.json",
                                "tests/fixtures/hf/deepseek-v3.json", "tests/fixtures/hf/bad-type.json",
                                "no/such.json" }
  elseif c == "catalog" then
    argv[#argv + 1] = fz.pick { "list", "show", "check" }
    argv[#argv + 1] = fz.pick { "gpus", "models", "systems", "prices", fz.pick(gpus), fz.pick(models),
                                "tests/fixtures/catalog/good", "nope" }
  else
    argv[#argv + 1] = fz.pick { "tests/fixtures/validation/mini.json",
                                "tests/fixtures/validation/fuzz_base.json",
                                "tests/fixtures/validation/bad_case.json", "no/such.json" }
  end
  options(spec_of(c), argv)
  return argv
end

local function run(argv) return fz.cli_run(argv, scratch) end

local n = fz.start("cli", 500)
local answered = 0
for _ = 1, n do
  local argv = generate()
  local shown = table.concat(argv, " ")
  os.remove(scratch.dir .. "/out.svg")
  local code, so, se = run(argv)
  -- A name the command line gave (--id nan) is printed as given.
  local named = false
  for i = 1, #argv - 1 do
    local v = argv[i + 1]:lower()
    if (argv[i] == "--id" or argv[i] == "--name") and (v:find("nan") or v:find("inf")) then named = true end
  end
  fz.cli_check(shown, code, so, se, named)
  if code == 0 or code == 1 or code == 2 then
    if code == 0 then answered = answered + 1 end
    local svg = scratch.dir .. "/out.svg"
    local mode = lfs.symlinkattributes(svg, "mode")
    if mode then
      local fh = io.open(svg, "rb")
      local text = fh and fh:read("a") or ""
      if fh then fh:close() end
      if mode ~= "file" or not text:find("</svg>\n$") then fz.finding("a partial SVG", shown) end
    end
    for name in lfs.dir(scratch.dir) do
      if name:find("%.tmp$") then fz.finding("a temporary left behind: " .. name, shown) os.remove(scratch.dir .. "/" .. name) end
    end
  end
end
t.diag(string.format("%d of %d command lines answered (exit 0)", answered, n))
scratch.remove()
fz.finish()
t.done_testing()
