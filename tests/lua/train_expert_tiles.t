-- The routed experts' forward and dgrad GEMMs pay each expert's own
-- whole M tiles (Transformer Engine's GroupedLinear: one GEMM of
-- m_splits[i] rows per expert), over the routing's Poisson count of rows
-- per expert, not ceil(mean / T) tiles each (engine/train_layer.c
-- gemm_costs, engine/roofline.c roof_expected_tiles).
-- Run with ./gpuplan run tests/lua/train_expert_tiles.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(2)

local op = t.op
-- Qwen3-30B-A3B (hidden 2048, 128 experts, top 8, expert ffn 768) on 8
-- H100s, EP 8: 16 experts a GPU; seq s tokens a GPU, 8 s x 8 / 128 = s/2
-- rows an expert.  moe_up is n = 2 x 768 = 1536 wide (12 N tiles of 128),
-- k = 2048 deep.  At s = 4096, 4352, 4608 the mean is 2048, 2176, 2304
-- rows, 16, 17, 18 tiles of 128 exactly.  With the Poisson spread (sd =
-- sqrt(2048) = 45 rows, well inside a tile) the tiles below the mean are
-- full and the last one is needed by P(X > mean) = 0.4954 of the experts
-- (continuity-corrected normal, 0.5 - 0.5 / (45 sqrt(2 pi))): 16.4954,
-- 17.4955, 18.4955 tiles, so 16 x 12 x tiles = 3167.1, 3359.1, 3551.1
-- CTAs, on 132 SMs 23.99, 25.45, 26.90: 24, 26, 27 waves.  (The tile
-- count of the mean gives 3072, 3264, 3456 CTAs: 24, 25, 27 waves.)
-- A wave: 132 CTAs of 2 x 128 x 128 x 2048 FLOP at the H100's achievable
-- bf16 648.8 TFLOP/s times the K fill (2048/2176) / (8192/8320) =
-- 0.955882: 8.858e9 / 6.2018e14 = 14.284 us.
-- capacity_factor 1: every rank runs the mean rows (the padded buffer), which the counts here take; the dropless default's chance skew is tests/lua/moe_balance.t's
local job = { model = "qwen3-30b-a3b", capacity_factor = 1, gpu = "h100-sxm", gpus = 8, ep = 8, batch = 1,
              global_batch = 8, stack = "megatron", zero = 1 }
local function up(s) return op(gp.train(t.with(job, { seq = s })), "moe_up") end
local a, b, c = up(4096), up(4352), up(4608)
-- The first step adds two waves, the second one: their difference is one
-- wave (the tile count of the mean: one, then two, -1 wave).  The parts
-- that grow with the tokens (the memory side, its imperfect overlap with
-- the MMAs) do not cancel exactly: roof_overlap's share moves by 1.0 us
-- between the steps, 7% of a wave; 10%.
local w = 2 * 128 * 128 * 2048 * 132 / (648.8e12 * (2048 / 2176) / (8192 / 8320))
t.near((b.fwd - a.fwd) - (c.fwd - b.fwd), w, 0.10,
       "forward: the expected tiles put 24, 26, 27 waves, not 24, 25, 27")
-- The backward: moe_up's dgrad (dX = dY W: output m x 2048, 16 N tiles,
-- depth 1536) on the same expected M tiles, 16 x 16 x (16.4954, 17.4955,
-- 18.4955) = 4222.8, 4478.8, 4734.8 CTAs: 32, 34, 36 waves, two and two
-- (the mean's 4096, 4352, 4608 CTAs: 32, 33, 35, one and two); its wgrad
-- (1536 x 2048 output, 3072 CTAs, 24 waves at every s, the tokens along
-- K) grows with its depth in equal steps.  So the two steps of moe_up's
-- backward are equal (the mean's tiles: 32 against 42 us, 32% apart);
-- 5%: the memory side's overlap share moves by about 1 us of a 42 us step.
t.near(c.bwd - b.bwd, b.bwd - a.bwd, 0.05,
       "dgrad: moe_up's backward steps alike, two dgrad waves each")
