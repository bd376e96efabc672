-- output_max (gp.infer; gpuplan.options' declaration with its source;
-- engine/infer_run.c infer_output_quantiles): the requests' own max_tokens
-- ends every answer that reaches it, so a burst whose answers otherwise
-- stop at EOS (output_dist exp) has none longer, the exponential's tail
-- past it landing on it and the mean kept at --output.
-- Run with ./gpuplan run tests/lua/output_max.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(12)

-- AccelMark Suite A's offline batch on one H100: 100 prompts sent at once,
-- 256 tokens in, answers of mean 347 tokens, max_tokens 512 (vLLM).
local job = { model = "llama3-8b", gpu = "h100-sxm", runtime = "vllm", input = 256,
              output = 347, requests = 100 }
local mean = gp.infer(job)
local exp = gp.infer(t.with(job, { output_dist = "exp" }))
local cap = gp.infer(t.with(job, { output_dist = "exp", output_max = 512 }))

t.ok(t.said(cap, "output_dist=exp: outputs exponential around 347 tokens, none past 512 %(the "
  .. "requests' max_tokens"), "the cap is listed with the prediction: none past 512")

-- Every request of the mean burst ends at its 347th token; the capped one
-- keeps decoding until its longest, 512 tokens (an exponential of mean 347
-- clipped at 512 puts e^(-512/theta) of the requests on the cap, theta ~612
-- from 347 = theta (1 - e^(-512/theta)): 43% of them), its batch thinning
-- over the last steps.  The same tokens are generated either way, so the
-- capped run is slower, by at most the steps' ratio 512 / 347 = 1.476 (the
-- thinned steps cost no more than the full ones; the prefill is the same).
local r = mean.tokens_per_s / cap.tokens_per_s
t.ok(r > 1.0 and r < 1.476, string.format(
  "capped at 512: the burst takes 1-1.476 x the mean's time (%.3f)", r))

-- Uncapped, the exponential's tail runs to the model's context less the
-- prompt (8192 - 256 = 7936 tokens): the longest answers are far longer
-- than 512, so that burst is slower still.
t.ok(exp.tokens_per_s < cap.tokens_per_s, string.format(
  "the uncapped exponential burst is slower (%.0f < %.0f tokens/s)", exp.tokens_per_s,
  cap.tokens_per_s))

-- A max_tokens at or past that limit changes nothing: the context binds.
t.is(gp.infer(t.with(job, { output_dist = "exp", output_max = 8192 })).tokens_per_s,
  exp.tokens_per_s, "output_max past the context's limit: the exp burst unchanged")

-- The steady state turns its batch over at the mean: one request at a time
-- (concurrency 1), each a prefill and its decodes, linear in its length,
-- the capped spread's run is the mean's (infer_burst prices the mean at B 1).
local one = t.with(job, { concurrency = 1, requests = 10 })
t.is(gp.infer(t.with(one, { output_dist = "exp", output_max = 512 })).tokens_per_s,
  gp.infer(one).tokens_per_s, "one at a time: the capped run is the mean's")

-- A cap equal to the mean (dstack's one-prompt vLLM rows: 'max_tokens' 150,
-- 150 tokens generated): no answer is longer than the cap and their mean
-- is the cap, so every answer is the cap -- the mean burst, every request
-- at --output, exactly (the same priced run, so no tolerance).
local at = t.with(job, { output = 512 })
local full = gp.infer(t.with(at, { output_dist = "exp", output_max = 512 }))
t.is(full.tokens_per_s, gp.infer(at).tokens_per_s,
  "output_max at the mean: every answer ran to the cap, the mean burst's rate")
t.ok(t.said(full, "output_max 512 is the mean output: every answer ran to the requests' "
  .. "max_tokens"), "the fixed outputs are listed with the prediction")

-- Bad input: clear errors naming the argument.
t.raises(function() gp.infer(t.with(job, { output_max = 512 })) end,
  "output_max 512 caps the outputs of a spread burst: give output_dist exp or sharegpt",
  "output_max without a spread names output_dist", true)
-- the Lua surface names the Lua key with its value (it read "runs to
-- --output", the command line's flag), and a whole float (a case file's
-- 512, which lua-cjson decodes as 512.0) is said as the integer
t.raises(function() gp.infer(t.with(job, { output_max = 512.0 })) end,
  "output_max 512 caps the outputs of a spread burst: give output_dist exp or sharegpt "
  .. "(every request of a mean burst runs to output 347 tokens)",
  "... the mean burst's output named as the key output, 347 its value", true)
t.raises(function() gp.infer(t.with(job, { output_dist = "uniform", output_max = 512 })) end,
  "output_max 512 caps the outputs of a spread burst", "uniform outputs have their own end", true)
t.raises(function() gp.infer(t.with(job, { output_dist = "exp", output_max = 300 })) end,
  "outputs of mean 347 cannot spread below its limit of 300 tokens (the requests' max_tokens",
  "a cap under the mean is refused", true)
-- output_max is the output's own cap: no "less the input" (the context's
-- limit's wording, which said "output_max, less the input 256")
local okx, ex = pcall(gp.infer, t.with(job, { output_dist = "exp", output_max = 300 }))
t.ok(not okx and not tostring(ex):find("less the input", 1, true),
  "... its limit is not said to be less the input")
