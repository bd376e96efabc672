-- gpuplan.svg: a small SVG chart writer (no plotting dependency).
--
--   local svg = require "gpuplan.svg"
--   local p = svg.plot{ title = "Roofline", xlabel = "FLOP/byte", ylabel = "TFLOP/s",
--                       xlog = true, ylog = true,          -- log10 axes (default linear)
--                       xmin = 0.1, xmax = 1e4,            -- optional: else from the data
--                       width = 900, height = 600,
--                       xfmt = function(v, lo, hi) ... end, -- optional tick labels
--                       legend = "right" }                 -- optional: outside the plot
--   p:line({{x1, y1}, {x2, y2}, ...}, { label = "bf16 roof", color = "#1f77b4",
--                                       dash = "6,3", width = 2 })
--   p:points({{x, y, "name"}, ...}, { label = "decode ops", color = "#d62728",
--                                     shape = "circle" | "square" })
--   p:text(x, y, "ridge 295", { color = "#555", anchor = "start" })   -- data coords
--   p:ranges({{x, y, xlo, xhi, ylo, yhi}, ...}, { label = "80% range" })
--                             -- error bars: x from xlo to xhi at y, y from
--                             -- ylo to yhi at x (either pair may be nil)
--   local s = p:render()      -- the SVG document as a string
--   p:write("out.svg")        -- whole or nothing (gpuplan.files.write)
--
-- Axes get tick marks and labels (decades on log axes: 0.1 1 10 100 1k 10k ...;
-- 1-2-5 steps on linear ones), a title, axis labels and a legend of the
-- labelled series.  xlog = 2 (or ylog = 2) is a log2 axis with a tick at each
-- power of two.  xfmt / yfmt(v, lo, hi) label the tick at v of an axis from
-- lo to hi (default M.si); nil leaves that tick short, unlabelled and without
-- a grid line.  The legend sits top-left inside the plot, or, with
-- legend = "right", in a margin right of it where it covers no line; lines
-- that coincide stay apart with dash = M.dash(i).
--
-- Point names (the third element) are placed next to their point where they
-- overlap no point, line, legend or other name (eight candidate spots at three
-- distances); points closer than 12 px share one label ("qkv, o_proj"); a name
-- that fits nowhere is left out and counted in a footnote, so labels never
-- overlap.  Coordinates <= 0 on a log axis are dropped.  Colours default to a
-- 10-colour palette in series order.

local M = {}

