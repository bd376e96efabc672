-- NeMo AutoModel's FakeBalancedGate (gp.train's moe_gate = "fake_balanced";
-- engine/train_layer.c gate_reach): "indices = (torch.arange(n_tokens *
-- a_exp).view(-1, a_exp) % available_experts)" gives token i the top_k
-- CONSECUTIVE experts from i x top_k, and the experts lie contiguously on
-- the EP ranks (e / ep a rank), so the flex dispatcher sends a token to the
-- ranks (or nodes) that window spans, not to the ~5 of 8 a learned router's
-- top_k reach; and every expert gets the same count (no imbalance).
-- Run with ./gpuplan run tests/lua/moe_gate.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(12)

-- Ranks a learned router's top_k experts land on, e experts over n ranks:
-- n (1 - C(e - e/n, k) / C(e, k)) (tests/lua/ep_flex_nvl.t's): 5.34 for
-- 128 experts, top 8, EP 8.
local function ranks_hit(e, k, n)
  local miss = 1
  for i = 0, k - 1 do miss = miss * (e - e / n - i) / (e - i) end
  return n * (1 - miss)
end

-- Qwen3-30B-A3B's shape (48 layers, hidden 2048, top 8), the experts' count
-- given: one 4096-token micro-batch a step, EP = gpus, DeepEP, no EP
-- overlap.
local function qwen(experts)
  return { id = "qwen3-shape", layers = 48, hidden = 2048, heads = 32, kv_heads = 4,
           head_dim = 128, ffn_hidden = 6144, ffn_gated = true, vocab = 151936,
           tied_embeddings = false, qk_norm = true,
           moe = { experts = experts, top_k = 8, ffn_hidden = 768, shared_experts = 0,
                   dense_layers = 0 } }
end
local function job(experts, gpus, x)
  return t.with({ model = qwen(experts), gpu = "h100-sxm", gpus = gpus, ep = gpus, seq = 4096,
                  batch = 1, global_batch = gpus, stack = "megatron", zero = 1,
                  moe_dispatcher = "flex", moe_flex_backend = "deepep", ep_overlap = false }, x or {})
end
local function ep(experts, gpus, x)
  return t.parts(gp.train(job(experts, gpus, x))).ep_comm
end

-- In one node (8 H100s), DeepEP at Megatron-Core's 20 SMs: min(0.441 x
-- 900e9 (the NVLink 5 rows' SM rate), 0.750 x 450e9 (the H100 link)) =
-- 337.5 GB/s, a 2048-wide token costing (1 - 0.447) + 0.447 x 7168 / 2048
-- = 2.1175 times its bytes (engine/train_layer.c deepep_nvl_rate,
-- deepep_nvl_token).  ep_comm: 48 layers x 4 calls (dispatch and combine,
-- forward and backward) x 4096 tokens x the ranks each reaches x 2048 x 2
-- B.  1e-9: the engine's own sums of the same terms.
local nvl = 2048 * 2 * (0.553 + 0.447 * 3.5) / 337.5e9
local function expect_nvl(ranks) return 48 * 4 * 4096 * ranks * nvl end

-- 128 experts at EP 8: 16 a rank; the window of 8 starts at multiples of 8
-- (i x 8 mod 128), offset 0 or 8 inside a rank's 16: one rank a token.
-- Dropless (no capacity_factor): the fake gate's skew is 1, so this is the
-- mean rank's bytes exactly.
local fake = ep(128, 8, { moe_gate = "fake_balanced" })
t.near(fake, expect_nvl(1), 1e-9, "128 experts, EP 8: one rank a token")
-- A learned router on the same layout, capacity_factor 1 (the mean rows,
-- no chance skew): 5.34 ranks a token, 5.34 times the fake gate's bytes.
local learned = ep(128, 8, { capacity_factor = 1 })
t.near(learned, expect_nvl(ranks_hit(128, 8, 8)), 1e-9, "learned: 5.34 ranks a token")
t.near(learned / fake, 5.3392, 1e-4, "learned over fake: 5.34 (8 (1 - C(112, 8) / C(128, 8)))")
-- Dropless, a learned router's chance skew (model_ep_chance_skew) puts the
-- hottest rank above the mean: more than the capacity_factor 1 figure.
t.ok(ep(128, 8) > learned, "learned dropless: the hottest rank above the mean")
-- learned is the default
t.is(ep(128, 8, { moe_gate = "learned" }), ep(128, 8), "learned is the default")

-- 32 experts at EP 8: 4 a rank, the window of 8 at multiples of 8 spans
-- exactly two neighbouring ranks (DeepSeek-V3's case at EP 64: 256 / 64 =
-- 4 a rank): 2.
t.near(ep(32, 8, { moe_gate = "fake_balanced" }), expect_nvl(2), 1e-9,
       "32 experts, EP 8: two ranks a token")
-- 96 experts at EP 8: 12 a rank (Kimi K2's 384 at EP 32); the starts i x 8
-- mod 96 are 0, 8, 16, .. whose offsets in a rank's 12 cycle 0, 8, 4: the
-- windows [0, 8), [8, 16), [4, 12) reach 1, 2 and 1 ranks -- 4/3.
t.near(ep(96, 8, { moe_gate = "fake_balanced" }), expect_nvl(4 / 3), 1e-9,
       "96 experts, EP 8: 4/3 ranks a token")

-- Across nodes (engine/train_layer.c flex_internode): EP 16 on 2 DGX nodes,
-- 64 experts a node; the window of 8 never crosses a node: one node a
-- token, where a learned router reaches 2 (1.994).  DeepEP's 0.86 of the
-- 50 GB/s NIC, the call's 0.419 ms (tests/lua/ep_flex_internode.t's).
local function expect_rdma(nodes)
  return 48 * 4 * (0.419e-3 + 4096 * nodes * 2048 * 2 / (0.86 * 50e9))
end
t.near(ep(128, 16, { moe_gate = "fake_balanced" }), expect_rdma(1), 1e-9,
       "EP 16 on 2 nodes: one node a token")
t.near(ep(128, 16, { capacity_factor = 1 }), expect_rdma(ranks_hit(128, 8, 2)), 1e-9,
       "EP 16 on 2 nodes, learned: 1.994 nodes a token")

-- Refused: a dense model has no gate to fake; the fake gate leaves no
-- router to unbalance; an unknown gate.
t.raises(function()
  gp.train { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, moe_gate = "fake_balanced" }
end,
         "moe_gate fake_balanced", "a dense model: refused", true)
t.raises(function() gp.train(job(128, 8, { moe_gate = "fake_balanced", moe_balance = "none" })) end,
         "moe_balance none", "with moe_balance none: refused", true)
t.raises(function() gp.train(job(128, 8, { moe_gate = "random" })) end,
         "moe_gate", "an unknown gate: refused", true)
