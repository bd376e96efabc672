-- gpuplan.units: parse and print quantities.
--
-- Strings carry their unit ("80GB", "3.35TB/s", "989TFLOPS", "$2.49/h");
-- parsing returns SI numbers.  Decimal prefixes are powers of 10, binary
-- ones (KiB, MiB, GiB, TiB) powers of 2.  Byte counts come back as Lua
-- integers.  Link bandwidths must say which convention they use: "bidir"
-- (a datasheet's total of both directions) or "per-dir"; the result is
-- always per direction.  Bits ("400Gb/s") are divided by 8.
--
-- Every error quotes the offending value: bad bytes '80 G': unknown unit 'G'.

local M = {}

M.KB, M.MB, M.GB, M.TB, M.PB = 1e3, 1e6, 1e9, 1e12, 1e15
M.KiB, M.MiB, M.GiB, M.TiB = 1024, 1024 ^ 2, 1024 ^ 3, 1024 ^ 4

local decimal = { [""] = 1, K = 1e3, k = 1e3, M = 1e6, G = 1e9, T = 1e12,
                  P = 1e15, E = 1e18 }
local binary = { Ki = 2 ^ 10, Mi = 2 ^ 20, Gi = 2 ^ 30, Ti = 2 ^ 40,
                 Pi = 2 ^ 50 }

local function prefix_factor(p)
  return decimal[p] or binary[p]
end

local time_units = { s = 1, ms = 1e-3, us = 1e-6, ["µs"] = 1e-6, ns = 1e-9,
                     min = 60, h = 3600 }

local kinds = { bytes = true, bandwidth = true, link = true, compute = true,
                power = true, time = true, price = true }

-- The longest quantity string accepted ("1979.5TFLOPS", "900GB/s bidir"
-- need a dozen characters); longer ones are refused before any pattern
-- runs, as matching cost grows with the length.
local MAX_LEN = 64

-- The value as a message quotes it: its start only, and control
-- characters escaped, so that the message stays one line.
local escapes = { ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }
-- s with its control characters escaped (\n, \009): one line.
function M.oneline(s)
  -- a table's or a function's text is its address: not a line to show
  local mt = getmetatable(s)
  if type(s) ~= "string" and type(s) ~= "number" and not (mt and mt.__tostring) then
    error("units.oneline: s must be a string (got " .. require("gpuplan.args").shown(s) .. ")", 2)
  end
  return (tostring(s):gsub("%c", function(c) return escapes[c] or string.format("\\%03d", c:byte()) end))
end
local function quoted(s)
  -- NaN in one spelling (the C library prints "nan" or "-nan": a catalog's
  -- memory = 0/0 read "bad bytes '-nan'"), a table or a function by its
  -- kind, not its address (as gpuplan.args.shown)
  if s ~= s then return "NaN" end
  if type(s) == "table" or type(s) == "function" then return "a " .. type(s) end
  s = tostring(s)
  if #s > 40 then s = s:sub(1, 40) .. "..." end
  return M.oneline(s)
end
M.quoted = quoted

local function fail(kind, s, why)
  error(string.format("bad %s '%s': %s", kind, quoted(s), why), 0)
end
-- The reasons a text that reads as a finite number with a known unit is
-- still refused: out of range, not malformed (an option's refusal exits
-- 1 for these, 2 for text it cannot read: gpuplan.options M.quantity),
-- the message's end.
local NEGATIVE, TOO_LARGE = "must not be negative", "too large"
M.OUT_OF_RANGE = { NEGATIVE, TOO_LARGE }

-- Split "3.35TB/s bidir" into 3.35, "TB/s", "bidir".
local function split(kind, s)
  if type(s) ~= "string" then
    fail(kind, s, "expected a string with a unit, got a " .. type(s))
  end
  if #s > MAX_LEN then fail(kind, s, "too long for a quantity") end
  if s:match("^%s*%-?0[xX]") then fail(kind, s, "hexadecimal numbers are not accepted") end
  local num, unit, rest = s:match("^%s*(%-?[%d%.]+[eE]?[%+%-]?%d*)%s*([^%s]*)%s*(.-)%s*$")
  local n = num and tonumber(num)
  if not n then fail(kind, s, "expected a number followed by a unit") end
  if unit == "" then fail(kind, s, "missing unit") end
  return n, unit, rest
end

local function check_num(kind, s, n)
  if n ~= n or n == math.huge then fail(kind, s, "not a finite number") end
  if n < 0 then fail(kind, s, NEGATIVE) end
  return n
end

-- n units of factor f in SI, finite: "1e300TB/s" is 1e312 B/s, inf as a
-- double, and must not be stored as that.
local function scaled(kind, s, n, f)
  local v = check_num(kind, s, n) * f
  if v == math.huge then fail(kind, s, TOO_LARGE) end
  return v
end

local function to_bytes_int(kind, s, x)
  local r = math.floor(x + 0.5)
  local i = math.tointeger(r)
  if not i then fail(kind, s, TOO_LARGE) end
  return i
end

local parsers = {}

function parsers.bytes(s)
  local n, unit, rest = split("bytes", s)
  if rest ~= "" then fail("bytes", s, "unexpected '" .. quoted(rest) .. "'") end
  local p = unit:match("^(%a-)B$")
  local f = p and prefix_factor(p)
  if not f then fail("bytes", s, "unknown unit '" .. quoted(unit) .. "' (use B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)") end
  return to_bytes_int("bytes", s, check_num("bytes", s, n) * f)
end

-- "3.35TB/s", "400Gb/s"; returns bytes/s (a number) and the qualifier.
local function rate(kind, s)
  local n, unit, rest = split(kind, s)
  local p, b = unit:match("^(%a-)([Bb])/s$")
  local f = p and prefix_factor(p)
  if not f then fail(kind, s, "unknown unit '" .. quoted(unit) .. "' (use B/s, GB/s, TB/s or Gb/s)") end
  local v = scaled(kind, s, n, f)
  if b == "b" then v = v / 8 end
  return v, rest
end

function parsers.bandwidth(s)
  local v, rest = rate("bandwidth", s)
  if rest ~= "" then fail("bandwidth", s, "unexpected '" .. quoted(rest) .. "'") end
  return v
end

-- Link bandwidth, returned per direction.
function parsers.link(s)
  local v, rest = rate("link bandwidth", s)
  if rest == "bidir" then return v / 2 end
  if rest == "per-dir" then return v end
  if rest == "" then
    fail("link bandwidth", s, "say 'bidir' (both directions added) or 'per-dir'")
  end
  fail("link bandwidth", s, "unknown qualifier '" .. quoted(rest) .. "' (use bidir or per-dir)")
end

function parsers.compute(s)
  local n, unit, rest = split("compute", s)
  if rest ~= "" then fail("compute", s, "unexpected '" .. quoted(rest) .. "'") end
  local p = unit:match("^(%a-)FLOPS$") or unit:match("^(%a-)OPS$")
  local f = p and decimal[p]
  if not f then fail("compute", s, "unknown unit '" .. quoted(unit) .. "' (use TFLOPS, PFLOPS or TOPS)") end
  return scaled("compute", s, n, f)
end

function parsers.power(s)
  local n, unit, rest = split("power", s)
  local p = unit:match("^(%a-)W$")
  local f = p and decimal[p]
  if not f or rest ~= "" then fail("power", s, "unknown unit '" .. quoted(unit) .. "' (use W or kW)") end
  return scaled("power", s, n, f)
end

function parsers.time(s)
  local n, unit, rest = split("time", s)
  local f = time_units[unit]
  if not f or rest ~= "" then fail("time", s, "unknown unit '" .. quoted(unit) .. "' (use s, ms, us, ns)") end
  return scaled("time", s, n, f)
end

-- "$2.49/h", "2.49USD/h", "12CNY/h" -> { amount = 2.49, currency = "USD" }
function parsers.price(s)
  if type(s) ~= "string" then fail("price", s, "expected a string like '$2.49/h'") end
  if #s > MAX_LEN then fail("price", s, "too long for a quantity") end
  -- "/GPU-h" as well as "/h": every command prints a price as "1.80
  -- USD/GPU-h", and that form, copied back into --price, was refused
  local t = s:gsub("/%s*[Gg][Pp][Uu]%-h%s*$", "/h")
  local amount, cur = t:match("^%s*%$%s*([%d%.]+)%s*/h%s*$"), "USD"
  if not amount then
    amount, cur = t:match("^%s*([%d%.]+)%s*(%u%u%u)%s*/h%s*$")
  end
  local n = amount and tonumber(amount)
  if not n then fail("price", s, "expected an amount per GPU-hour like '$2.49/h', '12CNY/h' or '2.49 USD/GPU-h'") end
  check_num("price", s, n)
  return { amount = n, currency = cur }
end

-- Parse s as a quantity of the given kind; raises with the value quoted.
function M.parse(s, kind)
  local p = parsers[kind]
  if not p then
    -- gp.parse's reference named kinds it has not (flops, money):
    -- the message lists those it has
    local names = {}
    for k in pairs(kinds) do names[#names + 1] = k end
    table.sort(names)
    error("units.parse: unknown kind " .. (type(kind) == "string" and ("'" .. kind .. "'")
      or require("gpuplan.args").shown(kind)) .. " (one of " .. table.concat(names, ", ") .. ")", 2)
  end
  return p(s)
end

-- true, value or false, message (no raise).
function M.try(s, kind)
  local ok, v = pcall(M.parse, s, kind)
  return ok, v
end

M.kinds = kinds

-- Printing.  Explicit formats: the same number prints the same everywhere.

local function trim(x)
  local s = string.format("%.3f", x):gsub("0+$", ""):gsub("%.$", "")
  return s
end

-- "nan", "inf", "-inf" for those, nil for finite numbers: the same text on
-- every platform (C's "%f" of a NaN may say "-nan").
local function nonfinite(n)
  if n ~= n then return "nan" end
  if n == math.huge then return "inf" end
  if n == -math.huge then return "-inf" end
  return nil
end

-- The string.format format for an amount x (a cost, a price, a time) with
-- at least min_dec decimals and at least two significant digits: "%.0f"
-- for a cost of 62, "%.3f" for one of 0.071, "%.1f" for 3.4 days and
-- "%.4f" for 0.0069.  Before, each command printed a fixed number of
-- decimals, and a small job read "0.0 days ... cost 0 USD (0-0)" at a
-- price of 1.80 USD/GPU-h: a buyer read it as free, and a plan ranked by
-- cost showed every row as 0.  Values of 10^(1 - min_dec) and above keep
-- the fixed form they had.  Past 9 decimals (below 1e-8): "%.2g".
function M.amount_fmt(x, min_dec)
  min_dec = min_dec or 0
  -- at most 99: string.format's own limit ("%.100f" raised "invalid
  -- conversion specification", naming neither the function nor min_dec)
  if type(min_dec) ~= "number" or min_dec < 0 or min_dec > 99 or min_dec ~= math.floor(min_dec) then
    error("units.amount_fmt: min_dec must be a whole number of decimals 0..99 (got "
      .. require("gpuplan.args").shown(min_dec) .. ")", 2)
  end
  local base = "%." .. min_dec .. "f"
  if type(x) ~= "number" or x ~= x or x == math.huge or x == -math.huge or x == 0 then
    return base
  end
  local a = math.abs(x)
  if a >= 10 ^ (1 - min_dec) then return base end
  -- the decimals that show two significant digits of a
  local d = 1 - math.floor(math.log(a, 10))
  if d > 9 then return "%.2g" end
  if d < min_dec then d = min_dec end
  return "%." .. d .. "f"
end

-- x formatted by amount_fmt: "62", "0.071", "0.0069".
function M.fmt_amount(x, min_dec)
  local f = M.amount_fmt(x, min_dec)
  -- NaN is "nan" as units.fmt spells it (C's "%f" said "-nan" here), and
  -- a non-number is named ("bad argument #2 to 'format'" was not)
  if type(x) ~= "number" then
    error("units.fmt_amount: x must be a number (got " .. require("gpuplan.args").shown(x) .. ")", 2)
  end
  return nonfinite(x) or string.format(f, x)
end

local function need_number_early(who, name, n)
  if type(n) ~= "number" then
    error(string.format("units.%s: %s must be a number (got %s)", who, name,
      require("gpuplan.args").shown(n)), 3)
  end
end

-- A duration's unit by its magnitude, the one rule of every command's
-- text (train's and plan's run time, rl's run, the guide's cells): days
-- from one day up, hours from one hour, minutes below.  Before, train and
-- plan said every run in days ("0.0056 days" for an 8-minute job) while rl
-- said hours and the guide switched at a day.  days: the duration in days
-- -> the factor from days to its unit, and the unit's name.  Not a number,
-- zero or past a day: days.
function M.duration_unit(days)
  local a = type(days) == "number" and math.abs(days) or 0
  if a ~= a or a == 0 or a >= 1 then return 1, "days" end
  if a >= 1 / 24 then return 24, "hours" end
  return 1440, "minutes"
end

-- "4.5 hours": a duration in days, in its unit (duration_unit) with
-- amount_fmt's decimals (at least one, two significant digits).
function M.fmt_duration(days)
  need_number_early("fmt_duration", "days", days)
  local k, u = M.duration_unit(days)
  return M.fmt_amount(days * k, 1) .. " " .. u
end

-- The format that tells x from limit, a value it is past: min_dec
-- decimals, more while the two read the same (a cost of 1048.592 over a
-- budget of 1048.59 read "over the budget (1049 USD)"; 3.034 days past a
-- 3-day deadline read "misses the deadline (3.0 days)"), at most 6.
-- A number argument checked: a string or a table raised from inside
-- this file ("attempt to perform arithmetic on a table value (local 'n')",
-- "bad argument #2 to 'format'"), naming neither the function nor n.
local function need_number(who, name, n, level)
  if type(n) ~= "number" then
    error(string.format("units.%s: %s must be a number (got %s)", who, name,
      require("gpuplan.args").shown(n)), level + 1)
  end
end

function M.past_fmt(x, limit, min_dec)
  need_number("past_fmt", "x", x, 2)
  -- a limit that is not a number raised "bad argument #2 to 'format'"
  if type(limit) ~= "number" then
    error("units.past_fmt: limit must be a number (got " .. require("gpuplan.args").shown(limit)
      .. ")", 2)
  end
  local f = M.amount_fmt(x, min_dec)
  if f == "%.2g" then return f end
  local d = tonumber(f:match("^%%%.(%d+)f$"))
  while d < 6 and string.format("%." .. d .. "f", x) == string.format("%." .. d .. "f", limit) do
    d = d + 1
  end
  return "%." .. d .. "f"
end

-- fmt_bytes(n, "GiB") -> "1.25GiB"; unit defaults to the best decimal one.
function M.fmt_bytes(n, unit)
  need_number("fmt_bytes", "n", n, 2)
  local nf = nonfinite(n)
  if nf then return nf end
  if unit then
    local p = type(unit) == "string" and unit:match("^(%a-)B$")
    local f = p and prefix_factor(p)
    if not f then
      error("units.fmt_bytes: unknown unit " .. require("gpuplan.args").shown(unit)
        .. " (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB ...)", 2)
    end
    return trim(n / f) .. unit
  end
  for _, u in ipairs { "TB", "GB", "MB", "KB" } do
    if math.abs(n) >= prefix_factor(u:sub(1, 1)) then return trim(n / prefix_factor(u:sub(1, 1))) .. u end
  end
  return trim(n) .. "B"
end

local function fmt_scaled(n, steps, suffix)
  for _, st in ipairs(steps) do
    if math.abs(n) >= st[2] then return trim(n / st[2]) .. st[1] .. suffix end
  end
  return trim(n) .. suffix
end

local si = { { "P", 1e15 }, { "T", 1e12 }, { "G", 1e9 }, { "M", 1e6 }, { "K", 1e3 } }

function M.fmt(n, kind)
  if type(n) == "number" and nonfinite(n) then return nonfinite(n) end
  if kind == "price" then
    -- a price is what units.parse(s, "price") gives
    if type(n) ~= "table" or type(n.amount) ~= "number" or type(n.currency) ~= "string" then
      error("units.fmt: a price must be {amount = a number, currency = 'USD' ...} (got "
        .. require("gpuplan.args").shown(n) .. ")", 2)
    end
  elseif M.kinds[kind] then
    need_number("fmt", "n", n, 2)
  end
  if kind == "bytes" then return M.fmt_bytes(n) end
  if kind == "bandwidth" then return fmt_scaled(n, si, "B/s") end
  if kind == "link" then return fmt_scaled(n, si, "B/s per-dir") end
  if kind == "compute" then return fmt_scaled(n, si, "FLOPS") end
  if kind == "power" then return trim(n) .. "W" end
  if kind == "time" then
    if n >= 1 then return trim(n) .. "s" end
    if n >= 1e-3 then return trim(n * 1e3) .. "ms" end
    return trim(n * 1e6) .. "us"
  end
  if kind == "price" then
    -- two decimals, more below 0.1 (M.amount_fmt): $0.004/h read "$0.00/h"
    if n.currency == "USD" then return "$" .. M.fmt_amount(n.amount, 2) .. "/h" end
    return M.fmt_amount(n.amount, 2) .. n.currency .. "/h"
  end
  error("units.fmt: unknown kind " .. (type(kind) == "string" and ("'" .. kind .. "'")
    or require("gpuplan.args").shown(kind)), 2)
end

return M
