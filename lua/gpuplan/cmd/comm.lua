-- gpuplan comm: nccl-tests-like table of one collective over message sizes.
local comm = require "gpuplan.comm"
local report = require "gpuplan.report"
local units = require "gpuplan.units"
local cli = require "gpuplan.cli"
local options = require "gpuplan.options"

local C = {
  summary = "collective cost over message sizes, nccl-tests style (time, algbw, busbw, algorithm)",
  usage = options.usage_of("comm",
    "usage: gpuplan comm --system ID | --gpu ID [--nodes N] [--op OP] [options]", [[
  Sizes follow nccl-tests: total buffer for all_gather/reduce_scatter, the
  per-rank send buffer for all_to_all.  GB/s are 10^9 B/s; busbw = algbw x
  2(n-1)/n (all_reduce), (n-1)/n (all_gather, reduce_scatter, all_to_all),
  1 (others).  count is in 4-byte floats as nccl-tests prints it (per rank
  for all_gather/reduce_scatter, per peer for all_to_all), and a size is
  rounded down as nccl-tests runs it: to whole floats, and for those three
  to a multiple of 16 B a rank (all_gather of 8 B over 8 ranks runs 0 B).]]),
  -- The options are declared once, in gpuplan.options (gp.comm's keys too).
  options = options.spec("comm"),
  hint = options.cli_hint("comm"),
}

local function size_arg(v, name, default)
  if v == nil then return default end
  local n = require("gpuplan.args").decimal_int(v)
  if n then return n end
  -- A number past an integer's range (1e20) or not whole (1.5) read
  -- "expects a size like 8, 1MiB or 4GB": the first is a size, out of
  -- range (the sweep's bounds say so), the second no whole byte count.
  local x = type(v) == "string" and not v:match("^%s*[%+%-]?0[xX]") and tonumber(v)
  if x and x == x and math.abs(x) ~= math.huge then
    if x == math.floor(x) then return x end
    error(cli.usage("comm: --" .. name .. " '" .. v .. "': a size is a whole number of bytes "
      .. "(8, 1MiB or 4GB)"), 0)
  end
  -- nccl-tests' own -b/-e sizes, 1K, 1M, 1G: "--max 1G", typed as "-e
  -- 1G", read "expects a size like 8, 1MiB or 4GB".  Read
  -- as nccl-tests reads it (comm.nccl_size, gp.comm's bytes' reader too)
  do
    local bytes = comm.nccl_size(v)
    if bytes then
      if bytes == math.floor(bytes) then return bytes end
      error(cli.usage("comm: --" .. name .. " '" .. v .. "': a size is a whole number of bytes "
        .. "(8, 1MiB or 4GB)"), 0)
    end
  end
  local ok, b = units.try(v, "bytes")
  -- a size in the units' form past their range is out of range (exit 1,
  -- as comm.sizes says of a number past 2^50), not "expects a size like
  -- 4GB" of '99999999999GB'
  if not ok and tostring(b):find("too large", 1, true) then
    error(string.format("comm: --%s must be a size of 1 B to 2^50 B (1 PiB), got '%s'", name, v), 0)
  end
  if not ok then
    error(cli.usage("comm: --" .. name .. " expects a size like 8, 1MiB, 4GB or 1G (as "
      .. "nccl-tests -e 1G: 1024^3 B), got '" .. v .. "'"), 0)
  end
  return b
end

-- An x tick of the chart: powers of 1024 as B, KiB, MiB, GiB; the ends of
-- the axis too where they are 3 to 7 doublings from one (no collision);
-- nil (an unlabelled tick) for the other powers of two.
local function size_tick(x, lo, hi)
  local k = math.floor(math.log(x, 2) + 0.5)
  local kend = k == math.floor(math.log(lo, 2) + 0.5)
               or k == math.floor(math.log(hi, 2) + 0.5)
  if k % 10 ~= 0 and not (kend and k % 10 >= 3 and k % 10 <= 7) then
    return nil
  end
  for _, u in ipairs { { 1024 ^ 3, "GiB" }, { 1024 ^ 2, "MiB" }, { 1024, "KiB" } } do
    if x >= u[1] then return string.format("%g%s", x / u[1], u[2]) end
  end
  return string.format("%gB", x)
end

local function gbps(v) return string.format("%.2f", v / 1e9) end

local columns = {
  { key = "bytes", label = "size (B)", fmt = "%.0f" },
  { key = "count", label = "count" },
  { key = "time_us", label = "time (us)", fmt = "%.2f" },
  { key = "algbw", label = "algbw (GB/s)", fmt = gbps, csv = "algbw_gbps" },
  { key = "busbw", label = "busbw (GB/s)", fmt = gbps, csv = "busbw_gbps" },
  { key = "algo", label = "algorithm" },
  { key = "proto", label = "protocol" },
}

function C.run(opts, args)
  if #args > 0 then
    -- The collective as an argument ('gpuplan comm all-reduce', as
    -- nccl-tests names its binaries all_reduce_perf): the --op it goes
    -- with, where "--system ID or --gpu ID" said nothing of it.
    local okop, op = pcall(require("gpuplan.comm").op_name, args[1])
    if okop then
      error(cli.usage(string.format("comm: no arguments (got '%s'): the collective is "
        .. "--op %s", require("gpuplan.units").oneline(args[1]), op)), 0)
    end
    error(cli.stray_argument("comm", args[1], { { "systems", "--system" }, { "gpus", "--gpu" } },
      "; --system ID or --gpu ID"), 0)
  end
  if opts.gpu and (opts.system or opts.systems) then
    error(cli.usage("comm: give --system (or --systems) or --gpu, not both"), 0)
  end
  -- --systems names the chart's lines: without --svg all but the first
  -- were dropped in silence.
  if opts.systems and not opts.svg then
    error(cli.usage("comm: --systems names the lines of the --svg chart: give --svg FILE "
      .. "(the table is one system's: --system ID)"), 0)
  end
  -- Each of the chart's lines once, none left out: 'dgx-h100,,dgx-a100'
  -- and ',dgx-h100' were read without the empty entry, and
  -- 'dgx-h100,dgx-h100' drew the same line twice, where plan's --gpu
  -- 'a,,b' and a card named twice are refused.
  if opts.systems then
    local seen = {}
    for id in (opts.systems .. ","):gmatch("([^,]*),") do
      id = id:match("^%s*(.-)%s*$")
      if id == "" then
        error(cli.usage("comm: --systems expects system ids separated by commas, got '"
          .. opts.systems .. "'"), 0)
      end
      if seen[id] then error(cli.usage("comm: --systems names " .. id .. " twice"), 0) end
      seen[id] = true
    end
  end
  -- With only --systems (a chart of several), the table is for the first.
  if not opts.system and opts.systems then opts.system = opts.systems:match("[^,%s]+") end
  if not opts.system and not opts.gpu then error(cli.usage("comm: --system ID (or --gpu ID) is required"), 0) end
  local op = opts.op or "all_reduce"
  local ok, canon = pcall(comm.op_name, op)
  if not ok then
    error(cli.usage("comm: --op: " .. tostring(canon):gsub("^.-(unknown op)", "%1")), 0)
  end
  if opts.algo then
    local known = false
    for _, a in ipairs(comm.algos) do known = known or a == opts.algo end
    if not known then
      error(cli.usage("comm: --algo must be one of " .. table.concat(comm.algos, ", ") .. ", got '" .. opts.algo .. "'"), 0)
    end
  end
  -- The engine prices at most 2^24 ranks (engine/common.h GP_COUNT_MAX).
  if opts.nodes and opts.system then
    local okc, sys = pcall(function() return require("gpuplan").catalog():get("systems", opts.system) end)
    if not okc then error(sys, 0) end
    local per = sys.gpus
    if opts.nodes < 1 or opts.nodes * per > 2 ^ 24 then
      error(cli.usage(string.format("comm: --nodes must be in 1..%d for %s (%d GPUs each; at most 2^24 ranks)",
        2 ^ 24 // per, opts.system, per)), 0)
    end
  end
  -- --gpus-per-thread >= 1 and --nics in 0..2^24 are their declared
  -- ranges (gpuplan.options), checked before this runs.
  local lo = size_arg(opts.min, "min", 8)
  local hi = size_arg(opts.max, "max", 8 * 1024 ^ 3)
  -- each bound named with its value, a default one said as such: --max 4
  -- alone read "need 1 <= --min <= --max", a --min the user never gave
  -- The smallest message is one element: count is in 4-byte floats, as
  -- nccl-tests sends them (its count is the size over the word size), so
  -- 3 bytes was a count of 0 -- no data -- priced at the launch latency.
  -- A size that reads but lies outside the sweep's bounds is out of
  -- range, exit 1, as every other command's out-of-range value is; one
  -- that does not read (--min 1x) is size_arg's usage error, exit 2.
  -- These exited 2.
  if lo < 4 then
    error(string.format("comm: --min %s is below 4 bytes, one 4-byte float "
      .. "(count is in floats, as nccl-tests counts)", tostring(opts.min)), 0)
  end
  if hi < lo then
    local function said(v, name, d) return v and ("--" .. name .. " " .. v) or (d .. " (the default --" .. name .. ")") end
    error(string.format("comm: %s is above %s: give --min at most --max",
      said(opts.min, "min", "8B"), said(opts.max, "max", "8GiB")), 0)
  end
  -- The range before any row: 5000PB would double past 2^63 forever.
  local okr, why = pcall(comm.sizes, lo, hi)
  if not okr then
    local msg, which = tostring(why):gsub("(comm: )(%a+) must", "%1--%2 must")
    -- the bound as typed beside the bytes it was read as: '--max
    -- 99999999999G' (nccl-tests' powers of 1024) read "got
    -- 1.0737418239893e+20" alone, a number the user never wrote
    local name = which > 0 and msg:match("^comm: %-%-(%a+) must")
    local typed = name and opts[name]
    if typed and not msg:find("got " .. tostring(typed), 1, true) then
      msg = msg .. string.format(" (--%s %s)", name, typed)
    end
    error(msg, 0)
  end

  -- system: a catalog system id, or nil for the node built from --gpu.
  local function sweep(system)
    local okr, rows = pcall(comm.sweep, { op = canon, system = system,
                                          gpu = not system and opts.gpu or nil,
                                          fabric = opts.fabric, nodes = opts.nodes,
                                          gpus = opts.gpus, algo = opts.algo, min = lo,
                                          -- not given: the sweep's own default top, which
                                          -- stops where the card's buffers fit
                                          max = opts.max and hi or nil,
                                          gpus_per_thread = opts.gpus_per_thread,
                                          nccl = opts.nccl, nvls = opts.nvls,
                                          nics = opts.nics })
    -- a user error: drop the Lua source position, keep the reason, name
    -- the flag the user typed; a refusal gp.comm marked a usage error
    -- (gpuplan.args usage: --nccl abc, text that is no release) stays one
    -- under its new words
    if not okr then
      local msg = (cli.clean(rows):gsub("gpus_per_thread", "--gpus-per-thread")
                            :gsub("comm: nccl ", "comm: --nccl ")
                            :gsub("comm: nvls on ", "comm: --nvls on ")
                            :gsub("comm: fabric", "comm: --fabric"):gsub("comm: gpu:", "comm: --gpu:")
                            :gsub("^comm: gpus (%d+):", "comm: --gpus %1:")
                            :gsub("^comm: max [^:]*:", "comm: --max " .. (opts.max and tostring(opts.max)
                                    or "8GiB (the default)") .. ":")
                            :gsub("^comm: min [^:]*:", "comm: --min " .. tostring(opts.min) .. ":")
                            :gsub("give max at most", "give --max at most")
                            :gsub("give min at most", "give --min at most")
                            :gsub("built from gpu ", "built from --gpu ")
                            :gsub("give system = ID %(a catalog system with NICs%)",
                                  "give --system ID (a catalog system with NICs)")
                            :gsub("need nics > 0", opts.nics and "need --nics > 0" or "%0"))
      error(cli.reword(rows, msg), 0)
    end
    -- Each row at the size and count nccl-tests runs and prints for the
    -- size asked (comm.nccl_tests_size: whole floats, a split op's
    -- share whole 16 B a rank): --min 7 printed a row of 7 B, count 1,
    -- where nccl-tests runs and prints 4 B; an all_gather of 8 B over 8
    -- ranks was priced as 8 B with count 2, where nccl-tests runs 0 B,
    -- count 0.  A size it rounds is priced at what it runs.
    for i, r in ipairs(rows) do
      local b, n = comm.nccl_tests_size(canon, math.tointeger(r.bytes) or r.bytes, r.gpus)
      if b ~= r.bytes then
        local okb, rb = pcall(comm.comm, { op = canon, system = system,
                                           gpu = not system and opts.gpu or nil,
                                           fabric = opts.fabric, nodes = opts.nodes,
                                           gpus = opts.gpus, algo = opts.algo, bytes = b,
                                           gpus_per_thread = opts.gpus_per_thread,
                                           nccl = opts.nccl, nvls = opts.nvls,
                                           nics = opts.nics })
        if not okb then error(cli.reword(rb, cli.clean(rb)), 0) end
        rows[i], r = rb, rb
      end
      r.count = math.tointeger(n) or n
      r.time_us = r.time * 1e6
    end
    return rows
  end

  local function check_system(id, opt)
    local okc, err = pcall(function() return require("gpuplan").catalog():get("systems", id) end)
    if not okc then error("comm: --" .. opt .. ": " .. tostring(err), 0) end
  end
  if opts.system then check_system(opts.system, "system") end
  -- Every chart id before anything is printed or written.
  local list = {}
  if opts.svg and opts.system then
    for id in (opts.systems or opts.system):gmatch("[^,%s]+") do
      check_system(id, opts.systems and "systems" or "system")
      list[#list + 1] = id
    end
  end
  -- NICs need the fabric they run on, which the system names.
  if opts.nics and opts.nics > 0 and opts.gpu then
    -- the card's systems with NICs named (gpuplan.comm systems_with_nics)
    local with = require("gpuplan.comm").systems_with_nics(opts.gpu)
    error(string.format("comm: --nics %d: the node built from --gpu %s has no NIC fabric for "
      .. "them to run on; give --system ID%s", opts.nics, opts.gpu,
      with ~= "" and (" (a catalog system with NICs" .. with .. ")") or ""), 0)
  end
  if opts.nics and opts.nics > 0 then
    for _, id in ipairs { opts.system or nil, table.unpack(list) } do
      local sys = require("gpuplan").catalog():get("systems", id)
      if not sys.nic_fabric then
        error(string.format("comm: --nics %d: system %s names no NIC fabric for them to run on "
          .. "(its catalog entry has no nic_fabric)", opts.nics, id), 0)
      end
    end
  end
  -- An output file that cannot be written fails before the table prints.
  if opts.svg then
    local okf, why = pcall(require("gpuplan.files").check_output, opts.svg, "svg")
    if not okf then error(why, 0) end
  end
  local rows = sweep(opts.system)
  local r1 = rows[1]
  -- The last node partial (engine/comm.c filled: 12 GPUs of 8-GPU nodes
  -- are 8 + 4, ppn the last node's): the full nodes' GPUs, then its.
  local full = r1.nodes > 1 and r1.nodes * r1.ppn ~= r1.gpus and
    (r1.gpus - r1.ppn) // (r1.nodes - 1) or r1.ppn
  local over = opts.fabric and (" over " .. opts.fabric) or ""
  local title = string.format("%s on %d x %s%s (%d node%s x %d GPU%s%s)", canon, r1.gpus,
                              tostring(opts.gpu), over,
                              r1.nodes, r1.nodes == 1 and "" or "s", full, full == 1 and "" or "s",
                              full ~= r1.ppn and string.format(", %d on the last", r1.ppn) or "")
  if opts.system then
    -- the GPUs counted are cards, named as cards, then the systems they sit
    -- in: "all_reduce on 16 x dgx-h100 (2 nodes x 8 GPUs)" read as sixteen
    -- systems
    local sys = require("gpuplan").catalog():get("systems", opts.system)
    -- (the GPUs a system runs where fewer than it holds: --ppn 1 ran one
    -- of a DGX's eight, and a partial last node)
    local each = ""
    if full ~= r1.ppn then
      each = string.format(" (%d GPU%s each, %d on the last)", full, full == 1 and "" or "s",
                           r1.ppn)
    elseif r1.nodes > 1 and full ~= sys.gpus then
      each = string.format(" (%d GPU%s each)", full, full == 1 and "" or "s")
    end
    title = string.format("%s on %d x %s on %d x %s%s%s", canon, r1.gpus,
                          tostring(sys.gpu or "GPU"), r1.nodes, opts.system, over, each)
  end
  local fmt = opts.format or "text"
  -- The 80% range of each row's time (gpuplan.ranges, gp.comm's time_lo
  -- and time_hi): one column in the text, two numbers in CSV and JSON.
  local cols = { table.unpack(columns) }
  local ranged = r1.time_lo ~= nil
  if ranged and (fmt == "text" or fmt == "markdown") then
    for _, r in ipairs(rows) do
      r.time_range_us = string.format("%.2f-%.2f%s", r.time_lo * 1e6, r.time_hi * 1e6,
        r.range.novel and "*" or "")
    end
    cols[#cols + 1] = { key = "time_range_us", label = "80% range (us)" }
  elseif ranged then
    for _, r in ipairs(rows) do r.time_lo_us, r.time_hi_us = r.time_lo * 1e6, r.time_hi * 1e6 end
    cols[#cols + 1] = { key = "time_lo_us", label = "time_lo_us", fmt = "%.2f" }
    cols[#cols + 1] = { key = "time_hi_us", label = "time_hi_us", fmt = "%.2f" }
  end
  report.print(rows, { columns = cols, format = opts.format, title = title })
  -- Where the ranges came from and what was assumed, as every other
  -- command says them (gp.comm's range and defaults; one size's are every
  -- size's: the regime and the node do not change with the message).
  if fmt == "text" or fmt == "markdown" then
    local note = require("gpuplan.ranges").note(r1)
    if note then io.write("ranges: ", note, "\n") end
    if #r1.defaults > 0 then io.write("defaults: ", table.concat(r1.defaults, ", "), "\n") end
  end

  -- --max not given on a card that cannot hold two 8 GiB buffers: the
  -- sweep stopped where they fit (gpuplan.comm sweep), said here.
  local top = comm.sizes(lo, hi)
  if not opts.max and rows[#rows].bytes < top[#top] and (fmt == "text" or fmt == "markdown") then
    io.write(string.format("largest message %d B, not the default --max 8GiB's %d B: "
      .. "nccl-tests holds a send and a receive buffer of the largest on each GPU, and two of "
      .. "%d B do not fit %s (nccl-tests reduces its maxBytes alike)\n",
      rows[#rows].bytes, top[#top], top[#top], opts.system or opts.gpu))
  end

  if opts.svg then
    local svg = require "gpuplan.svg"
    local p = svg.plot {
      title = string.format("%s busbw vs message size (%d node%s)", canon, r1.nodes,
                            r1.nodes == 1 and "" or "s"),
      xlabel = "message size (bytes, log scale)", ylabel = "busbw (GB/s)",
      xlog = 2, xfmt = size_tick, legend = "right", width = 960,
    }
    for i, id in ipairs(list) do
      local s = sweep(id)
      local pts = {}
      for j, r in ipairs(s) do pts[j] = { r.bytes, r.busbw / 1e9 } end
      p:line(pts, { label = string.format("%s (%d GPUs)", id, s[1].gpus), dash = svg.dash(i) })
    end
    -- the node built from --gpu: the table's own rows
    if opts.gpu then
      local pts = {}
      for j, r in ipairs(rows) do pts[j] = { r.bytes, r.busbw / 1e9 } end
      p:line(pts, { label = string.format("%s (%d GPUs)", opts.gpu, r1.gpus), dash = svg.dash(1) })
    end
    p:write(opts.svg)
  end
  return 0
end

return options.command(C)
