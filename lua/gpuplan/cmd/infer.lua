-- gpuplan infer: serving estimate for one model on one GPU type.
local infer = require "gpuplan.infer"
local report = require "gpuplan.report"
local cli = require "gpuplan.cli"

local C = {
  summary = "LLM serving on the roofline: TTFT, inter-token latency, tokens/s, $/Mtok",
  usage = [[
usage: gpuplan infer MODEL --gpu ID [options]

  --gpu ID          catalog GPU (required), e.g. h100-sxm, h200-sxm, a100-sxm-80gb
  --gpus N          GPUs in total (default tp x pp); replicas = gpus / (tp x pp)
  --tp N, --pp N    tensor / pipeline parallel per replica (default 1)
  --weights W       bf16 (default) fp16 fp8 int8 w8a8 int4 gptq awq nf4 fp4 mxfp4 fp6
  --kv K            KV-cache dtype: bf16 (default) fp16 fp8 int8 fp4
  --batch B         fixed decode batch per replica, or
  --concurrency C   requests in flight over the system (default: as many as fit)
  --in N, --out N   prompt and generated tokens per request (default 2048, 256)
  --runtime R       graphs (CUDA graphs; default) | kernels | eager (plain PyTorch),
                    or trtllm, vllm, sglang, nim-http, eager-pytorch, litgpt, llama.cpp
  --memory SIZE     usable memory per GPU (default: the GPU's x 0.90), e.g. 6GB
  --offload         read layers that do not fit from host memory
  --host-bw BW      host-memory bandwidth for them (default 60GB/s or the system's)
  --host-memory SZ  host memory for them (default 32GB or the system's)
  --system ID       catalog system (host memory, NVLink domain)
  --price P         per GPU-hour: 2.49, "$2.49/h", or a catalog price id
  --ops             also print the decode step operator by operator
  --sweep-batch     throughput vs latency as the batch doubles up to the KV limit
  --svg FILE        with --sweep-batch: write the curve as SVG
  --target TPS      GPUs needed for TPS output tokens/s ...
  --itl-max MS      ... with every decode step within MS milliseconds (default 50)
  --format F        text (default), markdown, csv, json

  Times in ms, bandwidth GB/s = 10^9 B/s, memory GB = 10^9 bytes.  ITL is one
  decode step at the batch and the mean context (in + out/2).  tokens/s counts
  output tokens of the whole system in steady state (prefill included).]],
  options = { gpu = "string", gpus = "int", tp = "int", pp = "int", weights = "string",
              kv = "string", batch = "int", concurrency = "int", ["in"] = "int",
              out = "int", runtime = "string", memory = "string", offload = "flag",
              host_bw = "string", host_memory = "string", system = "string",
              price = "string", ops = "flag", sweep_batch = "flag", svg = "string",
              target = "number", itl_max = "number", format = "format" },
}

local clean = cli.clean

local function args_of(opts, model)
  local price = opts.price
  if price and tonumber(price) then price = tonumber(price) end
  return {
    model = model, gpu = opts.gpu, gpus = opts.gpus, tp = opts.tp, pp = opts.pp,
    weights = opts.weights, kv = opts.kv, batch = opts.batch,
    concurrency = opts.concurrency, input = opts["in"], output = opts.out,
    runtime = opts.runtime, memory = opts.memory, offload = opts.offload or nil,
    host_bw = opts.host_bw, host_memory = opts.host_memory, system = opts.system,
    price = price,
  }
end

local function ms(v) return v and string.format("%.2f", v * 1e3) or "-" end

function C.run(opts, args)
  local model = args[1]
  if not model then error(cli.usage("infer: MODEL is required"), 0) end
  if not opts.gpu then error(cli.usage("infer: --gpu ID is required"), 0) end
  if opts.runtime and not require("gpuplan.infer").runtimes[opts.runtime] then
    error(cli.usage("infer: --runtime must be graphs, kernels, eager, trtllm, vllm, sglang, "
                    .. "nim-http, eager-pytorch, litgpt or llama.cpp"), 0)
  end
  if #args > 1 then error(cli.usage("infer: one MODEL at a time"), 0) end
  -- An option the chosen mode does not read is a usage error, not a
  -- silent no-op: the user asked for something they would not get.
  local function needs(opt, what, cond)
    if opts[opt] ~= nil and not cond then
      error(cli.usage("infer: --" .. opt:gsub("_", "-") .. " needs " .. what), 0)
    end
  end
  local function excludes(mode, opt)
    if opts[mode] and opts[opt] ~= nil then
      error(cli.usage("infer: --" .. opt:gsub("_", "-") .. " does not go with --"
                      .. mode:gsub("_", "-")), 0)
    end
  end
  needs("svg", "--sweep-batch", opts.sweep_batch)
  needs("itl_max", "--target", opts.target)
  needs("host_bw", "--offload", opts.offload)
  needs("host_memory", "--offload", opts.offload)
  -- the sweep sets the batch itself and prints no operator table; the
  -- target search picks GPUs and batch itself
  for _, o in ipairs { "ops", "target", "batch", "concurrency" } do excludes("sweep_batch", o) end
  for _, o in ipairs { "ops", "batch", "concurrency", "gpus" } do excludes("target", o) end
  local a = args_of(opts, model)

  if opts.sweep_batch then
    -- An output file that cannot be written fails before the table prints.
    if opts.svg then
      local okf, why = pcall(require("gpuplan.files").check_output, opts.svg)
      if not okf then error(why, 0) end
    end
    local ok, rows, top = pcall(infer.sweep, a)
    if not ok then error(clean(rows), 0) end
    if not top.fits then
      io.stdout:write("fits: no (", tostring(top.why), ")\n")
      return 0
    end
    report.print(rows, {
      format = opts.format,
      title = string.format("%s on %d x %s (tp %d, %s weights): throughput vs latency",
                            top.model, top.gpus, top.gpu, top.tp, top.weights),
      columns = { { key = "batch", label = "batch" },
                  { key = "itl_ms", label = "ITL ms", fmt = "%.2f" },
                  { key = "stream_tokens_per_s", label = "tok/s/user", fmt = "%.1f" },
                  { key = "tokens_per_s", label = "tok/s system", fmt = "%.0f" },
                  { key = "per_gpu", label = "tok/s/GPU", fmt = "%.0f" } } })
    if opts.svg then
      local svg = require "gpuplan.svg"
      local p = svg.plot { title = string.format("%s on %s x%d: throughput vs latency", top.model,
                                                 top.gpu, top.gpus),
                           xlabel = "inter-token latency (ms)", ylabel = "output tokens/s (system)",
                           xlog = true, ylog = true,
                           note = string.format("batch doubles up to the KV limit (%d); in %d, out %d, %s weights, %s KV",
                                                top.max_batch_kv, top.input, top.output, top.weights, top.kv) }
      local pts = {}
      for i, r in ipairs(rows) do pts[i] = { r.itl_ms, r.tokens_per_s, "b=" .. r.batch } end
      p:line(pts, { label = "continuous batching", color = "#1f77b4" })
      p:points(pts, { color = "#1f77b4" })
      local okw, err = pcall(p.write, p, opts.svg)
      if not okw then error(clean(err), 0) end
    end
    return 0
  end

  if opts.target then
    -- One replica that does not fit is an answer (as below), not an error.
    local okf, one = pcall(infer.infer, a)
    if not okf then error(clean(one), 0) end
    if not one.fits then
      io.stdout:write("fits: no (", tostring(one.why),
        "; try --weights int4, --kv fp8, --tp, or --offload)\n")
      return 0
    end
    local ok, g = pcall(infer.gpus_for, a, opts.target, (opts.itl_max or 50) / 1e3)
    if not ok then error(clean(g), 0) end
    report.print({ { target = opts.target, itl_max_ms = opts.itl_max or 50, gpus = g.gpus,
                     batch = g.batch, tokens_per_s = g.tokens_per_s } },
                 { format = opts.format, title = "GPUs for a target throughput",
                   columns = { { key = "target", label = "target tok/s", fmt = "%.0f" },
                               { key = "itl_max_ms", label = "ITL limit ms", fmt = "%.1f" },
                               { key = "gpus", label = "GPUs" },
                               { key = "batch", label = "batch/replica" },
                               { key = "tokens_per_s", label = "tok/s", fmt = "%.0f" } } })
    return 0
  end

  local ok, r = pcall(infer.infer, a)
  if not ok then error(clean(r), 0) end
  if opts.format == "json" or opts.format == "csv" then
    local row = {}
    for k, v in pairs(r) do
      if type(v) ~= "table" then row[k] = v end
    end
    if opts.format == "json" then row.ops = r.ops end
    report.print({ row }, { format = opts.format })
    return 0
  end
  local title = string.format("%s on %d x %s (tp %d, pp %d), %s weights, %s KV, in %d / out %d",
                              r.model, r.gpus, r.gpu, r.tp, r.pp, r.weights, r.kv, r.input, r.output)
  -- Not fitting is an answer, not an error (as in `gpuplan fit`): say
  -- what it needs and what would help, exit 0.
  if not r.fits then
    io.stdout:write(title, "\n", "fits: no (", tostring(r.why),
      "; try --weights int4, --kv fp8, more GPUs with --tp, or --offload)\n")
    return 0
  end
  local cur = r.currency or "USD"
  local rows = {
    { k = "weights per GPU", v = string.format("%.2f GB", r.weights_gpu / 1e9) },
    { k = "KV per sequence per GPU", v = string.format("%.3f GB", r.kv_per_seq / 1e9) },
    { k = "KV budget per GPU", v = string.format("%.2f GB (%d sequences)", r.kv_budget / 1e9, r.max_batch_kv) },
    { k = "batch per replica", v = string.format("%d (x %d replicas)", r.batch, r.replicas) },
    { k = "TTFT (one prompt)", v = ms(r.ttft_s) .. " ms" },
    { k = "ITL at batch", v = ms(r.itl_s) .. " ms" },
    { k = "ITL at batch 1", v = ms(r.itl_batch1_s) .. " ms" },
    { k = "tokens/s per user", v = string.format("%.1f", r.stream_tokens_per_s) },
    { k = "tokens/s system", v = string.format("%.0f", r.tokens_per_s) },
    { k = "tokens/s per GPU", v = string.format("%.0f", r.per_gpu) },
    { k = "compute precision", v = r.compute .. string.format(" (ridge %.0f FLOP/B)", r.ridge) },
  }
  if r.offload_layers > 0 then
    table.insert(rows, 2, { k = "layers in host memory", v = string.format("%d (%.2f GB per GPU)",
                            r.offload_layers, r.offload_bytes / 1e9) })
  end
  if r.cost_per_mtok and r.cost_per_mtok > 0 then
    rows[#rows + 1] = { k = "cost per 1M output tokens", v = string.format("%.3f %s", r.cost_per_mtok, cur) }
    rows[#rows + 1] = { k = "tokens/s per " .. cur .. "/h", v = string.format("%.1f", r.tokens_per_s_per_dollar_hour) }
  end
  if #r.defaults > 0 then rows[#rows + 1] = { k = "assumed", v = table.concat(r.defaults, ", ") } end
  report.print(rows, { format = opts.format, title = title,
                       columns = { { key = "k", label = "quantity" }, { key = "v", label = "value" } } })
  if opts.ops then
    io.stdout:write("\n")
    report.print(r.ops, { format = opts.format, title = string.format("decode step, batch %d, one GPU", r.batch),
      columns = { { key = "name", label = "op" }, { key = "count", label = "x", fmt = "%.0f" },
                  { key = "time", label = "us each", fmt = function(v) return string.format("%.2f", v * 1e6) end },
                  { key = "total", label = "ms/step", fmt = function(v) return string.format("%.3f", v * 1e3) end },
                  { key = "bound", label = "bound" },
                  { key = "intensity", label = "FLOP/B", fmt = "%.1f" } } })
  end
  return 0
end

return C
