-- The Lua side of a new user's walk: gp.params' counts are integers, and
-- gp.infer with a GGUF type as its weights prices llama.cpp as the
-- command line does.
-- Run: prove --exec './gpuplan run' tests/lua/walkfix3.t
local t = require "tap"
local gp = require "gpuplan"

-- Llama 3 8B's total: the engine's count, 8030261248 (HF's
-- model.num_parameters() for Meta-Llama-3-8B), now an integer.
local p = gp.params("llama3-8b")
t.is(math.type(p.total), "integer", "total is an integer")
t.is(p.total, 8030261248, "total = 8030261248")
t.is(tostring(p.total), "8030261248", "printed without .0")
local all = true
for k, v in pairs(p) do
  if math.type(v) ~= "integer" then all = false; t.diag(k, v, math.type(v)) end
end
t.ok(all, "every count an integer")
-- a MoE's counts too (active below total)
local q = gp.params("mixtral-8x7b")
t.ok(math.type(q.total) == "integer" and math.type(q.active) == "integer" and q.active < q.total,
     "mixtral-8x7b: total and active integers")

-- A GGUF type alone: runtime llama.cpp, said; the same answer as giving it.
local job = { model = "llama3-8b", gpu = "rtx-4090", weights = "Q4_K_M" }
local r = gp.infer(job)
t.ok(t.said(r, "runtime=llama.cpp (a GGUF type: llama.cpp's format)", true), "runtime said")
t.is(job.runtime, nil, "the caller's table is left as given")
local given = gp.infer { model = "llama3-8b", gpu = "rtx-4090", weights = "Q4_K_M",
                         runtime = "llama.cpp" }
-- exact: the same job priced twice
t.is(r.itl_s, given.itl_s, "ITL as with runtime = llama.cpp")
-- llama-server's 4 slots (server.cpp's -np auto), not the KV's 69
t.is(r.batch, 4, "batch: 4 slots")
t.ok(t.said(r, "^max_batch=4 %(llama%-server's slots"), "slots said")
local b1 = gp.infer { model = "llama3-8b", gpu = "rtx-4090", weights = "Q4_K_M", batch = 1 }
t.is(b1.batch, 1, "batch 1 given: one sequence (llama-bench's)")
t.done_testing()
