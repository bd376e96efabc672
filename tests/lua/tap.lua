-- tap: a small TAP producer for the Lua tests (run with ./gpuplan run).
--
--   local t = require "tap"
--   t.plan(3)                               -- or t.done_testing() at the end
--   t.ok(x > 0, "x is positive")
--   t.is(got, want, "exact")
--   t.near(got, want, 0.01, "within 1%")   -- relative; NaN fails
--   t.raises(fn, "pattern", "error text")
--   t.raises_here(fn, "text", "a misuse named at this script's line")
--   t.with(o, { tp = 2 })                  -- a copy of o with tp = 2
local M = {}
local n, failed, planned = 0, 0, nil

function M.plan(k)
  planned = k
  io.write("1..", k, "\n")
end

function M.ok(cond, name)
  n = n + 1
  if not cond then failed = failed + 1 end
  io.write(cond and "ok " or "not ok ", n, " - ", name or "", "\n")
  return cond
end

-- A copy of the options table o with the fields of extra set over it
-- (the variant of a base job a test prices).
function M.with(o, extra)
  local c = {}
  for k, v in pairs(o) do c[k] = v end
  for k, v in pairs(extra or {}) do c[k] = v end
  return c
end

-- The phase of that name of a gp.rl result (nil when none).
function M.phase(r, name)
  for _, p in ipairs(r.phases) do if p.name == name then return p end end
end

-- H_n, the n-th harmonic number, summed: the expected longest of n
-- exponential lengths is theta H_n (the rollout tests' hand values).
function M.harmonic(n)
  local h = 0
  for i = 1, n do h = h + 1 / i end
  return h
end

-- The op of that name of a result's per-op rows (gp.train's or gp.infer's
-- ops; nil when none).
function M.op(r, name)
  for _, o in ipairs(r.ops) do if o.name == name then return o end end
end

-- A gp.train result's layer forward: its ops' forward seconds summed, and
-- of them the host_wait op's (0 when the GPU never waits for the host).
function M.layer_fwd(r)
  local s, wait = 0, 0
  for _, o in ipairs(r.ops) do
    s = s + o.fwd
    if o.name == "host_wait" then wait = o.fwd end
  end
  return s, wait
end

-- The MoE serving model's engine config as gp.infer hands it to
-- core.serve (its last call while fn runs), and a function that runs the
-- engine again on a copy with fields replaced: for the engine's own
-- checks of a field no option can put out of bounds.
function M.serve_capture(fn)
  local core = require "gpuplan.core"
  local real, cap = core.serve, nil
  core.serve = function(m, d, s) cap = { m, d, s }; return real(m, d, s) end
  local ok, err = pcall(fn)
  core.serve = real
  if not ok then error(err, 0) end
  assert(cap, "serve_capture: fn never reached core.serve")
  return cap[3], function(fields)
    local s = {}
    for k, v in pairs(cap[3]) do s[k] = v end
    for k, v in pairs(fields) do s[k] = v end
    return real(cap[1], cap[2], s)
  end
end

-- Whether one of a result's assumptions (its defaults lines) matches the
-- Lua pattern pat (plain: the text pat as it stands).
function M.said(r, pat, plain)
  for _, d in ipairs(r.defaults) do if d:find(pat, 1, plain) then return true end end
  return false
end

-- A gp.train result's step parts as name -> seconds shown.
function M.parts(r)
  local s = {}
  for _, p in ipairs(r.parts) do s[p.name] = p.seconds end
  return s
end

-- The step part of that name of a gp.train result (the part's table: its
-- seconds, hidden, ...; nil when none).
function M.step_part(r, name)
  for _, p in ipairs(r.parts) do if p.name == name then return p end end
end

-- The bytes of the component of that name of a memory breakdown (0 when
-- none).
function M.part(mem, name)
  for _, c in ipairs(mem.components) do if c.name == name then return c.bytes end end
  return 0
end

