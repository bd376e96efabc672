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

return M
