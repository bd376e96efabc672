-- gpuplan roofline: ridge points of a GPU, and the roofline chart.
local roofline = require "gpuplan.roofline"
local report = require "gpuplan.report"
local cli = require "gpuplan.cli"

local C = {
  summary = "roofline of a GPU: compute roofs, bandwidth, ridge points; SVG chart with a model's ops",
  usage = [[
usage: gpuplan roofline --gpu ID [--model M] [--svg FILE] [options]

  --gpu ID        catalog GPU (required)
  --model M       plot this model's prefill and decode operators (with --svg)
  --weights W     weight format for the model's ops (default bf16)
  --batch B       decode batch for the points (default 1)
  --input N       prompt tokens for the prefill points (default 2048)
  --svg FILE      write the roofline chart (log-log) as SVG
  --format F      text (default), markdown, csv, json

  Ridge point = peak FLOP/s / bandwidth (FLOP per byte): ops below it are
  memory-bound.  "achievable" uses the catalog's achievable fractions.]],
  options = { gpu = "string", model = "string", weights = "string", batch = "int",
              input = "int", svg = "string", format = "format" },
}

local clean = cli.clean

function C.run(opts, args)
  if not opts.gpu then error(cli.usage("roofline: --gpu ID is required"), 0) end
  if #args > 0 then error(cli.usage("roofline: no arguments (got '" .. args[1] .. "')"), 0) end
  if opts.model and not opts.svg then error(cli.usage("roofline: --model needs --svg FILE"), 0) end
  -- the model options place the model's points on the chart; without a
  -- model they would be ignored
  for _, o in ipairs { "weights", "batch", "input" } do
    if opts[o] ~= nil and not opts.model then
      error(cli.usage("roofline: --" .. o .. " needs --model M --svg FILE"), 0)
    end
  end
  local ok, r = pcall(roofline.roofline, { gpu = opts.gpu })
  if not ok then error(clean(r), 0) end
  -- The chart first: a bad --model or an unwritable file fails before the
  -- table is printed, so a failed run prints nothing.
  if opts.svg then
    local okw, err = pcall(roofline.svg, opts.svg, {
      gpu = opts.gpu, model = opts.model,
      infer = { weights = opts.weights, batch = opts.batch, input = opts.input, output = 1 } })
    if not okw then error(clean(err), 0) end
  end
  local rows = {}
  for _, p in ipairs(roofline.precisions) do
    local x = r.ridges[p]
    if x then
      rows[#rows + 1] = { precision = p, peak = r.device.peak[p] / 1e12,
                          achievable = x.flops / 1e12, ridge_peak = x.peak,
                          ridge = x.achievable }
    end
  end
  report.print(rows, {
    format = opts.format,
    title = string.format("%s: %.2f TB/s, achievable %.2f", r.device.name or r.device.id,
                          r.device.mem_bw / 1e12, r.device.hbm),
    columns = { { key = "precision", label = "precision" },
                { key = "peak", label = "dense TFLOP/s", fmt = "%.1f" },
                { key = "achievable", label = "achievable TFLOP/s", fmt = "%.1f" },
                { key = "ridge_peak", label = "ridge (peak) FLOP/B", fmt = "%.1f" },
                { key = "ridge", label = "ridge (achievable) FLOP/B", fmt = "%.1f" } } })
  return 0
end

return C
