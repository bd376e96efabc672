-- check_claims.lua: compare spec claims (from a guide, a blog, a vendor
-- slide) with the catalog and name the likely cause of each disagreement.
--
--   gpuplan run scripts/check_claims.lua [CLAIMS.lua] [--format FMT]
--
-- CLAIMS.lua returns a list of { gpu = ID, field = F, claim = "4.5PFLOPS",
-- where = "..." } with F one of memory, mem_bw, peak.<precision>,
-- scaleup.bw (default file: claims/seed_guides.lua next to this script).
-- FMT: text (default), markdown, csv, json.
--
-- Tolerance: a claim AGREES when it is within 3% of the catalog value.
-- Marketing figures are rounded to 2-3 significant digits (2.039 TB/s is
-- sold as "2.0 TB/s", 1.9% off; 494.5 as "495"); 3% absorbs that rounding
-- and nothing that differs by a real factor (the confusions below are all
-- factors of 1.07 or more).
--
-- Likely causes checked, in order (each with the same 3% tolerance):
--   sparse      claimed = 2 x the dense peak (2:4 structured sparsity)
--   tf32        claimed equals the GPU's TF32 peak (a TF32 row read as BF16)
--   non-tensor  claimed equals 1, 2 or 4 x the FP32 peak (vector units)
--   halved      claimed = dense / 2 (halved once too often: a sparse
--               headline halved twice)
--   bidir       a link figure off by 2 x (bidirectional vs per direction)
--   GB/GiB      memory claims in "GB" are read as GiB (the vendors' GB is
--               binary, catalog/FORMAT.md); an entry written in decimal GB
--               is then off by 2^30 / 10^9 = 1.074
--   variant     a known alternative figure of the same part (launch vs
--               shipping capacity, one vendor table vs another)
--   sibling     the figure of another variant of the same chip family

local units = require "gpuplan.units"
local report = require "gpuplan.report"

local M = {}

M.TOL = 0.03

-- Known alternative figures for one part, with what they are.
-- Sources: catalog/gpus notes (NVIDIA HGX/DGX B200 tables via ml-engineering
-- and the zdszero copy; the B200's 7680-bit bus, pytorch/ao PR #4002; the
-- H20 141 GB variant via LLM-Prof).
M.variants = {
  b200 = {
    memory = { { "192GB", "launch vs shipping capacity: 192 GB was announced, "
                          .. "HGX/DGX B200 ships with 180 GB" } },
    mem_bw = { { "8TB/s", "launch vs shipping bandwidth: the DGX datasheet's "
                          .. "8 TB/s is an 8192-bit bus; the shipping part's "
                          .. "driver reports 7680 bits at 3996 MHz, 7.67 TB/s "
                          .. "(the HGX B200 table's 7.7)" } },
  },
  h20 = {
    memory = { { "141GB", "the 141 GB HBM3e H20 variant, not the 96 GB part" } },
  },
}

local kinds = { memory = "bytes", mem_bw = "bandwidth", ["scaleup.bw"] = "link" }

local function kind_of(field)
  if field:match("^peak%.") then return "compute" end
  return kinds[field]
end

-- The catalog value of `field` for gpu g (SI; links per direction).
local function value_of(cat, g, field)
  if field == "memory" then return g.memory end
  if field == "mem_bw" then return g.mem_bw end
  if field == "scaleup.bw" then
    local f = g.scaleup and cat.fabrics[g.scaleup.fabric]
    return f and f.bw
  end
  local p = field:match("^peak%.(.+)$")
  if p then return g.peak[p] end
  error(string.format("unknown field '%s' (use memory, mem_bw, peak.<precision>, "
    .. "scaleup.bw)", field), 0)
end

local function near(a, b) return b ~= 0 and math.abs(a - b) <= M.TOL * math.abs(b) end

-- Parse a claimed figure. Returns the SI value and, for links, the
-- direction qualifier the claim carried ("bidir", "per-dir" or nil).
--
-- Memory: a vendor's "N GB" capacity is binary, N GiB (catalog/FORMAT.md,
-- "Memory capacity": nvidia-smi shows 81920MiB for the 80GB A100), so a
-- claim in GB is read as GiB and the reading is returned as "binary".
local function parse_claim(s, kind)
  if kind == "bytes" and s:match("%dGB$") then
    return units.parse(s, "bytes") * 2 ^ 30 / 1e9, "binary"
  end
  if kind == "link" then
    local q = s:match("%s(%S+)%s*$")
    if q == "bidir" or q == "per-dir" then return units.parse(s, "link"), q end
    return units.parse(s, "bandwidth"), nil
  end
  return units.parse(s, kind), nil
