-- Sliding-window layers in training (model sliding_window {size, layers}):
-- a fused kernel computes the whole 128-key tiles that meet each 128-row
-- query tile's window -- 1 + ceil((W - 1) / 128) tiles (FlashAttention-2's
-- n_block_min; cuDNN's diagonal band) -- and an unfused one the whole
-- square under a mask (engine/train_layer.c attn_layers_time).  The
-- attention op is the layers' mean.
-- Run with ./gpuplan run tests/lua/swa_tiles.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(5)

local op = t.op
local job = { gpu = "h100-sxm", gpus = 8, ep = 8, batch = 1, global_batch = 8,
              stack = "megatron", zero = 1, precision = "bf16", method = "pretrain",
              seq = 4096 }
local base = {}
for key, x in pairs(gp.catalog():get("models", "gpt-oss-120b")) do base[key] = x end
local function attn(window, layers, extra)
  local m = t.with(base, { sliding_window = window and { size = window, layers = layers } or false })
  if not window then m.sliding_window = nil end
  local r = gp.train(t.with(t.with(job, { model = m }), extra))
  return op(r, "attention")
end

-- The op is the mean over the layers of the full and the windowed time:
-- with 18 of 36 layers windowed it is exactly half way between no window
-- and every layer windowed (float rounding: 1e-12).
local full, all, half = attn(nil), attn(128, 36), attn(128, 18)
t.near(half.fwd, (full.fwd + all.fwd) / 2, 1e-12, "forward: the layers' mean")
t.near(half.bwd, (full.bwd + all.bwd) / 2, 1e-12, "backward: the layers' mean")

-- Tile granularity: windows of 2 to 129 keys all meet two key tiles a
-- query tile (1 + ceil((W - 1) / 128) = 2), so they cost the same; 130
-- meets three: 384 keys a query against 256, 1.5x the work, of which the
-- longer key loop's better fill (gemm_eff) gives back a little -- more
-- than 1.2x either way.
t.near(attn(64, 36).fwd, attn(129, 36).fwd, 1e-12,
       "windows of 64 and 129 keys compute the same two tiles")
t.ok(attn(130, 36).fwd > attn(129, 36).fwd * 1.2,
     "a window of 130 keys computes a third tile")

-- Unfused attention (Transformer Engine's UnfusedDotProductAttention turns
-- the window into a mask) computes every score: the window saves nothing.
local uf, uw = attn(nil, nil, { flash = false }), attn(128, 36, { flash = false })
t.near(uw.fwd, uf.fwd, 1e-12, "unfused: a windowed layer costs a full one")
