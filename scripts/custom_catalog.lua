#!/usr/bin/env gpuplan
-- Your own cluster in the catalog, without recompiling: a user directory of
-- catalog files (the same constructors as catalog/, checked the same way)
-- that adds a node and a price -- here an H800 cluster with 4 NICs of
-- 200 Gb/s RoCE per 8-GPU node (a common build in China, half the
-- standard HGX's 8 x 400G) rented at a contract price -- and the plan on it
-- against the stock HGX H800 at the market's price.
--
--   gpuplan run scripts/custom_catalog.lua [--dir DIR] [--price 7.5CNY/h]
--
-- The files are written to --dir (default: a fresh temporary directory);
-- keep them under $XDG_CONFIG_HOME/gpuplan/catalog (or a directory named in
-- $GPUPLAN_CATALOG) and every command sees them.
local gp = require "gpuplan"
local lfs = require "lfs"

local opt = gp.options({
  dir = { "where to write the catalog files (empty: a temporary directory)", "" },
  price = { "the contract price per GPU-hour", "7.5CNY/h" },
}, arg)
-- gp.options hands the arguments that are no option back in opt[0]: this
-- script takes none, so one is refused, as guide.lua refuses it (grid_sweep's
-- --gpus 64 128 ran 64 alone and dropped the 128 in silence).
if #opt[0] > 0 then
  error(require("gpuplan.cli").usage("custom_catalog: unexpected argument '" .. opt[0][1] .. "' (see --help)"), 0)
end

-- The price is checked here, naming --price: a bad one failed in the
-- catalog file written from it ("TMPDIR/lua_x/my-cluster.lua:14: price
-- ...: field 'price'"), a file the user never named, left behind.
local okp, pv = gp.units.try(opt.price, "price")
if not okp or not (pv.amount > 0) then
  error(require("gpuplan.cli").usage(string.format("custom_catalog: --price '%s': %s", opt.price,
    okp and "must be positive" or tostring(pv))), 0)
end

local dir = opt.dir
local temp = dir == ""
if temp then
  dir = os.tmpname()
  os.remove(dir)
end
-- A --dir that cannot be made (its parent missing, a file there) is the
-- user's argument: named, with the system's reason, not an assert's
-- traceback.
local made, why = lfs.mkdir(dir)
local there = lfs.attributes(dir, "mode")
-- a file or device of that name: mkdir's "File exists" read as if the
-- directory were there and could not be made
if not made and there and there ~= "directory" then
  why = "it is " .. (there == "file" and "a file" or there == "char device" and "a character device"
    or ("a " .. there)) .. ", not a directory"
end
if not made and there ~= "directory" then
  error(string.format("custom_catalog: %s '%s': cannot make the directory: %s",
    temp and "a temporary directory" or "--dir", dir, tostring(why)), 0)
end

local files = require "gpuplan.files"
files.write(dir .. "/my-cluster.lua", string.format([[
-- An H800 node as built by many Chinese clouds: 4 x 200 Gb/s RoCE NICs.
fabric {
  id = "my-roce-200", name = "200 Gb/s RoCE v2 (ConnectX-6 Dx)", scope = "scaleout", kind = "network",
  bw = "200Gb/s per-dir", latency = "2.7us", achievable = 0.90,
  achievable_reason = "as the catalog's RoCE 400: Ethernet framing and congestion control",
  source = "example: the contract's NIC spec",
}
system {
  id = "my-h800-4nic", name = "H800 8-GPU node, 4 x 200G RoCE", gpu = "h800-sxm", gpus = 8,
  scaleup = "nvlink4-h800", nics = 4, nic_fabric = "my-roce-200",
  host_memory = "2TB", host_mem_bw = "614.4GB/s",
  source = "example: the provider's node sheet",
}
price {
  id = "h800-sxm/my-contract", gpu = "h800-sxm", provider = "my contract",
  provider_kind = "specialty", region = "cn", price = %q, date = "2026-12",
  source = "example: the signed quote",
}
]], opt.price))

local builtin = require("gpuplan.config").root .. "/catalog"
local function remove_temp()
  if not temp then return end
  for f in lfs.dir(dir) do if f ~= "." and f ~= ".." then os.remove(dir .. "/" .. f) end end
  lfs.rmdir(dir)
end
local ok, cat = pcall(gp.catalog, { dirs = { builtin, dir } })
if not ok then
  -- the temporary directory goes with the run (it was left behind)
  remove_temp()
  error(require("gpuplan.cli").fail("the user catalog does not check: " .. tostring(cat)), 0)
end

-- The job: Llama-3-8B pre-training on 128 H800s, 200B tokens, layouts
-- searched: wide data parallelism, whose gradient traffic crosses the NICs.
local job = { model = "llama3-8b", method = "pretrain", gpu = "h800-sxm", gpus = 128,
              tokens = 2e11, zero = { 0, 1 }, micro_batch = { 1, 2 }, currency = "CNY",
              top = 1 }
local rows = {}
for _, sys in ipairs { "hgx-h800", "my-h800-4nic" } do
  local o = {}
  for k, v in pairs(job) do o[k] = v end
  o.system = sys
  -- The stock node at the built-in catalog's cheapest price; yours, from
  -- the user catalog, at the contract's.
  o.cat = sys == "my-h800-4nic" and cat or gp.catalog()
  local r = gp.sweep(o)
  local c = r.results[1]
  local t = gp.train(require("gpuplan.sweep").train_options(o, c))
  local dp = 0
  for _, p in ipairs(t.parts) do if p.name == "dp_comm" then dp = p.share end end
  rows[#rows + 1] = { system = sys, layout = c.layout, step_s = c.step_s, mfu = c.mfu,
                      dp = 100 * dp, days = c.days, cost = c.cost, price = c.price }
end
gp.report(rows, { title = "Llama-3-8B pre-training on 128 x h800-sxm, 200B tokens: the stock "
                          .. "node against your own",
  columns = { { key = "system" }, { key = "layout", label = "best layout" },
              { key = "step_s", label = "step (s)", fmt = "%.2f" },
              { key = "mfu", label = "MFU", fmt = "%.3f" },
              { key = "dp", label = "DP comm %", fmt = "%.1f" },
              { key = "days", fmt = "%.1f" },
              { key = "price", label = "CNY/GPU-h", fmt = "%.2f" },
              { key = "cost", label = "cost (CNY)", fmt = "%.0f" } } })
local a, b = rows[1], rows[2]
print()
print(string.format("On your nodes the step is %.1f%% %s and the run %.0f CNY %s (%s against %s);",
                    100 * math.abs(b.step_s / a.step_s - 1), b.step_s >= a.step_s and "longer" or "shorter",
                    math.abs(b.cost - a.cost), b.cost >= a.cost and "dearer" or "cheaper",
                    b.layout, a.layout))
print(string.format("the catalog files are in %s (gpuplan catalog check %s).", temp and "a temporary directory" or dir,
                    temp and "DIR" or dir))
remove_temp()
return 0
