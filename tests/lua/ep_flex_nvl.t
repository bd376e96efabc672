-- The flex dispatcher inside one NVLink domain (engine/train_layer.c
-- hybridep_nvl_frac, hybridep_nvl_token): each call moves every token copy
-- a rank receives at HybridEP's published torch-API rate (a share of the
-- link: 0.599 at 8 ranks, 0.504 from 16), of which a share s is the
-- token's whatever its width (0.326 at 8 ranks, 0.202 from 16: the FP8
-- against the BF16 dispatch of docs/README_Hybrid-EP.md) -- so a token of
-- b bytes costs the 7168-wide reference token's time times
-- (1 - s) + s x 7168 x 2 / b.  DeepEP (the default backend) runs at its
-- own rows of the same README, which follow its SMs (deepep_nvl_frac,
-- deepep_nvl_token), through 8, 16 and 24 ranks, held beyond.
-- Run with ./gpuplan run tests/lua/ep_flex_nvl.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(13)

local function part(r, n)
  for _, p in ipairs(r.parts) do if p.name == n then return p.seconds end end
  return 0
end

-- Ranks a token's top_k experts land on, e experts spread evenly over n
-- ranks: n (1 - C(e - e/n, k) / C(e, k)) (5.34 of 8 for 128 experts,
-- top 8, at EP 8).
local function ranks_hit(e, k, n)
  local miss = 1
  for i = 0, k - 1 do miss = miss * (e - e / n - i) / (e - i) end
  return n * (1 - miss)
end

-- One 4096-token micro-batch a step on gpus GPUs, EP = gpus, no EP
-- overlap: ep_comm is layers x 4 calls (dispatch and combine, forward and
-- backward), each 4096 tokens x the ranks each reaches x hidden x 2 B at
-- frac x the link's rate a direction (NVLink 5: 900 GB/s, NVLink 4: 450),
-- times the width's factor.  1e-9: the engine's own sums of the same terms.
local function ep(model, gpu, gpus, backend, sms)
  -- capacity_factor 1: every rank runs the mean rows (the padded buffer), which the counts here take; the dropless default's chance skew is tests/lua/moe_balance.t's
  return part(gp.train { model = model, capacity_factor = 1, gpu = gpu, gpus = gpus, ep = gpus, seq = 4096,
                         batch = 1, global_batch = gpus, stack = "megatron", zero = 1,
                         moe_dispatcher = "flex", moe_flex_backend = backend or "hybridep",
                         moe_flex_sms = sms, ep_overlap = false }, "ep_comm")
end
local function expect(layers, hidden, ranks, frac, s, link)
  return layers * 4 * 4096 * ranks_hit(128, 8, ranks) * hidden * 2 / (frac * link) *
    ((1 - s) + s * 7168 / hidden)
end

-- Qwen3-30B-A3B (48 layers, hidden 2048) on 8 B200s: its 4 KiB tokens
-- cost 0.674 + 0.326 x 3.5 = 1.815 times their bytes' share.
t.near(ep("qwen3-30b-a3b", "b200", 8), expect(48, 2048, 8, 0.599, 0.326, 900e9), 1e-9,
       "Qwen3-30B-A3B, 8 B200s: s 0.326 at 8 ranks")
-- The same on 8 H100s (NVLink 4, the same shares).
t.near(ep("qwen3-30b-a3b", "h100-sxm", 8), expect(48, 2048, 8, 0.599, 0.326, 450e9), 1e-9,
       "Qwen3-30B-A3B, 8 H100s: the link's rate, the same shares")
-- 16 GB200s of one NVL72 rack: 0.504 of the link, s 0.202.
t.near(ep("qwen3-30b-a3b", "gb200", 16), expect(48, 2048, 16, 0.504, 0.202, 900e9), 1e-9,
       "Qwen3-30B-A3B, 16 GB200s: s 0.202 from 16 ranks")
-- Qwen3-235B-A22B (94 layers, hidden 4096): 0.674 + 0.326 x 1.75 = 1.245.
t.near(ep("qwen3-235b-a22b", "b200", 8), expect(94, 4096, 8, 0.599, 0.326, 900e9), 1e-9,
       "Qwen3-235B-A22B, 8 B200s: 4096-wide tokens")
-- The width's factor is what moves: per token copy, the 2048-wide tokens
-- take (0.674 + 0.326 x 3.5) / 3.5 = 0.519 of the 7168-wide reference
-- token's time where their bytes alone would take 1 / 3.5 = 0.286.
local per_copy = ep("qwen3-30b-a3b", "b200", 8) / (48 * 4 * 4096 * ranks_hit(128, 8, 8))
t.near(per_copy / (7168 * 2 / (0.599 * 900e9)), (0.674 + 0.326 * 3.5) / 3.5, 1e-9,
       "a 2048-wide copy: 0.519 of the reference copy's time, not 0.286")

