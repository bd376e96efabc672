-- unfused_rope: Megatron-Core's rotary embedding with apply_rope_fusion off
-- (NeMo RL's DeepSeek-V3 recipes) runs as PyTorch ops, and on packed
-- sequences its thd path waits twice a call for the GPU on the host
-- (engine/train_layer.c rope_thd_costs and layer_extras).
-- Run with ./gpuplan run tests/lua/unfused_rope.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(20)

local op = t.op
-- H100 SXM streams at 3.35e12 B/s x 0.84 (the hopper arch's hbm); a
-- kernel that moves bytes pays the memory pipeline's fill, 3.9 us
-- (engine/roofline.c ROOF_MEM_FILL), and the 1 us graph-launch gap
-- (catalog/archs.lua hopper graph_launch_overhead).  On an x86 host a
-- read back to the host costs GP_EAGER_OP_TIME, 24.84 us, and a bare
-- tensor op GP_EAGER_BARE_OP_TIME, 8.1 us (engine/common.h).
local bw, k1, tau, taub = 3.35e12 * 0.84, 3.9e-6 + 1e-6, 24.84e-6, 8.1e-6

-- Llama 3 8B (32 query heads, 8 KV heads of 128), one 4096-token
-- micro-batch, bf16 (A = 2 B): q and k hold el = 4096 x 40 x 128
-- elements.
local dense = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, batch = 1, seq = 4096,
                global_batch = 8, stack = "megatron", zero = 1 }
local function runj(j, x) return gp.train(t.with(j, x)) end

-- Unpacked (_apply_rotary_pos_emb_bshd): the rope's five kernels on q
-- and on k (x cos 2, -x2 1, cat 2, x sin 2, the sum 3: 10 el A) and the
-- final cat (2 el A): 12 el A = 503.3 MB / 2.814e12 B/s = 178.9 us + 11
-- x 4.9 us.  1e-6: float rounding.
local el, A = 4096 * 40 * 128, 2
do
  local u = runj(dense, { unfused_rope = true })
  local f = runj(dense, {})
  t.near(op(u, "rope_kv").fwd, 12 * el * A / bw + 11 * k1, 1e-6,
         "unfused rope forward: five kernels on q and on k, then the cat")
  t.ok(op(u, "rope_kv").fwd > op(f, "rope_kv").fwd and op(u, "host_wait") == nil,
       "longer than the fused kernel; no wait without packing")
end

-- Packed (packed_len: the thd path): the same kernels, and after each of
-- the two calls' first wait the host runs 16 ops (the .tolist() copy,
-- the comparison and its truth value 3, freqs' cat 1, cos and sin 6, the
-- rope's 5, the cat 1) while the GPU runs only the rope's kernels: the
-- two reads (.tolist(), the truth value) at 24.84 us and 14 bare ops at
-- 8.1 us, 2 x (2 x 24.84 + 14 x 8.1) = 326.2 us less their 232.8 us =
-- 93.4 us on the path.
do
  local u = runj(dense, { unfused_rope = true, packed_len = 1024 })
  local f = runj(dense, { packed_len = 1024 })
  local g = 12 * el * A / bw + 11 * k1
  t.near(op(u, "rope_kv").fwd, g, 1e-6, "packed: the same kernels")
  t.near(op(u, "host_wait").fwd, 2 * (2 * tau + 14 * taub) - g, 1e-6,
         "packed: the two calls' host stretch after their waits, less their kernels")
  t.ok(op(f, "host_wait") == nil and u.step_s > f.step_s,
       "fused: no wait, and a shorter step")
end

-- DeepSeek-V3's MLA rotates q's 64-wide rope slice of each of its 128
-- heads and one shared 64-wide key head: el = 4096 x 128 x 64 + 4096 x
-- 64.  The rope's kernels (10 el A) and two cats (MLA's de-interleave and
-- the final one, 2 el A each): 14 el A in 12 kernels = 336.5 + 58.8 us.
-- The host's stretch: 17 ops a call (the de-interleave's cat one more),
-- 2 x (2 x 24.84 + 15 x 8.1) = 342.4 us, is shorter than the kernels
-- (395.3 us): the GPU never waits.
do
  local ds = { model = "deepseek-v3", gpu = "h100-sxm", gpus = 256, tp = 1, pp = 16, ep = 16,
               batch = 1, seq = 4096, global_batch = 256, stack = "megatron", zero = 1,
               recompute = "full", packed_len = 1024, unfused_rope = true }
  local r = gp.train(ds)
  local e2 = 4096 * 128 * 64 + 4096 * 64
  local g = 14 * e2 * A / bw + 12 * k1
  t.near(op(r, "rope_kv").fwd, g, 1e-6, "MLA: the rope slices only, with the de-interleave")
  t.ok(2 * (2 * tau + 15 * taub) < g and op(r, "host_wait") == nil,
       "MLA: 17 host ops a call, under the kernels")
