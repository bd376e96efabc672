-- Odd values of the options the last round added, from Lua: each refused
-- in gpuplan's words naming the key (not the engine binding's, not a Lua
-- error from inside gpuplan), or, for an empty scope list, taken as none.
-- Run with ./gpuplan run tests/lua/option_lists.t.
local t = require "tap"
local gp = require "gpuplan"


local moe = { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 16, ep = 8, stack = "megatron" }
local hf = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, stack = "hf", fsdp = "full_shard" }

-- A boolean where a count goes: before, the engine binding's "bad
-- argument #4 to 'gpuplan.core.train'" (options.check let every boolean
-- through for the readers; only lora_dropout, declared a switch, takes
-- one).
t.raises(function() gp.train(t.with(moe, { cuda_device_max_connections = true })) end,
  "train: cuda_device_max_connections must be a whole number 1..32 (got true)",
  "cuda_device_max_connections = true", true)
t.raises(function() gp.train(t.with(moe, { moe_dispatcher = "flex", moe_flex_sms = false })) end,
  "train: moe_flex_sms must be a whole number 1..1024 (got false)", "moe_flex_sms = false", true)
t.raises(function() gp.train(t.with(hf, { fsdp_version = true })) end,
  "train: fsdp_version must be a whole number 1..2 (got true)", "fsdp_version = true", true)

-- More SMs than the card has (H100 SXM: 132, the catalog's sms).
t.raises(function() gp.train(t.with(moe, { moe_dispatcher = "flex", moe_flex_sms = 200 })) end,
  "train: moe_flex_sms 200 is more SMs than h100-sxm has (132)", "moe_flex_sms over the card's",
  true)
t.ok(pcall(gp.train, t.with(moe, { moe_dispatcher = "flex", moe_flex_sms = 132 })),
  "moe_flex_sms = all 132: taken")

-- cuda_graph_scope lists.
t.raises(function() gp.train(t.with(moe, { cuda_graph_scope = { "attn", "attn" } })) end,
  "train: cuda_graph_scope names 'attn' twice", "a scope twice", true)
t.raises(function() gp.train(t.with(moe, { cuda_graph_scope = "attn,moe_router,attn" })) end,
  "train: cuda_graph_scope names 'attn' twice", "a scope twice, comma-joined", true)
t.raises(function() gp.train(t.with(moe, { cuda_graph_scope = { attn = true } })) end,
  "train: cuda_graph_scope must be a list of scope names (got a table with key 'attn')",
  "a set, not a list", true)
t.raises(function() gp.train(t.with(moe, { cuda_graph_scope = { "attn", nil, "moe_router" } })) end,
  "train: cuda_graph_scope[2] must be a scope name (got nil)",
  "a list with a hole (was table.concat's error)", true)
-- An empty list captures nothing, as Megatron-Bridge's cuda_graph_scope=[]:
-- the same step as none given (the same config, so exactly equal).
t.is(gp.train(t.with(moe, { cuda_graph_scope = {} })).step_s, gp.train(moe).step_s,
  "cuda_graph_scope = {}: no graphs")
t.raises(function() gp.train(t.with(moe, { cuda_graph_scope = "" })) end,
  "train: cuda_graph_scope: unknown scope ''", "an empty string names an empty scope", true)
-- recompute_modules shares the list reader.
t.raises(function() gp.train(t.with(moe, { recompute_modules = { "moe_act", "moe_act" } })) end,
  "recompute_modules names 'moe_act' twice", "a module twice", true)

-- rl's validation counts: the declared ranges whatever the value's type.
local rl = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 16, prompts = 64, group = 8,
             prompt_len = 512, response_len = 2048, zero = 3 }
t.raises(function() gp.rl(t.with(rl, { val_every = true, val_prompts = 100 })) end,
  "rl: val_every must be a whole number 1..1000000 (got true)", "val_every = true", true)
t.raises(function() gp.rl(t.with(rl, { val_every = 10, val_prompts = 0 / 0 })) end,
  "rl: val_prompts must be a whole number 1..10000000 (got NaN)", "val_prompts = NaN", true)
t.raises(function() gp.rl(t.with(rl, { val_every = 10 })) end,
  "rl: val_every and val_prompts come together", "val_every alone", true)
local ok, r = pcall(gp.rl, t.with(rl, { val_every = 10, val_prompts = 1 }))
t.ok(ok and r.step_s == r.step_s and r.step_s > 0, "one validation prompt: a finite step")

-- Every numeric option of train, rl and infer refuses a boolean in the
-- kind's words, naming the key -- no reader's "attempt to compare number
-- with boolean" (zero, nics, gpus_per_node, pack_tokens did), no binding's
-- "bad argument" (microbatches, logit_bytes, act_bytes did) -- but a
-- declared switch (lora_dropout = true: PEFT's dropout on).
local options = require "gpuplan.options"
local jobs = {
  train = { gp.train, moe },
  rl = { gp.rl, rl },
  infer = { gp.infer, { model = "deepseek-v3", gpu = "h800-sxm", gpus = 16, ep = 16,
                        weights = "fp8", input = 1000, output = 500 } },
}
for _, cmd in ipairs { "train", "rl", "infer" } do
  local fn, base = jobs[cmd][1], jobs[cmd][2]
  local bad = {}
  for _, d in ipairs(options.list) do
    if (d.type == "int" or d.type == "number") and not d.switch
       and (" " .. (d.commands or "") .. " " .. (d.lua or "") .. " "):find(" " .. cmd .. " ", 1, true) then
      for _, val in ipairs { true, false } do
        local ok, e = pcall(fn, t.with(base, { [d.name] = val }))
        local want = cmd .. ": " .. d.name .. " must be "
        -- (an option of another function of the command, gp.infer_plan's
        -- target, is that function's)
        if (ok or not tostring(e):find(want, 1, true))
           and not tostring(e):find("unknown option", 1, true) then
          bad[#bad + 1] = d.name .. "=" .. tostring(val) .. ": " .. (ok and "taken" or tostring(e))
        end
      end
    end
  end
  t.is(#bad, 0, cmd .. ": a boolean for any numeric option is refused naming it"
    .. (#bad > 0 and (" (" .. table.concat(bad, "; ") .. ")") or ""))
end
t.ok(pcall(gp.memory, { model = "llama3-8b", gpu = "h100-sxm", method = "lora", lora_dropout = true }),
  "lora_dropout = true, a declared switch: taken")
t.done_testing()
