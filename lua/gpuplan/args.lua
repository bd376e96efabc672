-- Checks shared by the gp.* functions that take a table of arguments.
local M = {}

-- A bad value as a message shows it: NaN in one spelling (the C library
-- prints "nan" or "-nan"), a string quoted with its type.
function M.shown(v)
  if v ~= v then return "NaN" end
  if type(v) == "string" then return "string '" .. v .. "'" end
  return tostring(v)
end

-- The first, in sorted order, key of t that `known` does not accept (a
-- set table, or a function of the key), or nil.  Sorted so that with two
-- misspellings the message is the same from run to run.
function M.unknown_key(t, known)
  local ok = type(known) == "function" and known or function(k) return known[k] end
  local bad
  for k in pairs(t) do
    if not ok(k) and (bad == nil or tostring(k) < tostring(bad)) then bad = k end
  end
  return bad
end

-- A set from a whitespace-separated list of names.
function M.set(names)
  local s = {}
  for k in names:gmatch("%S+") do s[k] = true end
  return s
end

return M