end

-- Where it would change nothing, refused by name.
t.raises(function() runj(dense, { unfused_rope = true, stack = "hf" }) end,
  "train: unfused_rope is Megatron-Core's RoPE without apply_rope_fusion; with "
    .. "kernels = eager (stack = hf)", "eager modules refused", true)
-- The hf stack's fused kernels (torch.compile) fuse the rotary op: the
-- option would leave the step as it is.
t.raises(function() runj(dense, { unfused_rope = true, stack = "hf", kernels = "fused" }) end,
  "train: unfused_rope is Megatron-Core's RoPE without apply_rope_fusion (stack megatron) "
    .. "or Megatron-DeepSpeed's (stack deepspeed, kernels fused): it needs one of them "
    .. "(got stack = hf)", "the hf stack's fused kernels refused", true)

-- Megatron-DeepSpeed (stack deepspeed, kernels fused) has no fused RoPE:
-- rotary_pos_embedding.py's apply_rotary_pos_emb on q and on k, five
-- kernels each (x cos 2, -x2 1, cat 2, x sin 2, the sum 3: 10 el A), no
-- final cat at a full rotary dim; back, autograd's five (grad x cos 2,
-- grad x sin 2, neg's 1, unbind's stack 2, the sum 3: 10 el A):
-- 10 el A = 419.4 MB / 2.814e12 B/s = 149.1 us + 10 x 4.9 us each way.
-- No thd path: packed sequences wait for nothing on the host.  1e-6:
-- float rounding.
do
  local mds = { stack = "deepspeed", kernels = "fused", zero = 1 }
  local u = runj(dense, t.with(mds, { unfused_rope = true }))
  local f = runj(dense, mds)
  local g = 10 * el * A / bw + 10 * k1
  t.near(op(u, "rope_kv").fwd, g, 1e-6, "Megatron-DeepSpeed: five kernels on q and on k")
  t.near(op(u, "rope_kv").bwd, g, 1e-6, "Megatron-DeepSpeed: autograd's five back on each")
  local p = runj(dense, t.with(mds, { unfused_rope = true, packed_len = 1024 }))
  t.ok(op(f, "rope_kv").fwd < g and op(p, "host_wait") == nil and
       math.abs(op(p, "rope_kv").fwd - g) < 1e-12,
       "Megatron-DeepSpeed: longer than the fused op; packed, the same kernels and no wait")
  t.raises(function() runj(dense, t.with(mds, { unfused_rope = true, packed_len = 1024,
                                                rope_seq_loop = true })) end,
    "train: rope_seq_loop is Megatron-Core's packed RoPE path: it needs stack = megatron "
      .. "(got stack = deepspeed)", "Megatron-DeepSpeed: no per-sequence loop", true)
end
t.raises(function() runj(dense, { unfused_rope = true, model = "gpt3-175b", gpus = 64,
                                  tp = 8, pp = 8 }) end,
  "train: unfused_rope prices Megatron-Core's rotary embedding; gpt3-175b has learned "
    .. "positions", "a model without rotary positions refused", true)

