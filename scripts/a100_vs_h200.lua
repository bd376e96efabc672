#!/usr/bin/env gpuplan
-- Inference: an A100 or an H200?  The seed guides' rule -- "decode speed is
-- bandwidth over model size" -- says the H200 (4.8 TB/s) streams a model
-- 2.4x as fast as the A100 (2.04 TB/s); its 141 GB also hold a 70B model
-- in fp8 on one card, where the A100 needs two (and no fp8).  This script
-- prices both with gp.infer: one user alone, and the most users each card
-- serves at 20 tokens/s or better, and says how many A100s one H200
-- replaces and which is cheaper per million tokens.
--
--   gpuplan run scripts/a100_vs_h200.lua [--input 2048] [--output 512]
--                                         [--min-speed 20] [--format markdown]
local gp = require "gpuplan"

local opt = gp.options({
  input = { "prompt tokens", 2048 },
  output = { "output tokens", 512 },
  min_speed = { "tokens/s each user must see", 20 },
  format = { "output format: text, markdown, csv or json", "text" },
}, arg)
-- gp.options hands the arguments that are no option back in opt[0]: this
-- script takes none, so one is refused, as guide.lua refuses it (grid_sweep's
-- --gpus 64 128 ran 64 alone and dropped the 128 in silence).
if #opt[0] > 0 then
  error(require("gpuplan.cli").usage("a100_vs_h200: unexpected argument '" .. opt[0][1] .. "' (see --help)"), 0)
end
if not (opt.min_speed > 0) then
  error(require("gpuplan.cli").usage("a100_vs_h200: --min-speed must be a positive rate "
    .. "(tokens/s), got " .. opt.min_speed), 0)
end
-- One output token is the prefill's: no decode step runs, so gp.infer has
-- no speed a user sees (stream_tokens_per_s is nil) for --min-speed to
-- hold against.  A 0 or a fraction stays gp.infer's refusal below.
if opt.output == 1 then
  error(require("gpuplan.cli").usage("a100_vs_h200: --output 1 is the prefill's token alone, "
    .. "with no decode step to reach --min-speed; give --output 2 or more"), 0)
end

-- {model, card, GPUs (TP), weights}: what each card needs to hold the model.
local SETUPS = {
  { "llama3.1-8b", "a100-sxm-80gb", 1, "bf16" }, { "llama3.1-8b", "h200-sxm", 1, "fp8" },
  { "llama3.1-70b", "a100-sxm-80gb", 2, "bf16" }, { "llama3.1-70b", "a100-sxm-80gb", 4, "bf16" },
  { "llama3.1-70b", "h200-sxm", 1, "fp8" }, { "llama3.1-70b", "h200-sxm", 2, "bf16" },
}

-- A setup that does not fit is nil; gp.infer's refusal of the job (an
-- --output of 0, an --input past the models' context) is the script's
-- error: under pcall it was a table of '-' for every setup, exit 0.
local function run(model, gpu, n, w, batch)
  local r = gp.infer { model = model, gpu = gpu, gpus = n, tp = n, weights = w,
                       batch = batch, input = opt.input, output = opt.output }
  return r.fits and r or nil
end

-- The largest batch whose users each see min_speed (bisection on the
-- KV-bound range; the speed a user sees falls as the batch grows).
local function best_batch(model, gpu, n, w)
  local top = run(model, gpu, n, w, nil)
  if not top then return nil end
  local lo, hi = 1, top.max_batch_kv
  local r1 = run(model, gpu, n, w, 1)
  if not r1 or r1.stream_tokens_per_s < opt.min_speed then return nil end
  while lo < hi do
    local mid = (lo + hi + 1) // 2
    local r = run(model, gpu, n, w, mid)
    if r and r.stream_tokens_per_s >= opt.min_speed then lo = mid else hi = mid - 1 end
  end
  return run(model, gpu, n, w, lo)
end

local rows = {}
for _, s in ipairs(SETUPS) do
  local model, gpu, n, w = s[1], s[2], s[3], s[4]
  local one = run(model, gpu, n, w, 1)
  local many = best_batch(model, gpu, n, w)
  local q = gp.prices.cheapest(gp.catalog(), gpu, { currency = "USD" })
  local row = { model = model, setup = string.format("%d x %s %s", n, gpu, w), gpus = n,
                gpu = gpu }
  if one then row.alone = one.stream_tokens_per_s end
  if many then
    row.users = many.batch
    row.system = many.tokens_per_s
    row.per_gpu = many.tokens_per_s / n
    if q then row.cost = q.amount * n / (many.tokens_per_s * 3600) * 1e6 end
  end
  rows[#rows + 1] = row
end
gp.report(rows, { format = opt.format,
  title = string.format("%d in / %d out; users served at >= %g tok/s each", opt.input,
                        opt.output, opt.min_speed),
  columns = { { key = "model" }, { key = "setup" },
              { key = "alone", label = "tok/s one user", fmt = "%.1f" },
              { key = "users", label = "users" },
              { key = "system", label = "tok/s all", fmt = "%.0f" },
              { key = "per_gpu", label = "tok/s per GPU", fmt = "%.0f" },
              { key = "cost", label = "USD / 1M tokens", fmt = "%.3f" } } })

if opt.format == "text" then
  print()
  for _, model in ipairs { "llama3.1-8b", "llama3.1-70b" } do
    local best = {}
    for _, r in ipairs(rows) do
      if r.model == model and r.cost then
        local b = best[r.gpu]
        if not b or r.cost < b.cost then best[r.gpu] = r end
      end
    end
    local a, h = best["a100-sxm-80gb"], best["h200-sxm"]
    if a and h then
      local cheaper = a.cost < h.cost and a or h
      print(string.format("%s: one H200 (%s) serves as much as %.1f A100s (%s, per GPU); "
                          .. "cheapest per token: %s at %.3f USD per 1M tokens (%s %.3f).",
                          model, h.setup, h.per_gpu / a.per_gpu, a.setup, cheaper.setup,
                          cheaper.cost, cheaper == a and h.setup or a.setup,
                          cheaper == a and h.cost or a.cost))
      print(string.format("  one user alone: %.1f tok/s on %s against %.1f on %s (%.2fx; the "
                          .. "HBM ratio is %.2fx).", h.alone, h.setup, a.alone, a.setup,
                          h.alone / a.alone, 4.8 / 2.039))
    end
  end
end
return 0
