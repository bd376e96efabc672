-- gpuplan.report: render rows as aligned text, markdown, CSV or JSON.
--
-- rows: a list of tables.  opts.columns: a list of
--   { key = "busbw", label = "busbw GB/s", fmt = "%.1f" | function(v, row) }
-- (default: the sorted keys of the first row).  opts.format: text (default),
-- markdown, csv, json.  opts.title: a heading (text/markdown only).
-- Output is deterministic: explicit number formats, columns in the given
-- order, rows in the given order (sort before calling), JSON keys sorted.
-- A missing value prints as "-" (text, markdown), empty (CSV), null (JSON).

local M = {}

M.formats = { text = true, markdown = true, csv = true, json = true }

local function default_fmt(v)
  if math.type(v) == "integer" then return tostring(v) end
  if type(v) == "number" then
    if v ~= v then return "nan" end
    if v == math.floor(v) and math.abs(v) < 1e15 then return string.format("%d", v) end
    return string.format("%.4g", v)
  end
  if type(v) == "boolean" then return v and "yes" or "no" end
  return tostring(v)
end

local function cell(col, row)
  local v = row[col.key]
  if v == nil then return nil end
  if type(col.fmt) == "function" then return col.fmt(v, row) end
  if type(col.fmt) == "string" and type(v) == "number" then return string.format(col.fmt, v) end
  return default_fmt(v)
end

local function columns_of(rows, opts)
  if opts.columns then
    local cols = {}
    for i, c in ipairs(opts.columns) do
      if type(c) == "string" then c = { key = c } end
      cols[i] = { key = c.key, label = c.label or c.key, fmt = c.fmt, align = c.align }
    end
    return cols
  end
  local keys = {}
  for k in pairs(rows[1] or {}) do
    if type(k) == "string" and k:sub(1, 1) ~= "_" then keys[#keys + 1] = k end
  end
  table.sort(keys)
  local cols = {}
  for i, k in ipairs(keys) do cols[i] = { key = k, label = k } end
  return cols
end

-- JSON ------------------------------------------------------------------

local escapes = { ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f",
                  ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }

local function json_string(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
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

local function encode_number(v)
  if v ~= v or v == math.huge or v == -math.huge then return "null" end
  if math.type(v) == "integer" then return tostring(v) end
  if v == math.floor(v) and math.abs(v) < 2 ^ 53 then return string.format("%d", v) end
  return string.format("%.15g", v)
end

encode = function(v, out)
  local t = type(v)
  if v == nil or v == M.null then out[#out + 1] = "null"
  elseif t == "boolean" then out[#out + 1] = tostring(v)
  elseif t == "number" then out[#out + 1] = encode_number(v)
  elseif t == "string" then out[#out + 1] = json_string(v)
  elseif t == "table" then
    if is_array(v) then
      out[#out + 1] = "["
      for i = 1, #v do
        if i > 1 then out[#out + 1] = "," end
        encode(v[i], out)
      end
      out[#out + 1] = "]"
    else
      local keys = {}
      for k in pairs(v) do
        if type(k) == "string" and k:sub(1, 1) ~= "_" then keys[#keys + 1] = k end
      end
      table.sort(keys)
      out[#out + 1] = "{"
      for i, k in ipairs(keys) do
        if i > 1 then out[#out + 1] = "," end
        out[#out + 1] = json_string(k) .. ":"
        encode(v[k], out)
      end
      out[#out + 1] = "}"
    end
  else
    error("cannot encode a " .. t .. " as JSON", 2)
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
  if s:find('[,"\r\n]') then return '"' .. s:gsub('"', '""') .. '"' end
  return s
end

local function render_csv(rows, cols)
  local out, head = {}, {}
  for i, c in ipairs(cols) do head[i] = csv_field(c.label) end
  out[1] = table.concat(head, ",")
  for _, row in ipairs(rows) do
    local f = {}
    for i, c in ipairs(cols) do f[i] = csv_field(cell(c, row)) end
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

local function render_table(rows, cols, opts, markdown)
  local cells, width, right = {}, {}, {}
  for i, c in ipairs(cols) do
    width[i] = #c.label
    right[i] = c.align == "right" or (c.align ~= "left" and is_numeric_col(rows, c))
  end
  for r, row in ipairs(rows) do
    cells[r] = {}
    for i, c in ipairs(cols) do
      local s = cell(c, row) or "-"
      if markdown then s = s:gsub("|", "\\|") end
      cells[r][i] = s
      if utf8.len(s) and utf8.len(s) > width[i] then width[i] = utf8.len(s) end
    end
  end
  local function pad(s, w, r)
    local n = w - (utf8.len(s) or #s)
    if n <= 0 then return s end
    return r and (string.rep(" ", n) .. s) or (s .. string.rep(" ", n))
  end
  local out = {}
  if opts.title then
    out[#out + 1] = markdown and ("### " .. opts.title .. "\n") or opts.title
  end
  local function line(vals)
    local parts = {}
    for i, s in ipairs(vals) do parts[i] = pad(s, width[i], right[i]) end
    if markdown then return "| " .. table.concat(parts, " | ") .. " |" end
    return (table.concat(parts, "  "):gsub("%s+$", ""))
  end
  local head = {}
  for i, c in ipairs(cols) do head[i] = c.label end
  out[#out + 1] = line(head)
  local sep = {}
  for i = 1, #cols do
    if markdown then
      sep[i] = right[i] and (string.rep("-", math.max(width[i] - 1, 2)) .. ":")
        or string.rep("-", math.max(width[i], 3))
    else
      sep[i] = string.rep("-", width[i])
    end
  end
  if markdown then
    local parts = {}
    for i, s in ipairs(sep) do parts[i] = pad(s, width[i], false) end
    out[#out + 1] = "| " .. table.concat(parts, " | ") .. " |"
  else
    out[#out + 1] = table.concat(sep, "  ")
  end
  for _, r in ipairs(cells) do out[#out + 1] = line(r) end
  return table.concat(out, "\n") .. "\n"
end

-- Render rows to a string.
function M.render(rows, opts)
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

-- Render rows to stdout.
function M.print(rows, opts)
  io.stdout:write(M.render(rows, opts))
end

return M
