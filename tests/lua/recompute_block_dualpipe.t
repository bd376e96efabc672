-- Megatron's block recompute (recompute_layers n: the first n layers of
-- each model chunk re-run, engine/layout.c layout_stage_recomputed) under
-- DualPipe: a rank's two chunks are two of the layout's pp stages (k and
-- pp-1-k), each one module of DualPipe's pair (deepseek-ai/DualPipe
-- examples/example_dualpipe.py: DualPipe(local_modules), the rank's
-- full_modules[rank] and full_modules[pp_size - 1 - rank]), so each
-- re-runs its own first n -- not n for the rank's two chunks together.
-- Run with ./gpuplan run tests/lua/recompute_block_dualpipe.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(3)

local job = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, pp = 4, tp = 2, stack = "megatron",
              method = "pretrain", seq = 4096, global_batch = 64, recompute = "full",
              schedule = "dualpipe" }
local function ratio(o)
  local r = gp.train(t.with(job, o))
  return r.hfu / r.mfu
end
-- The hardware FLOPs exceed the model's by the re-run forwards: with
-- every layer re-run the excess is X = hfu / mfu - 1; with the first 2
-- of each chunk it is share x X, share = sum over the 4 stages of min(2,
-- 8) / 32 = 8 / 32 = 0.25 (llama3-8b's 32 layers, 8 a stage).  Counting
-- a rank's two chunks as one block would give 2 ranks x 2 = 4 layers,
-- 0.125.  1e-9: the same FLOPs through the same arithmetic.
local all, first2 = ratio {}, ratio { recompute_layers = 2 }
t.ok(all > 1.2, string.format("full recompute re-runs every forward: hfu / mfu = %.4f", all))
t.near(first2 - 1, 0.25 * (all - 1), 1e-9,
  "recompute_layers 2 under dualpipe pp 4: the first 2 of each of the 4 chunks, 8 of 32 layers")
-- DualPipe takes no vpp: a rank's chunks are its two stages, so no rule
-- of vpp chunks applies (a usage error).
t.raises(function() gp.train(t.with(job, { vpp = 2, pp = 4 })) end,
  "schedule dualpipe holds two chunks a rank by itself; vpp 2 is interleaved's",
  "dualpipe with vpp 2: refused", true)
