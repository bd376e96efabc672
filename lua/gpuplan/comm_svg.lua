-- gpuplan.comm_svg: a line chart (log2 x axis, linear y) as SVG text.
--
--   local svg = require "gpuplan.comm_svg"
--   svg.write("busbw.svg", svg.chart{ title = "...", xlabel = "...",
--     ylabel = "...", series = { {name = "dgx-h100", points = {{x=8, y=0.1}, ...}} } })
--
-- The legend sits right of the plot area so it never covers a line; x ticks
-- are labelled at powers of 1024 (B, KiB, MiB, GiB) with unlabelled ticks
-- in between.  write() goes to FILE.tmp and renames: whole or nothing.

local M = {}

local palette = { "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                  "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22" }

-- Dash patterns too, so series that coincide (same fabric) stay visible.
local dashes = { "none", "8,4", "3,3", "10,3,3,3", "1,4" }

local function esc(s)
  return (tostring(s):gsub("[&<>\"]", { ["&"] = "&amp;", ["<"] = "&lt;",
                                        [">"] = "&gt;", ['"'] = "&quot;" }))
end

-- A "nice" step (1, 2, 5 x 10^k) giving about n intervals over [0, hi].
local function nice_step(hi, n)
  local raw = hi / n
  local mag = 10 ^ math.floor(math.log(raw, 10))
  for _, m in ipairs { 1, 2, 5, 10 } do
    if m * mag >= raw then return m * mag end
  end
  return 10 * mag
end

local function size_label(x)
  local units = { { 1024 ^ 3, "GiB" }, { 1024 ^ 2, "MiB" }, { 1024, "KiB" } }
  for _, u in ipairs(units) do
    if x >= u[1] then return string.format("%g%s", x / u[1], u[2]) end
  end
  return string.format("%gB", x)
end

-- Returns the SVG document as a string.
function M.chart(c)
  local W, H = 960, 600
  local left, right, top, bottom = 80, 250, 50, 70
  local pw, ph = W - left - right, H - top - bottom
  local xmin, xmax, ymax = math.huge, -math.huge, 0
  for _, s in ipairs(c.series) do
    for _, p in ipairs(s.points) do
      if p.x > 0 then
        xmin, xmax = math.min(xmin, p.x), math.max(xmax, p.x)
      end
      if p.y == p.y then ymax = math.max(ymax, p.y) end
    end
  end
  if xmin >= xmax then xmin, xmax = 1, 2 end
  if ymax <= 0 then ymax = 1 end
  local ystep = nice_step(ymax, 6)
  local ytop = math.ceil(ymax / ystep) * ystep
  local lx0, lx1 = math.log(xmin, 2), math.log(xmax, 2)
  local function X(x) return left + (math.log(x, 2) - lx0) / (lx1 - lx0) * pw end
  local function Y(y) return top + ph - y / ytop * ph end

  local o = {}
  local function add(...) o[#o + 1] = string.format(...) end
  add('<?xml version="1.0" encoding="UTF-8"?>\n')
  add('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
      .. 'font-family="sans-serif" font-size="13">\n', W, H, W, H)
  add('<rect width="%d" height="%d" fill="white"/>\n', W, H)
  add('<text x="%d" y="28" font-size="16" font-weight="bold">%s</text>\n', left, esc(c.title or ""))

  -- y grid and labels
  local y = 0
  while y <= ytop + 1e-9 do
    add('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>\n', left, Y(y), left + pw, Y(y))
    add('<text x="%.1f" y="%.1f" text-anchor="end">%g</text>\n', left - 8, Y(y) + 4, y)
    y = y + ystep
  end
  -- x ticks: every power of two, labelled at powers of 1024 (and the ends)
  local k0, k1 = math.ceil(lx0 - 1e-9), math.floor(lx1 + 1e-9)
  for k = k0, k1 do
    local x = X(2 ^ k)
    local major = k % 10 == 0 or k == k0 or k == k1
    add('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"/>\n', x, top + ph, x,
        major and top or top + ph + 4, major and "#ddd" or "#444")
    if k % 10 == 0 or ((k == k0 or k == k1) and (k % 10 >= 3 and k % 10 <= 7)) then
      add('<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>\n', x, top + ph + 20, size_label(2 ^ k))
    end
  end
  -- axes
  add('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>\n', left, top + ph, left + pw, top + ph)
  add('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>\n', left, top, left, top + ph)
  add('<text x="%.1f" y="%d" text-anchor="middle">%s</text>\n', left + pw / 2, H - 20, esc(c.xlabel or ""))
  add('<text x="20" y="%.1f" text-anchor="middle" transform="rotate(-90 20 %.1f)">%s</text>\n',
      top + ph / 2, top + ph / 2, esc(c.ylabel or ""))

  -- series and legend
  for i, s in ipairs(c.series) do
    local col = palette[(i - 1) % #palette + 1]
    local pts = {}
    for _, p in ipairs(s.points) do
      if p.x > 0 and p.y == p.y then pts[#pts + 1] = string.format("%.1f,%.1f", X(p.x), Y(p.y)) end
    end
    local dash = dashes[(i - 1) % #dashes + 1]
    add('<polyline fill="none" stroke="%s" stroke-width="2" stroke-dasharray="%s" points="%s"/>\n',
        col, dash, table.concat(pts, " "))
    local ly = top + 10 + (i - 1) * 22
    add('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3" stroke-dasharray="%s"/>\n',
        left + pw + 20, ly, left + pw + 44, ly, col, dash)
    add('<text x="%d" y="%d">%s</text>\n', left + pw + 50, ly + 4, esc(s.name))
  end
  add('</svg>\n')
  return table.concat(o)
end

-- Write text to path whole or not at all.
function M.write(path, text)
  local tmp = path .. ".tmp"
  local f, err = io.open(tmp, "wb")
  if not f then error("cannot write " .. path .. ": " .. tostring(err), 0) end
  local ok, werr = f:write(text)
  local cok, cerr = f:close()
  if not ok or not cok then
    os.remove(tmp)
    error("cannot write " .. path .. ": " .. tostring(werr or cerr), 0)
  end
  local rok, rerr = os.rename(tmp, path)
  if not rok then
    os.remove(tmp)
    error("cannot write " .. path .. ": " .. tostring(rerr), 0)
  end
end

return M
