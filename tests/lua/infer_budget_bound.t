-- A chunked-prefill engine whose prompts outrun its token budget
-- (engine/infer_run.c mixed_steps, the budget-bound branch).  Each step
-- holds max_num_tokens M in all, the running decodes first.  In the steady
-- state a step admits X requests' prompts (X x input tokens) and X
-- requests finish; by Little's law X x steps sequences decode in it
-- (steps = output - 1).  X (input + steps) = M: at most
--   D = M x steps / (input + steps)
-- sequences decode a step, whatever the batch (the rest of it waits for
-- its prompts).  Priced as B decodes a step, a replica's tokens/s fell as
-- B grew past D and sat far below the same engine's finite run of those
-- requests (run_finite: 16,698 tokens/s against 9,914).
-- Run with ./gpuplan run tests/lua/infer_budget_bound.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(5)

-- Llama 3.2 3B, int4, vLLM on one MI355X (max_num_tokens 8192, vLLM's
-- API server's default there), 1024 in / 128 out:
-- D = 8192 x 127 / (1024 + 127) = 903.9 sequences.
local q = { model = "llama3.2-3b", gpu = "mi355x", gpus = 1, input = 1024, output = 128,
  runtime = "vllm", weights = "int4" }
local function at(b, req) return gp.infer(t.with(q, { batch = b, requests = req })) end
local mnt
for _, d in ipairs(at(2048).defaults) do mnt = mnt or d:match("^max_num_tokens=(%d+)") end
t.is(tonumber(mnt), 8192, "vLLM's budget on an MI355X: 8192 tokens a step")

-- Past D the batch adds no decodes: batches 1024 and 2048 run the same
-- steps.  1e-12 relative: the same arithmetic.
local b1024, b2048 = at(1024), at(2048)
t.near(b2048.tokens_per_s, b1024.tokens_per_s, 1e-12, "budget-bound: batch 2048 as batch 1024")

-- Below the bound the prompts fit beside the decodes (the other branch):
-- a slot of the batch turns over in its prompt's step and 127 decode
-- steps, n = 128, and emits 128 tokens, so a step carries B x 127 / 128
-- decodes and B x 1024 / 128 prompt tokens and B sequences emit a token.
-- The budget-bound step's D decodes and X = D / 127 admitted prompts are
-- D x 128 / 127 = 911.0 sequences: at batch 911 the slots' step, 903.9
-- decodes and 7288 prompt tokens, is D's, 903.9 and 7288.1: the two
-- meet.  Tolerance 1e-4: 0.03 of a sequence (911 against 911.03).
t.near(at(911).tokens_per_s, b2048.tokens_per_s, 1e-4, "the two branches meet at D x 128 / 127")

-- More batch never less tokens/s (it was 942 at 2048 against 1329 at 128
-- in the same regime on an A100 before).
t.ok(b2048.tokens_per_s >= at(512).tokens_per_s, "batch 2048 not below batch 512")

-- The finite run of 8 batches' requests (fill and drain included) is
-- no faster than the steady state by more than the finite run's own
-- cohort bookkeeping (it gave 16,697.7 against the new 16,685.6: 0.07%;
-- before, against 9,913.5: +68%).  Tolerance 1%.
local fin = at(2048, 8 * 2048)
t.ok(fin.tokens_per_s <= b2048.tokens_per_s * 1.01, string.format(
  "finite run %.1f within 1%% of the steady state %.1f", fin.tokens_per_s, b2048.tokens_per_s))
