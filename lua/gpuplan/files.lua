-- gpuplan.files: reading input files under a size limit, writing output
-- files whole or not at all.
--
--   local files = require "gpuplan.files"
--   local text = files.read(path, "case")    -- raises "... too large ..."
--   files.write("out.svg", svg_text)         -- raises "cannot write ..."
--
-- Inputs are refused by size before they are read (stat), and read with a
-- bound (a FIFO or a file that grows cannot get past it either): a data
-- file is text a person or a converter wrote, and a runaway one must not
-- spend the machine's memory and minutes before any check runs.  Outputs
-- go through the engine's outfile_write (engine/outfile.h): a fresh
-- temporary created exclusively beside the target, then renamed over it;
-- only a regular file is replaced, never a link, a directory or a device.

local lfs = require "lfs"
local config = require "gpuplan.config"

local M = {}

-- The largest input of each kind, in bytes, and why it is generous.
--   catalog: the largest built-in file (catalog/gpus/nvidia-hopper.lua,
--            a dozen GPUs with their sources) is 11 KB; 4 MiB is a
--            generated catalog of some 5,000 entries.
--   case:    the published cases (60 of them) are 110 KB; 64 MiB holds
--            tens of thousands.
--   config:  a Hugging Face config.json is 1-10 KB; 16 MiB is far past
--            any.
M.limits = {
  catalog = 4 * 1024 * 1024,
  case = 64 * 1024 * 1024,
  config = 16 * 1024 * 1024,
}

local names = { catalog = "a catalog file", case = "a case file", config = "a config file" }

local function mib(n)
  return (string.format("%.1f", n / 2 ^ 20):gsub("%.0$", "")) .. " MiB"
end

-- The text of the file at path, at most M.limits[kind] bytes.  Returns
-- text, or nil and a message "PATH: ..." (no such file, a directory,
-- too large, unreadable).
function M.read(path, kind)
  local max = assert(M.limits[kind], "files.read: unknown kind")
  local attr, aerr = lfs.attributes(path)
  if not attr then return nil, string.format("%s: cannot open (%s)", path, tostring(aerr)) end
  if attr.mode == "directory" then return nil, path .. ": is a directory" end
  local too_big = string.format("%s: too large (%%s; the limit for %s is %s)", path,
    names[kind], mib(max))
  if attr.mode == "file" and attr.size > max then
    return nil, string.format(too_big, mib(attr.size))
  end
  local f, err = io.open(path, "rb")
  if not f then return nil, string.format("%s: cannot open (%s)", path, tostring(err)) end
  local text, rerr = f:read(max + 1)
  f:close()
  if text == nil and rerr then
    return nil, string.format("%s: cannot read (%s)", path, tostring(rerr))
  end
  text = text or ""
  if #text > max then return nil, string.format(too_big, "more than " .. mib(max)) end
  return text
end

-- The decoder's message for text that is not JSON, as "PATH:LINE:
-- invalid JSON: ... at column C": lua-cjson counts "at character N" from
-- the start of the whole text, which a reader of a many-line case file
-- cannot find.
function M.json_error(path, text, msg)
  msg = tostring(msg):match("^[^\n]*")
  -- an empty file, or one of blanks, decodes to the end at once
  -- ("Expected value but found T_END"); a byte-order mark is no JSON
  -- value ("invalid token" at column 1)
  if type(text) == "string" and text:match("^%s*$") then
    return string.format("%s:1: the file is empty (no JSON value)", path)
  end
  if type(text) == "string" and text:sub(1, 3) == "\239\187\191" then
    return string.format("%s:1: invalid JSON: the file starts with a UTF-8 byte-order mark "
      .. "(save it without one)", path)
  end
  local n = tonumber(msg:match(" at character (%d+)$"))
  if not n then return string.format("%s: invalid JSON: %s", path, msg) end
  local before = text:sub(1, n - 1)
  local line = select(2, before:gsub("\n", "")) + 1
  local col = n - (before:match(".*()\n") or 0)
  return string.format("%s:%d: invalid JSON: %s at column %d", path, line,
    msg:gsub(" at character %d+$", ""), col)
