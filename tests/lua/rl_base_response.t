-- gp.rl's base_checkpoint mean response (gpuplan.rl base_response): a
-- base checkpoint whose own DAPO runs are published keeps its measured
-- mean at any limit at least the one it was measured at (Qwen2.5-Math-7B:
-- 1294 tokens at 8192, from ISEEKYAN/verl_megatron_practice dapo7b.csv
-- through verl's MFU), that share of a lower limit; any other base
-- checkpoint the median share of the limit, BASE_RESPONSE_SHARE.
-- Run with ./gpuplan run tests/lua/rl_base_response.t.
local t = require "tap"
local gp = require "gpuplan"
local rl = require "gpuplan.rl"

local with = t.with

-- The published mean, whatever the limit above 8192: verl's one-step-off
-- runs cost the same a sample at 8192 and at 20480 tokens.  Exact: an
-- integer passed through.
t.is((rl.base_response("Qwen2.5-Math-7B", 20480)), 1294, "20480: the published 1294 tokens")
t.is((rl.base_response("qwen2.5-math-7b", 8192)), 1294, "8192, the runs' own limit: 1294")
-- Below the runs' limit, their share: 1294 x 4096 / 8192 = 647, exact.
t.is((rl.base_response({ id = "Qwen2.5-Math-7B" }, 4096)), 647, "4096: half the limit, 647")
-- Any other model: BASE_RESPONSE_SHARE x the limit, (1827.308 +
-- 2819.061) / 2 / 20480 x 20480 = 2323.18 -> 2323 (rounded to a token).
t.is((rl.base_response("qwen2.5-7b", 20480)), 2323, "a model without runs: 0.1134 x 20480")
t.is((rl.base_response(nil, 8192)), 929, "no model id: 0.1134 x 8192 = 929.3 -> 929")
local _, said = rl.base_response("Qwen2.5-Math-7B", 20480)
t.ok(said:find("response_len=1294", 1, true) and said:find("a higher limit does not lengthen it",
  1, true), "the assumption says what it took and why")

-- gp.rl takes it for a model table with that id: the step is the one the
-- stated mean gives (the same job, response_len 1294 given instead), and
-- the result says the mean it used.  Tolerance 1e-12 relative: the same
-- computation.
local math7b = { id = "Qwen2.5-Math-7B", layers = 28, hidden = 3584, heads = 28, kv_heads = 4,
  head_dim = 128, ffn_hidden = 18944, ffn_gated = true, vocab = 152064,
  tied_embeddings = false, norm = "rms" }
local job = { model = math7b, gpu = "h20", gpus = 16, tp = 2, pp = 2, zero = 1, batch = 2,
  prompts = 64, group = 8, prompt_len = 150, response_max = 20480, global_batch = 128 }
local rb = gp.rl(with(job, { base_checkpoint = true }))
local rs = gp.rl(with(job, { response_len = 1294 }))
t.is(rb.response_len, 1294, "gp.rl: Qwen2.5-Math-7B's base mean at 20480")
t.ok(math.abs(rb.step_s / rs.step_s - 1) < 1e-12, "the same step as response_len 1294 stated")
-- Renamed, the same shape is a model without runs: the share, and a
-- longer step (2323 tokens a response against 1294).
local other = gp.rl(with(job, { base_checkpoint = true,
  model = with(math7b, { id = "my-7b" }) }))
t.is(other.response_len, 2323, "another id: the share of the limit")
t.ok(other.step_s > rb.step_s, "the longer assumed responses take longer")
-- The catalog's id, as the --base-checkpoint help names it: the CLI user's
-- `gpuplan rl qwen2.5-math-7b --base-checkpoint` takes the published mean.
-- Its context is its config's 4096, so the limit here is 3840 (+ a 256-token
-- prompt): 1294 x 3840 / 8192 = 606.56 -> 607, exact after rounding.
local cm = gp.catalog():get("models", "qwen2.5-math-7b")
t.ok(cm and cm.hidden == 3584 and cm.layers == 28, "the catalog holds qwen2.5-math-7b at Qwen2.5 7B's shape")
local rc = gp.rl({ model = "qwen2.5-math-7b", gpu = "h20", gpus = 16, prompts = 64, group = 8,
  prompt_len = 256, response_max = 3840, base_checkpoint = true })
t.is(rc.response_len, 607, "by catalog id: the published mean's share of 3840")
t.done_testing()
