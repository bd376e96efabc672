-- gpuplan roofline: ridge points of a GPU, and the roofline chart.
local roofline = require "gpuplan.roofline"
local report = require "gpuplan.report"
local cli = require "gpuplan.cli"

local C = {
  summary = "roofline of a GPU: compute roofs, bandwidth, ridge points; a model's ops on it (table, SVG)",
  usage = [[
usage: gpuplan roofline --gpu ID [--model M] [--svg FILE] [options]

  --gpu ID        catalog GPU (required)
  --model M       this model's prefill and decode operators on the roofline:
                  a table (intensity, attained TFLOP/s, bound), and with
                  --svg points on the chart
  --weights W     weight format for the model's ops (default bf16; fp16
                  on a card without bf16, as gpuplan infer)
  --batch B       decode batch for the points (default 1)
  --input N       prompt tokens for the prefill points (default 2048, or
                  the model's context less one where that is shorter)
  --svg FILE      write the roofline chart (log-log) as SVG
  --format F      text (default), markdown, csv, json (with --model: csv
                  the operators' table only, json {roofline, ops})

  Ridge point = peak FLOP/s / bandwidth (FLOP per byte): ops below it are
  memory-bound.  "achievable" uses the catalog's achievable fractions, the
  tensor rates at sustained load (achievable.sustained: a 700 W Hopper
  part's GEMMs at 0.82 of their burst rate).]],
  options = { gpu = "string", model = "string", weights = "string", batch = "int",
              input = "int", svg = "string", format = "format" },
}

local clean = cli.clean

function C.run(opts, args)
  -- the argument first: "gpuplan roofline h100-sxm" was told "--gpu ID is
  -- required" of the card it had just named
  if #args > 0 then
    error(cli.stray_argument("roofline", args[1], { { "gpus", "--gpu" }, { "models", "--model" } }),
      0)
  end
  if not opts.gpu then error(cli.usage("roofline: --gpu ID is required"), 0) end
  -- the model options place the model's points on the chart; without a
  -- model they would be ignored
  for _, o in ipairs { "weights", "batch", "input" } do
    if opts[o] ~= nil and not opts.model then
      error(cli.usage("roofline: --" .. o .. " needs --model M"), 0)
    end
  end
  local infer = opts.model and { weights = opts.weights, batch = opts.batch,
                                 input = opts.input, output = 1 } or nil
  -- The model's operators are gp.infer's, whose refusals said "infer:
  -- batch must be ..." and "input 100000 + output 1 tokens exceed ...":
  -- another command, Lua keys, and an output the user never gave (the one
  -- decode step roofline places).  Said as roofline's, by its flags.
  local function own(e)
    e = clean(e)
    -- the catalog's "unknown gpu 'x'" named neither the command nor --gpu
    if type(e) == "string" and e:match("^unknown gpu '") then return "roofline: --gpu: " .. e end
    if type(e) == "string" and e:match("^unknown model '") then return "roofline: --model: " .. e end
    -- and the weight format's "unknown weight format 'x'" named no flag
    -- (tests/lua/fuzz_options.t): it is --weights, the one this reads
    if type(e) == "string" and e:match("^infer: weights: unknown weight format '") then
      return "roofline: --weights: " .. e:sub(#"infer: weights: " + 1)
    end
    if type(e) ~= "string" or not e:match("^infer: ") then return e end
    e = e:gsub(" %+ output 1 tokens exceed", " tokens and the decoded one exceed")
    e = require("gpuplan.options").flags_named("infer", e)
    return "roofline: " .. e:sub(#"infer: " + 1)
  end
  local ok, r = pcall(roofline.roofline, { gpu = opts.gpu, model = opts.model, infer = infer })
  -- (a usage refusal, an unknown id among them, stays one reworded)
  if not ok then error(cli.reword(r, own(r)), 0) end
  -- The chart first: an unwritable file fails before the table is
  -- printed, so a failed run prints nothing.
  if opts.svg then
    local okw, err = pcall(roofline.svg, opts.svg, { gpu = opts.gpu, model = opts.model,
                                                     infer = infer })
    if not okw then error(cli.reword(err, own(err)), 0) end
  end
  local rows = {}
  for _, p in ipairs(roofline.precisions) do
    local x = r.ridges[p]
    if x then
      -- TFLOP/s, named so in the keys (csv, json): a bare "peak" read as
      -- gp.roofline's device.peak, which is FLOP/s, a factor 1e12 apart
      rows[#rows + 1] = { precision = p, peak_tflops = r.device.peak[p] / 1e12,
                          achievable_tflops = x.flops / 1e12, ridge_peak = x.peak,
                          ridge = x.achievable }
    end
  end
  local format = opts.format or "text"
  local ridge_table = {
    format = format,
    title = string.format("%s: %.2f TB/s, achievable %.2f", r.device.name or r.device.id,
                          r.device.mem_bw / 1e12, r.device.hbm),
    columns = { { key = "precision", label = "precision" },
                { key = "peak_tflops", label = "dense TFLOP/s", fmt = "%.1f" },
                { key = "achievable_tflops", label = "achievable TFLOP/s", fmt = "%.1f" },
                { key = "ridge_peak", label = "ridge (peak) FLOP/B", fmt = "%.1f" },
                { key = "ridge", label = "ridge (achievable) FLOP/B", fmt = "%.1f" } } }
  if not opts.model then
    report.print(rows, ridge_table)
    return 0
  end
  local res = r.infer
  if format == "json" then
    io.write(report.json({ roofline = rows, model = res.model, fits = res.fits,
                           why = res.why, ops = r.ops }), "\n")
    return 0
  end
  if format ~= "csv" then report.print(rows, ridge_table) end
  if not res.fits then
    -- an answer, not an error: the model's operators need it on one GPU
    local line = string.format("%s does not fit one %s: %s; no operators to place",
      res.model, r.device.id, res.why or "too large")
    if format ~= "csv" then
      io.write(line, "\n")
      return 0
    end
    -- a CSV stays the operators' table, without rows; the reason on
    -- stderr (the line was written into the CSV)
    io.stderr:write("gpuplan: note: roofline: ", line, "\n")
  end
  if format ~= "csv" then io.write("\n") end
  report.print(res.fits and r.ops or {}, {
    format = format,
    title = string.format("%s on %s: prefill of %d tokens, decode at batch %d, %s weights "
      .. "(time per call; bound by the roofline's side)", res.model, r.device.id, res.input,
      res.batch, report.weights_words(res.weights)),
    columns = { { key = "phase", label = "phase" },
                { key = "name", label = "op" },
                { key = "count", label = "calls", fmt = "%d" },
                { key = "intensity", label = "FLOP/B", fmt = "%.1f" },
                { key = "tflops", label = "TFLOP/s", fmt = "%.1f" },
                { key = "bound", label = "bound" },
                { key = "time_s", label = "us per call", csv = "time_us",
                  fmt = function(v) return string.format("%.1f", v * 1e6) end } } })
  return 0
end

return C