end

-- The first key that one object of JSON text states twice, as "PATH:LINE:
-- duplicate key 'K' (first at line L)", or nil.  lua-cjson, like most
-- decoders, keeps the last value of a repeated key and says nothing
-- (RFC 8259 section 4: "The names within an object SHOULD be unique ...
-- many implementations report the last name/value pair only"), so a case
-- that states "tp": 8 and, further down, "tp": 4 was priced at 4 in
-- silence.  text has been decoded already (it is valid JSON): the walk
-- only follows strings, brackets and commas.  Keys are compared as the
-- decoder stores them (escapes decoded: "a" and "\u0061" are one key).
-- first_line: the line number of text's first line (a JSON-lines file
-- decodes each line alone); 1 when absent.
function M.json_duplicate(path, text, first_line)
  local stack, depth = {}, 0
  local keys, want_key = false, false -- keys: the open object's, false in an array
  local pos = 1
  while true do
    local s, _, c = text:find('([{}%[%],"])', pos)
    if not s then return nil end
    pos = s + 1
    if c == '"' then
      local e, escaped = pos, false
      while true do
        local q = text:find('["\\]', e)
        if not q then return nil end -- cannot happen in decoded text
        if text:byte(q) == 92 then escaped, e = true, q + 2 else e = q break end
      end
      if keys and want_key then
        local key = text:sub(s + 1, e - 1)
        if escaped then key = require("cjson").decode(text:sub(s, e)) end
        local first = keys[key]
        if first then
          local function line_of(at)
            return select(2, text:sub(1, at - 1):gsub("\n", "")) + (first_line or 1)
          end
          local l1, l2 = line_of(first), line_of(s)
          return string.format("%s:%d: duplicate key '%s' in one object (%s); a JSON "
            .. "decoder keeps the last in silence: state it once", path, l2,
            require("gpuplan.units").oneline(#key > 60 and key:sub(1, 60) .. "..." or key),
            l1 == l2 and "twice on this line" or ("first at line " .. l1))
        end
        keys[key] = s
        want_key = false
      end
      pos = e + 1
    elseif c == "{" then
      depth = depth + 1
      stack[depth] = keys
      keys, want_key = {}, true
    elseif c == "[" then
      depth = depth + 1
      stack[depth] = keys
      keys = false
    elseif c == "," then
      want_key = keys and true or false
    else -- } or ]
      keys, want_key = stack[depth], false
      stack[depth] = nil
      depth = depth - 1
    end
  end
end

-- Why no file can be created in directory dir, or nil.  outfile_write
-- (engine/outfile.c) writes a temporary beside the file and renames it,
-- so a directory that takes no new file (read-only, /proc) failed only
-- when written, after the command had printed its table.  A probe file
-- is created and removed at once.
function M.create_problem(dir)
  if dir == "" then dir = "/" end
  local probe
  for _ = 1, 8 do
    local p = string.format("%s/.gpuplan-probe.%012x.tmp", dir, math.random(0, (1 << 48) - 1))
    if lfs.symlinkattributes(p, "mode") == nil then probe = p break end
  end
  if not probe then return nil end
  local f, msg = io.open(probe, "w")
  if not f then
    return "cannot create a file in its directory: " .. tostring(msg):gsub("^.-: ", "")
  end
  f:close()
  os.remove(probe)
  return nil
end