-- The one magnitude a source gives.  NeMo RL's grpo_math_1B_megatron.yaml
-- (v0.4.0 to v0.6.0; the comment came with PR #608, 2025-07-05, at
-- Megatron-LM 2ff0f099) keeps "#gives ~20% training perf speedup with
-- sequence packing" over "apply_rope_fusion: True", with model_name
-- Qwen/Qwen2.5-1.5B, tensor/pipeline/context parallel 1, one GPU
-- (cluster gpus_per_node 1), sequence_packing train_mb_tokens =
-- max_total_sequence_length 512 x train_micro_batch_size 4 = 2048, and
-- train_global_batch_size 512 sequences.  No card is stated: h100-sxm.
-- Samples of 256 tokens: 8 a micro-batch, 512 x 256 / 2048 = 64
-- micro-batches a step.  Qwen2.5-1.5B from its config.json (28 layers,
-- hidden 1536, 12 heads and 2 KV heads of 128, ffn 8960, vocab 151936,
-- tied).
local q15 = { id = "qwen2.5-1.5b", name = "Qwen2.5 1.5B", family = "qwen2",
  split_proj = "both", layers = 28, hidden = 1536, heads = 12, kv_heads = 2, head_dim = 128,
  ffn_hidden = 8960, ffn_gated = true, vocab = 151936, tied_embeddings = true,
  qkv_bias = true, norm = "rms", max_seq = 32768, params_b = 1.54 }
local grpo1b = { model = q15, gpu = "h100-sxm", gpus = 1, batch = 1, seq = 2048,
                 packed_len = 256, global_batch = 64, stack = "megatron", zero = 1 }
do
  local f = runj(grpo1b, {})
  local u = runj(grpo1b, { unfused_rope = true })
  local l = runj(grpo1b, { unfused_rope = true, rope_seq_loop = true })
  local rf, ru, rl = op(f, "rope_kv"), op(u, "rope_kv"), op(l, "rope_kv")
  -- q and k: 2048 x (12 + 2) x 128 elements.  The loop's kernels: the
  -- one pass's 12 el A in 8 x 11 launches, and the sequences' cat (2 el
  -- A, one launch).
  local e15 = 2048 * 14 * 128
  t.near(rl.fwd, 14 * e15 * A / bw + (8 * 11 + 1) * k1, 1e-6,
         "loop: each sequence's kernels and the sequences' cat")
  -- A layer's forward grows by the host's stretch, which covers the
  -- kernels, less the fused kernel it replaces: one pass 2 x (2 reads x
  -- tau + 14 x taub), the loop 2 x (1 read x tau + (8 x 12 + 1) x taub);
  -- its backward by the unfused kernels' less the fused one's.  28
  -- layers, 64 micro-batches, the rest of the step unchanged.  One pass:
  -- 28 x 64 x (326.2 - 10.1 + 114.6 us) = 0.772 s on a 2.904 s step,
  -- 1.27x.  1e-3: the step's other terms (the optimizer, the loss) do
  -- not move.
  local function grown(r, rr, host)
    return 28 * 64 * (host - rf.fwd + rr.bwd - rf.bwd)
  end
  t.near(u.step_s - f.step_s, grown(u, ru, 2 * (2 * tau + 14 * taub)), 1e-3,
         "one pass (v0.6.0's pin): the step grows by 32 host ops a layer")
  t.near(l.step_s - f.step_s, grown(l, rl, 2 * (tau + 97 * taub)), 1e-3,
         "loop (v0.3.0/v0.4.0's pins): 196 host ops a layer at 8 sequences")
  -- The comparison: the comment's ~20% is fused 1/1.2 of unfused.  The
  -- one pass (v0.6.0's pin) comes out 1.27x; the loop that the comment's
  -- own pin ran comes out 2.45x at 8 sequences a micro-batch (1.74x at
  -- 4, the fewest that fill 2048 tokens at the recipe's 512-token
  -- maximum): its count of launches, not their price, keeps it above the
  -- comment (docs/train.md).
  t.ok(u.step_s / f.step_s < 1.3 and l.step_s / f.step_s > 2,
       "one pass near the comment's ~20%, the loop well above it")
end

-- The loop is a form of the unfused path: alone it is refused.
t.raises(function() runj(dense, { rope_seq_loop = true, packed_len = 1024 }) end,
  "train: rope_seq_loop is a form of the unfused RoPE's packed path: it needs unfused_rope",
  "the loop without unfused_rope refused", true)
-- Unpacked, no loop: the bshd pass as before.
t.near(op(runj(dense, { unfused_rope = true, rope_seq_loop = true }), "rope_kv").fwd,
       12 * el * A / bw + 11 * k1, 1e-6, "unpacked: the loop changes nothing")
