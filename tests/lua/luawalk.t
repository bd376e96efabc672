-- A researcher's misuse of the Lua API, found by walking every gp.*
-- function with wrong types, misspelt keys, absurd numbers and user
-- entries: each must be refused naming the key and the script's line
-- (never a line inside gpuplan, never a Lua runtime error), and what is
-- accepted must be answered as the same job elsewhere.
-- Run with ./gpuplan run tests/lua/luawalk.t.
local t = require "tap"
local gp = require "gpuplan"

local me = debug.getinfo(1, "S").short_src

-- fn (written on the caller's line) must raise "<this file>:<that
-- line>: " followed by text containing want, and no gpuplan file.
local function check(fn, want, name)
  local line = debug.getinfo(2, "l").currentline
  local ok, e = pcall(fn)
  e = tostring(e)
  local head = me .. ":" .. line .. ": "
  local good = not ok and e:sub(1, #head) == head and e:find(want, 1, true) ~= nil
    and not e:find("lua/gpuplan/", 1, true)
  if not t.ok(good, name) then t.diag(ok and "no error" or e) end
end

-- The same for an API function called by pcall itself (no Lua frame of
-- the script between): the error names the line of the pcall.
local function placed(ok, e, line, want, name)
  e = tostring(e)
  local head = me .. ":" .. line .. ": "
  local good = not ok and e:sub(1, #head) == head and e:find(want, 1, true) ~= nil
    and not e:find("lua/gpuplan/", 1, true)
  if not t.ok(good, name) then t.diag(ok and "no error" or e) end
end

local H = "h100-sxm"

-- 1. gp.rl under pcall named no line at all ("rl: gpus must be ..."):
-- its error(msg, 2) pointed at pcall, a C function; gp.train's and
-- gp.infer's name the pcall's line.
do
  local ok, e = pcall(gp.rl, { model = "qwen2.5-7b", gpu = H, gpus = 8.5 }); local line = debug.getinfo(1, "l").currentline
  placed(ok, e, line, "rl: gpus must be a whole number 1..16777216 (got 8.5)", "rl under pcall names the script's line")
  ok, e = pcall(gp.rl_job, { model = "qwen2.5-7b", gpu = H, gpus = 0 }); line = debug.getinfo(1, "l").currentline
  placed(ok, e, line, "rl: gpus must be a whole number", "rl_job under pcall names the script's line")
end

-- 2. A user GPU table without an arch: gp.infer put the script's
-- position in the middle of its message ("infer: x.lua:6: gpu ...").
local noarch = { id = "my-gpu", memory = 80 * 2 ^ 30, mem_bw = 3.35e12, peak = { bf16 = 989e12 },
  scaleup = { domain = 8, fabric = "nvlink4" } }
check(function() gp.infer { model = "llama3-8b", gpu = noarch } end, "infer: gpu 'my-gpu': no achievable fractions", "infer: a user GPU without an arch, one position")
t.done_testing()
