-- unfused_rope: Megatron-Core's rotary embedding with apply_rope_fusion off
-- (NeMo RL's DeepSeek-V3 recipes) runs as PyTorch ops, and on packed
-- sequences its thd path waits twice a call for the GPU on the host
-- (engine/train_layer.c rope_thd_costs and layer_extras).
-- Run with ./gpuplan run tests/lua/unfused_rope.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(10)

local op = t.op
-- H100 SXM streams at 3.35e12 B/s x 0.84 (the hopper arch's hbm); a
-- kernel that moves bytes pays the memory pipeline's fill, 3.9 us
-- (engine/roofline.c ROOF_MEM_FILL), and the 1 us graph-launch gap
-- (catalog/archs.lua hopper graph_launch_overhead).  The host launches
-- an op in GP_EAGER_OP_TIME, 24.84 us (engine/common.h), on an x86 host.
local bw, k1, tau = 3.35e12 * 0.84, 3.9e-6 + 1e-6, 24.84e-6

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
-- the two calls' first wait the host launches 16 ops (the .tolist() copy,
-- the comparison and its truth value 3, freqs' cat 1, cos and sin 6, the
-- rope's 5, the cat 1) while the GPU runs only the rope's kernels: 2 x
-- 16 x 24.84 us = 794.9 us less their 232.8 us = 562.1 us on the path.
do
  local u = runj(dense, { unfused_rope = true, packed_len = 1024 })
  local f = runj(dense, { packed_len = 1024 })
  local g = 12 * el * A / bw + 11 * k1
  t.near(op(u, "rope_kv").fwd, g, 1e-6, "packed: the same kernels")
  t.near(op(u, "host_wait").fwd, 2 * 16 * tau - g, 1e-6,
         "packed: the two calls' host stretch after their waits, less their kernels")
  t.ok(op(f, "host_wait") == nil and u.step_s > f.step_s,
       "fused: no wait, and a shorter step")
end

-- DeepSeek-V3's MLA rotates q's 64-wide rope slice of each of its 128
-- heads and one shared 64-wide key head: el = 4096 x 128 x 64 + 4096 x
-- 64.  The rope's kernels (10 el A) and two cats (MLA's de-interleave and
-- the final one, 2 el A each): 14 el A in 12 kernels = 336.5 + 58.8 us.
-- The host's stretch: 17 ops a call (the de-interleave's cat one more):
-- 2 x 17 x 24.84 us less the kernels.
do
  local ds = { model = "deepseek-v3", gpu = "h100-sxm", gpus = 256, tp = 1, pp = 16, ep = 16,
               batch = 1, seq = 4096, global_batch = 256, stack = "megatron", zero = 1,
               recompute = "full", packed_len = 1024, unfused_rope = true }
  local r = gp.train(ds)
  local e2 = 4096 * 128 * 64 + 4096 * 64
  local g = 14 * e2 * A / bw + 12 * k1
  t.near(op(r, "rope_kv").fwd, g, 1e-6, "MLA: the rope slices only, with the de-interleave")
  t.near(op(r, "host_wait").fwd, 2 * 17 * tau - g, 1e-6, "MLA: 17 host ops a call")
end

-- Where it would change nothing, refused by name.
t.raises(function() runj(dense, { unfused_rope = true, stack = "hf" }) end,
  "train: unfused_rope is Megatron-Core's RoPE without apply_rope_fusion; with "
    .. "kernels = eager (stack = hf)", "eager modules refused", true)
-- The other stacks' fused kernels are not Megatron-Core's modules: the
-- option would leave their step as it is (deepspeed, packed: the same
-- step with and without it before this refusal).
t.raises(function() runj(dense, { unfused_rope = true, stack = "deepspeed", kernels = "fused",
                                  packed_len = 1024 }) end,
  "train: unfused_rope is Megatron-Core's RoPE without apply_rope_fusion: it needs "
    .. "stack = megatron (got stack = deepspeed)", "deepspeed's fused kernels refused", true)
t.raises(function() runj(dense, { unfused_rope = true, model = "gpt3-175b", gpus = 64,
                                  tp = 8, pp = 8 }) end,
  "train: unfused_rope prices Megatron-Core's rotary embedding; gpt3-175b has learned "
    .. "positions", "a model without rotary positions refused", true)
