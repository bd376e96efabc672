-- SGLang's all-reduce + RMSNorm fusion under disaggregated serving, decided
-- per pool (engine serve.h serve_ar_norm_on, serve_a2a.c sx_ar_fused;
-- lua/gpuplan/infer.lua M.sglang_ar_norm_fusion): the prefill and decode
-- pools are servers of their own, each launched with its own --tp-size,
-- --enable-dp-attention and --nnodes (sglang docs/advanced_features/
-- pd_disaggregation.md: "--disaggregation-mode prefill" and
-- "--disaggregation-mode decode"), and ServerArgs turns the fusion on for
-- GptOssForCausalLM on Blackwell "if not self.enable_dp_attention and
-- self.nnodes == 1" of that server.  It was one flag for both pools, off
-- whenever the decode pool's layout (or the larger pool's nodes) ruled it
-- out.
-- Run: ./gpuplan run tests/lua/sglang_ar_fusion_pools.t
local t = require "tap"
local gp = require "gpuplan"
t.plan(9)

-- gpt-oss-120b's shape (openai/gpt-oss-120b config.json), as
-- tests/lua/sglang_ar_fusion.t: 36 layers, hidden 2880.
local model = { layers = 36, hidden = 2880, heads = 64, kv_heads = 8, head_dim = 64,
                ffn_hidden = 2880, ffn_gated = true, norm = "rms", vocab = 201088,
                max_seq = 131072, sliding_window = { size = 129, layers = 18 },
                moe = { experts = 128, top_k = 4, shared_experts = 0, ffn_hidden = 2880,
                        dense_layers = 0 } }
-- 8 B200s a node; prompts of 1024 tokens prefilled 1024 a step (within
-- communicator.py's FUSE_ALLREDUCE_MAX_BATCH_SIZE 2048 on a TP group).
local function run(x)
  return assert(gp.infer(t.with({ model = model, gpu = "b200", disagg = true, batch = 2,
                                  expert_weights = "mxfp4", runtime = "sglang", input = 1024,
                                  output = 256, prefill_tokens = 1024 }, x)))
end
local function said(r, pat) return t.said(r, pat, true) end
local function pre_op(r, name) return t.op({ ops = r.prefill_ops }, name) end

-- 1-4. Decode under DP attention with the experts' exchange (EP 8, DeepEP:
-- its server keeps the fusion off), prefill TP 8 on one node (its server
-- turns it on).  The prefill pool's chunk of 1024 tokens a TP group runs
-- the fused kernel two-shot (tokens x 2880 x 2 x 8 x 2 B = 90 MiB, over
-- FlashInfer's 42 MiB one-shot limit at 8 GPUs): 8.7 us + 2 x 7/8 x 1024
-- x 5760 B / (0.617 x 900e9 B/s) a call, 72 calls (36 layers x 2), as
-- tests/lua/sglang_ar_fusion.t's colocated 1024-token prefill; 1e-6: the
-- same arithmetic in C.  Before, the decode pool's DP attention turned it
-- off for both: NCCL's all-reduce and the norm rows.
local a = run { gpus = 16, tp = 8, ep = 8, dp_attention = true, prefill_tp = 8, prefill_ep = 1,
                prefill_dp_attention = false }
t.near(a.prefill.tp_comm / 72, 8.7e-6 + 2 * 7 / 8 * 1024 * 5760 / (0.617 * 900e9), 1e-6,
       "decode DP attention, prefill TP 8: the prefill pool's all-reduce is the fused kernel")
t.ok(pre_op(a, "attn_norm") == nil and pre_op(a, "mlp_norm") == nil,
     "... the prefill step's norm rows gone")
t.ok(t.op(a.decode, "attn_norm") ~= nil, "... the decode step keeps its norms (DP attention)")
t.ok(said(a, "in the prefill pool"), "... the defaults line names the prefill pool")

-- 5-8. Decode TP 8 on one node (fused), prefill TP 16 over two nodes (its
-- server's nnodes 2: not).  The decode step's 2 sequences a GPU are 16
-- tokens on the TP group, one-shot: 8.7 us + 7 x 16 x 5760 B / (0.720 x
-- 900e9 B/s) = 9.6956 us a call, 72 calls; 1e-6 as above.  Before, the
-- larger pool's two nodes turned it off for both.
local b = run { gpus = 24, tp = 8, ep = 1, prefill_tp = 16 }
t.near(b.tp_comm_ms, 72 * (8.7 + 7 * 16 * 5760 / (0.72 * 900e9) * 1e6) * 1e-3, 1e-6,
       string.format("decode TP 8, prefill TP 16: the decode pool fused, %.4f ms", b.tp_comm_ms))
t.ok(t.op(b.decode, "attn_norm") == nil, "... the decode step's norm rows gone")
t.ok(pre_op(b, "attn_norm") ~= nil and pre_op(b, "mlp_norm") ~= nil,
     "... the prefill step (two nodes) keeps its norms")
t.ok(said(b, "in the decode pool"), "... the defaults line names the decode pool")

-- 9. Both pools TP 8 on a node each: both fused, said once.
local c = run { gpus = 16, tp = 8, ep = 1, prefill_tp = 8 }
t.ok(said(c, "in both pools") and pre_op(c, "attn_norm") == nil and t.op(c.decode, "attn_norm") == nil,
     "both pools TP 8: both fused")