function M.diag(...)
  local s = table.concat({ ... }, " ")
  for line in (s .. "\n"):gmatch("([^\n]*)\n") do io.write("# ", line, "\n") end
end

function M.is(got, want, name)
  local good = got == want
  if not M.ok(good, name) then
    M.diag(string.format("got %s, want %s", tostring(got), tostring(want)))
  end
  return good
end

-- |got - want| <= reltol * |want| (absolute when want == 0); NaN fails.
-- reltol is a share of want: one of 1 or more passes any number of the
-- same sign (1e-9 * 2.6e12 B/s let a rate test pass whatever the rate), so
-- the test fails there, saying so.
function M.near(got, want, reltol, name)
  if not (type(reltol) == "number" and reltol >= 0 and reltol < 1) then
    M.ok(false, name)
    M.diag(string.format("reltol %s: a relative tolerance is in [0, 1) (pass 1e-9, not 1e-9 "
      .. "times the value)", tostring(reltol)))
    return false
  end
  local scale = want == 0 and 1 or math.abs(want)
  local good = type(got) == "number" and got == got and math.abs(got - want) <= reltol * scale
  if not M.ok(good, name) then
    M.diag(string.format("got %s, want %.9g (reltol %g)", tostring(got), want, reltol))
  end
  return good
end

-- fn must raise an error whose text matches pattern (plain find if plain).
function M.raises(fn, pattern, name, plain)
  local ok, err = pcall(fn)
  if type(err) == "table" then err = err.msg or tostring(err) end
  local good = not ok and tostring(err):find(pattern, 1, plain) ~= nil
  if not M.ok(good, name) then
    M.diag(ok and "no error raised" or ("error was: " .. tostring(err)))
  end
  return good
end

-- A misuse of the API is placed at the script's line: pcall's (ok, e) must
-- be an error "<the calling script>:<line>: " followed by text containing
-- want (plain), and name no gpuplan file.  For an API function called by
-- pcall itself (no Lua frame of the script between) line is the pcall's.
function M.placed(ok, e, line, want, name)
  return M.placed_in(debug.getinfo(2, "S").short_src, ok, e, line, want, name)
end

