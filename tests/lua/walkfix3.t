-- The Lua side of a new user's walk: gp.params' counts are integers.
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

t.done_testing()