-- Why path cannot be an output file, or nil: the checks outfile_write
-- makes, run before any work so a command fails before it prints.
-- ext (optional): the extension the file is written as ("svg"); a name
-- that ends in another one (chart.png, out.txt) is refused: the SVG went
-- into it in silence.  A name without an extension is taken as given.
function M.output_problem(path, ext)
  if type(path) ~= "string" or path == "" then return "the file name is empty" end
  local has = path:match("%.([%w]+)$")
  if ext and has and has:lower() ~= ext then
    return string.format("it ends in .%s, but the file is %s (name it .%s)", has,
      ext:upper(), ext)
  end
  local mode = lfs.symlinkattributes(path, "mode")
  if mode == nil then
    -- A new file in a directory that is not there failed only when
    -- written, after the command had printed its table (comm --svg,
    -- infer --sweep-batch --svg): the directory is checked here.
    local dir = path:match("^(.*)/[^/]*$")
    if dir == "" then dir = "/" end
    local dmode = dir and lfs.attributes(dir, "mode")
    if dir and dmode == nil then
      return string.format("its directory '%s' does not exist", dir)
    elseif dir and dmode ~= "directory" then
      return string.format("'%s' is not a directory", dir)
    end
    return M.create_problem(dir or ".")
  end
  if mode == "file" then return M.create_problem(path:match("^(.*)/[^/]*$") or ".") end
  if mode == "link" then
    return "it is a symbolic link (output files replace a regular file and never "
      .. "write through a link; give the link's target)"
  end
  local kind = ({ directory = "a directory", ["named pipe"] = "a FIFO", socket = "a socket",
                  ["char device"] = "a character device",
                  ["block device"] = "a block device" })[mode] or "not a regular file"
  return "it is " .. kind .. ", not a regular file"
end

-- Raise "cannot write 'PATH': why" when path cannot be an output file.
function M.check_output(path, ext)
  local why = M.output_problem(path, ext)
  if why then error(string.format("cannot write '%s': %s", tostring(path), why), 0) end
end

-- Write data to path whole or not at all; raises "cannot write 'PATH': why".
function M.write(path, data)
  if type(path) ~= "string" then error("files.write: path must be a string", 0) end
  if type(data) ~= "string" then error("files.write: data must be a string", 0) end
  local ok, err = config.write_file(path, data)
  if not ok then error(err, 0) end
  return true
end

