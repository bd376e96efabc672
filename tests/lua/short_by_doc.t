-- The result field short_by as documented (gpuplan.results, docs/lua.md):
-- it was "how much more the job needs (when it does not fit)", but every
-- memory result carries it, negative (the headroom) when the job fits --
-- fit's "fits: yes (headroom X GiB)" is -short_by.  The text now says so;
-- this holds it to the numbers.
-- Run with ./gpuplan run tests/lua/short_by_doc.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(4)

local doc
for _, f in ipairs(require("gpuplan.results").FIELDS) do
  if f.name == "short_by" then doc = f.help end
end
-- Llama 3 8B LoRA on one H100 fits (about 20 GiB of 79), full training
-- does not (about 141 GiB): the signs each case gives.
local fits = gp.memory { model = "llama3-8b", gpu = "h100-sxm", method = "lora" }
local over = gp.memory { model = "llama3-8b", gpu = "h100-sxm", method = "full" }
t.ok(fits.fits and fits.short_by < 0, "a job that fits: short_by < 0 (the headroom)")
t.ok(not over.fits and over.short_by > 0, "a job that does not: short_by > 0")
t.ok(type(doc) == "string" and doc:find("negative (the headroom) when it fits", 1, true) ~= nil,
  "the documented text says it is negative when the job fits")
t.ok(doc and doc:find("positive when it does not fit", 1, true) ~= nil,
  "and positive when it does not")
