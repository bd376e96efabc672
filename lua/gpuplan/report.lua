-- gpuplan.report: render rows as aligned text, markdown, CSV or JSON.
--
-- rows: a list of tables.  opts.columns: a list of
--   { key = "busbw", label = "busbw GB/s", fmt = "%.1f" | function(v, row) }
-- (default: the sorted keys of the rows).  opts.format: text (default),
-- markdown, csv, json.  opts.title: a heading (text/markdown only).  The
-- label heads text and markdown; CSV heads a column with its key (or its
-- csv = "..."), the name JSON gives the value.
-- Output is deterministic: explicit number formats, columns in the given
-- order, rows in the given order (sort before calling), JSON keys sorted.
-- A missing value prints as "-" (text, markdown), empty (CSV), null (JSON).

local M = {}

M.formats = { text = true, markdown = true, csv = true, json = true }

-- Non-finite numbers print the same on every platform ("%.1f" of 0/0 is
-- "-nan" with glibc); nil for finite ones.
local function nonfinite(v)
  if type(v) ~= "number" then return nil end
  if v ~= v then return "nan" end
  if v == math.huge then return "inf" end
  if v == -math.huge then return "-inf" end
  return nil
end

local function default_fmt(v)
  if math.type(v) == "integer" then return tostring(v) end
  if type(v) == "number" then
    if v ~= v then return "nan" end
    if v == math.floor(v) and math.abs(v) < 1e15 then return string.format("%d", v) end
    return string.format("%.4g", v)
  end
  if type(v) == "boolean" then return v and "yes" or "no" end
  -- a table as JSON: its address ("table: 0x55...") differed every run
  -- and said nothing (a train result's memory, parts ...)
  if type(v) == "table" then
    local ok, s = pcall(M.json, v)
    return ok and s or "a table"
  end
  if type(v) ~= "string" then return "a " .. type(v) end
  return tostring(v)
end

-- The public function rendering now (render, report): cell's errors name it.
local rendering

local function cell(col, row)
  local v = row[col.key]
  if v == nil or v == M.null then return nil end
  local nf = nonfinite(v)
  if nf then return nf end
  -- a fmt that cannot format the value raised Lua's own "bad argument
  -- #2 to 'format'", naming neither the column nor its fmt, and a
  -- function's table came out as its address
  local function bad(what)
    local who = rendering
    rendering = nil
    error(string.format("%scolumn '%s': fmt %s", who and who .. ": " or "", tostring(col.key),
      what), 0)
  end
  if type(col.fmt) == "function" then
    -- the script's function failing was its message alone ("x.lua:4:
    -- attempt to index a number value"), naming neither render nor the
    -- column, as sweep names its where and policy functions; an error
    -- object that is not a message goes on as it is
    local ok, s = pcall(col.fmt, v, row)
    if not ok then
      local mt = getmetatable(s)
      if type(s) == "string" or type(s) == "number"
         or (type(mt) == "table" and mt.__tostring) then
        bad("function failed: " .. tostring(s))
      end
      rendering = nil
      error(s, 0)
    end
    if s == nil then return nil end
    if type(s) ~= "string" and type(s) ~= "number" then
      bad("function returned " .. require("gpuplan.args").shown(s) .. ", not a string")
    end
    return tostring(s)
  end
  if type(col.fmt) == "string" and type(v) == "number" then
    local ok, s = pcall(string.format, col.fmt, v)
    if not ok then
      bad(string.format("'%s' cannot format %s (%s)", col.fmt, tostring(v),
        tostring(s):match("%((.*)%)%s*$") or tostring(s)))
    end
    return s
  end
  return default_fmt(v)
end

-- Display width in terminal columns: East Asian wide and fullwidth
-- characters take two, combining marks and zero-width characters none
-- (the ranges of Unicode's East_Asian_Width W/F and general category Mn
-- that occur in practice, as in Markus Kuhn's wcwidth).  A string that is
-- not valid UTF-8 counts one column per byte.
local function char_width(c)
  if (c >= 0x0300 and c <= 0x036F) or (c >= 0x1AB0 and c <= 0x1AFF)
    or (c >= 0x1DC0 and c <= 0x1DFF) or (c >= 0x200B and c <= 0x200F)
    or (c >= 0x20D0 and c <= 0x20FF) or (c >= 0xFE20 and c <= 0xFE2F) then
    return 0
  end
  if (c >= 0x1100 and c <= 0x115F) or (c >= 0x2E80 and c <= 0xA4CF and c ~= 0x303F)
    or (c >= 0xAC00 and c <= 0xD7A3) or (c >= 0xF900 and c <= 0xFAFF)
    or (c >= 0xFE30 and c <= 0xFE4F) or (c >= 0xFF00 and c <= 0xFF60)
    or (c >= 0xFFE0 and c <= 0xFFE6) or (c >= 0x1F300 and c <= 0x1F64F)
    or (c >= 0x1F900 and c <= 0x1F9FF) or (c >= 0x20000 and c <= 0x3FFFD) then
    return 2
  end
  return 1
end

local function width(s)
  -- Plain ASCII (nearly every cell) is a column a byte: no walk over its
  -- characters, which was a tenth of a short command's time.
  if not s:find("[\128-\255]") then return #s end
  if not utf8.len(s) then return #s end
  local w = 0
  for _, c in utf8.codes(s) do w = w + char_width(c) end
  return w
end
M.width = width

local function columns_of(rows, opts)
  if opts.columns then
    local cols = {}
    for i, c in ipairs(opts.columns) do
      if type(c) == "string" then c = { key = c } end
      cols[i] = { key = c.key, label = c.label or c.key, fmt = c.fmt, align = c.align,
                  csv = c.csv }
    end
    return cols
  end
  -- every row's keys (the first row's alone dropped what later rows
  -- had: {{a = 1}, {b = 2}} rendered as JSON [{"a":1}, {"a":null}]); of a
  -- table (text, markdown, CSV) those of plain values: a nested table (a
  -- result's memory, parts, ops) or a function is no column (JSON keeps
  -- every key)
  local json = opts.format == "json"
  local keys, seen = {}, {}
  for _, row in ipairs(rows) do
    for k, v in pairs(row) do
      if not seen[k] and type(k) == "string" and k:sub(1, 1) ~= "_" and (json or v == M.null
         or (type(v) ~= "table" and type(v) ~= "function" and type(v) ~= "userdata")) then
        seen[k] = true
        keys[#keys + 1] = k
      end
    end
  end
  table.sort(keys)
  local cols = {}
  for i, k in ipairs(keys) do cols[i] = { key = k, label = k } end
  return cols
end

-- JSON ------------------------------------------------------------------

local escapes = { ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f",
                  ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }

-- s with each byte that is not part of valid UTF-8 replaced by U+FFFD.
local function valid_utf8(s)
  if utf8.len(s) then return s end
  local out, i = {}, 1
  while i <= #s do
    local ok, bad = utf8.len(s, i)
    if ok then out[#out + 1] = s:sub(i) break end
    out[#out + 1] = s:sub(i, bad - 1)
    out[#out + 1] = "\239\191\189"
    i = bad + 1
  end
  return table.concat(out)
end

local function json_string(s)
  return '"' .. valid_utf8(s):gsub('[%c"\\]', function(c)
    return escapes[c] or string.format("\\u%04x", c:byte())
  end) .. '"'
end

local function is_array(t)
  local n = #t
  if n == 0 then return next(t) == nil and false end
  for k in pairs(t) do
    if math.type(k) ~= "integer" or k < 1 or k > n then return false end
  end
  return true
end

local encode

-- The shortest of %.15g/%.16g/%.17g that reads back as the same double
-- (17 significant digits always do); integers exactly.
local function encode_number(v)
  if v ~= v or v == math.huge or v == -math.huge then return "null" end
  if math.type(v) == "integer" then return tostring(v) end
  if v == math.floor(v) and math.abs(v) <= 2 ^ 53 then return string.format("%d", v) end
  for _, f in ipairs { "%.15g", "%.16g" } do
    local s = string.format(f, v)
    if tonumber(s) == v then return s end
  end
  return string.format("%.17g", v)
end

-- open: the tables being encoded on the way here; one met again contains
-- itself (it overflowed the stack inside this file).  path: where v sits
-- in the value encoded ("parts[2].name"), said by a refusal: a train
-- result with one function in it read "cannot encode a function as
-- JSON", no word of which of its fields.
local function at(path) return path and (" (at " .. path .. ")") or "" end
local function sub(path, k)
  if type(k) == "number" then return (path or "") .. "[" .. encode_number(k) .. "]" end
  return path and (path .. "." .. k) or k
end
encode = function(v, out, open, path)
  local t = type(v)
  if v == nil or v == M.null then out[#out + 1] = "null"
  elseif t == "boolean" then out[#out + 1] = tostring(v)
  elseif t == "number" then out[#out + 1] = encode_number(v)
  elseif t == "string" then out[#out + 1] = json_string(v)
  elseif t == "table" then
    open = open or {}
    if open[v] then error("cannot encode a table that contains itself as JSON" .. at(path), 0) end
    open[v] = true
    if is_array(v) then
      out[#out + 1] = "["
      for i = 1, #v do
        if i > 1 then out[#out + 1] = "," end
        encode(v[i], out, open, sub(path, i))
      end
      out[#out + 1] = "]"
    else
      -- A number key is named by its text, as JSON's keys are strings
      -- (lua-cjson's rule): {1, 2, x = 3} lost its list and came out as
      -- {"x":3}.  A key of another kind has no JSON name: refused.
      local keys, of = {}, {}
      for k in pairs(v) do
        local name = k
        if type(k) == "number" then
          if k ~= k or k == math.huge or k == -math.huge then
            error("cannot encode a table keyed by " .. tostring(k) .. " as JSON" .. at(path), 0)
          end
          name = encode_number(k)
        elseif type(k) ~= "string" then
          error("cannot encode a table keyed by a " .. type(k) .. " as JSON" .. at(path), 0)
        end
        if type(k) ~= "string" or k:sub(1, 1) ~= "_" then
          if of[name] ~= nil then
            error("cannot encode a table with two keys named " .. json_string(name) .. " as JSON"
              .. at(path), 0)
          end
          keys[#keys + 1], of[name] = name, k
        end
      end
      table.sort(keys)
      out[#out + 1] = "{"
      for i, name in ipairs(keys) do
        if i > 1 then out[#out + 1] = "," end
        out[#out + 1] = json_string(name) .. ":"
        encode(v[of[name]], out, open, sub(path, of[name]))
      end
      out[#out + 1] = "}"
    end
    open[v] = nil
  else
    -- A resolved job's step result (train_job / rl_job :step, a
    -- userdata): encoded as its :table(), every field, as gp.train's and
    -- gp.rl's results are; other userdata are refused.
    if t == "userdata" then
      local okf, f = pcall(function() return v.table end)
      if okf and type(f) == "function" then return encode(f(v), out, open, path) end
    end
    error("cannot encode a " .. t .. " as JSON" .. at(path), 2)
  end
end

-- A sentinel for an explicit JSON null inside tables.
M.null = setmetatable({}, { __tostring = function() return "null" end })

-- Encode any value (tables with sorted keys; '_'-prefixed keys skipped).
function M.json(v)
  local out = {}
  encode(v, out)
  return table.concat(out)
end

-- Renderers ---------------------------------------------------------------

local function render_json(rows, cols)
  local out = { "[" }
  for i, row in ipairs(rows) do
    local parts = {}
    for _, c in ipairs(cols) do
      local v = row[c.key]
      if v == M.null then v = nil end
      parts[#parts + 1] = json_string(c.key) .. ":" .. M.json(v)
    end
    out[#out + 1] = (i > 1 and ",\n " or "\n ") .. "{" .. table.concat(parts, ",") .. "}"
  end
  out[#out + 1] = #rows > 0 and "\n]\n" or "]\n"
  return table.concat(out)
end

local function csv_field(s)
  if s == nil then return "" end
  s = tostring(s)
  if s:find('[,"\r\n]') then return '"' .. s:gsub('"', '""') .. '"' end
  return s
end

-- A CSV cell: as the table's, except that a number without an explicit
-- format keeps 15 significant digits (the tables' "%.4g" is for reading;
-- a spreadsheet computes with the value).
local function csv_cell(col, row)
  local v = row[col.key]
  if col.fmt == nil and math.type(v) == "float" and not nonfinite(v)
     and not (v == math.floor(v) and math.abs(v) < 1e15) then
    return string.format("%.15g", v)
  end
  return cell(col, row)
end

local function render_csv(rows, cols)
  local out, head = {}, {}
  -- The header is each column's key, the name JSON gives the value (the
  -- result names of gpuplan.results: step_s, mem_gib ...); the labels are
  -- for reading.  A column may name its header (csv).
  for i, c in ipairs(cols) do head[i] = csv_field(c.csv or c.key) end
  out[1] = table.concat(head, ",")
  for _, row in ipairs(rows) do
    local f = {}
    for i, c in ipairs(cols) do f[i] = csv_field(csv_cell(c, row)) end
    out[#out + 1] = table.concat(f, ",")
  end
  return table.concat(out, "\n") .. "\n"
end

local function is_numeric_col(rows, c)
  for _, row in ipairs(rows) do
    local v = row[c.key]
    if v ~= nil and type(v) ~= "number" then return false end
  end
  return true
end

-- The widest last-column cell a text table's rule is drawn under (a
-- terminal line's 80 columns; a longer cell wraps on its own anyway).
local TEXT_WIDTH = 80

local function render_table(rows, cols, opts, markdown)
  -- One line per row: control characters become spaces (a newline is
  -- <br> in markdown) and markdown escapes its cell separator.
  local function clean(s)
    if markdown then
      s = s:gsub("\r?\n", "<br>"):gsub("%c", " "):gsub("|", "\\|")
    else
      s = s:gsub("%c", " ")
    end
    return s
  end
  local cells, widths, right, head = {}, {}, {}, {}
  for i, c in ipairs(cols) do
    head[i] = clean(tostring(c.label))
    widths[i] = width(head[i])
    right[i] = c.align == "right" or (c.align ~= "left" and is_numeric_col(rows, c))
  end
  for r, row in ipairs(rows) do
    cells[r] = {}
    for i, c in ipairs(cols) do
      local s = clean(cell(c, row) or "-")
      cells[r][i] = s
      if width(s) > widths[i] then widths[i] = width(s) end
    end
  end
  local function pad(s, w, r)
    local n = w - width(s)
    if n <= 0 then return s end
    return r and (string.rep(" ", n) .. s) or (s .. string.rep(" ", n))
  end
  local out = {}
  if opts.title then
    out[#out + 1] = markdown and ("### " .. opts.title .. "\n") or opts.title
  end
  -- Text lines end without blanks: the last cell is not padded, and the
  -- blanks of empty cells before it are cut by a scan from the end (the
  -- pattern "%s+$" retries at every blank of a run, quadratic in the
  -- width of a long cell above).
  local function line(vals)
    local parts, n = {}, #vals
    for i, s in ipairs(vals) do
      parts[i] = (markdown or i < n or right[i]) and pad(s, widths[i], right[i]) or s
    end
    if markdown then return "| " .. table.concat(parts, " | ") .. " |" end
    local l = table.concat(parts, "  ")
    local e = #l
    while e > 0 and l:byte(e) == 32 do e = e - 1 end
    return l:sub(1, e)
  end
  out[#out + 1] = line(head)
  local sep = {}
  for i = 1, #cols do
    if markdown then
      sep[i] = right[i] and (string.rep("-", math.max(widths[i] - 1, 2)) .. ":")
        or string.rep("-", math.max(widths[i], 3))
    else
      sep[i] = string.rep("-", widths[i])
    end
  end
  -- A left-aligned last text column is not padded, so its rule need not
  -- run under a cell that wraps on its own anyway: it spans the widest
  -- cell of at most TEXT_WIDTH columns (at least the heading).  Before,
  -- one long cell (infer's "assumed" row, 500 characters) drew 500 dashes.
  local n = #cols
  if not markdown and n > 0 and not right[n] then
    local w = width(head[n])
    for _, r in ipairs(cells) do
      local cw = width(r[n])
      if cw > w and cw <= TEXT_WIDTH then w = cw end
    end
    sep[n] = string.rep("-", w)
  end
  if markdown then
    local parts = {}
    for i, s in ipairs(sep) do parts[i] = pad(s, widths[i], false) end
    out[#out + 1] = "| " .. table.concat(parts, " | ") .. " |"
  else
    out[#out + 1] = table.concat(sep, "  ")
  end
  for _, r in ipairs(cells) do out[#out + 1] = line(r) end
  return table.concat(out, "\n") .. "\n"
end

-- rows a list of tables and opts nil or a table, else an error naming the
-- argument at the public function's caller (who: "render", "report"):
-- before, gp.report(5) raised "report.lua:92: attempt to index a number
-- value (local 'rows')", a line of gpuplan's, as a bug would.
local function check_args(rows, opts, who)
  local shown = require("gpuplan.args").shown
  if type(rows) ~= "table" then
    error(string.format("%s: rows must be a list of tables (got %s)", who, shown(rows)), 3)
  end
  for i, r in ipairs(rows) do
    if type(r) ~= "table" then
      error(string.format("%s: row %d must be a table (got %s)", who, i, shown(r)), 3)
    end
  end
  -- a table keyed by name ({h100 = {...}}) printed nothing at all
  for k in pairs(rows) do
    if math.type(k) ~= "integer" or k < 1 or k > #rows then
      error(string.format("%s: rows must be a list of tables (got a table with key %s)", who,
        type(k) == "string" and ("'" .. k .. "'") or shown(k)), 3)
    end
  end
  if opts ~= nil and type(opts) ~= "table" then
    error(string.format("%s: opts must be a table (got %s)", who, shown(opts)), 3)
  end
  -- a misspelt key (colums, kye, lable) was ignored: the table printed
  -- every key, or a column headed "nil" with "-" in every row
  local args = require "gpuplan.args"
  if opts then args.check_keys(opts, { "columns", "format", "title" }, who .. ": opts", 3) end
  -- a title table raised "invalid value (table) at index 1 in table for
  -- 'concat'" from inside gpuplan
  if opts and opts.title ~= nil and type(opts.title) ~= "string" and type(opts.title) ~= "number" then
    error(string.format("%s: opts.title must be a string (got %s)", who, shown(opts.title)), 3)
  end
  if opts and opts.columns ~= nil then
    if type(opts.columns) ~= "table" then
      error(string.format("%s: opts.columns must be a list (got %s)", who,
        shown(opts.columns)), 3)
    end
    for i, c in ipairs(opts.columns) do
      if type(c) ~= "string" and type(c) ~= "table" then
        error(string.format("%s: column %d must be a key or {key = ..., label = ...} (got %s)",
          who, i, shown(c)), 3)
      end
      -- A column written as a list, {"step_s", "step (s)", "%.2f"} (the
      -- reference read "columns {{key, label, fmt, align, csv}}"), was told
      -- "column 1: unknown option '1'", a name it never wrote.
      if type(c) == "table" and c[1] ~= nil then
        local k = type(c[1]) == "string" and ("'" .. c[1] .. "'") or shown(c[1])
        error(string.format("%s: column %d: its fields go by name, {key = %s, label = ...}, "
          .. "not as a list", who, i, k), 3)
      end
      if type(c) == "table" then
        args.check_keys(c, { "key", "label", "fmt", "align", "csv" },
          string.format("%s: column %d", who, i), 3)
        if c.key == nil then
          error(string.format("%s: column %d has no key", who, i), 3)
        end
        -- a label table headed the column with its address, an align of
        -- "center" was taken as the default, a fmt of 5 as none
        local function field(k, ok, want)
          if c[k] ~= nil and not ok then
            error(string.format("%s: column %d: %s must be %s (got %s)", who, i, k, want,
              shown(c[k])), 3)
          end
        end
        field("label", type(c.label) == "string" or type(c.label) == "number", "a string")
        field("align", c.align == "left" or c.align == "right", "'left' or 'right'")
        field("fmt", type(c.fmt) == "string" or type(c.fmt) == "function",
          "a format string or a function(value, row)")
        field("csv", type(c.csv) == "string", "a string (the CSV header)")
      end
    end
  end
end

local function render(rows, opts)
  opts = opts or {}
  local format = opts.format or "text"
  if not M.formats[format] then
    error("unknown format '" .. tostring(format) .. "' (text, markdown, csv, json)", 2)
  end
  local cols = columns_of(rows, opts)
  if format == "json" then return render_json(rows, cols) end
  if format == "csv" then return render_csv(rows, cols) end
  return render_table(rows, cols, opts, format == "markdown")
end

-- The first line of a result that does not fit (train, rl, infer): the
-- verdict leads, then what the figures after it are.  figures: "if" (the
-- times and costs shown are what it would take if it fit, each line so
-- labelled), or nil (none are shown).  The exit status stays 0: a
-- well-formed question answered "no" is not an error.
-- A weight format as a title says it: a bare GGUF-style bits-per-weight
-- figure read "4.85 weights", as if a count; it is "4.85-bit weights".
function M.weights_words(w)
  w = tostring(w)
  return tonumber(w) and (w .. "-bit") or w
end

function M.does_not_fit(why, figures)
  return string.format("does not fit: %s%s\n", tostring(why), figures == "if"
    and "; the times and costs below are what it would take if it fit" or "")
end

-- What would fit a job that does not, found by pricing it: tries is a
-- list of { words = "--zero 3", try = function() -> fits, detail }, in
-- the order a user would reach for them; each is run (a pcall: a variant
-- the engine refuses is left out) until `want` of them fit
-- (default every one).  Returns the line to print: "would fit: --zero 3
-- (peak 47.7 GiB per GPU)" -- each option named was priced and fits --
-- and the ones tried that do not ("; not --zero 1, --zero 2 (they do not
-- fit either)"), or "none of --zero 1, --zero 2 fits either" where none does, or nil
-- without tries.  Never a canned sentence: an option is said to fit only
-- when its own run says so.
function M.fit_hints(tries, want)
  if #tries == 0 then return nil end
  local hit, missed = {}, {}
  for _, t in ipairs(tries) do
    local ok, fits, detail = pcall(t.try)
    if ok and fits then
      hit[#hit + 1] = t.words .. (detail and (" (" .. detail .. ")") or "")
      if want and #hit >= want then break end
    elseif ok then
      missed[#missed + 1] = t.words
    end
    -- a variant the engine refuses (a format the card cannot run) is no
    -- option here: said neither way
  end
  if #hit == 0 and #missed == 0 then return nil end
  if #hit > 0 then
    return "would fit (priced): " .. table.concat(hit, "; ") .. (#missed > 0 and ("; not "
      .. table.concat(missed, ", ") .. (#missed == 1 and " (it does not fit either)"
      or " (they do not fit either)")) or "")
  end
  -- one tried alone is no "none of" ("none of --recompute full fits")
  if #missed == 1 then return missed[1] .. " does not fit either (priced)" end
  return "none of " .. table.concat(missed, ", ") .. " fits either (priced)"
end

-- One priced variant for M.fit_hints: a copy of the options o with
-- change applied, run through run (the command's own entry, returning
-- fits and a detail for the copy).  train, infer, rl and plan each built
-- this copy themselves.
function M.variant(words, o, change, run)
  return { words = words, try = function()
    local o2 = {}
    for k, v in pairs(o) do o2[k] = v end
    change(o2)
    return run(o2)
  end }
end

-- What train and fit try for a training job that does not fit, in the
-- order a user reaches for them: each ZeRO stage above zero (the one
-- priced) where there are dp > 1 data-parallel ranks to shard over and no
-- FSDP, full recomputation, and the two together where neither alone is
-- enough; run is the command's own entry (M.variant).  Returns
-- M.fit_hints' line, or nil.
function M.training_fit_hints(o, dp, zero, run)
  local tries = {}
  local function variant(words, change) tries[#tries + 1] = M.variant(words, o, change, run) end
  if dp > 1 and not o.fsdp then
    for z = zero + 1, 3 do variant("--zero " .. z, function(o2) o2.zero = z end) end
  end
  if o.recompute ~= "full" then
    variant("--recompute full", function(o2) o2.recompute = "full" end)
    if dp > 1 and not o.fsdp and zero < 3 then
      variant("--zero 3 --recompute full", function(o2) o2.zero, o2.recompute = 3, "full" end)
    end
  end
  return M.fit_hints(tries)
end

-- " (if it fit)" after the label of a figure of a result that does not fit.
function M.if_fit(fits) return fits and "" or " (if it fit)" end

-- A CSV's run-wide figures (the lines text prints under the table: the
-- throughput, days, cost, price and currency), as columns repeated on
-- every row, as fit's CSV repeats its verdict: train's and rl's CSV held
-- the step's parts only, and a buyer's --format csv had no cost.  keys:
-- the result's fields, each added where r has it; numbers in %.6g.
function M.csv_totals(rows, columns, r, keys)
  for _, k in ipairs(keys) do
    local v = r[k]
    if v ~= nil then
      if type(v) == "boolean" then v = v and "yes" or "no"
      elseif type(v) == "number" then v = string.format("%.6g", v) end
      for _, row in ipairs(rows) do row[k] = v end
      columns[#columns + 1] = { key = k, label = k }
    end
  end
  return columns
end

-- The step's 80% range as the columns of train's and rl's table, appended
-- to columns: in text one column "80% range" (each row's range, "LO-HI"),
-- in a CSV two numbers a spreadsheet computes with, seconds_lo and
-- seconds_hi (each row's lo and hi, in fmt; "" on a row without a
-- range), as the JSON's step_s_lo and step_s_hi.  One rule for both
-- commands (comm's range is time_lo_us and time_hi_us the same way).
function M.range_columns(columns, csv, fmt)
  if csv then
    columns[#columns + 1] = { key = "lo", label = "seconds_lo", fmt = fmt, csv = "seconds_lo" }
    columns[#columns + 1] = { key = "hi", label = "seconds_hi", fmt = fmt, csv = "seconds_hi" }
  else
    columns[#columns + 1] = { key = "range", label = "80% range", align = "right" }
  end
  return columns
end

-- A ratio x of a loser's figure to the winner's, in words: "12.0% slower"
-- (x above 1: worse), "3.0% faster" (below 1: better), "2.5x slower"
-- (from 2: times, e.g. "the cost"), "the same".
function M.versus(x, worse, better, times)
  if math.abs(x - 1) < 5e-4 then return "the same" end
  if x >= 2 then return string.format("%.1fx %s", x, times or worse) end
  if x > 1 then return string.format("%.1f%% %s", 100 * (x - 1), worse) end
  return string.format("%.1f%% %s", 100 * (1 - x), better)
end

-- A loser's amount x against the winner's w in M.versus's words, where w
-- may be 0: a card given price 0 is free (--price 0), and its cost is 0,
-- not a missing one.  x / 0 has no percentage -- it printed "-nan% less
-- cost" and "inf% more cost" -- so the words say the winner's is 0.
function M.against(x, w, worse, better, times)
  if w == 0 then return x == 0 and "the same (both 0)" or (worse .. " (the winner's is 0)") end
  return M.versus(x / w, worse, better, times)
end

-- Render rows to a string.
-- render(rows, opts) for the public function who (a column's bad fmt,
-- found by cell, is named with it).
local function rendered(rows, opts, who)
  local was = rendering
  rendering = who
  local r = render(rows, opts)
  rendering = was
  return r
end

function M.render(rows, opts)
  check_args(rows, opts, "render")
  return rendered(rows, opts, "render")
end

-- Render rows to stdout.
function M.print(rows, opts)
  check_args(rows, opts, "report")
  io.stdout:write(rendered(rows, opts, "report"))
end

-- A document of several tables in one format, as scripts print them:
--   local doc = report.document(format, { heading = true })
--   doc:add(title, rows, columns)   -- text/markdown: printed now
--   doc:finish({ conclusions = lines })   -- csv/json: printed here
-- text and markdown print each table under its title (heading = true: a
-- "== title ==" / "## title" line, else the table's own title line), a
-- blank line between tables; csv gathers ONE table a spreadsheet opens (a
-- `section` column, then the union of the tables' columns by label, cells
-- formatted as the tables format them; a column's fmt may be a function of
-- (value, row)); json one array of {title, columns, rows}, each row cut
-- to its table's columns, columns = {{key, label}} (the label states the
-- unit).  finish's extra sections are {name = {line, ...}}: a
-- row each in csv, a section of {line = ...} rows in json.
local Document = {}
Document.__index = Document

function M.document(format, o)
  if not M.formats[format] then
    error("unknown format '" .. tostring(format) .. "' (text, markdown, csv, json)", 2)
  end
  o = o or {}
  return setmetatable({ format = format, heading = o.heading, n = 0, json = {},
                        csv_rows = {}, csv_cols = { { key = "section", label = "section", csv = "section" } },
                        csv_col_of = {} }, Document)
end

function Document:add(title, rows, columns)
  self.n = self.n + 1
  local f = self.format
  if f == "csv" then
    for _, c in ipairs(columns) do
      local label = c.label or c.key
      if not self.csv_col_of[label] then
        self.csv_col_of[label] = "c" .. #self.csv_cols
        self.csv_cols[#self.csv_cols + 1] = { key = self.csv_col_of[label], label = label,
                                              csv = label }
      end
    end
    for _, r in ipairs(rows) do
      local out = { section = title }
      for _, c in ipairs(columns) do
        local v = r[c.key]
        if v ~= nil and type(c.fmt) == "function" then v = c.fmt(v, r)
        elseif v ~= nil and type(c.fmt) == "string" and type(v) == "number" then
          v = string.format(c.fmt, v)
        end
        out[self.csv_col_of[c.label or c.key]] = v
      end
      self.csv_rows[#self.csv_rows + 1] = out
    end
    return
  end
  if f == "json" then
    -- each row cut to its columns, raw values (numbers stay numbers); the
    -- columns' labels ride along: they carry the units ("memory TB/s",
    -- "USD/GPU-h") that the keys alone do not state
    local keep, cols = {}, {}
    for i, r in ipairs(rows) do
      keep[i] = {}
      for _, c in ipairs(columns) do keep[i][c.key] = r[c.key] end
    end
    for i, c in ipairs(columns) do cols[i] = { key = c.key, label = c.label or c.key } end
    self.json[#self.json + 1] = { title = title, columns = cols, rows = keep }
    return
  end
  if self.heading then
    io.write(f == "markdown" and "## " or "== ", title, f == "markdown" and "\n\n" or " ==\n")
    M.print(rows, { format = f, columns = columns })
    io.write("\n")
  else
    if self.n > 1 then io.write("\n") end
    M.print(rows, { format = f, title = title, columns = columns })
  end
end

function Document:finish(extra)
  local names = {}
  for k in pairs(extra or {}) do names[#names + 1] = k end
  table.sort(names)
  if self.format == "json" then
    for _, k in ipairs(names) do
      local rows = {}
      for i, l in ipairs(extra[k]) do rows[i] = { line = l } end
      self.json[#self.json + 1] = { title = k, rows = rows }
    end
    io.write(M.json(self.json), "\n")
  elseif self.format == "csv" then
    for _, k in ipairs(names) do
      for _, l in ipairs(extra[k]) do
        self.csv_rows[#self.csv_rows + 1] = { section = k, [self.csv_cols[2] and self.csv_cols[2].key or "c1"] = l }
      end
    end
    M.print(self.csv_rows, { format = "csv", columns = self.csv_cols })
  end
end

-- A misuse found anywhere inside names the caller's line (gpuplan.args).
require("gpuplan.args").api_module(Document)
return require("gpuplan.args").api_module(M)
