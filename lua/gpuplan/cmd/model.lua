-- gpuplan model import FILE [--id ID] | gpuplan model params ID|FILE
local cli = require "gpuplan.cli"
local report = require "gpuplan.report"
local hf = require "gpuplan.hf"

local C = {
  summary = "import a Hugging Face config.json; per-component parameter counts",
  usage = [[
usage: gpuplan model import CONFIG.json [--id ID] [--name NAME] [--image-size N]
       gpuplan model params ID|CONFIG.json [--format F]

  import   print a catalog `model {}` entry (Lua) read from a config.json;
           save it under a catalog directory ($GPUPLAN_CATALOG) to use it.
           Defaults applied (absent fields) are listed on stderr and in
           the entry's notes.  params_b is gpuplan's own count: replace it
           with the published total.
  params   parameter counts per component (embedding, attention, MLP,
           experts, router, Mamba, norms, vision, lm_head), total and
           active, and the KV cache per token in bf16 (encoder-decoder:
           the encoder stack's share and the cross-attention K/V per
           input token too; a hybrid stack: its Mamba state per
           sequence)
  --id ID          catalog id (default: the file or directory name)
  --name NAME      display name (default: _name_or_path or the id)
  --image-size N   square image side for any-resolution vision towers
                   (default 448)]],
  options = { id = "string", name = "string", image_size = "int",
              format = "format" },
}

local function import(opts, file)
  local e = hf.model_from_hf(file, { id = opts.id, name = opts.name,
                                     image_size = opts.image_size })
  -- Defaults are diagnostics (stderr); the entry is the data (stdout).
  for _, note in ipairs(e._defaults) do
    io.stderr:write("note: ", require("gpuplan.units").oneline(note), "\n")
  end
  io.stdout:write(hf.to_lua(e))
  return 0
end

local components = {
  { "embedding", "input embedding (+ learned positions)" },
  { "attention", "attention q, k, v, o (MLA down/up), biases" },
  { "dense_mlp", "dense MLP layers" },
  { "experts", "routed + shared experts" },
  { "router", "MoE routers" },
  { "mamba", "Mamba-2 mixers (in_proj, conv1d, A, D, dt_bias, norm, out_proj)" },
  { "norms", "norms" },
  { "lm_head", "LM head (0 when tied)" },
  { "vision", "vision tower + projector" },
}

local function params(opts, what)
  local m
  if what:match("%.json$") then
    m = hf.model_from_hf(what, { id = opts.id, image_size = opts.image_size })
  else
    -- an unknown id named the model but not the command ("gpuplan:
    -- unknown model 'x'"), as every other command's lookup does
    local okm, got = pcall(function() return require("gpuplan").catalog():get("models", what) end)
    if not okm then
      if type(got) == "string" and cli.clean(got):match("^unknown model '") then
        error(cli.fail("model params: " .. cli.clean(got)), 0)
      end
      error(got, 0)
    end
    m = got
  end
  local core = require "gpuplan.core"
  local okp, p = pcall(core.model_params, m)
  if not okp then error(cli.fail(cli.clean(p)), 0) end
  local rows = {}
  for _, c in ipairs(components) do
    if p[c[1]] > 0 then
      rows[#rows + 1] = { component = c[1], what = c[2], params = p[c[1]],
                          share = p[c[1]] / p.total }
    end
  end
  rows[#rows + 1] = { component = "total", what = "all parameters",
                      params = p.total, share = 1 }
  if m.moe then
    rows[#rows + 1] = { component = "active", what = string.format(
      "per token (top %d of %d experts)", m.moe.top_k, m.moe.experts),
      params = p.active, share = p.active / p.total }
  end
  if p.encoder > 0 then
    rows[#rows + 1] = { component = "encoder", what = string.format(
      "of the total: the %d-layer encoder stack (decoder: %d layers)",
      m.encoder_layers, m.layers), params = p.encoder, share = p.encoder / p.total }
  end
  local kv = core.model_kv_bytes(m, 1, 2)
  rows[#rows + 1] = { component = "kv_bytes_per_token",
                      what = (p.encoder > 0 and "decoder self-attention " or "")
                        .. "KV cache per token in bf16 (bytes)",
                      params = kv }
  if p.mamba > 0 then
    -- a Mamba layer's state: one per sequence, whatever its length (the
    -- KV line above counts the attention layers alone), at the dtypes
    -- infer prices it: the SSM state fp32, vLLM's mamba_ssm_cache_dtype
    -- for Nemotron-H, the conv window 16-bit (engine/model.h
    -- GP_MAMBA_SSM_STATE_BYTES); "in bf16" halved the SSM state that
    -- infer and fit --method infer hold per sequence
    local _, _, _, state = core.model_mamba(m, 1, 2)
    rows[#rows + 1] = { component = "mamba_state_bytes",
                        what = "Mamba state per sequence as vLLM keeps it: SSM fp32, conv bf16 "
                          .. "(bytes; --mamba-ssm-cache-dtype bf16 halves the SSM part)",
                        params = state }
  end
  if p.encoder > 0 then
    rows[#rows + 1] = { component = "cross_kv_bytes_per_input_token",
                        what = "cross-attention K/V per encoder token in bf16 (bytes)",
                        params = core.model_cross_kv_bytes(m, 1, 2) }
  end
  local format = opts.format or "text"
  report.print(rows, {
    format = format,
    title = format ~= "json" and format ~= "csv" and
      string.format("%s (%s)", m.name or m.id, m.id) or nil,
    columns = {
      { key = "component" },
      { key = "params", label = "count",
        fmt = format == "text" and "%.0f" or nil },
      { key = "share", label = "share",
        fmt = function(v) return v and string.format("%.1f%%", v * 100) end },
      { key = "what", label = "what", align = "left" },
    },
  })
  return 0
end

function C.run(opts, args)
  local sub, target = args[1], args[2]
  -- the import's own bound (gpuplan.hf COUNT_MAX), named as the option:
  -- past it, 1e9 was refused as "model_from_hf: opts.image_size ..."
  local max = require("gpuplan.hf").COUNT_MAX
  if opts.image_size ~= nil and (opts.image_size < 1 or opts.image_size > max) then
    error(cli.usage(string.format("model: --image-size must be an integer in 1..%d (got %s)",
                    max, opts.image_size)), 0)
  end
  if sub == "import" then
    if not target then error(cli.usage("model import: missing CONFIG.json"), 0) end
    if args[3] then error(cli.usage("model import: one file at a time"), 0) end
    if opts.format then
      error(cli.usage("model import: --format does not apply: the output is a catalog "
                      .. "entry in Lua (--format goes with 'model params')"), 0)
    end
    return import(opts, target)
  elseif sub == "params" then
    if not target then error(cli.usage("model params: missing ID or CONFIG.json"), 0) end
    if args[3] then error(cli.usage("model params: one model at a time"), 0) end
    if opts.name then error(cli.usage("model params: --name is for import"), 0) end
    return params(opts, target)
  elseif sub == nil then
    error(cli.usage("model: missing subcommand (import | params)"), 0)
  end
  error(cli.usage(string.format("model: unknown subcommand '%s' (import | params)", sub)), 0)
end

return C
