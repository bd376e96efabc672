-- Fuzz target: gpuplan.units.parse, the parser of every quantity in the
-- catalog and on the command line.  Property: a value of each kind comes
-- back finite and non-negative (bytes an integer, a price an amount and a
-- three-letter currency), or the error is one line "bad <kind> '<the
-- value>': <why>" -- never a non-finite number, a Lua error or a hang.
local t = require "tap"
local fz = require "fuzz"
local units = require "gpuplan.units"

local seeds = { "80GB", "80GiB", "3.35TB/s", "400Gb/s", "900GB/s bidir", "450GB/s per-dir",
                "989TFLOPS", "2PFLOPS", "1979TOPS", "700W", "1.5kW", "1.5us", "2ms", "0.6us",
                "$2.49/h", "12CNY/h", "2.49USD/h", "48GB", "1e3GB", "1.0e-3s", "0B" }
local kinds = { "bytes", "bandwidth", "link", "compute", "power", "time", "price" }
local names = { bytes = "bytes", bandwidth = "bandwidth", link = "link bandwidth",
                compute = "compute", power = "power", time = "time", price = "price" }

-- A generated quantity: a seed mutated a few times, an extreme number
-- with a seed's unit, a long run, or a value that is not a string.
local function gen()
  local r = math.random(10)
  if r == 1 then return fz.pick(fz.numbers) end
  if r == 2 then return ({ true, {}, print })[math.random(3)] end
  local s = fz.pick(seeds)
  if r == 3 then
    local unit = s:match("[%a$/%s%-]+.*$") or "GB"
    return tostring(fz.pick(fz.numbers)) .. unit
  end
  if r == 4 then return ("9"):rep(math.random(1, 80)) .. "GB" end
  for _ = 1, math.random(4) do s = fz.mutate_text(s) end
  return s
end

local n = fz.start("units", 3000)
local checked = 0
for _ = 1, n do
  local s = gen()
  for _, kind in ipairs(kinds) do
    checked = checked + 1
    local ok, v = pcall(units.parse, s, kind)
    local shown = string.format("units.parse(%q, %q)", tostring(s), kind)
    if ok then
      local x = type(v) == "table" and v.amount or v
      if type(x) ~= "number" or x ~= x or x == math.huge or x < 0 then
        fz.finding("not a finite non-negative number: " .. tostring(x), shown)
      elseif kind == "bytes" and math.type(x) ~= "integer" then
        fz.finding("bytes not an integer: " .. tostring(x), shown)
      elseif kind == "price" and not (type(v.currency) == "string" and v.currency:match("^%u%u%u$")) then
        fz.finding("price without a currency", shown)
      end
    else
      local why = fz.unclean(v)
      if why then fz.finding(why .. ": " .. tostring(v), shown)
      elseif v:sub(1, #names[kind] + 6) ~= "bad " .. names[kind] .. " '" then
        fz.finding("message does not name the kind and the value: " .. v, shown)
      end
    end
  end
end
fz.finish(checked)
t.done_testing()
