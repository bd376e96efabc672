-- An x86 host driving Blackwell GPUs: its host work takes 1.118 of the
-- x86 figures the model charges (timed driving Ampere and Hopper GPUs),
-- the DGX B200's and DGX B300's host_op_scale (catalog/systems/
-- nvidia-hgx.lua), from NVIDIA/TransformerEngine issue #2053's host time
-- of one torch.nn.Linear forward: 37.08 us on GB200, 33.17 us on GH200
-- (the same Grace CPU), 13.48 us on a DGX H100.  Such a host is no Grace
-- host for the expert all-to-all overlap (engine/train_prep.c
-- train_ep_hides, GP_GRACE_HOST_MIN).
-- Run with ./gpuplan run tests/lua/blackwell_host.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(6)

local cat = gp.catalog()
local function sys(id) return cat:get("systems", id) end
-- The factor is the issue's GB200 over GH200 ratio, rounded to the
-- catalog's three decimals: 37.08 / 33.17 = 1.1179 (5e-4: the rounding).
t.near(sys("dgx-b200").host_op_scale, 37.08 / 33.17, 5e-4 / 1.118,
       "dgx-b200: GB200 over GH200 on one Grace CPU")
t.is(sys("dgx-b300").host_op_scale, sys("dgx-b200").host_op_scale,
     "dgx-b300: the same Blackwell factor on its x86 host")
-- The Grace racks' factor is Grace's own (GH200 over DGX H100, both
-- Hopper: 33.17 / 13.48 = 2.461) times the Blackwell one: 37.08 / 13.48
-- = 2.7507 (1e-3: the catalog's 2.75 is rounded to two decimals).
t.near(sys("gb200-nvl72").host_op_scale,
       (33.17 / 13.48) * sys("dgx-b200").host_op_scale, 1e-3,
       "gb200-nvl72's 2.75 = Grace's 2.461 x the Blackwell 1.118")

-- Qwen3-30B-A3B on 8 GPUs, EP 8, one 4096-token micro-batch, the alltoall
-- dispatcher: the MoE layer's forward is host-bound on an H100 and on a
-- B200 (tests/lua/cuda_graphs.t), so graphing the router and the
-- preprocess (21 launches into one replay of 2) takes 19 host launches
-- off the forward's wait: 19 x 24.84 us on the DGX H100's host, 19 x
-- 24.84 x 1.118 = 527.6 us on the DGX B200's (1e-9: the same sums).
local function host_wait(r)
  for _, o in ipairs(r.ops) do if o.name == "host_wait" then return o.fwd end end
  return 0
end
local function saved(gpu)
  local job = { model = "qwen3-30b-a3b", gpu = gpu, gpus = 8, ep = 8, method = "pretrain",
                seq = 4096, global_batch = 512, precision = "fp8", fp8_scaling = "block" }
  local g = gp.train(t.with(job, { cuda_graph_scope = "moe_router,moe_preprocess" }))
  return host_wait(gp.train(job)) - host_wait(g)
end
t.near(saved("h100-sxm"), 19 * 24.84e-6, 1e-9, "DGX H100: 19 launches of 24.84 us")
t.near(saved("b200"), 19 * 24.84e-6 * 1.118, 1e-9, "DGX B200: 19 launches of 27.77 us")

-- The expert all-to-all overlap on 16 B200s in two DGX nodes, EP 16 (the
-- group spans the nodes, its all-to-alls over the NICs): an x86 host
-- (1.118 < GP_GRACE_HOST_MIN 2) hides them under compute, so the overlap
-- shortens the exposed expert all-to-all; counted as a Grace host it
-- would price the step as without the overlap (the same ep_comm).  The
-- bound 0.9: counted as a Grace host the ratio is exactly 1; hidden, it
-- is 0.57 today (5.15 s of 9.00 s), so 0.9 tells the two apart and leaves
-- the hidden share's own figures free to move.
local ej = { model = "qwen3-30b-a3b", gpu = "b200", gpus = 16, ep = 16, method = "pretrain",
             seq = 4096, global_batch = 512, precision = "bf16", stack = "megatron",
             zero = 1, batch = 1 }
local on = gp.train(t.with(ej, { ep_overlap = true }))
local off = gp.train(t.with(ej, { ep_overlap = false }))
t.ok(t.parts(on).ep_comm < 0.9 * t.parts(off).ep_comm,
     "dgx-b200, EP 16 over two nodes: the overlap hides the all-to-alls")

t.done_testing()