local palette = { "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                  "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf" }
M.palette = palette

-- The dash pattern of the i-th series (nil: solid), so lines that coincide
-- stay visible.
local dashes = { false, "8,4", "3,3", "10,3,3,3", "1,4" }
function M.dash(i) return dashes[(i - 1) % #dashes + 1] or nil end

local FONT = 12          -- px, tick labels and point names
local CHAR_W = 0.6       -- average glyph width / font size (sans-serif)

-- Text as XML takes it: the five markup characters escaped, and the C0
-- controls but tab, newline and return -- which XML 1.0 forbids even as
-- character references -- shown as U+FFFD (a script's label with an ESC
-- made the chart not well-formed).
local function esc(s)
  return (tostring(s):gsub("&", "&amp;"):gsub("<", "&lt;"):gsub(">", "&gt;")
                     :gsub('"', "&quot;"):gsub("[%z\1-\8\11\12\14-\31]", "\239\191\189"))
end

local function fmtnum(v)
  return string.format("%.2f", v):gsub("%.?0+$", "")
end

-- Tick label with an SI suffix: 1500 -> 1.5k, 0.001 -> 0.001.
function M.si(v)
  local a = math.abs(v)
  if a >= 1e12 then return fmtnum(v / 1e12) .. "T"
  elseif a >= 1e9 then return fmtnum(v / 1e9) .. "G"
  elseif a >= 1e6 then return fmtnum(v / 1e6) .. "M"
  elseif a >= 1e3 then return fmtnum(v / 1e3) .. "k"
  elseif a == 0 or a >= 0.01 then return fmtnum(v)
  else return string.format("%.0e", v) end
end

local Plot = {}
Plot.__index = Plot

function M.plot(o)
  o = o or {}
  local p = setmetatable({
    title = o.title or "", xlabel = o.xlabel or "", ylabel = o.ylabel or "",
    xlog = o.xlog or false, ylog = o.ylog or false,
    xmin = o.xmin, xmax = o.xmax, ymin = o.ymin, ymax = o.ymax,
    width = o.width or 900, height = o.height or 600,
    series = {}, texts = {}, note = o.note,
    xfmt = o.xfmt or M.si, yfmt = o.yfmt or M.si, legend = o.legend,
  }, Plot)
  p.ml, p.mr, p.mt, p.mb = 80, 30, 50, 70     -- margins: left right top bottom
  return p
end

local function add_series(p, kind, pts, o)
  o = o or {}
  local s = { kind = kind, pts = {}, label = o.label, color = o.color
              or palette[(#p.series % #palette) + 1], dash = o.dash,
              width = o.width or 2, shape = o.shape or "circle" }
  local function ok(v, log) return type(v) == "number" and v == v and (not log or v > 0) end
  for _, q in ipairs(pts) do
    local x, y = q[1] or q.x, q[2] or q.y
    if ok(x, p.xlog) and ok(y, p.ylog) then
      if kind == "ranges" then
        -- The bars' ends, each pair kept only whole and valid.
        local xlo, xhi, ylo, yhi = q[3], q[4], q[5], q[6]
        if not (ok(xlo, p.xlog) and ok(xhi, p.xlog)) then xlo, xhi = nil, nil end
        if not (ok(ylo, p.ylog) and ok(yhi, p.ylog)) then ylo, yhi = nil, nil end
        s.pts[#s.pts + 1] = { x, y, nil, xlo, xhi, ylo, yhi }
      else
        s.pts[#s.pts + 1] = { x, y, q[3] or q.name }
      end
    end
  end
  p.series[#p.series + 1] = s
  return s
end

function Plot:line(pts, o) return add_series(self, "line", pts, o) end
function Plot:points(pts, o) return add_series(self, "points", pts, o) end
function Plot:ranges(pts, o) return add_series(self, "ranges", pts, o) end
function Plot:text(x, y, s, o)
  o = o or {}
  self.texts[#self.texts + 1] = { x = x, y = y, s = s, color = o.color or "#444",
                                  anchor = o.anchor or "start" }
end

-- The base of an axis's logarithm (xlog = true: 10), or nil when linear.
local function logbase(p, axis)
  local l = p[axis .. "log"]
  return l == true and 10 or l or nil
end

-- Data range, padded, with log axes snapped to powers of their base.
local function range(p, axis)
  local lo, hi = p[axis .. "min"], p[axis .. "max"]
  local i = axis == "x" and 1 or 2
  local dlo, dhi = math.huge, -math.huge
  for _, s in ipairs(p.series) do
    for _, q in ipairs(s.pts) do
      dlo, dhi = math.min(dlo, q[i]), math.max(dhi, q[i])
      -- a range's ends (q[4], q[5] on x; q[6], q[7] on y) are drawn too
      local a = q[2 + 2 * i]
      if a then dlo, dhi = math.min(dlo, a), math.max(dhi, q[3 + 2 * i]) end
    end
  end
  if dlo == math.huge then dlo, dhi = 1, 10 end
  local b = logbase(p, axis)
  if b then
    lo = lo or b ^ math.floor(math.log(dlo, b))
    hi = hi or b ^ math.ceil(math.log(dhi, b))
    if hi <= lo then hi = lo * b end
  else
    lo = lo or math.min(0, dlo)
    hi = hi or dhi * 1.05
    if hi <= lo then hi = lo + 1 end
  end
  return lo, hi
end

-- Tick values: each power of b on a log axis, 1-2-5 steps on a linear one.
local function ticks(lo, hi, b)
  local t = {}
  if b then
    for k = math.floor(math.log(lo, b) + 1e-9), math.ceil(math.log(hi, b) - 1e-9) do
      t[#t + 1] = b ^ k
    end
    return t
  end
  local raw = (hi - lo) / 6
  local mag = 10 ^ math.floor(math.log(raw, 10))
  local step = mag
  for _, m in ipairs { 1, 2, 5, 10 } do
    if m * mag >= raw then step = m * mag; break end
  end
  local v = math.ceil(lo / step) * step
  while v <= hi + step * 1e-9 do t[#t + 1] = v; v = v + step end
  return t
end

-- Plot:render's parts.  g holds what they share: the data ranges and
-- log bases, the plot area, the maps fx / fy to pixels, the writer w,
-- the occupied boxes and free(box), the legend's items.

-- Grid, ticks, frame, title and axis labels.
local function draw_axes(self, g)
  local fx, fy, w, pw, ph = g.fx, g.fy, g.w, g.pw, g.ph
  local x0, x1, y0, y1, xb, yb = g.x0, g.x1, g.y0, g.y1, g.xb, g.yb
  local W, H = self.width, self.height
  -- grid and ticks; a tick without a label is short and has no grid line
  for _, v in ipairs(ticks(x0, x1, xb)) do
    local X, label = fx(v), self.xfmt(v, x0, x1)
    if label then
      w('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e6e6e6"/>', X, self.mt, X, self.mt + ph)
      w('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#333"/>', X, self.mt + ph, X, self.mt + ph + 5)
      w('<text x="%.1f" y="%d" text-anchor="middle">%s</text>', X, self.mt + ph + 19, esc(label))
    else
      w('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#333"/>', X, self.mt + ph, X, self.mt + ph + 3)
    end
  end
  for _, v in ipairs(ticks(y0, y1, yb)) do
    local Y, label = fy(v), self.yfmt(v, y0, y1)
    if label then
      w('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e6e6e6"/>', self.ml, Y, self.ml + pw, Y)
      w('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#333"/>', self.ml - 5, Y, self.ml, Y)
      w('<text x="%d" y="%.1f" text-anchor="end">%s</text>', self.ml - 8, Y + 4, esc(label))
    else
      w('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#333"/>', self.ml - 3, Y, self.ml, Y)
    end
  end
  w('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>', self.ml, self.mt, pw, ph)
  -- centres are %.0f: half an odd width is not an integer
  w('<text x="%.0f" y="28" text-anchor="middle" font-size="16" font-weight="bold">%s</text>',
    W / 2, esc(self.title))
  w('<text x="%.0f" y="%d" text-anchor="middle" font-size="13">%s</text>',
    self.ml + pw / 2, H - 28, esc(self.xlabel))
  w('<text transform="translate(18,%.0f) rotate(-90)" text-anchor="middle" font-size="13">%s</text>',
    self.mt + ph / 2, esc(self.ylabel))
end

-- The series, clipped to the plot: lines, error bars, points.
local function draw_series(self, g)
  local fx, fy, w, boxes = g.fx, g.fy, g.w, g.boxes
  -- series
  w('<g clip-path="url(#plot)">')
  for _, s in ipairs(self.series) do
    if s.kind == "line" and #s.pts > 1 then
      local d = {}
      for i, q in ipairs(s.pts) do
        d[#d + 1] = string.format("%s%.1f,%.1f", i == 1 and "M" or "L", fx(q[1]), fy(q[2]))
      end
      w('<path d="%s" fill="none" stroke="%s" stroke-width="%s"%s/>', table.concat(d, " "),
        s.color, s.width, s.dash and (' stroke-dasharray="' .. s.dash .. '"') or "")
      -- the line occupies its pixels: names are kept off it
      for i = 2, #s.pts do
        local ax, ay = fx(s.pts[i - 1][1]), fy(s.pts[i - 1][2])
        local bx, by = fx(s.pts[i][1]), fy(s.pts[i][2])
        local n = math.max(1, math.ceil(math.max(math.abs(bx - ax), math.abs(by - ay)) / 4))
        for j = 0, n do
          local X, Y = ax + (bx - ax) * j / n, ay + (by - ay) * j / n
          boxes[#boxes + 1] = { X - 2, Y - 2, X + 2, Y + 2 }
        end
      end
    end
  end
  for _, s in ipairs(self.series) do
    if s.kind == "ranges" then
      -- error bars with 6 px caps, under the points they belong to
      for _, q in ipairs(s.pts) do
        local X, Y = fx(q[1]), fy(q[2])
        local function bar(ax, ay, bx, by, cx, cy)
          w('<path d="M%.1f,%.1f L%.1f,%.1f M%.1f,%.1f L%.1f,%.1f M%.1f,%.1f L%.1f,%.1f" '
            .. 'fill="none" stroke="%s" stroke-width="%s"/>', ax, ay, bx, by,
            ax - cx, ay - cy, ax + cx, ay + cy, bx - cx, by - cy, bx + cx, by + cy,
            s.color, s.width)
        end
        if q[4] then bar(fx(q[4]), Y, fx(q[5]), Y, 0, 3) end
        if q[6] then bar(X, fy(q[6]), X, fy(q[7]), 3, 0) end
      end
    end
  end
  for _, s in ipairs(self.series) do
    if s.kind == "points" then
      for _, q in ipairs(s.pts) do
        local X, Y = fx(q[1]), fy(q[2])
        if s.shape == "square" then
          w('<rect x="%.1f" y="%.1f" width="8" height="8" fill="%s" stroke="white"/>', X - 4, Y - 4, s.color)
        else
          w('<circle cx="%.1f" cy="%.1f" r="4.5" fill="%s" stroke="white"/>', X, Y, s.color)
        end
        boxes[#boxes + 1] = { X - 5, Y - 5, X + 5, Y + 5 }
      end
    end
  end
  w('</g>')
end

-- Free-standing texts and the legend.
local function draw_texts_legend(self, g)
  local fx, fy, w, boxes, items = g.fx, g.fy, g.w, g.boxes, g.items
  local x0, x1, y0, y1 = g.x0, g.x1, g.y0, g.y1
  local right, lw, pw = g.right, g.lw, g.pw
  -- free-standing texts (placed first: they are part of the chart)
  for _, t in ipairs(self.texts) do
    if t.x >= x0 and t.x <= x1 and t.y >= y0 and t.y <= y1 then
      local X, Y = fx(t.x), fy(t.y)
      local tw = #t.s * FONT * CHAR_W
      local bx = t.anchor == "end" and X - tw or t.anchor == "middle" and X - tw / 2 or X
      boxes[#boxes + 1] = { bx, Y - FONT, bx + tw, Y + 3 }
      w('<text x="%.1f" y="%.1f" text-anchor="%s" fill="%s">%s</text>', X, Y, t.anchor, t.color, esc(t.s))
    end
  end
  -- legend (top-left inside the plot, or right of it), reserved before
  -- point names
  if #items > 0 then
    local lx, ly = self.ml + 10, self.mt + 10
    if right then lx, ly = self.ml + pw + 15, self.mt end
    local lh = #items * 18 + 8
    boxes[#boxes + 1] = { lx, ly, lx + lw + 40, ly + lh }
    w('<rect x="%d" y="%d" width="%.0f" height="%d" fill="white" fill-opacity="0.9" stroke="#999"/>',
      lx, ly, lw + 40, lh)
    for i, s in ipairs(items) do
      local Y = ly + 4 + i * 18 - 5
      if s.kind == "line" or s.kind == "ranges" then
        w('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="%s"%s/>', lx + 6, Y - 4,
          lx + 28, Y - 4, s.color, s.width, s.dash and (' stroke-dasharray="' .. s.dash .. '"') or "")
      else
        w('<circle cx="%d" cy="%d" r="4.5" fill="%s"/>', lx + 17, Y - 4, s.color)
      end
      w('<text x="%d" y="%d">%s</text>', lx + 34, Y, esc(s.label))
    end
  end
end

-- Point names, placed greedily where free; returns how many were
-- dropped.
local function draw_names(self, g)
  local fx, fy, w, boxes, free = g.fx, g.fy, g.w, g.boxes, g.free
  -- point names: greedy placement, never overlapping
  local dropped = 0
  for _, s in ipairs(self.series) do
    -- points of a series closer than 12 px share one name list
    local groups = {}
    for _, q in ipairs(s.pts) do
      if q[3] and s.kind == "points" then
        local X, Y, g = fx(q[1]), fy(q[2]), nil
        for _, o in ipairs(groups) do
          if math.abs(o.X - X) < 12 and math.abs(o.Y - Y) < 12 then g = o; break end
        end
        if g then
          if not g.seen[q[3]] then g.seen[q[3]] = true; g.names[#g.names + 1] = tostring(q[3]) end
        else
          groups[#groups + 1] = { X = X, Y = Y, names = { tostring(q[3]) }, seen = { [q[3]] = true } }
        end
      end
    end
    for _, grp in ipairs(groups) do
      do
        local X, Y, name = grp.X, grp.Y, table.concat(grp.names, ", ")
        local tw, th = #name * FONT * CHAR_W, FONT
        local placed
        for _, r in ipairs { 8, 22, 40 } do
          for _, c in ipairs { { 1, 0 }, { -1, 0 }, { 0, -1 }, { 0, 1 },
                               { 1, -1 }, { -1, -1 }, { 1, 1 }, { -1, 1 } } do
            local bx = c[1] > 0 and X + r or c[1] < 0 and X - r - tw or X - tw / 2
            local by = c[2] < 0 and Y - r - th or c[2] > 0 and Y + r or Y - th / 2
            local b = { bx, by, bx + tw, by + th }
            if free(b) then placed = b; break end
          end
          if placed then break end
        end
        if placed then
          boxes[#boxes + 1] = placed
          w('<text x="%.1f" y="%.1f" fill="%s">%s</text>', placed[1], placed[4] - 2, s.color, esc(name))
        else
          dropped = dropped + 1
        end
      end
    end
  end
  return dropped
end

function Plot:render()
  local W, H = self.width, self.height
  local x0, x1 = range(self, "x")
  local y0, y1 = range(self, "y")
  local xb, yb = logbase(self, "x"), logbase(self, "y")
  -- the legend's series and text width, known before the plot area is
  local items, lw = {}, 0
  for _, s in ipairs(self.series) do
    if s.label then
      items[#items + 1] = s
      lw = math.max(lw, #s.label * FONT * CHAR_W)
    end
  end
  local right = self.legend == "right" and #items > 0
  local mr = right and self.mr + math.ceil(lw) + 55 or self.mr
  local pw, ph = W - self.ml - mr, H - self.mt - self.mb
  local function fx(x)
    local f = xb and (math.log(x, xb) - math.log(x0, xb)) / (math.log(x1, xb) - math.log(x0, xb))
      or (x - x0) / (x1 - x0)
    return self.ml + f * pw
  end
  local function fy(y)
    local f = yb and (math.log(y, yb) - math.log(y0, yb)) / (math.log(y1, yb) - math.log(y0, yb))
      or (y - y0) / (y1 - y0)
    return self.mt + (1 - f) * ph
  end
  local out = {}
  local function w(...) out[#out + 1] = string.format(...) end
  w('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
    .. 'font-family="DejaVu Sans, Arial, sans-serif" font-size="%d">', W, H, W, H, FONT)
  w('<rect width="%d" height="%d" fill="white"/>', W, H)
  w('<defs><clipPath id="plot"><rect x="%d" y="%d" width="%d" height="%d"/></clipPath></defs>',
    self.ml, self.mt, pw, ph)
  -- occupied boxes for label placement: {x0, y0, x1, y1}
  local boxes = {}
  local function free(b)
    if b[1] < self.ml or b[3] > W - mr or b[2] < self.mt or b[4] > H - self.mb then
      return false
    end
    for _, o in ipairs(boxes) do
      if b[1] < o[3] and o[1] < b[3] and b[2] < o[4] and o[2] < b[4] then return false end
    end
    return true
  end
  local g = { x0 = x0, x1 = x1, y0 = y0, y1 = y1, xb = xb, yb = yb, pw = pw,
              ph = ph, fx = fx, fy = fy, w = w, boxes = boxes, free = free,
              items = items, right = right, lw = lw }
  draw_axes(self, g)
  draw_series(self, g)
  draw_texts_legend(self, g)
  local dropped = draw_names(self, g)
  local foot = self.note or ""
  if dropped > 0 then
    foot = foot .. (foot ~= "" and "  " or "") .. dropped .. " point name(s) omitted to avoid overlap"
  end
  if foot ~= "" then
    w('<text x="%d" y="%d" font-size="11" fill="#666">%s</text>', self.ml, H - 8, esc(foot))
  end
  w('</svg>')
  return table.concat(out, "\n") .. "\n"
end

-- Write the chart to path, whole or not at all (gpuplan.files.write: a
-- fresh temporary beside it, renamed over a regular file; a link, a
-- directory or a device is refused).
function Plot:write(path)
  local files = require "gpuplan.files"
  files.check_output(path, "svg")
  files.write(path, self:render())
  return path
end

-- Stacked horizontal bars: one row per category, one coloured segment per
-- stack, a legend above the rows.
--   local b = svg.bars{ title = "Where the step goes", xlabel = "seconds",
--                       categories = { "TP8 PP2 ...", "TP4 PP4 ..." },
--                       stacks = { { label = "compute", values = { 3.1, 2.9 } },
--                                  { label = "bubble", values = { 0.4, 0.9 } } },
--                       xfmt = svg.si, note = "..." }
--   b:write("step.svg")
-- Negative or missing values draw nothing; a row's total is printed at its
-- end.
local Bars = {}
Bars.__index = Bars

function M.bars(o)
  o = o or {}
  if type(o.categories) ~= "table" or type(o.stacks) ~= "table" then
    error("svg.bars: categories and stacks are required", 2)
  end
  for i, st in ipairs(o.stacks) do
    if type(st) ~= "table" or type(st.values) ~= "table" then
      error(string.format("svg.bars: stacks[%d] needs values", i), 2)
    end
  end
  return setmetatable({ title = o.title or "", xlabel = o.xlabel or "",
                        categories = o.categories, stacks = o.stacks, note = o.note,
                        width = o.width or 900, xfmt = o.xfmt or M.si,
                        limit = o.limit, limit_label = o.limit_label }, Bars)
end

function Bars:render()
  local rows, W = #self.categories, self.width
  local lw = 0
  for _, c in ipairs(self.categories) do lw = math.max(lw, #tostring(c) * FONT * CHAR_W) end
  local ml = math.ceil(lw) + 20
  local legend_rows = 1
  local lx = ml
  for _, st in ipairs(self.stacks) do
    local wd = 18 + #tostring(st.label or "") * FONT * CHAR_W + 16
    if lx + wd > W - 30 then legend_rows, lx = legend_rows + 1, ml end
    lx = lx + wd
  end
  local mt = 40 + legend_rows * 18 + 8
  local bar, gap = 22, 10
  local H = mt + rows * (bar + gap) + 60
  local pw = W - ml - 90
  local total, hi = {}, 0
  for r = 1, rows do
    total[r] = 0
    for _, st in ipairs(self.stacks) do
      local v = st.values[r]
      if type(v) == "number" and v == v and v > 0 then total[r] = total[r] + v end
    end
    hi = math.max(hi, total[r])
  end
  if type(self.limit) == "number" and self.limit > hi then hi = self.limit end
  if hi <= 0 then hi = 1 end
  local t = ticks(0, hi * 1.02, nil)
  local x1 = t[#t] >= hi and t[#t] or hi
  local function fx(x) return ml + x / x1 * pw end
  local out = {}
  local function w(...) out[#out + 1] = string.format(...) end
  w('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
    .. 'font-family="DejaVu Sans, Arial, sans-serif" font-size="%d">', W, H, W, H, FONT)
  w('<rect width="%d" height="%d" fill="white"/>', W, H)
  w('<text x="%d" y="24" font-size="16" font-weight="bold">%s</text>', ml, esc(self.title))
  -- legend
  lx = ml
  local ly = 44
  for i, st in ipairs(self.stacks) do
    local color = st.color or palette[(i - 1) % #palette + 1]
    local wd = 18 + #tostring(st.label or "") * FONT * CHAR_W + 16
    if lx + wd > W - 30 then lx, ly = ml, ly + 18 end
    w('<rect x="%.1f" y="%d" width="12" height="12" fill="%s"/>', lx, ly - 10, color)
    w('<text x="%.1f" y="%d">%s</text>', lx + 16, ly, esc(st.label or ""))
    lx = lx + wd
  end
  -- grid and ticks
  local yb = mt + rows * (bar + gap)
  for _, v in ipairs(t) do
    if v <= x1 + 1e-12 then
      w('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>', fx(v), mt - 4, fx(v), yb)
      w('<text x="%.1f" y="%d" text-anchor="middle">%s</text>', fx(v), yb + 16,
        esc(self.xfmt(v, 0, x1) or ""))
    end
  end
  w('<text x="%.1f" y="%d" text-anchor="middle">%s</text>', ml + pw / 2, yb + 38,
    esc(self.xlabel))
  -- bars
  for r = 1, rows do
    local y = mt + (r - 1) * (bar + gap)
    w('<text x="%d" y="%.1f" text-anchor="end">%s</text>', ml - 8, y + bar / 2 + 4,
      esc(self.categories[r]))
    local x = 0
    for i, st in ipairs(self.stacks) do
      local v = st.values[r]
      if type(v) == "number" and v == v and v > 0 then
        local color = st.color or palette[(i - 1) % #palette + 1]
        -- The tooltip's value in the axis's unit (its xlabel: "GiB",
        -- "seconds"), three significant digits: "dp_comm: 1e-02" and
        -- "weights: 14.96" named no unit, and 0.01 s read as 1e-02.
        local unit = self.xlabel ~= "" and (" " .. self.xlabel) or ""
        w('<rect x="%.2f" y="%d" width="%.2f" height="%d" fill="%s"><title>%s: %s%s</title></rect>',
          fx(x), y, fx(x + v) - fx(x), bar, color, esc(st.label or ""),
          esc(v >= 1e3 and M.si(v) or string.format("%.3g", v)), esc(unit))
        x = x + v
      end
    end
    w('<text x="%.1f" y="%.1f" fill="#333">%s</text>', fx(x) + 6, y + bar / 2 + 4,
      esc(self.xfmt(total[r], 0, x1) or ""))
  end
  if type(self.limit) == "number" and self.limit > 0 then
    w('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#222" stroke-dasharray="5,3"/>',
      fx(self.limit), mt - 6, fx(self.limit), yb)
    w('<text x="%.1f" y="%d" text-anchor="middle" font-size="11">%s</text>', fx(self.limit),
      yb + 28, esc(self.limit_label or ""))
  end
  if self.note then
    w('<text x="%d" y="%d" font-size="11" fill="#666">%s</text>', ml, H - 8, esc(self.note))
  end
  w('</svg>')
  return table.concat(out, "\n") .. "\n"
end

function Bars:write(path)
  local files = require "gpuplan.files"
  files.check_output(path, "svg")
  files.write(path, self:render())
  return path
end

-- A misuse found anywhere inside names the caller's line (gpuplan.args).
require("gpuplan.args").api_module(Bars)
require("gpuplan.args").api_module(Plot)
return require("gpuplan.args").api_module(M)
