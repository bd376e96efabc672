-- gpuplan.schema: declarative schemas for catalog entries.
--
-- A schema is a record of fields; each field has a type and may be required.
-- check(value, schema, path) returns the value converted to engine units
-- (quantity strings become SI numbers) or raises "<path>: <problem>".
-- Unknown fields are rejected.  After LuaRocks' type_check: the schema is
-- data, the checker is one small recursive function.

local units = require "gpuplan.units"

local M = {}

local function fail(path, fmt, ...)
  error({ path = path, msg = string.format(fmt, ...) }, 0)
end

local function show(v)
  if type(v) == "string" then
    -- %q, but one line: a newline is \n, not a backslash and a newline.
    local q = #v > 60 and string.format("%q...", v:sub(1, 60)) or string.format("%q", v)
    return (q:gsub("\\\n", "\\n"):gsub("\r", "\\r"))
  end
  -- a JSON array or object, or a Lua table: what it is, not its address
  if type(v) == "table" then return "a table" end
  -- tostring(0/0) is "-nan" or "nan" depending on the platform.
  if v ~= v then return "nan" end
  -- 2^25 is a float in Lua; a whole number prints as one.
  if math.type(v) == "float" and v == math.floor(v) and math.abs(v) < 2 ^ 53 then
    return string.format("%d", v)
  end
  return tostring(v)
