#!/usr/bin/env gpuplan
-- A 72B vision-language model fine-tuned on video at 32k and 64k tokens:
-- which cards, how many, which layout, and how long for the dataset?
--
-- Each training sample is a video at --frame-size px (Qwen2-VL encodes two
-- frames per patch: 128 frames at 448 px are 64 x 256 = 16384 tokens) that
-- fills --video-share of the sequence, plus its text.  For every card and
-- GPU count the layout search of gpuplan.vlm.plan (TP with SP, CP, PP,
-- selective or full recompute, ZeRO-1) prices full fine-tuning steps with
-- gp.train -- the ViT tower runs (frozen by default, as LLaMA-Factory and
-- ms-swift freeze it; --train-vision trains it) and the language model
-- sees the whole sequence -- and keeps the fastest layout that fits.  Time
-- and cost are for --samples videos x --epochs at each card's cheapest
-- catalog price.
--
--   gpuplan run scripts/video_sft.lua [--model qwen2-vl-72b] [--samples 100000]
--                                     [--epochs 1] [--frame-size 448]
--                                     [--video-share 0.75] [--train-vision]
--                                     [--format markdown]
local gp = require "gpuplan"
local vlm = require "gpuplan.vlm"

local opt = gp.options({
  model = { "vision-language model id", "qwen2-vl-72b" },
  samples = { "videos in the dataset", 100000 },
  epochs = { "passes over the dataset", 1 },
  frame_size = { "pixels of a (square) frame", 448 },
  video_share = { "share of the sequence the video's tokens fill", 0.75 },
  global_batch = { "sequences per step", 128 },
  train_vision = { "train the ViT tower too", false },
  format = { "output format: text, markdown, csv or json", "text" },
}, arg)
-- gp.options hands the arguments that are no option back in opt[0]: this
-- script takes none, so one is refused, as guide.lua refuses it (grid_sweep's
-- --gpus 64 128 ran 64 alone and dropped the 128 in silence).
if #opt[0] > 0 then
  error(require("gpuplan.cli").usage("video_sft: unexpected argument '" .. opt[0][1] .. "' (see --help)"), 0)
end
if not (opt.video_share > 0 and opt.video_share <= 1) then
  error(require("gpuplan.cli").usage("video_sft: --video-share must be in (0, 1]"), 0)
end

local SEQS = { 32768, 65536 }
-- The run's tokens are --samples x --epochs x the sequence, which gp.train
-- bounds (1..1e15): --epochs 0 or -1 was refused there as "vlm.plan:
-- train: tokens must be a positive number up to 1e+15 (got -3276800000)",
-- a value and a name the user never gave.  Each is named here.
for _, k in ipairs { "samples", "epochs" } do
  if opt[k] < 1 then
    error(require("gpuplan.cli").fail(string.format("video_sft: --%s must be a whole number "
      .. ">= 1 (got %d)", k, opt[k])), 0)
  end
end
if (opt.samples + 0.0) * opt.epochs * SEQS[#SEQS] > 1e15 then -- in floats: no wrap
  error(require("gpuplan.cli").fail(string.format("video_sft: --samples %d x --epochs %d x "
    .. "%d tokens a sequence is past 1e15 tokens, the most a run is priced for", opt.samples,
    opt.epochs, SEQS[#SEQS])), 0)
end
local GPUS = { "h100-sxm", "h200-sxm", "b200" }
local COUNTS = { 32, 64, 128 }

local rows, best = {}, {}
for _, seq in ipairs(SEQS) do
  -- Frames: as many 2-frame units as the video share of the sequence holds.
  local unit = vlm.tokens { model = opt.model, video_frames = 2, frame_size = opt.frame_size }
  local units = math.floor(opt.video_share * seq / unit.tokens_per_unit)
  local frames = units * unit.frames_per_unit
  local media = vlm.tokens { model = opt.model, video_frames = frames, frame_size = opt.frame_size }
  for _, gpu in ipairs(GPUS) do
    for _, n in ipairs(COUNTS) do
      local plan = vlm.plan {
        model = opt.model, gpu = gpu, gpus = n, seq = seq, video_frames = frames,
        frame_size = opt.frame_size, method = "full", train_vision = opt.train_vision,
        global_batch = opt.global_batch, tokens = opt.samples * opt.epochs * seq,
        currency = "USD", tps = { 4, 8 }, cps = { 1, 2, 4, 8 }, pps = { 1, 2, 4 },
        recomputes = { "selective", "full" }, top = 1,
      }
      local r = plan[1]
      local row = { seq = seq, frames = frames, video_tokens = media.video_tokens, gpu = gpu,
                    gpus = n, fits = r ~= nil and r.fits or false }
      if r and r.fits then
        row.layout, row.recompute, row.cp = r.layout, r.recompute, r.cp
        row.step_s, row.mfu, row.days, row.cost = r.step_s, r.mfu, r.days, r.cost
        row.mem_gib, row.vision_s = r.mem_gib, r.vision_s
      else
        row.note = "no layout fits"
      end
      rows[#rows + 1] = row
      if row.fits then
        local b = best[seq] or {}
        best[seq] = b
        if not b.cheap or row.cost < b.cheap.cost then b.cheap = row end
        if not b.fast or row.days < b.fast.days then b.fast = row end
      end
    end
  end
end

gp.report(rows, { format = opt.format, title = string.format(
  "%s full fine-tune on video (%d px frames, %.0f%% of each sequence; tower %s), %d "
  .. "sequences per step, %d videos x %d epoch%s", opt.model, opt.frame_size,
  100 * opt.video_share, opt.train_vision and "trained" or "frozen", opt.global_batch,
  opt.samples, opt.epochs, opt.epochs == 1 and "" or "s"), columns = {
  { key = "seq", label = "seq" }, { key = "frames", label = "frames" },
  { key = "gpu", label = "gpu" }, { key = "gpus", label = "GPUs" },
  { key = "layout", label = "layout" }, { key = "recompute", label = "recompute" },
  { key = "step_s", label = "step (s)", fmt = "%.1f" },
  { key = "mfu", label = "MFU", fmt = "%.3f" },
  { key = "mem_gib", label = "GiB/GPU", fmt = "%.1f" },
  { key = "days", label = "days", fmt = "%.2f" },
  { key = "cost", label = "USD*", fmt = "%.0f" },
  { key = "note", label = "note" },
} })

if opt.format ~= "text" and opt.format ~= "markdown" then return end
io.write("* at each card's cheapest catalog price\n")
io.write("\nConclusion:\n")
for _, seq in ipairs(SEQS) do
  local b = best[seq]
  if not b then
    io.write(string.format("  %d tokens: no card and count here fits.\n", seq))
  else
    io.write(string.format("  %d tokens: cheapest %d x %s with %s (%s recompute), %.2f days, "
      .. "%.0f USD; fastest %d x %s with %s, %.2f days, %.0f USD.\n", seq, b.cheap.gpus,
      b.cheap.gpu, b.cheap.layout, b.cheap.recompute, b.cheap.days, b.cheap.cost, b.fast.gpus,
      b.fast.gpu, b.fast.layout, b.fast.days, b.fast.cost))
  end
end
-- Context parallelism: how often the best layout of a fitting row splits
-- the sequence, by length.
for _, seq in ipairs(SEQS) do
  local n, cp = 0, 0
  for _, r in ipairs(rows) do
    if r.seq == seq and r.fits then
      n = n + 1
      if r.cp > 1 then cp = cp + 1 end
    end
  end
  io.write(string.format("  At %d tokens the best layout uses context parallelism in %d of %d "
    .. "fitting runs.\n", seq, cp, n))
end