-- The first field that one table constructor of Lua source src states
-- twice, as line, message ("gpu: field 'peak.bf16' stated twice in one
-- table (first at line 9); ..."), or nil.  Lua keeps the last value of a
-- repeated key in a constructor and says nothing (Lua 5.4 manual 3.4.9:
-- "If the same key appears more than once ... the value is the last one";
-- a table built by a constructor calls no __newindex), so a catalog entry
-- that states mem_bw = "3.35TB/s" and, lines below, mem_bw = "2TB/s" was
-- priced at the second in silence, and a bad second value was said at
-- the first one's line.  src has compiled (it is valid Lua): the walk
-- follows comments, strings and brackets, and takes a key where a
-- constructor's field starts ("name =" or ["name"] = after "{", "," or
-- ";"); a function's body inside a table is code, not fields.
local OPENS = { ["function"] = true, ["if"] = true, ["do"] = true, ["repeat"] = true }
function M.lua_duplicate(src)
  local nl = {}
  for at in src:gmatch("()\n") do nl[#nl + 1] = at end
  local function line_of(at)
    local lo, hi = 1, #nl
    while lo <= hi do
      local mid = (lo + hi) // 2
      if nl[mid] < at then lo = mid + 1 else hi = mid - 1 end
    end
    return lo
  end
  -- The open brackets, innermost last: kind "table", "paren", "bracket"
  -- or "block" (function, if, do, repeat: code); a table's keys (key ->
  -- line), its field path (a table that is a field's value) and the
  -- constructor it was handed to ("gpu").
  local stack = { { kind = "top" } }
  local want_key = false -- a table's field may start here
  local prev_name, prev_key -- the Name just read; the key whose "=" was just read
  local pos, n = 1, #src
  -- the position after the long bracket opened at at ("[==["), or nil
  local function long_close(at)
    local eq = src:match("^%[(=*)%[", at)
    if not eq then return nil end
    local _, e = src:find("]" .. eq .. "]", at + #eq + 2, true)
    return e and e + 1 or n + 1
  end
  -- a key of the open table at s; the message when it is there already
  local function key(top, name, s)
    local at = line_of(s)
    local first = top.keys[name]
    if first then
      local entry = top.ctor or ""
      if top.ctor and top.root.id then entry = entry .. " '" .. top.root.id .. "'" end
      return at, string.format("%sfield '%s' stated twice in one table (%s); Lua keeps "
        .. "the last in silence: state it once", top.ctor and (entry .. ": ") or "",
        (top.path and top.path .. "." or "") .. name,
        first == at and "twice on this line" or ("first at line " .. first))
    end
    top.keys[name] = at
    prev_key = name
    -- the entry's id, where it is a plain string, for the message
    if name == "id" and top.root == top then
      top.id = src:match('^%s*=%s*"([%w_%.%-/]+)"', pos) or src:match("^%s*=%s*'([%w_%.%-/]+)'", pos)
    end
  end
  while pos <= n do
    local s, _, c = src:find("([%-\"'%[%]{}%(%),;=%w_])", pos)
    if not s then return nil end
    pos = s + 1
    local top = stack[#stack]
    local key_here = want_key and top.kind == "table"
    local name_before, key_before = prev_name, prev_key
    prev_name, prev_key, want_key = nil, nil, false
    if c == "-" then
      if src:sub(s + 1, s + 1) == "-" then
        pos = src:sub(s + 2, s + 2) == "[" and long_close(s + 2)
          or (src:find("\n", s + 2, true) or n) + 1
        -- a comment is not a token: a field may still start after it
        prev_name, prev_key, want_key = name_before, key_before, key_here
      end
    elseif c == '"' or c == "'" then
      local e = s + 1
      while true do
        local q = src:find("[\\" .. c .. "\n]", e)
        if not q then return nil end
        if src:byte(q) == 92 then e = q + 2 else e = q break end
      end
      pos = e + 1
    elseif c == "[" then
      local close = long_close(s)
      local k, e = src:match("^%[%s*[\"']([%a_][%w_]*)[\"']%s*%]%s*()=", s)
      if close then
        pos = close
      elseif key_here and k and src:sub(e + 1, e + 1) ~= "=" then
        pos = e + 1
        local at, msg = key(top, k, s)
        if at then return at, msg end
      else
        stack[#stack + 1] = { kind = "bracket" }
      end
    elseif c == "]" or c == ")" or c == "}" then
      if #stack > 1 then stack[#stack] = nil end
    elseif c == "(" then
      stack[#stack + 1] = { kind = "paren", ctor = top.kind ~= "table" and name_before or nil }
    elseif c == "{" then
      local path
      if top.kind == "table" and key_before then
        path = (top.path and top.path .. "." or "") .. key_before
      end
      local ctor = top.ctor
      if top.kind ~= "table" then ctor = name_before or top.ctor end
      local t = { kind = "table", keys = {}, path = path, ctor = ctor }
      t.root = top.kind == "table" and top.root or t
      stack[#stack + 1] = t
      want_key = true
    elseif c == "," or c == ";" then
      want_key = top.kind == "table"
    elseif c == "=" then
      if src:sub(s + 1, s + 1) == "=" then
        pos = s + 2
      else
        prev_key = key_before
      end
    elseif c:match("%d") then
      pos = src:find("[^%w_%.]", s) or n + 1
    else
      local word, e = src:match("^([%a_][%w_]*)()", s)
      pos = e
      if OPENS[word] then
        stack[#stack + 1] = { kind = "block" }
      elseif (word == "end" or word == "until") and top.kind == "block" then
        stack[#stack] = nil
      end
      prev_name = word
      local eq = src:match("^%s*()=", e)
      if key_here and eq and src:sub(eq + 1, eq + 1) ~= "=" then
        local at, msg = key(top, word, s)
        if at then return at, msg end
      end
    end
  end
  return nil
end

return M