-- M.placed with the script's file src given.
function M.placed_in(src, ok, e, line, want, name)
  e = tostring(e)
  local head = src .. ":" .. line .. ": "
  local good = not ok and e:sub(1, #head) == head and e:find(want, 1, true) ~= nil
    and not e:find("lua/gpuplan/", 1, true)
  if not M.ok(good, name) then M.diag(ok and "no error" or e) end
  return good
end

-- fn (written on the caller's line) must raise as M.placed says, at that
-- line of the caller's file.
function M.raises_here(fn, want, name)
  local at = debug.getinfo(2, "Sl")
  local ok, e = pcall(fn)
  return M.placed_in(at.short_src, ok, e, at.currentline, want, name)
end

function M.like(s, pattern, name, plain)
  local good = type(s) == "string" and s:find(pattern, 1, plain) ~= nil
  if not M.ok(good, name) then M.diag("got: " .. tostring(s)) end
  return good
end

-- A scratch directory: s.dir its path, s.put(name, text) writes a file
-- whole and returns its path, s.clean() removes everything in it (links
-- as links, directories with what they hold), s.remove() it as well.
function M.scratch()
  local lfs = require "lfs"
  local dir = os.tmpname()
  os.remove(dir)
  assert(lfs.mkdir(dir))
  local s = { dir = dir }
  function s.put(name, text)
    local path = dir .. "/" .. name
    local fh = assert(io.open(path, "wb"))
    fh:write(text)
    fh:close()
    return path
  end
  local function empty(d)
    for name in lfs.dir(d) do
      if name ~= "." and name ~= ".." then
        local p = d .. "/" .. name
        if lfs.symlinkattributes(p, "mode") == "directory" then empty(p) lfs.rmdir(p)
        else os.remove(p) end
      end
    end
  end
  function s.clean() empty(dir) end
  function s.remove() empty(dir) lfs.rmdir(dir) end
  return s
end

-- A deep copy of x (tables copied all the way down, metatables kept): a
-- case or a job to change without touching the one it came from.
function M.copy(x)
  if type(x) ~= "table" then return x end
  local y = {}
  for k, v in pairs(x) do y[k] = M.copy(v) end
  return setmetatable(y, getmetatable(x))
end

-- The seconds a collective of x seconds costs beside a window of w
-- seconds of compute: what the window cannot hide stays on the path, and
-- each hidden second slows the compute beside it by the engine's
-- OVERLAP_SLOWDOWN, 0.189 (engine/train_int.h): x - min(x, w) + 0.189
-- min(x, w).
function M.ov(x, w)
  local h = math.min(x, w)
  return x - h + 0.189 * h
end

-- Megatron's SP backward on Transformer Engine's linears (engine/
-- train_layer.c async_tp_bwd), priced from a gp.train result r: the two
-- row-parallel linears' gathers of dY (ag each) on the path, and for each
-- column-parallel linear (qkv, mlp_up) the reduce-scatter of its input
-- gradient (rs) and the re-gather of its kept input shard (rg), each
-- beside half of that linear's backward, M.ov.
function M.sp_bwd(r, ag, rs, rg)
  local want = 2 * ag
  for _, n in ipairs({ "qkv", "mlp_up" }) do
    local w = M.op(r, n).bwd / 2
    want = want + M.ov(rs, w) + M.ov(rg, w)
  end
  return want
end

-- A validation case table c read the way `gpuplan validate FILE` reads
-- its file (gpuplan.validate.read of c alone, as JSON in a scratch file):
-- true and the cases, or false and the error as a string.
function M.read_case(c)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(require("cjson").encode({ c }))
  f:close()
  local okr, e = pcall(require("gpuplan.validate").read, path)
  os.remove(path)
  if okr then return true, e end
  return false, tostring(e)
end

-- The shipped validation cases (validation/cases.json, read from the
-- repository root the tests run in), decoded: the list of case tables.
function M.shipped_cases()
  local f = assert(io.open("validation/cases.json", "rb"))
  local doc = require("cjson").decode(f:read("a"))
  f:close()
  return doc.cases or doc
end

-- The shipped case with id, decoded afresh (a table of its own to change),
-- or an error naming the id.
function M.shipped_case(id)
  for _, x in ipairs(M.shipped_cases()) do if x.id == id then return x end end
  error("no case " .. id)
end

-- The options the train predictor (gpuplan.predict.train) hands gp.train
-- for the train case c, caught on the way: the options table as handed
-- (nil when gp.train was never called) and the prediction.
function M.handed(c)
  local train = require "gpuplan.train"
  local orig, seen = train.train, nil
  train.train = function(o) seen = o; return orig(o) end
  local okp, pred = pcall(require("gpuplan.predict.train"), c, require("gpuplan").catalog())
  train.train = orig
  if not okp then error(pred, 0) end
  return seen, pred
end

-- The forward seconds of a gp.train result r summed over its op rows.
function M.fwd_total(r)
  local s = 0
  for _, o in ipairs(r.ops) do s = s + o.fwd end
  return s
end

-- A gp.sweep result c against gp.train of its layout with the job's
-- options: the same engine path, so step and memory agree to rounding
-- (1e-12 relative).  Two tests; returns gp.train's result.
function M.same_as_train(job, c, what)
  local r = require("gpuplan").train(require("gpuplan.sweep").train_options(job, c))
  M.near(c.step_s / r.step_s, 1, 1e-12, what .. ": step_s = gp.train's")
  M.near(c.mem_bytes / r.memory.total, 1, 1e-12, what .. ": memory = gp.train's")
  return r
end

function M.done_testing()
  if not planned then io.write("1..", n, "\n") end
  io.stdout:flush()
  if planned and planned ~= n then
    io.write("# planned ", planned, " tests, ran ", n, "\n")
    os.exit(1)
  end
  os.exit(failed == 0 and 0 or 1)
end

return M
