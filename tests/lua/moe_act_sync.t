-- The clamped GEGLU's host wait (engine/train_layer.c moe_act_sync):
-- Megatron-Core's weighted_bias_quick_geglu_impl makes its linear offset a
-- device tensor on every call ("torch.tensor(linear_offset, ...,
-- device=input.device)"), which copies from the host and synchronizes
-- (PyTorch issues #120996, #190217).  Each MoE layer's forward waits
-- there after the clamp; the host resumes with the GPU idle and launches
-- the activation, fc2's expert GEMMs and their bias loop against the
-- GPU's time on them; under moe_act recompute the backward waits there
-- too, before fc2's backward.
-- Run with ./gpuplan run tests/lua/moe_act_sync.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(6)

local op = t.op
-- GP_EAGER_OP_TIME: one eager op's host time on an x86 host driving a
-- Hopper (the h100-sxm run below, scale 1); dgx-b200's host_op_scale
-- 1.118 (a Blackwell GPU's launches, catalog/systems/nvidia-hgx.lua)
-- stretches it to taub.
local tau = 24.84e-6
local taub = tau * 1.118

-- B200, EP 8 (16 local experts), six sequences of 4096 a micro-batch:
-- the GPU's work after the wait (the activation, fc2 over 98,304 rows,
-- the bias loop: milliseconds) outlasts the host's launches for it (16
-- expert GEMM calls of 33.4 us x 1.118 and some 35 launches: about 1.6
-- ms), and the rest of the layer is GPU-bound too, so the wait costs
-- what the GPU idles before the activation's launch reaches it: one host
-- op, taub.  (At four sequences the layer's host time, x 1.118, comes
-- within the GPU's and the wait grows: not the GPU-bound case.)  Float
-- rounding only: 1e-12.
local job = { model = "gpt-oss-120b", gpu = "b200", gpus = 8, ep = 8, batch = 6, seq = 4096,
              global_batch = 48, stack = "megatron", zero = 1, precision = "bf16",
              method = "pretrain" }
local r = gp.train(job)
t.near(op(r, "host_wait").fwd, taub, 1e-12, "GPU-bound: the forward's wait costs one launch")
t.is(op(r, "host_wait").bwd, 0.0, "no recompute: the backward does not wait")

-- Under moe_act recompute the activation re-runs before fc2's backward,
-- its copy waiting again: one launch idle there too (fc2's backward on
-- the GPU outlasts its module's Python and its 32 expert calls).
local rc = gp.train(t.with(job, { recompute = "selective", recompute_modules = "moe_act" }))
t.near(op(rc, "host_wait").bwd, taub, 1e-12, "moe_act recompute: the backward waits once")

-- Without the clamp Megatron-Core runs the swiglu path, no offset tensor:
-- no wait, and this GPU-bound layer has no host time on its path at all.
local m = {}
for key, x in pairs(gp.catalog():get("models", "gpt-oss-120b")) do m[key] = x end
m.ffn_clamp = nil
t.is(op(gp.train(t.with(job, { model = m })), "host_wait"), nil, "no ffn_clamp: no wait")

-- H100, one sequence a micro-batch, EP 8: host-bound after the wait.  The
-- host then issues the offset's copy and the activation (2 launches), fc2's
-- 16 expert GEMM calls (16 x 0.267 ms / 8) and the bias loop's 2 x 16 + 1
-- launches, 35 tau + 0.534 ms = 1.4034 ms at least (fc2's module call
-- adds to it), against the GPU's activation, fc2 and bias loop forward
-- (their ops); what the host takes beyond them the GPU idles, on top of
-- any wait before the clamp.  A lower bound: 1e-9 for float rounding.
local h = gp.train({ model = "gpt-oss-120b", gpu = "h100-sxm", gpus = 8, ep = 8, batch = 1,
                     seq = 4096, global_batch = 8, stack = "megatron", zero = 1,
                     precision = "bf16", method = "pretrain" })
local host2 = 35 * tau + 16 * 0.267e-3 / 8
local gpu2 = op(h, "moe_act").fwd + op(h, "moe_down").fwd + op(h, "moe_bias").fwd
t.ok(host2 - gpu2 > tau, "H100: the stretch after the wait is host-bound")
t.ok(op(h, "host_wait").fwd >= host2 - gpu2 - 1e-9,
     "H100: the forward idles at least the stretch's host time beyond its GPU time")
