-- flash = false (--no-flash) prices every attention step unfused (engine
-- model_ops.c op_attn).  Runtimes whose source has no such path refuse it
-- by name (lua/gpuplan/infer.lua M.no_flash_path): gp.infer at the
-- script's line, a case file's workload.flash with the reason, the CLI
-- with its flag (tests/cli/no_flash_runtime.t).  Those with one keep it.
-- Run with ./gpuplan run tests/lua/no_flash_runtime.t.
local t = require "tap"
local gp = require "gpuplan"
local predict = require "gpuplan.predict.infer"
local cat = gp.catalog()

local refused = { "vllm", "sglang", "trtllm", "nim-http", "litgpt", "gpt-fast", "autoawq" }
local kept = { "graphs", "kernels", "eager", "eager-pytorch", "llama.cpp", "exllamav2" }
t.plan(2 * #refused + 2 * #kept + 5)

local function job(r, flash, tp)
  return { model = "llama3-8b", gpu = "h100-sxm", runtime = r, flash = flash, tp = tp,
           weights = r == "autoawq" and "awq" or nil }
end

for _, r in ipairs(refused) do
  t.raises_here(function() gp.infer(job(r, false)) end,
    "infer: flash = false with runtime = " .. r .. ": ", r .. ": flash = false refused by name")
  local ok = pcall(gp.infer, job(r, true))
  t.ok(ok, r .. ": flash = true still priced")
end

-- The kept runtimes price an unfused prompt above the fused one: the
-- scores' 4 transfers (model_ops.c op_attn) add to the step's bytes, so
-- the first token (batch 1, 2048 prompt tokens, 32 heads) cannot come sooner.
local function prefill(r)
  return function(flash)
    local j = job(r, flash)
    j.batch = 1
    return gp.infer(j).ttft_s
  end
end
for _, r in ipairs(kept) do
  local ok, res = pcall(gp.infer, job(r, false))
  t.ok(ok, r .. ": flash = false priced" .. (ok and "" or (": " .. tostring(res))))
  local okf, fused = pcall(prefill(r), true)
  local oku, unfused = pcall(prefill(r), false)
  t.ok(okf and oku and type(fused) == "number" and unfused > fused,
       r .. ": the unfused prompt is slower: " .. tostring(unfused) .. " > " .. tostring(fused))
end

-- ExLlamaV2 runs tensor parallelism on flash-attn alone.
t.raises_here(function() gp.infer(job("exllamav2", false, 2)) end,
  "ExLlamaV2's tensor parallelism requires flash-attn", "exllamav2 tp 2: refused")
t.ok(pcall(gp.infer, job("exllamav2", true, 2)), "exllamav2 tp 2 with flash: priced")

-- A case file's workload.flash false under such a framework goes
-- unpredicted with the reason; under llama.cpp it is priced.
local function case(fw, flash)
  return { id = "no-flash-" .. fw, kind = "infer",
           model = { layers = 32, hidden = 4096, heads = 32, kv_heads = 8, ffn_hidden = 14336,
                     ffn_gated = true, vocab = 128256 },
           hardware = { gpu = "h100-sxm", gpus = 1 }, parallel = { tp = 1 },
           workload = { framework = fw, method = "infer", input_len = 1000, output_len = 100,
                        batch = 8, flash = flash },
           measured = { metric = "output_tokens_per_s", value = 1000 } }
end
local p, why = predict(case("vllm", false), cat)
t.ok(p == nil and tostring(why):find("flash = false with runtime = vllm", 1, true),
     "case: vllm with flash false unpredicted by name: " .. tostring(why))
local q = predict(case("vllm", true), cat)
t.ok(q and q.value > 0, "case: vllm with flash true predicted")
local l = predict(case("llama.cpp", false), cat)
t.ok(l and l.value > 0, "case: llama.cpp with flash false predicted")