-- DeepEP's own rows (engine/train_layer.c DEEPEP_NVL_8/16): its share
-- follows its SMs, at Megatron-Core's default 20 between the 16 and 24 SM
-- rows, 0.367 + (0.515 - 0.367) x 4 / 8 = 0.441 at 8 ranks, its per-token
-- share 0.447.
t.near(ep("qwen3-30b-a3b", "b200", 8, "deepep"), expect(48, 2048, 8, 0.441, 0.447, 900e9),
       1e-9, "DeepEP, 8 B200s, 20 SMs: 0.441 of the link, s 0.447")
-- 16 GB200s at 32 SMs: the 16-rank 32 SM row, 0.535, s 0.349.
t.near(ep("qwen3-30b-a3b", "gb200", 16, "deepep", 32),
       expect(48, 2048, 16, 0.535, 0.349, 900e9), 1e-9,
       "DeepEP, 16 GB200s, 32 SMs: 0.535 of the link, s 0.349")
-- Past 16 ranks DeepEP's combine collapses (the README's 24-rank GB200
-- rows): the share is the harmonic mean of dispatch and combine over the
-- link, 2 / (1 / 450.22 + 1 / 163.62) / 900 = 0.26668 at 24 SMs, held
-- beyond 24 ranks; its per-token share 0.277.  32 GB200s of one NVL72
-- rack, EP 32: the 24-rank row.
t.near(ep("qwen3-30b-a3b", "gb200", 32, "deepep", 24),
       expect(48, 2048, 32, 2 / (1 / 450.22 + 1 / 163.62) / 900, 0.277, 900e9), 1e-9,
       "DeepEP, 32 GB200s, 24 SMs: the 24-rank row held, 0.267 of the link, s 0.277")
-- At Megatron-Core's default 20 SMs, halfway between the 24-rank 16 SM
-- row (2 / (1 / 324.64 + 1 / 126.53) / 900 = 0.20232) and its 24 SM row
-- (0.26668): 0.23450.
t.near(ep("qwen3-30b-a3b", "gb200", 32, "deepep"),
       expect(48, 2048, 32, (2 / (1 / 324.64 + 1 / 126.53) + 2 / (1 / 450.22 + 1 / 163.62))
              / 2 / 900, 0.277, 900e9), 1e-9,
       "DeepEP, 32 GB200s, 20 SMs: between the 24-rank 16 and 24 SM rows")

-- Hopper (engine/train_layer.c deepep_nvl_rate): the rows above are the
-- kernels' SMs' rate on NVLink 5 (0.441 x 900 = 396.9 GB/s at 8 ranks and
-- 20 SMs), a rate, not a share of any link; on a slower link the call
-- runs at the slower of that and 0.750 of the link, DeepEP's own
-- test_intranode figure on H20 (337.35 of 450 GB/s, issue #16; H800 153
-- and 158 of 200 in its README).  8 H100s at 20 SMs: min(396.9, 0.750 x
-- 450 = 337.5) = 337.5 GB/s, the per-token share as before (1e-9: the
-- engine's sums of the same terms).
t.near(ep("qwen3-30b-a3b", "h100-sxm", 8, "deepep"),
       expect(48, 2048, 8, 1, 0.447, 0.750 * 450e9), 1e-9,
       "DeepEP, 8 H100s, 20 SMs: 0.750 of the link, not 0.441")
-- 12 SMs: the SMs bind again, 0.367 x 12 / 16 x 900 = 247.7 GB/s (below
-- the 16 SM row in proportion to the SMs, by_sms).
t.near(ep("qwen3-30b-a3b", "h100-sxm", 8, "deepep", 12),
       expect(48, 2048, 8, 0.367 * 12 / 16, 0.447, 900e9), 1e-9,
       "DeepEP, 8 H100s, 12 SMs: the SMs' rate, under the link's")
-- 8 H800s (200 GB/s a direction): 0.750 x 200 = 150 GB/s at 20 SMs, the
-- README's 153 / 158 at 24 within 2-5%.
t.near(ep("qwen3-30b-a3b", "h800-sxm", 8, "deepep"),
       expect(48, 2048, 8, 1, 0.447, 0.750 * 200e9), 1e-9,
       "DeepEP, 8 H800s: 0.750 of the 200 GB/s link")
-- Blackwell is untouched: 32 SMs on 8 B200s, 0.633 x 900 = 570 GB/s,
-- under 0.750 x 900 = 675.
t.near(ep("qwen3-30b-a3b", "b200", 8, "deepep", 32), expect(48, 2048, 8, 0.633, 0.447, 900e9),
       1e-9, "DeepEP, 8 B200s, 32 SMs: the SMs' rate, under the link's")