end

local function fmt(v, kind)
  if kind == "bytes" then
    local gib = units.fmt_bytes(v, "GiB")
    return units.fmt_bytes(v) .. " (" .. gib .. ")"
  end
  return units.fmt(v, kind)
end

-- Check one claim. Returns a row: gpu, field, claimed, catalog, ratio,
-- verdict ("agree" | "disagree"), cause (reading or likely cause).
function M.check_one(cat, c)
  local g = cat:get("gpus", c.gpu)
  local kind = kind_of(c.field)
  if not kind then
    error(string.format("claim for %s: unknown field '%s'", c.gpu, c.field), 0)
  end
  local v = value_of(cat, g, c.field)
  local row = { gpu = c.gpu, field = c.field, claimed = c.claim, where = c.where }
  if not v then
    row.verdict, row.cause = "unknown", "the catalog has no " .. c.field .. " for this GPU"
    return row
  end
  local x, dir = parse_claim(c.claim, kind)
  row.catalog = fmt(v, kind)
  row.value, row.claimed_value = v, x
  local causes = {}
  local function add(s) causes[#causes + 1] = s end

  if kind == "link" and not dir then
    -- Vendors print link bandwidth bidirectionally; read it that way first.
    row.ratio = x / (2 * v)
    if near(x, 2 * v) then
      row.verdict = "agree"
      add(string.format("read as bidirectional: %s each way", units.fmt(v, "bandwidth")))
      row.cause = table.concat(causes, "; ")
      return row
    elseif near(x, v) then
      row.verdict = "agree"
      add("read as per direction (the bidirectional figure is twice this)")
      row.cause = table.concat(causes, "; ")
      return row
    end
  else
    row.ratio = x / v
  end

  if near(x, v) then
    row.verdict = "agree"
    if dir == "binary" then
      add(string.format("marketed 'GB' is binary: the part has %s",
        units.fmt_bytes(v, "GiB")))
    end
    if math.abs(x - v) > 1e-9 * math.abs(v) then
      add(string.format("within %d%%: rounding of the marketed figure",
        math.floor(M.TOL * 100 + 0.5)))
    end
    row.cause = #causes > 0 and table.concat(causes, "; ") or nil
    return row
  end

  -- A known alternative figure of this part: a real difference, not a
  -- misreading.  Read the way the claim was.
  local alts = M.variants[c.gpu] and M.variants[c.gpu][c.field]
  for _, a in ipairs(alts or {}) do
    if near(x, (parse_claim(a[1], kind))) then add(a[2]) end
  end

  -- GB vs GiB: the claim read as binary is 2^30/10^9 = 1.074 above an
  -- entry written in decimal GB (a user catalog that does not follow the
  -- rule).
  if #causes == 0 and kind == "bytes" and dir == "binary" and near(x * 1e9 / 2 ^ 30, v) then
    add("GB vs GiB: the catalog entry gives the capacity in decimal GB; "
      .. "catalog/FORMAT.md writes it in GiB (the marketed 'GB' is binary)")
  end

  row.verdict = "disagree"
  if kind == "compute" then
    local prec = c.field:match("^peak%.(.+)$")
    if near(x, 2 * v) then
      add("sparse vs dense: claimed = 2 x the dense peak (2:4 sparsity figure)")
    end
    local tf32 = g.peak.tf32
    if prec ~= "tf32" and tf32 and near(x, tf32) then
      add(string.format("TF32 vs %s: claimed equals the tf32 peak (%s)",
        prec:upper(), units.fmt(tf32, "compute")))
    end
    local fp32 = g.peak.fp32
    if fp32 and prec ~= "fp32" then
      for _, k in ipairs { 1, 2, 4 } do
        if near(x, k * fp32) then
          add(string.format("non-tensor: claimed equals %s the fp32 peak (%s), a "
            .. "vector-unit rate", k == 1 and "" or (k .. " x"), units.fmt(fp32, "compute")))
          break
        end
      end
    end
    if near(x, v / 2) then
      add("half the dense peak: halved once too often (a sparse headline halved "
        .. "twice: sparse -> dense -> half)")
    end
  elseif kind == "link" then
    if near(x, 2 * v) then
      add("bidirectional vs per direction: claimed is the 2-way sum")
    elseif near(x, v / 2) then
      add("per direction vs bidirectional: claimed is one way")
    end
  end

  -- Another variant of the same chip (h100-sxm vs h100-pcie...).
  local family = c.gpu:match("^([^%-]+)")
  for _, id in ipairs(cat:ids("gpus")) do
    if id ~= c.gpu and id:match("^([^%-]+)") == family then
      local ok, ov = pcall(value_of, cat, cat.gpus[id], c.field)
      if ok and ov and near(x, kind == "link" and not dir and 2 * ov or ov) then
        add("matches " .. id .. "'s figure (another variant of the chip)")
      end
    end
  end

  if #causes == 0 then add("unexplained: check the claim's source") end
  row.cause = table.concat(causes, "; ")
  return row
end

function M.check(cat, claims)
  local rows = {}
  for i, c in ipairs(claims) do
    if type(c) ~= "table" or type(c.gpu) ~= "string" or type(c.field) ~= "string"
       or type(c.claim) ~= "string" then
      error(string.format("claim #%d: needs gpu, field and claim strings", i), 0)
    end
    rows[#rows + 1] = M.check_one(cat, c)
  end
  return rows
end

-- Claims files are data: text-only, empty environment.
function M.load_claims(path)
  local f, err = io.open(path, "rb")
  if not f then error("cannot open claims file: " .. tostring(err), 0) end
  -- io.open succeeds on a directory; the read is what fails
  local src, rerr = f:read("a")
  f:close()
  if type(src) ~= "string" then
    error("cannot read claims file " .. path .. ": " .. tostring(rerr or "not a file"), 0)
  end
  local chunk, lerr = load(src, "@" .. path, "t", {})
  if not chunk then error(lerr, 0) end
  local ok, claims = pcall(chunk)
  if not ok then error(claims, 0) end
  if type(claims) ~= "table" then error(path .. ": must return a list of claims", 0) end
  return claims
end

M.columns = {
  { key = "gpu", label = "GPU" },
  { key = "field", label = "field" },
  { key = "claimed", label = "claimed" },
  { key = "catalog", label = "catalog" },
  { key = "ratio", label = "claim/catalog", fmt = "%.3f" },
  { key = "verdict", label = "verdict" },
  { key = "cause", label = "reading / likely cause" },
}

local args = { ... }
if args[1] == "--lib" then return M end

local format, path = "text", nil
local i = 1
while i <= #args do
  local a = args[i]
  if a == "--format" then
    format = args[i + 1]; i = i + 2
  elseif a:match("^%-%-format=") then
    format = a:match("^%-%-format=(.*)$"); i = i + 1
  elseif a == "--help" then
    -- every other script's --help (gp.options) prints its parameters and
    -- exits 0; here it was "unknown option --help", exit 2
    io.stdout:write("usage: gpuplan run scripts/check_claims.lua [CLAIMS.lua] [options]\n"
      .. "  CLAIMS.lua         the claims to check (default: claims/seed_guides.lua beside "
      .. "the script)\n"
      .. "  --format           output format: text, markdown, csv or json (default: text)\n")
    os.exit(0)
  elseif a:sub(1, 2) == "--" then
    error(require("gpuplan.cli").usage("check_claims: unknown option " .. a), 0)
  else
    path = a; i = i + 1
  end
end
if not report.formats[format or ""] then
  error(require("gpuplan.cli").usage("check_claims: --format must be text, markdown, "
    .. "csv or json"), 0)
end
if not path then
  local dir = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "."
  path = dir .. "/claims/seed_guides.lua"
end

local gp = require "gpuplan"
local rows = M.check(gp.catalog(), M.load_claims(path))
report.print(rows, {
  columns = M.columns, format = format,
  title = string.format("Spec claims in %s vs the catalog (agree = within %d%%)",
    path, math.floor(M.TOL * 100 + 0.5)),
})
return 0
