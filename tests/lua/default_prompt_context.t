-- A model's points on the roofline where no prompt is given
-- (lua/gpuplan/roofline.lua model_ops): gp.infer's default 2048-token
-- prompt, cut to the model's context less the output where it does not fit.
-- A 2048-token model (GPT-3, BLOOM, the Megatron-GPT family) was refused,
-- "input 2048 + output 256 tokens exceed ...'s context of 2048 tokens",
-- and `gpuplan roofline --model` said "output 1", an output that command
-- has no option for.
-- Run with ./gpuplan run tests/lua/default_prompt_context.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(9)

-- megatron-gpt-1.7b: max_seq 2048; gp.infer's default output 256, so the
-- prompt is 2048 - 256 = 1792 tokens; the command line's output 1 leaves
-- 2047.  Exact: integers.
local ok, r = pcall(gp.roofline, { gpu = "h100-sxm", model = "megatron-gpt-1.7b" })
t.ok(ok, "a 2048-token model's roofline without an input: answered (" .. tostring(not ok and r or "") .. ")")
t.is(ok and r.infer.input, 1792, "... its prompt 2048 - 256 = 1792 tokens")
t.ok(ok and #r.ops > 0, "... and its operators placed")
t.is(gp.roofline { gpu = "h100-sxm", model = "megatron-gpt-1.7b", infer = { output = 1 } }.infer.input,
  2047, "output 1 (the command line's): 2047")
-- A model whose context holds the default keeps it; a prompt the user
-- gives is the user's, refused past the context as gp.infer refuses it.
t.is(gp.roofline { gpu = "h100-sxm", model = "llama3.1-8b" }.infer.input, 2048,
  "llama3.1-8b (131072 tokens): the default 2048")
t.raises(function() gp.roofline { gpu = "h100-sxm", model = "megatron-gpt-1.7b", infer = { input = 2048 } } end,
  "infer: input 2048 + output 256 tokens exceed megatron-gpt-1.7b's context of 2048 tokens (max_seq)",
  "a given prompt past the context is still refused", true)

-- gp.infer's own default prompt (lua/gpuplan/infer.lua): the same cut, said
-- among the defaults.  megatron-gpt-1.7b, default output 256: 1792; output
-- 1000: 2048 - 1000 = 1048.  Exact: integers.
local ok2, i = pcall(gp.infer, { model = "megatron-gpt-1.7b", gpu = "h100-sxm" })
t.is(ok2 and i.input, 1792, "gp.infer on a 2048-token model without an input: a 1792-token prompt")
local said = false
for _, d in ipairs(ok2 and i.defaults or {}) do
  said = said or d == "input=1792 (the model's context, 2048, less the output)"
end
t.ok(said, "... said among the defaults")
t.is(gp.infer { model = "megatron-gpt-1.7b", gpu = "h100-sxm", output = 1000 }.input, 1048,
  "output 1000: 1048")
