-- A pipeline stage's parameters and activations are its own layers': a
-- dense-first MoE model's dense layers (DeepSeek's first_k_dense_replace)
-- sit on the first stage, not spread over all of them as an average layer.
-- Run with ./gpuplan run tests/lua/stage_dense.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(3)

-- DeepSeek-V3 on pp 2, 1F1B: stage 0 holds layers 0-30 (61 split 31 + 30),
-- the 3 dense and 28 MoE layers, and the embedding; stage 1 the other 30,
-- all MoE, and the head: the most loaded, by its experts (2 micro-batches
-- in flight on stage 0 do not outweigh two more layers of experts, 11.3B
-- each at ep 1).  Its parameters, from `gpuplan model params deepseek-v3`:
-- attention 11413422080 x 30/61, the experts 656463101952 and routers
-- 106430464 x 30/58 MoE layers, the norms 1006592 x 30/61, the head
-- 926679040, and no dense MLP (all 3 on stage 0; an average layer would put
-- 30/61 of their 1189085184 here).  1e-12: the same sums.
local r = gp.memory { model = "deepseek-v3", gpu = "h800-sxm", gpus = 2, pp = 2, seq = 4096,
                      method = "pretrain", schedule = "1f1b" }
local want = 11413422080 * 30 / 61 + (656463101952 + 106430464) * 30 / 58 +
  1006592 * 30 / 61 + 926679040
t.is(r.stage, 1, "stage 1 is the most loaded")
t.near(r.params, want, 1e-12, "stage 1: 30 of 58 layers' experts, no dense MLP")
-- A dense model's stages are unchanged: llama3-8b pp 2, stage 0 half of
-- every per-layer tensor plus the embedding (gpuplan model params
-- llama3-8b: 8030261248 in all, 525336576 each for the embedding and the
-- head, so 6979588096 in the 32 layers and the final norm).
local l = gp.memory { model = "llama3-8b", gpu = "h100-sxm", gpus = 2, pp = 2, seq = 4096,
                      method = "pretrain" }
t.near(l.params, 525336576 + (8030261248 - 2 * 525336576) / 2, 1e-6,
       "a dense model: half of the layers and the embedding")