end
-- A value as a schema message quotes it (case files' own checks use it:
-- validate.lua's kind, source.version, commit and date).
M.show = show

-- The fields a script's own entry (M.si) may leave out: they describe
-- the entry for its reader (a catalog file's are required so that every
-- figure names where it comes from) and price nothing, as a script's
-- model table needs no name or source.
M.SI_OPTIONAL = { name = true, vendor = true, source = true, reason = true }

-- Type constructors.  Each returns { check = function(v, path) -> v' }.
local T = {}
M.T = T

-- A string; opts.max: at most so many bytes; opts.text: no control
-- characters (a catalog string goes into tables, SVG and messages as it
-- is, and an ESC or a NUL there is not text).
function T.string(opts)
  opts = opts or {}
  return { name = "string", check = function(v, path)
    if type(v) ~= "string" then fail(path, "expected a string, got %s", show(v)) end
    if v == "" then fail(path, "must not be empty") end
    if opts.max and #v > opts.max then
      fail(path, "longer than %d bytes (got %d)", opts.max, #v)
    end
    local at = opts.text and v:find("%c")
    if at then
      fail(path, "control character %s at byte %d (text only)", show(v:sub(at, at)), at)
    end
    return v
  end }
end

-- Lower-case id: letters, digits, '.', '-', '_', '/'; opts.max as above.
function T.id(opts)
  opts = opts or {}
  return { name = "id", check = function(v, path)
    if type(v) ~= "string" or not v:match("^[a-z0-9][a-z0-9%.%-_/]*$") then
      fail(path, "expected a lower-case id (a-z, 0-9, '.', '-', '_', '/'), got %s", show(v))
    end
    if opts.max and #v > opts.max then
      fail(path, "longer than %d bytes (got %d)", opts.max, #v)
    end
    return v
  end }
end

function T.boolean()
  return { name = "boolean", check = function(v, path)
    if type(v) ~= "boolean" then fail(path, "expected true or false, got %s", show(v)) end
    return v
  end }
end

-- Number in [min, max]; opts.integer, opts.positive (> 0).
function T.number(opts)
  opts = opts or {}
  return { name = "number", check = function(v, path)
    if type(v) ~= "number" or v ~= v or v == math.huge or v == -math.huge then
      fail(path, "expected a finite number, got %s", show(v))
    end
    if opts.integer and math.type(v) ~= "integer" and v ~= math.floor(v) then
      fail(path, "expected an integer, got %s", show(v))
    end
    if opts.positive and v <= 0 then fail(path, "must be positive, got %s", show(v)) end
    if opts.min and v < opts.min then fail(path, "must be >= %s, got %s", opts.min, show(v)) end
    if opts.max and v > opts.max then fail(path, "must be <= %s, got %s", opts.max, show(v)) end
    if opts.integer then v = math.tointeger(v) or v end
    return v
  end }
end

function T.integer(opts)
  opts = opts or {}
  opts.integer = true
  return T.number(opts)
end

-- A fraction of a peak: 0 < x <= 1.  opts.or_false: false is taken too,
-- where an entry turns off what its arch states (a GPU's own field
-- applies, else its arch's: false is the GPU saying "none here", which
-- leaving the field out cannot say).
function T.fraction(opts)
  local or_false = opts and opts.or_false
  return { name = or_false and "fraction or false" or "fraction", check = function(v, path)
    if or_false and v == false then return false end
    if type(v) ~= "number" or v ~= v or v <= 0 or v > 1 then
      fail(path, "expected a fraction in (0, 1]%s, got %s",
        or_false and ", or false (none on this part)" or "", show(v))
    end
    return v
  end }
end

-- A quantity string with a unit of the given kind (see gpuplan.units).
-- Zero is refused unless opts.positive == false; opts.min, opts.max bound
-- the value in SI units (opts.what names them in the message).
function T.unit(kind, opts)
  opts = opts or {}
  return { name = kind, check = function(v, path)
    local ok, r
    -- M.si (a script's own entry, catalog.entry): a number is the
    -- quantity in SI units, as gpuplan's results and cat:get's entries
    -- hold it; a catalog file's needs its unit
    if M.si and type(v) == "number" then
      if v ~= v or v == math.huge or v == -math.huge then
        fail(path, "must be a finite number, got %s", show(v))
      end
      ok, r = true, v
    else
      ok, r = pcall(units.parse, v, kind)
    end
    if not ok then fail(path, "%s", r) end
    local n = type(r) == "table" and r.amount or r
    if opts.positive ~= false and n <= 0 then fail(path, "must be positive, got %s", show(v)) end
    if (opts.min and n < opts.min) or (opts.max and n > opts.max) then
      fail(path, "must be %s, got %s", opts.what, show(v))
    end
    return r
  end }
end

function T.enum(values)
  local set, names = {}, {}
  for _, x in ipairs(values) do set[x], names[#names + 1] = true, tostring(x) end
  return { name = "enum", check = function(v, path)
    if not set[v] then
      -- a misspelt name ("adamw8bit" for the catalog's "adam8bit") says
      -- the nearest value, as an unknown field does
      local strs = {}
      for _, x in ipairs(values) do
        if type(x) == "string" then strs[#strs + 1] = x end
      end
      local near = type(v) == "string" and require("gpuplan.args").nearest(v, strs)
      -- enum: a name the field does not take, which a case file's reader
      -- (gpuplan.validate) refuses as a usage error, exit 2, as the
      -- command line's options refuse an unknown name
      error({ path = path, enum = true, msg = string.format("expected one of %s, got %s%s",
        table.concat(names, ", "), show(v),
        near and near ~= v and string.format(" (did you mean '%s'?)", near) or "") }, 0)
    end
    return v
  end }
end

-- A day of the calendar as "2026-01-08" (YYYY-MM-DD), a real one:
-- "2026-13-01" would order among dated strings (comm.nccl_at compares a
-- case's source.date as text) and print beside a rate as a date that
-- never was.
function T.day()
  return { name = "date", check = function(x, path)
    local y, m, d = (type(x) == "string" and x or ""):match("^(%d%d%d%d)%-(%d%d)%-(%d%d)$")
    y, m, d = tonumber(y), tonumber(m), tonumber(d)
    local leap = y and (y % 4 == 0 and y % 100 ~= 0 or y % 400 == 0)
    local days = m and ({ 31, leap and 29 or 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 })[m]
    if not days or d < 1 or d > days then
      fail(path, 'expected a date as "2024-04-01" (YYYY-MM-DD), got %s', show(x))
    end
    return x
  end }
end

-- When a price was quoted: a day (as T.day), a month "2026-06" or a year
-- "2023", real ones, or "undated" (a seed guide's rule of thumb).  A
-- listing's page often gives only the month; free text ("last week",
-- "2026-13") printed beside the price as a date that never was.
function T.when()
  local day = T.day()
  return { name = "date", check = function(x, path)
    local s = type(x) == "string" and x or ""
    local good = s == "undated" or s:match("^%d%d%d%d$") ~= nil
    local m = s:match("^%d%d%d%d%-(%d%d)$")
    if m then good = tonumber(m) >= 1 and tonumber(m) <= 12 end
    if s:match("^%d%d%d%d%-%d%d%-%d%d$") then good = pcall(day.check, s, path) end
    if not good then
      fail(path, 'expected a date as "2026-06-01", "2026-06" or "2026", or "undated", got %s',
           show(x))
    end
    return x
  end }
end

function T.array(item)
  return { name = "array", check = function(v, path)
    if type(v) ~= "table" then fail(path, "expected a list, got %s", show(v)) end
    local out, n = {}, #v
    for k in pairs(v) do
      if math.type(k) ~= "integer" or k < 1 or k > n then
        fail(path, "expected a list, found key %s", show(k))
      end
    end
    for i = 1, n do out[i] = item.check(v[i], path .. "[" .. i .. "]") end
    return out
  end }
end

-- A record: fields = { name = spec | required(spec) }.
function T.record(fields)
  local names = {}
  for k in pairs(fields) do names[#names + 1] = k end
  table.sort(names)
  -- The required ones, in the same (sorted) order: the check below walks
  -- these and the value's own keys, not every field the record declares
  -- (a case gives a few dozen of the hundreds its schema names, and
  -- `gpuplan validate` checks some thousands of records).
  local required = {}
  for _, k in ipairs(names) do
    if fields[k].required then required[#required + 1] = k end
  end
  return { name = "record", fields = fields, check = function(v, path)
    if type(v) ~= "table" then fail(path, "expected a table, got %s", show(v)) end
    -- Keys that cannot be field names, described without addresses so the
    -- message is the same on every run.
    local odd = {}
    for k in pairs(v) do
      if type(k) == "number" then
        odd[#odd + 1] = "a number key (" .. show(k) .. ")"
      elseif type(k) ~= "string" then
        odd[#odd + 1] = "a " .. type(k) .. " key"
      end
    end
    if #odd > 0 then
      table.sort(odd)
      fail(path, "keys must be field names, found %s", table.concat(odd, " and "))
    end
    -- Every required field left out, said at once: a card written from
    -- the gpu {} example went back four times (source, then the price's
    -- date, provider, provider_kind), one missing field a check.
    local missing = {}
    for _, k in ipairs(required) do
      if v[k] == nil and not (M.si and M.SI_OPTIONAL[k]) then
        missing[#missing + 1] = "'" .. k .. "'"
      end
    end
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys)
    for _, k in ipairs(keys) do
      if type(k) ~= "string" or not fields[k] then
        local sub = path == "" and k or path .. "." .. k
        local near = require("gpuplan.args").nearest(k, names)
        local also = #missing > 0 and string.format("; required and missing: %s",
          table.concat(missing, ", ")) or ""
        if near then fail(sub, "unknown field (did you mean '%s'?)%s", near, also) end
        fail(sub, "unknown field (known: %s)%s", table.concat(names, ", "), also)
      end
    end
    if #missing > 0 then
      local first = missing[1]:sub(2, -2)
      fail(path == "" and first or path .. "." .. first, "required field is missing%s",
        #missing > 1 and string.format(" (so are %s)", table.concat(missing, ", ", 2)) or "")
    end
    -- (A field left out, the required ones refused above, builds no path:
    -- a record schema names many more fields than a value gives.)
    -- Every key is a field name by now (refused above otherwise), and keys
    -- is sorted as names is: the fields are checked in the order they
    -- always were, so the first bad one is the one reported.
    local out = {}
    for _, k in ipairs(keys) do
      out[k] = fields[k].check(v[k], path == "" and k or path .. "." .. k)
    end
    return out
  end }
end

function M.required(spec)
  local r = {}
  for k, x in pairs(spec) do r[k] = x end
  r.required = true
  return r
end

-- Check v against spec.  Returns the converted value, or nil and
-- { path = "peak.bf16", msg = "..." }.
function M.check(v, spec)
  local ok, r = pcall(spec.check, v, "")
  if ok then return r end
  if type(r) == "table" then return nil, r end
  return nil, { path = "", msg = tostring(r) }
end

-- The catalog's schemas -------------------------------------------------

-- The engine's bounds (engine/common.h): a count of a model or a layout
-- (layers, widths, heads, experts, GPUs) is at most GP_COUNT_MAX = 2^24,
-- an amount (bytes of capacity, a price) at most GP_AMOUNT_MAX = 1e15.
M.COUNT_MAX = 1 << 24
M.AMOUNT_MAX = 1e15

-- A catalog string (a name, a note, a source) is text of at most 4 KiB,
-- an id at most 128 bytes: the longest in the built-in catalog are 712
-- and 29, and every string is held for every command (issue 19: forty
-- files of 16 MB names held 1.36 GB).
M.STRING_MAX, M.ID_MAX = 4096, 128

local R = M.required
local num, frac, bool = T.number, T.fraction, T.boolean

local function str() return T.string { max = M.STRING_MAX, text = true } end
local function id() return T.id { max = M.ID_MAX } end
-- An NCCL release as gp.comm reads it ("2.28.3"; comm.nccl_code's rule,
-- one place): a catalog row that names one gp.comm cannot read would
-- leave the release out silently.
local function nccl_release()
  return { name = "NCCL release", check = function(v, path)
    local s = str().check(v, path)
    local _, why = require("gpuplan.comm").nccl_code(s)
    if why then fail(path, "%s (got %s)", why, show(s)) end
    return s
  end }
end
-- Integers are counts: at most 2^24 unless a field says otherwise.
local function int(opts)
  opts = opts or {}
  opts.max = opts.max or M.COUNT_MAX
  return T.integer(opts)
end
-- A count of layers under moe (dense_layers, layer_step): any number
-- here, judged beside the layers after the record (M.moe_counts_problem):
-- a fraction (1.5), NaN or an infinity in the same words as a count past
-- the layers, "must be an integer in 0..layers (L)", as the engine's
-- binding says it to a script (engine/lgp_model.c moe_counts); the field
-- reader's "expected an integer" was a second message for the one field.
-- A whole float is the integer.
function M.moe_layer_count()
  return { name = "integer", check = function(v, path)
    if type(v) ~= "number" then fail(path, "expected a finite number, got %s", show(v)) end
    return math.tointeger(v) or v
  end }
end
-- A size of device or host memory, in bytes, up to the engine's 1e15.
local function mem_bytes()
  return T.unit("bytes", { max = M.AMOUNT_MAX, what = "at most 1e15 bytes (1 PB)" })
end
-- A price per GPU-hour: the engine prices from 1e-6 to 1e15 per hour.
local function per_hour()
  return T.unit("price", { min = 1e-6, max = M.AMOUNT_MAX,
                           what = "from 0.000001 to 1e15 per GPU-hour" })
end
local precisions = { "fp64", "fp64_tensor", "fp32", "tf32", "bf16", "fp16",
                     "fp8", "fp6", "fp4", "int8", "int4" }

local function precision_map(item)
  local f = {}
  for _, p in ipairs(precisions) do f[p] = item end
  return f
end

-- dropout (optional): the kernel's forward + backward time with dropout
-- on the probabilities over its time without, measured on one shape;
-- absent: not measured, not priced (engine/train_price.c)
-- seq (optional): the causal prompt, in tokens, fwd and bwd were read at;
-- absent: 8192 (engine/roofline.c roof_attn_eff)
-- long (optional): the kernel's published forward + backward rates at
-- causal prompts from seq on, { seq = tokens, tflops = rate } each, the
-- first at seq: a longer prompt runs at its rate over the first's
-- (roofline.lua attn_long); absent: flat past seq
-- narrow (optional): the kernel's published forward + backward rates at
-- a narrower head dim (dim) beside its rates at head dim 128 (the one
-- fwd and bwd were read at), causal, at the same prompts: { seq = tokens,
-- tflops = the narrow head's rate, wide = head dim 128's } each, lengths
-- growing; a head dim up to dim runs at tflops / wide of the fractions
-- (roofline.lua attn_narrow); absent: every head dim at the fractions
-- unmasked (optional): the kernel's measured rates on calls without a
-- mask beside its causal ones at the same lengths, forward and backward,
-- { seq = tokens, fwd, bwd = no-mask rates, causal_fwd, causal_bwd =
-- causal rates } each, lengths growing: a call without a mask runs at
-- the no-mask rate at its length over the causal rate at the causal
-- call's (roofline.lua attn_unmasked; engine/train_price.c prices
-- Transformer Engine's context-parallel ring steps with it); absent: at
-- the causal rate
-- release (optional): the library release the fractions and curves
-- above stand for (cuDNN's, "9.1"), as the docs say it
-- releases (optional): later releases' published rates over that one,
-- oldest first, { cudnn = "X.Y", points = { { seq = tokens, x = factor },
-- ... } } each, lengths growing: a run that states its cuDNN release
-- (gp.train's cudnn) runs the newest table at or before it
-- (roofline.lua attn_release); absent, or no release stated: the
-- fractions as they stand
-- exp_dim: this kernel's own head dim below which the softmax's
-- exponentials bound it, where it differs from the entry's (a kernel far
-- below the tensor cores' rate balances its exponentials lower)
local attn_pair = T.record { fwd = R(frac()), bwd = R(frac()),
                             dropout = num { min = 1, max = 16 },
                             exp_dim = int { min = 1, max = 4096 },
                             seq = int { min = 1 },
                             release = str(),
                             releases = T.array(T.record {
                               cudnn = R(str()),
                               points = R(T.array(T.record { seq = R(int { min = 1 }),
                                                             x = R(num { min = 0.01, max = 4 }) })) }),
                             long = T.array(T.record { seq = R(int { min = 1 }),
                                                      tflops = R(num { min = 0.001, max = 1e6 }) }),
                             unmasked = T.array(T.record { seq = R(int { min = 1 }),
                                                          fwd = R(num { min = 0.001, max = 1e6 }),
                                                          bwd = R(num { min = 0.001, max = 1e6 }),
                                                          causal_fwd = R(num { min = 0.001, max = 1e6 }),
                                                          causal_bwd = R(num { min = 0.001, max = 1e6 }) }),
                             narrow = T.record {
                               dim = R(int { min = 1, max = 4096 }),
                               points = R(T.array(T.record {
                                 seq = R(int { min = 1 }),
                                 tflops = R(num { min = 0.001, max = 1e6 }),
                                 wide = R(num { min = 0.001, max = 1e6 }) })) } }

-- Memory-bound GEMMs at a precision whose kernels stream their operands
-- below the common rate (roofline.c ROOF_GEMV_BW): the measured fraction
-- of the streaming copy, per precision, with its reason and source.
local stream = precision_map(frac())
stream.reason, stream.source = R(str()), R(str())

local achievable = T.record {
  gemm = T.record(precision_map(frac())),
  hbm = frac(),
  stream = T.record(stream),
  -- fused attention kernels (FlashAttention 2/3/4, cuDNN, the Triton
  -- FlashAttention): fraction of the 16-bit dense peak each one's forward
  -- and backward sustain on causal training sequences; `kernel` names the
  -- one frameworks pick on this hardware by default
  attention = T.record {
    kernel = R(T.enum { "fa2", "fa3", "fa4", "cudnn", "triton", "ck" }),
    fa1 = attn_pair, fa2 = attn_pair, fa3 = attn_pair, fa4 = attn_pair, cudnn = attn_pair,
    triton = attn_pair,
    -- PyTorch's FlexAttention (torch.compile'd Triton templates)
    flex = attn_pair,
    -- Transformer Engine's CK / aiter fused attention on ROCm
    ck = attn_pair,
    -- PyTorch SDPA's memory-efficient backend (xformers' cutlass kernel):
    -- what SDPA runs when handed a mask, every tile of the square
    efficient = attn_pair,
    -- an FP8 attention kernel (an 8-bit KV cache) reaches this share of
    -- the 16-bit kernel's fraction, at the FP8 peak; absent: the same
    fp8 = frac(),
    -- the head dim below which the softmax's exponentials, not the
    -- tensor cores, bound the kernel; absent: none (roofline.c)
    exp_dim = int { min = 1, max = 4096 },
    reason = str(), source = str(),
  },
  -- Sustained load: the share of the short-burst benchmark rates above
  -- (GEMM, fused attention) the card holds when its tensor cores run
  -- back to back at the board power limit, as a training step does and a
  -- benchmark with gaps between iterations does not; absent: 1
  sustained = T.record { gemm = R(frac()), attention = R(frac()),
                         -- the SM clock (MHz) the two factors stand for:
                         -- a job's sm_clock scales them from it
                         clock_mhz = num { min = 100, max = 5000 },
                         reason = R(str()), source = R(str()) },
  -- Block-scaled FP8 GEMMs (MXFP8's E8M0 scale per 32 elements): the share
  -- of the per-tensor FP8 GEMM's rate (the gemm.fp8 fraction above) they
  -- run at on the same shapes; absent: the same rate
  block_scaled = T.record { fp8 = R(frac()), reason = R(str()), source = R(str()) },
  -- Per-tensor FP8 GEMMs with an operand MN-major (the NN / NT layouts of
  -- the backward's dgrad and wgrad), on a part whose FP8 GEMMs take them
  -- (Transformer Engine then writes no fp8 transposes): their share of
  -- the TN rate; absent: the part runs FP8 TN only, from transposed copies.
  -- fp8 = false: TN only on this part although its arch states a share (a
  -- GPU's own applies, else its arch's: the RTX 5090, sm120, which
  -- Transformer Engine from v2.4 runs TN only).
  non_tn = T.record { fp8 = R(frac { or_false = true }), reason = R(str()), source = R(str()) },
  -- Eager PyTorch's own memory-bound kernels (ATen's elementwise,
  -- reduction and norm kernels): the share of the streaming rate above
  -- (hbm) they reach on this hardware; absent: the same rate
  eager = T.record { hbm = R(frac()), reason = R(str()), source = R(str()) },
  -- GEMM libraries that never split K: each CTA walks K one stage at a
  -- time, a stage of at most `lds` bytes of A and B and `stage_k` bytes
  -- of K, and waits `latency` for each (roofline.c unsplit_time);
  -- absent: the library splits K to fill the SMs
  unsplit = T.record { lds = R(T.unit("bytes")), stage_k = R(T.unit("bytes")),
                       latency = R(T.unit("time")), reason = R(str()), source = R(str()) },
  reason = R(str()),
  source = R(str()),
}

-- (16.0 is the integer 16, as a count's reader takes it)
local lane_widths = T.enum { 1, 2, 4, 8, 12, 16, 32 }
local pcie_lanes = { name = "enum", check = function(v, path)
  v = lane_widths.check(v, path)
  return math.tointeger(v) or v
end }

M.gpu = T.record {
  id = R(id()), name = R(str()), vendor = R(str()), arch = R(id()),
  form_factor = str(), year = int { min = 2010, max = 2035 },
  memory = R(mem_bytes()), usable_memory = mem_bytes(),
  memory_type = str(),
  mem_bw = R(T.unit("bandwidth")),
  peak = R(T.record(precision_map(T.unit("compute")))),
  achievable = achievable,
  scaleup = T.record { fabric = R(id()), domain = R(int { min = 1 }) },
  -- lanes: a link width the PCI Express Base Specification defines (x1,
  -- x2, x4, x8, x12, x16, x32); any count up to 32 was taken, so lanes =
  -- 3 (a typo) priced a host link of three lanes' bandwidth in silence
  pcie = T.record { gen = R(int { min = 1, max = 7 }), lanes = R(pcie_lanes) },
  -- A superchip's GPU reaches its CPU's memory over a link of its own
  -- (NVLink-C2C), not PCIe: the rate one GPU's copies to and from host
  -- memory reach on it, per direction; absent: the PCIe link's
  host_link = T.record { bw = R(T.unit("bandwidth")), reason = R(str()), source = R(str()) },
  -- One card's board power: 0.3-1.2 kW today (a GB200 superchip is
  -- 2.7 kW with its CPU); 100 kW is a rack, not a GPU.
  tdp = T.unit("power", { max = 1e5, what = "at most 100 kW" }),
  -- The board power limit the card ships with where it is below its TDP
  -- (nvidia-smi's "Default Power Limit"); absent: the TDP.  gp.train's
  -- power_limit overrides it (roofline.lua clock_at).
  power_limit = T.unit("power", { max = 1e5, what = "at most 100 kW" }),
  sms = int { min = 1 },           -- streaming multiprocessors (GEMM wave model)
  -- NCCL moves its NVLink peer-to-peer traffic by reads from the sender's
  -- buffer, not writes into the receiver's, on this part: compute capability
  -- 8.0 alone (paths.cc ncclTopoCheckP2p); absent: writes
  nccl_p2p_read = bool(),
  vec16_x = num { min = 1, max = 4 }, -- non-tensor f16x2/bf16x2 rate / fp32 rate
  -- The 16-bit tensor rate with FP16 accumulation over the stored peak
  -- (FP32 accumulation): 2 on GeForce cards; absent: the same rate
  -- (engine roofline.h roof_device.acc16_x)
  acc16_x = num { min = 1, max = 2 },
  mig = T.record { max = R(int { min = 1 }), profiles = T.array(str()) },
  source = R(str()), notes = str(),
}

M.arch = T.record {
  id = R(id()), name = R(str()),
  achievable = R(achievable),
  launch_overhead = R(T.unit("time")),
  graph_launch_overhead = T.unit("time"),
  -- SMs (compute units on AMD) of the architecture's flagship, for the
  -- GEMM wave model of its GPUs that give no `sms`; absent: no wave term
  sms = int { min = 1 },
  -- The tokens step of the tensor-core MMA's N side a library GEMM of few
  -- tokens swaps them onto (Hopper's wgmma: 8; engine/roofline.c);
  -- absent: no swapped tiles priced
  mma_n_step = int { min = 1, max = 256 },
  -- The packed 16-bit (f16x2/bf16x2) FMA's non-tensor rate over the fp32
  -- rate (engine/roofline.c ROOF_VEC16); absent: the fp32 rate
  vec16_x = num { min = 1, max = 4 },
  -- NCCL's ceiling on the LL protocol's bus bandwidth on one node for this
  -- generation (its tuner's llMaxBws row); absent: no ceiling
  nccl_ll_max_bw = T.unit("bandwidth"),
  -- NCCL's ceiling on the bus bandwidth one tree channel carries across 2
  -- and across 3 or more nodes (its tuner's perChMaxTreeBws row); absent:
  -- no ceiling
  nccl_tree_ch_bw = T.record { nodes2 = R(T.unit("bandwidth")),
                               nodes3 = R(T.unit("bandwidth")) },
  -- the row NCCL's tuner ranked the tree by before release `release`
  -- retuned it to nccl_tree_ch_bw; absent: no retune
  nccl_tree_ch_bw_before = T.record { release = R(nccl_release()), nodes2 = R(T.unit("bandwidth")),
                                      nodes3 = R(T.unit("bandwidth")) },
  -- NCCL's ceiling on the bus bandwidth one tree channel carries with LL128
  -- across 2 and across 3 or more nodes (its tuner's perChMaxTreeLL128Bws
  -- row); absent: no ceiling
  nccl_tree_ll128_ch_bw = T.record { nodes2 = R(T.unit("bandwidth")),
                                     nodes3 = R(T.unit("bandwidth")) },
  -- NCCL's ceiling on the bus bandwidth one ring channel carries with LL128
  -- (its tuner's perChMaxRingLL128Bws row); absent: no ceiling
  nccl_ring_ll128_ch_bw = T.unit("bandwidth"),
  -- what one NCCL p2p channel (one thread block) moves to a peer it writes
  -- to over NVLink, where a log measures it; absent: NCCL's 14 GB/s
  -- network figure (engine/comm_algo.c P2P_CH_BW)
  nccl_p2p_nvl_ch_bw = T.unit("bandwidth"),
  -- false: the collective library runs no LL128 on this generation by
  -- default (RCCL on CDNA 3 and 4: only where a Rome model of its
  -- topology sets ll128Enabled); absent: LL128 where the links allow it
  nccl_ll128 = bool(),
  -- false: the collective library relays no send through a NIC's own GPU
  -- by default (PXN off: RCCL), so a ring leaves a node from its last
  -- GPU's own NIC (the topology's pxn_off); absent: NCCL's PXN
  ccl_pxn = bool(),
  -- the collective library's per-call base latency by protocol where it
  -- is not NCCL's (RCCL's baseLat); absent: NCCL's
  ccl_base_lat = T.record { ll = R(T.unit("time")), ll128 = R(T.unit("time")),
                            simple = R(T.unit("time")) },
  -- the collective library's network step with LL, the tree's and the
  -- ring's, where it is not NCCL's (RCCL's hwLat NET row); absent: NCCL's
  ccl_net_lat = T.record { tree_ll = R(T.unit("time")), ring_ll = R(T.unit("time")) },
  -- How the sustained tensor clock falls under a board power limit below
  -- the TDP (roofline.lua clock_at): the board's draw that does not scale
  -- with the SM clock (static), and the exponent of the clock in the
  -- rest; absent: a power limit below the TDP is refused
  power_curve = T.record { static = R(T.unit("power", { max = 1e5, what = "at most 100 kW" })),
                           exponent = R(num { min = 1, max = 4 }),
                           reason = R(str()), source = R(str()) },
  source = str(), notes = str(),
}

-- A per-step or per-call latency of NCCL's tuning model: 0 .. 1 s.
local function step_time()
  return T.unit("time", { positive = false, min = 0, max = 1, what = "0 .. 1 s" })
end

M.fabric = T.record {
  id = R(id()), name = R(str()),
  scope = R(T.enum { "scaleup", "scaleout" }),
  -- nvlink: point-to-point links keeping 128-byte writes whole (NVLink,
  -- bridges, xGMI, on-board RoCE; LL128 allowed); pcie; network (NICs)
  kind = R(T.enum { "nvlink", "pcie", "network" }),
  -- NCCL's tuning terms for this link, over the kind's defaults
  -- (catalog/FORMAT.md, engine/comm_topo.c)
  nccl = T.record {
    ring_ll = step_time(), ring_ll128 = step_time(), ring_simple = step_time(),
    tree_ll = step_time(), tree_ll128 = step_time(), tree_simple = step_time(),
    nvls_efficiency = frac(), nvls_latency = step_time(),
    -- share of the achievable link rate the LL128 protocol carries
    ll128_efficiency = frac(),
    -- NCCL's ring/tree channels on the link ("coll channels" in its log)
    channels = int { min = 1, max = 64 },
    -- NCCL's NVLS channels (NVLS_NCHANNELS_SM90 16, SM100 32)
    nvls_channels = int { min = 1, max = 64 },
    -- the same for a communicator spanning nodes, where NCCL's count
    -- differs (Blackwell: NVLS_NCHANNELS_SM100 32 against SM100_NVL 24)
    nvls_channels_nodes = int { min = 1, max = 64 },
    -- the network plugin shows NCCL the NICs nearest each GPU as one
    -- device at their summed speed (aws-ofi-nccl's RDMA protocol)
    rails = bool(),
    -- the share of the network rate the all-reduce tree reaches across 3
    -- or more nodes against the ring's (1 unless given)
    tree_share = frac(),
    -- how long a message's completion takes to reach the proxy once the
    -- message has crossed (0 unless given)
    completion = step_time(),
    -- the receives the network plugin takes in one call (its maxRecvs,
    -- 8 unless given, NCCL's IB transport's): PXN groups that many
    -- senders' messages into one receive
    max_recvs = int { min = 1, max = 64 },
    -- the network plugin's tuner: on 3 nodes or more of region_ppn ranks
    -- each, an all-reduce runs the algorithm and protocol of the first
    -- region whose polygon in the (bytes, ranks) plane holds it
    region_ppn = int { min = 1, max = 1024 },
    regions = T.array(T.record {
      algo = R(T.enum { "ring", "tree", "nvls" }),
      proto = R(T.enum { "ll", "ll128", "simple" }),
      vertices = R(T.array(T.array(num { min = 0 }))),
    }),
    source = R(str()),
  },
  bw = R(T.unit("link")),
  latency = R(T.unit("time")),
  achievable = R(frac()), achievable_reason = R(str()),
  in_switch_reduction = T.enum { "nvls", "sharp" },
  nvls_tree_bw = T.record { nodes2 = R(T.unit("bandwidth")), nodes3 = R(T.unit("bandwidth")),
                            source = R(str()) },
  crosses_cpu = bool(),
  -- a full mesh of direct links: bw is split evenly over this many peers,
  -- and a group of g GPUs of one node gets (g - 1) / mesh_peers of it
  mesh_peers = int { min = 1 },
  source = R(str()), notes = str(),
}

M.system = T.record {
  id = R(id()), name = R(str()), gpu = R(id()), gpus = R(int { min = 1 }),
  scaleup = R(id()),
  nics = R(int { min = 0 }), nic_fabric = id(),
  host_memory = mem_bytes(),
  -- gpuplan.infer streams offloaded layers at 0.8 of it, up to 1e15 B/s.
  host_mem_bw = T.unit("bandwidth", { max = 1.25e15, what = "at most 1.25e15 B/s" }),
  cpu = str(),
  -- the CPUs' maker: NCCL prices its network proxy by it (engine/comm_algo.c)
  cpu_vendor = T.enum { "intel", "amd", "arm" },
  -- The host CPU's time for host work (Python, PyTorch's dispatcher, kernel
  -- launches) over an x86 server CPU's, which gpuplan's host-time figures
  -- are measured on; absent: 1.
  host_op_scale = num { min = 0.1, max = 100 },
  -- The same with each rank bound to its GPU's NUMA node (the job's
  -- numa_bind); absent: host_op_scale.
  host_op_scale_bound = num { min = 0.1, max = 100 },
  -- GPUs under one operating system (one host, one Ray node) where that
  -- is fewer than the NVLink domain's gpus (a GB200 NVL72 tray: 4);
  -- absent: gpus.
  host_gpus = int { min = 1 },
  source = R(str()), notes = str(),
}

M.price = T.record {
  id = R(id()), gpu = R(id()),
  provider = R(str()),
  provider_kind = R(T.enum { "hyperscaler", "specialty", "marketplace", "guide" }),
  region = R(str()),
  price = R(per_hour()),
  range = T.array(per_hour()),
  date = R(T.when()), source = R(str()), notes = str(),
}

M.currency = T.record {
  id = R(T.enum { "USD", "CNY", "EUR", "GBP", "JPY", "KRW", "INR" }),
  -- Units per US dollar: the currencies above run from ~0.8 (GBP, EUR)
  -- to ~1,400 (KRW); 1e-3 .. 1e5 leaves room and keeps prices finite.
  per_usd = R(num { min = 1e-3, max = 1e5 }),
  -- the day of the published reference rate (a central bank's is daily)
  date = R(T.day()), source = R(str()), notes = str(),
}

M.settings = T.record {
  currency = T.enum { "USD", "CNY", "EUR", "GBP", "JPY", "KRW", "INR" },
  safety_margin = num { min = 0, max = 0.9 },
  -- the buyer's markets (price regions, "cn" or "us,global"): gpuplan.prices.buyer
  market = str(),
}

local pos = function() return int { min = 1 } end
-- A model's moe.capacity_factor: the job's option, not the model's (the
-- engine's model reader, engine/lgp_model.c, refuses it in the same words).
M.CAPACITY_FACTOR_MSG = "not a model field: the MoE capacity factor is the job's "
  .. "(--capacity-factor F, Lua capacity_factor = F)"
M.CAPACITY_FACTOR_REFUSED = { name = "refused", check = function(_, path)
  fail(path, "%s", M.CAPACITY_FACTOR_MSG)
end }
-- How a model encodes positions (FORMAT.md `positions`; the engine's
-- gp_pos): rotary q and k in every layer, a learned table added at the
-- input, ALiBi's bias inside attention, or none (a hybrid Mamba stack's
-- attention layers: Megatron-Core's position_embedding_type "none").  The
-- case format's too.
M.POSITIONS = { "rope", "learned", "alibi", "none" }
-- The model's split projections (FORMAT.md `split_proj`).
M.SPLIT_PROJ = { "none", "qkv", "mlp", "both" }
-- Parameters (vision.params, projector_params) as the engine bounds them.
local params = function(min) return num { min = min, max = M.AMOUNT_MAX } end

M.model = T.record {
  id = R(id()), name = R(str()), family = str(),
  layers = R(pos()), hidden = R(pos()), heads = R(pos()),
  kv_heads = pos(), head_dim = pos(),
  ffn_hidden = R(int { min = 0 }), ffn_gated = bool(),
  linear_bias = bool(), pos_embeddings = int { min = 0 },
  positions = T.enum(M.POSITIONS),
  vocab = R(pos()), tied_embeddings = bool(),
  qkv_bias = bool(), norm = T.enum { "rms", "layer" },
  max_seq = pos(),
  -- Encoder-decoder (T5): layers of the encoder stack (`layers` is then
  -- the decoder's), the relative-position buckets, and the MLP's
  -- activation where ReLU keeps a different tensor (T5 v1.0); relu2 is
  -- squared ReLU on a plain MLP (Nemotron-4, Megatron-Core squared_relu,
  -- Hugging Face's "relu2"), priced at its own 2 FLOP per element.
  encoder_layers = int { min = 0 }, rel_buckets = int { min = 0 },
  ffn_act = T.enum { "relu", "relu2", "gelu", "gelu_new", "silu" },
  -- The gated activation clamps its two halves first (GPT-OSS's
  -- swiglu_limit; engine ffn_clamp).
  ffn_clamp = bool(),
  -- An RMSNorm over each head's q and k before rope (Qwen3's q_norm and
  -- k_norm; Megatron-Core's qk_layernorm; engine qk_norm).
  qk_norm = bool(),
  -- A learned sink logit per head in the attention softmax (gpt-oss's
  -- GptOssAttention sinks): not priced (a value a head), but it picks
  -- the serving engine's attention kernel (vLLM takes sinks on FA3 or
  -- another backend, never FlashAttention-2: gpuplan.infer fa2_mixed).
  attn_sinks = bool(),
  -- Attention and MLP side by side on the layer's input, their partial
  -- sums added before one tensor-parallel all-reduce a layer (Falcon's
  -- parallel_attn / new_decoder_architecture; engine parallel_attn).
  parallel_attn = bool(),
  -- A parallel layer's attention and MLP reading one pre-norm's output
  -- (GPT-J's ln_1 alone): no norm before the MLP; needs parallel_attn
  -- (engine shared_norm).
  shared_norm = bool(),
  -- YaRN's attention factor on rope's cos and sin (Hugging Face's
  -- rope_scaling attention_factor, default 0.1 ln(factor) + 1;
  -- Megatron-Core's concentration factor); absent: 1.
  rope_attention_factor = num { positive = true, max = 1e6 },
  -- Which projections the model's own PyTorch modules (its Hugging Face
  -- modeling file) keep as linears of their own: q, k and v ("qkv"), the
  -- gated MLP's gate and up ("mlp"), both, or none (fused weights; the
  -- default).  Stacks that run those modules price them so (the
  -- split_proj option; FORMAT.md).
  split_proj = T.enum(M.SPLIT_PROJ),
  moe = T.record {
    experts = R(pos()), top_k = R(pos()), shared_experts = int { min = 0 },
    ffn_hidden = R(pos()),
    -- The first dense_layers layers are dense (DeepSeek's first_k_dense_
    -- replace); 0..layers, judged beside the layers as layer_step is.
    dense_layers = M.moe_layer_count(),
    -- After the dense_layers, every layer_step-th layer is MoE (layer i,
    -- 0-based, when (i + 1) % layer_step == 0), the others dense: Hugging
    -- Face Llama 4's interleave_moe_layer_step (Maverick 2), Megatron-Core's
    -- moe_layer_freq [0,1]*24.  Absent: 1, every layer.  Its range,
    -- 1..layers, is judged beside the layers (M.moe_counts_problem, after
    -- the record, as dense_layers' 0..layers), in the words the engine's
    -- binding and the case files use: a catalog said "must be >= 1, got
    -- 0" for 0 and "moe.layer_step must be in 1..layers (2), got 5" past
    -- the layers.
    layer_step = M.moe_layer_count(),
    dense_ffn_hidden = pos(), shared_ffn_hidden = pos(),
    -- Group-limited routing: the experts split in `groups` equal groups,
    -- each token's top_k picked from the experts of its best group_top_k
    -- groups (Hugging Face DeepSeek-V3's config.json n_group / topk_group,
    -- Megatron-Core's moe_router_num_groups / moe_router_group_topk).
    -- Absent: ungrouped.  Judged beside experts and top_k after the
    -- record (M.moe_groups_problem).
    groups = pos(), group_top_k = pos(),
    -- A per-token sigmoid gate on the shared experts' output (Qwen1.5-MoE,
    -- Qwen2-MoE: transformers' Qwen2MoeSparseMoeBlock "self.shared_expert_gate
    -- = torch.nn.Linear(config.hidden_size, 1, bias=False)" and
    -- "F.sigmoid(self.shared_expert_gate(hidden_states)) *
    -- shared_expert_output"); needs shared_experts.  Absent: none.
    shared_expert_gate = bool(),
    -- The token buffer per expert is the run's choice (Megatron-Core's
    -- --moe-expert-capacity-factor is a training argument, not a config.json
    -- field), priced from the job's capacity_factor option; a model's was
    -- read by nothing, so it is refused rather than ignored.
    capacity_factor = M.CAPACITY_FACTOR_REFUSED,
  },
  mla = T.record {
    q_lora_rank = int { min = 0 }, kv_lora_rank = R(pos()),
    qk_nope_head_dim = R(pos()), qk_rope_head_dim = R(pos()),
    v_head_dim = R(pos()),
  },
  -- A hybrid stack, one letter a layer (Megatron-Core's
  -- hybrid_override_pattern: M a Mamba-2 layer, * attention, - an MLP, E
  -- an MoE block); its length is layers, its letters and the tables it
  -- needs (mamba for M, moe for E) the engine's model_check.
  hybrid_pattern = str(),
  -- The Mamba-2 mixer of its M layers (Megatron-Core's mamba_num_heads,
  -- mamba_head_dim, mamba_state_dim, mamba_num_groups, d_conv, chunk_size;
  -- absent conv 4, chunk 128 as MambaMixer's defaults).
  mamba = T.record {
    heads = R(pos()), head_dim = R(pos()), state = R(pos()), groups = R(pos()),
    conv = pos(), chunk = pos(),
  },
  mtp_layers = int { min = 0 },
  sliding_window = T.record { size = R(pos()), layers = int { min = 0 } },
  vision = T.record {
    params = num { positive = true, max = M.AMOUNT_MAX }, layers = pos(), hidden = pos(),
    heads = pos(), ffn_hidden = pos(), ffn_gated = bool(),
    image_size = pos(), patch_size = pos(), merge = pos(),
    tokens_per_image = pos(), projector_params = params(0),
    temporal_patch = pos(),
  },
  -- Published totals in billions; 1e6 B is a thousand times the largest.
  params_b = R(num { positive = true, max = 1e6 }),
  active_params_b = num { positive = true, max = 1e6 },
  dtype = T.enum { "fp32", "bf16", "fp16", "fp8" },
  -- the routed experts' format as released, where only they are quantized
  expert_dtype = T.enum { "fp8", "mxfp4", "fp4" },
  source = R(str()), notes = str(),
}

do
  local record_check = M.model.check
  M.model.check = function(v, path)
    local out = record_check(v, path)
    local field, bad = M.moe_counts_problem(out)
    if bad then fail((path == "" and "moe." or path .. ".moe.") .. field, "%s", bad) end
    local hbad = M.hybrid_problem(out)
    if hbad then fail((path == "" and "" or path .. ".") .. "hybrid_pattern", "%s", hbad) end
    local gfield, gbad = M.moe_groups_problem(out)
    if gbad then fail((path == "" and "moe." or path .. ".moe.") .. gfield, "%s", gbad) end
    local mbad = M.mamba_problem(out)
    if mbad then fail((path == "" and "" or path .. ".") .. "mamba.groups", "%s", mbad) end
    return out
  end
end

-- Bytes per parameter (or per element) of a model state: 0 .. 64, the
-- engine's bound (engine/memory_states.c).
local function per_param(positive)
  return num { min = 0, max = 64, positive = positive }
end

-- A precision recipe: the model states' bytes per parameter before any
-- sharding, and what the kernels read of its dtypes (engine/memory_states.h).
M.recipe = T.record {
  id = R(id()), name = str(),
  weights = R(per_param(true)), grads = R(per_param(true)), master = R(per_param(false)),
  state = R(per_param(true)),         -- bytes per optimizer-state element
  reduce = R(per_param(true)),        -- bytes per parameter a gradient reduction moves
  activations = R(per_param(true)),   -- bytes per saved activation element
  offload = R(per_param(true)),       -- the trainable partition's dtype kept on the GPU under offload
  master_shard0 = bool(), reduce_phase = bool(),
  source = R(str()), notes = str(),
}

-- An optimizer: its states per parameter, their element bytes when its
-- own (else the recipe's), and how it runs.
M.optimizer = T.record {
  id = R(id()), name = str(),
  states = R(num { positive = true, max = 16 }),
  state = per_param(true),
  foreach_adamw = bool(),
  -- states per parameter on what is not a hidden weight matrix (Muon's AdamW)
  scalar_states = num { min = 0, max = 16 },
  ns_steps = int { min = 0, max = 100 },  -- Newton-Schulz iterations a step
  dp_shard = bool(),  -- states shard over DP at every ZeRO stage, params all-gathered
  source = R(str()), notes = str(),
}

-- Which constructor fills which catalog table.
M.kinds = {
  gpu = "gpus", arch = "archs", fabric = "fabrics", system = "systems",
  price = "prices", currency = "currencies", model = "models",
  recipe = "recipes", optimizer = "optimizers",
}

-- What is wrong with model description m's hybrid_pattern, judged beside
-- its layers as the engine's model_check judges it (engine/model.c
-- check_hybrid, the same words): a letter that is not M, *, - or E, a
-- length other than layers, M without a mamba table, a mamba table
-- without M, E without a moe table, a moe table without E, a mamba table
-- without a pattern; or nil.  A catalog entry or a case file is refused
-- at its line, not when a command first prices it (a case's model with
-- a mamba table and no pattern was a case "not predicted").
function M.hybrid_problem(m)
  local p = type(m) == "table" and m.hybrid_pattern
  if p == nil and type(m) == "table" and type(m.mamba) == "table" then
    return "is missing, but the model has a mamba table (the pattern says which layers are "
      .. "Mamba layers)"
  end
  if type(p) ~= "string" then return nil end
  local at = p:find("[^M%*%-E]")
  if at then
    return string.format("unknown layer '%s' at letter %d (M Mamba, * attention, - MLP, E MoE)",
      p:sub(at, at), at)
  end
  if math.type(m.layers) and #p ~= m.layers then
    return string.format("has %d letters but layers is %d (one letter a layer)", #p, m.layers)
  end
  if p:find("M", 1, true) and type(m.mamba) ~= "table" then
    return "has Mamba layers (M) but the model has no mamba table"
  end
  if not p:find("M", 1, true) and type(m.mamba) == "table" then
    return "has no Mamba layer (M) but the model has a mamba table"
  end
  if p:find("E", 1, true) and type(m.moe) ~= "table" then
    return "has MoE layers (E) but the model has no moe table"
  end
  if not p:find("E", 1, true) and type(m.moe) == "table" then
    return "has no MoE layer (E) but the model has a moe table"
  end
  return nil
end

-- What is wrong with the mamba table of model description m beside
-- itself: its groups must divide its heads (Megatron-Core mamba_mixer.py
-- "nheads must be evenly divisible by ngroups": the heads of a group
-- share its B and C), in the engine's words (engine/model.c
-- check_hybrid); or nil.  A catalog entry or a case file is refused at
-- its line: a case was "not predicted" with the engine's message and no
-- line, where a state past the count bound was refused at its line.
-- Each dim's range (1..COUNT_MAX) is the record's.
function M.mamba_problem(m)
  local b = type(m) == "table" and m.mamba
  if type(b) ~= "table" then return nil end
  -- whole numbers (a JSON case's 4 reads as 4.0)
  local h, g = math.tointeger(b.heads), math.tointeger(b.groups)
  if h and g and h >= 1 and g >= 1 and h % g ~= 0 then
    return string.format("mamba.groups (%d) must divide mamba.heads (%d): the heads of a group "
      .. "share its B and C", g, h)
  end
  return nil
end

-- What is wrong with model description m's layer counts of the moe
-- table -- moe.dense_layers (0..layers) and moe.layer_step (1..layers) --
-- in the one wording every reader of a model uses (a catalog entry, a
-- case file's model, a script's model table through the engine's
-- binding, engine/lgp_model.c moe_counts): the field's name under moe
-- and "must be in 1..layers (L), got V" ("must be an integer in ..." for
-- a fraction); or nil.  Absent is 0 dense
-- layers and a step of 1 (every layer); a non-number is the field
-- check's.
local MOE_COUNTS = { { "dense_layers", 0 }, { "layer_step", 1 } }
function M.moe_counts_problem(m)
  local e = type(m) == "table" and m.moe
  local layers = m and m.layers
  if type(e) ~= "table" or math.type(layers) == nil then return nil end
  for _, f in ipairs(MOE_COUNTS) do
    local v, lo = e[f[1]], f[2]
    local iv = math.type(v) and math.tointeger(v)
    -- not a whole number (a fraction, NaN, an infinity): its range too,
    -- NaN written as the binding writes it
    if math.type(v) ~= nil and iv == nil then
      return f[1], string.format("must be an integer in %d..layers (%d), got %s", lo, layers,
        v ~= v and "NaN" or show(v))
    end
    if iv and (iv < lo or iv > layers) then
      return f[1], string.format("must be in %d..layers (%d), got %s", lo, layers, show(v))
    end
  end
  return nil
end

-- What is wrong with the group-limited routing of model description m's
-- moe table (groups, group_top_k) beside its experts and top_k, in the
-- engine's words (engine/model.c model_moe_groups_check): both or
-- neither; the groups split the experts evenly (Megatron-Core
-- moe_utils.py group_limited_topk: "Divide experts into num_groups equal
-- groups"); a token picks group_top_k of the groups ("Select group_topk
-- groups per token") and its top_k experts among theirs ("Pick topk
-- experts from those groups only"), so top_k <= group_top_k x experts /
-- groups.  Returns the field under moe and the message, or nil.
function M.moe_groups_problem(m)
  local e = type(m) == "table" and m.moe
  if type(e) ~= "table" then return nil end
  local G, Gs = math.tointeger(e.groups), math.tointeger(e.group_top_k)
  local E, k = math.tointeger(e.experts), math.tointeger(e.top_k)
  if G == nil and Gs == nil then return nil end
  if G == nil or Gs == nil then
    return G == nil and "groups" or "group_top_k", string.format(
      "moe.groups (%s) and moe.group_top_k (%s) go together: the groups and how many of "
      .. "them a token picks from", show(e.groups or 0), show(e.group_top_k or 0))
  end
  if E == nil or k == nil then return nil end
  if E % G ~= 0 then
    return "groups", string.format("moe.groups (%d) must divide moe.experts (%d): the "
      .. "router splits the experts into equal groups", G, E)
  end
  if Gs > G then
    return "group_top_k", string.format("moe.group_top_k must be in 1..groups (%d), got %d", G, Gs)
  end
  if k > Gs * (E // G) then
    return "top_k", string.format("moe.top_k (%d) must be at most group_top_k x experts / "
      .. "groups (%d x %d = %d): a token's experts come from its picked groups", k, Gs,
      E // G, Gs * (E // G))
  end
  return nil
end

-- The MoE layers of a model description (a catalog entry or a gp.train
-- model table): the layers at or past moe.dense_layers whose index + 1
-- (0-based) is a multiple of moe.layer_step, as the engine counts them
-- (model.h model_moe_in); 0 without moe.
function M.moe_layers(m)
  local e = m.moe
  if not e or (e.experts or 0) <= 0 then return 0 end
  local s, d = math.max(e.layer_step or 1, 1), math.min(e.dense_layers or 0, m.layers)
  return m.layers // s - d // s
end

return M
