-- The MoE serving model's TTFT under a steady load (engine/serve_plan.c
-- coloc_loaded, infer_loaded_ttft) prices a joining prompt in the room
-- the step's decodes leave in the budget (prefill_tokens less the
-- attention group's decode tokens).  Where the decodes fill the budget
-- there is no room: vLLM V1 admits a waiting prompt only "while
-- self.waiting and token_budget > 0", so the prompt waits for a running
-- sequence to end, which is not priced.  The TTFT silently fell back to
-- one prompt's there (11.8 s at 1016 decodes, 0.03 s at 1024); it is
-- still one prompt's, but the defaults line says so.
-- Run with ./gpuplan run tests/lua/moe_ttft_full.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(8)

-- qwen3-30b-a3b, EP8 with TP8 attention on 8 H100s (one instance, one
-- attention group of a = tp = 8 GPUs, no DP attention, no MTP), vLLM,
-- prefill_tokens 1024, the default 2048-token prompts.
local job = { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 8, ep = 8, tp = 8,
              runtime = "vllm", prefill_tokens = 1024 }
local function note(r)
  for _, d in ipairs(r.defaults) do
    if d:find("TTFT under load not priced", 1, true) then return d end
  end
end

-- batch 128 a GPU: the group decodes 128 x 8 = 1024 tokens a step, the
-- whole 1024 budget: room 1024 - 1024 = 0.
local full = gp.infer(t.with(job, { batch = 128 }))
t.ok(full.fits, "batch 128 a GPU fits (the KV holds 156)")
t.ok(not full.ttft_loaded, "no room: the loaded TTFT is not priced")
-- one prompt's: ceil(2048 / 1024) = 2 prefill steps
t.is(full.ttft_steps, 2, "... the TTFT is one prompt's, 2048 / 1024 = 2 prefill steps")
t.like(note(full) or "", "the attention group's 1024 decode tokens a step fill its step "
  .. "budget of 1024 tokens", "... and the defaults line says so, with the two counts", true)
t.like(note(full) or "", "the TTFT is one prompt's", "... naming which TTFT it is", true)

-- batch 127 a GPU: 127 x 8 = 1016 decode tokens, room 8: priced, and
-- no note.
local room = gp.infer(t.with(job, { batch = 127 }))
t.ok(room.ttft_loaded, "batch 127: room 1024 - 1016 = 8, the loaded TTFT priced")
t.ok(note(room) == nil, "... without the note")
-- ceil(2048 / 8) = 256 steps of the 8-token room
t.is(room.ttft_steps, 256, "... its prompt in ceil(2048 / 8) = 256 steps")
