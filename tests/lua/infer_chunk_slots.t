-- A chunked-prefill engine's batch is its running sequences (vLLM's
-- max_num_seqs; the sequences the KV pool holds): a sequence whose prompt
-- is still in chunks holds a slot of the batch and emits no token until
-- the step that carries its prompt's last chunk (engine/infer_run.c
-- mixed_steps).  Each step emits at most one token per running sequence,
-- and a step that also carries prompt tokens is no faster than the decode
-- step of the batch, so a replica's output tokens/s is at most
--   B / ITL.
-- The steady state once counted B output tokens a slot over the output - 1
-- decode steps alone, the prompts' first tokens on top: 16 in / 2 out at
-- batch 4 on vLLM priced 941 tokens/s against B / ITL = 562 (1.67 x).
-- Run with ./gpuplan run tests/lua/infer_chunk_slots.t.
local t = require "tap"
local gp = require "gpuplan"

local outs = { 2, 3, 8, 32, 128 }
local rts = { "vllm", "trtllm", "sglang" }
t.plan(#outs * #rts + 1)

-- Llama 3.1 8B on one H100, 16-token prompts, a fixed batch of 4: the
-- prompts fit a step's room (max_num_tokens - 4) in one chunk, so the
-- budget never binds and every slot turns over in output steps.
-- Tolerance 1e-9: the bound is exact (B tokens a step at the most, each
-- step at least the decode step), the slack only rounding.
for _, rt in ipairs(rts) do
  for _, o in ipairs(outs) do
    local r = gp.infer { model = "llama3.1-8b", gpu = "h100-sxm", input = 16, output = o,
                         batch = 4, runtime = rt }
    t.ok(r.tokens_per_s <= r.replicas * r.batch / r.itl_s * (1 + 1e-9),
      ("%s, 16 in / %d out, batch 4: %.1f tokens/s within B / ITL = %.1f"):format(
        rt, o, r.tokens_per_s, r.replicas * r.batch / r.itl_s))
  end
end

-- The first token comes from the prompt's step, inside the batch: at 16 in
-- / 2 out a slot turns over in 2 steps (its prompt's, then one decode), so
-- a step is half the batch in prompts and half decoding, and B tokens a
-- step: 4 x 2 / (2 x the step) = 4 / the step.  That step (2 decodes and
-- 32 prompt tokens) is slower than the 4-decode graph step, so vLLM's
-- tokens/s falls below B / ITL, where it was 1.67 x above it.
local v = gp.infer { model = "llama3.1-8b", gpu = "h100-sxm", input = 16, output = 2,
                     batch = 4, runtime = "vllm" }
t.ok(v.tokens_per_s < v.batch / v.itl_s,
  ("vllm 16 in / 2 out: %.1f tokens/s below B / ITL = %.1f"):format(v.tokens_per_s, v.batch / v.itl_s))
