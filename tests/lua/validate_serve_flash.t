-- A MoE serving case's workload.flash (validation/SCHEMA.md; gp.infer's
-- flash, the option behind --no-flash).  The MoE serving model prices the
-- runtimes' fused attention (lua/gpuplan/serve.lua refuses flash = false
-- by name); a case that states flash false goes unpredicted with that
-- reason, where serve_case once dropped the field and priced the fused
-- kernel in silence.  Run with ./gpuplan run tests/lua/validate_serve_flash.t.
local t = require "tap"
local gp = require "gpuplan"
local predict = require "gpuplan.predict.infer"
local cat = gp.catalog()
t.plan(3)

local function case(flash)
  return { id = "moe-serve-flash", kind = "infer",
           model = { layers = 32, hidden = 4096, heads = 32, kv_heads = 8, ffn_hidden = 14336,
                     ffn_gated = true, vocab = 32000,
                     moe = { experts = 8, top_k = 2, expert_ffn_hidden = 14336 } },
           hardware = { gpu = "h100-sxm", gpus = 8 }, parallel = { tp = 8, ep = 8 },
           workload = { framework = "sglang", method = "infer", input_len = 1000, output_len = 100,
                        batch = 32, flash = flash },
           measured = { metric = "output_tokens_per_s_per_gpu", value = 1000 } }
end

local p = predict(case(nil), cat)
t.ok(p and p.value > 0, "unstated: the MoE serving model prices it")
local q = predict(case(true), cat)
t.ok(q and q.value == p.value, "flash true: the fused kernel it prices anyway, the same figure")
local r, why = predict(case(false), cat)
-- (SGLang has no unfused attention at all: the runtime's refusal,
-- infer.lua M.no_flash_path, now comes first; the MoE serving model's own
-- stays for a runtime that has one)
t.ok(r == nil and tostring(why):find("flash = false", 1, true)
       and (tostring(why):find("MoE serving model", 1, true)
            or tostring(why):find("runtime = sglang", 1, true)),
     "flash false: refused by name: " .. tostring(why))
