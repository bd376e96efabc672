-- plan over several cards skips the counts a card's node cannot reach
-- when the node has no NICs (gpuplan.sweep, "N GPUs skipped").  The note
-- named the missing NICs but not the option that supplies them; it now
-- carries the largest count's own refusal advice (gpuplan.comm no_nics:
-- "give nics = N and nic_fabric = ID ..., or a system with NICs"), in
-- the Lua keys here (the command line's flags: tests/cli/followups5.t).
-- Run with ./gpuplan run tests/lua/plan_skip_nics.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(5)

local job = { model = "llama3.2-1b", gpu = { "rtx-4090", "h100-nvl" }, gpus = { 1, 2, 4 },
              method = "qlora" }
local r = gp.sweep(job)
local note
for _, d in ipairs(r.defaults) do if d:find("^h100%-nvl: 4 GPUs skipped") then note = d end end
t.ok(note ~= nil, "the H100 NVL's bridged pair skips 4 GPUs")
t.like(note or "", "; to search them give nics = N and nic_fabric = ID (scale-out fabrics: ",
  "... and says which options reach them", true)
t.like(note or "", "or a system with NICs)", "... or a system with NICs", true)

-- The advice holds: with the NICs given, 4 GPUs are searched, no skip.
local r2 = gp.sweep(t.with(job, { nics = 2, nic_fabric = "ib-ndr-400" }))
local skipped = false
for _, d in ipairs(r2.defaults) do if d:find("skipped (more than", 1, true) then skipped = true end end
t.ok(not skipped, "nics = 2, nic_fabric = ib-ndr-400: nothing skipped")
local four = false
for _, row in ipairs(r2.results) do
  if row.gpu == "h100-nvl" and row.gpus == 4 then four = true end
end
t.ok(four, "... the H100 NVL ranked at 4 GPUs")
