-- tp_overlap_fp8_rs: Transformer Engine's Userbuffers reduce-scatters of
-- the forward carry the row-parallel GEMMs' fp8 output (fp8_buf on
-- proj_fprop and fc2_fprop: module/base.py initialize_ub keeps it for the
-- pipelined reduce-scatters, linear.py writes the GEMM's output into the
-- buffer as "proj_out_pttype = torch.uint8"), as dgxc-benchmarking
-- 24.11.1's Llama 3.1 405B fp8 runs set it (llama3.1/configure.sh;
-- engine/train_layer.c layer_comm).
-- Run with ./gpuplan run tests/lua/tp_overlap_fp8_rs.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(9)

local op = t.op
local function part(r, name)
  for _, p in ipairs(r.parts) do if p.name == name then return p end end
end
-- Llama 3.1 70B's layer on one DGX H100 (TP 8, SP, Userbuffers), one
-- 8192-token micro-batch, no recompute, 4 layers: every TP collective of
-- a pass hides under the pass's GEMMs (a 16-bit reduce-scatter of
-- 8192 x 8192 x 2 B = 134 MB is about 0.4 ms over NVLink, the layer's
-- forward GEMMs about 3 ms in fp8).
local m = { name = "llama31-70b-4l", layers = 4, hidden = 8192, heads = 64, kv_heads = 8,
            head_dim = 128, ffn_hidden = 28672, ffn_gated = true, vocab = 128256,
            tied_embeddings = false }
local job = { model = m, gpu = "h100-sxm", gpus = 8, tp = 8, pp = 1, sp = true, batch = 1,
              seq = 8192, global_batch = 1, stack = "megatron", precision = "fp8",
              recompute = "none", method = "pretrain", tp_overlap = true }
local f8 = gp.train(job)
local rs8 = gp.train(t.with(job, { tp_overlap_fp8_rs = true }))
local b16 = gp.train(t.with(job, { precision = "bf16" }))

-- The forward's TP pair a dense layer, twice (attention, MLP): under fp8
-- TE gathers in fp8 (ag8) and reduce-scatters in 16 bits (rs16), so the
-- listed forward is 2 (ag8 + rs16) and the bf16 run's 2 (ag16 + rs16).
-- The ring all-gather and reduce-scatter of the same bytes take the same
-- time on one node's NVLink (async_tp_allreduce.t), so rs16 - rs8 =
-- (bf16 forward - fp8 forward) / 2: with the flag each layer's forward
-- hides 2 (rs16 - rs8) less, bf16 forward - fp8 forward a layer, 4
-- layers x 1 micro-batch.  The same sums in another order: 1e-9.
local d = op(b16, "tp_comm").fwd - op(f8, "tp_comm").fwd
t.ok(d > 0, "the fp8 gathers are shorter than the 16-bit ones")
t.near(part(f8, "tp_comm").hidden - part(rs8, "tp_comm").hidden, 4 * d, 1e-9,
       "the forward's two reduce-scatters a layer move fp8: 2 (rs16 - rs8) less hidden")
-- Hidden whole, each second is paid at OVERLAP_SLOWDOWN (0.189,
-- train_int.h): the TP part shrinks by 0.189 of the hidden seconds saved.
t.near(part(f8, "tp_comm").seconds - part(rs8, "tp_comm").seconds, 0.189 * 4 * d, 1e-9,
       "paid at the overlap's slowdown")
t.ok(rs8.step_s < f8.step_s, "the step shortens")
-- An fc2 kept in bf16 (mlp_down_bf16) writes a 16-bit output, whose
-- reduce-scatter stays 16-bit: only the attention's proj moves fp8, one
-- reduce-scatter a layer, (rs16 - rs8) = d / 2 less hidden a layer, 4
-- layers: 2 d.  The same sums: 1e-9.  (Priced as both, it reads 4 d.)
local d16 = gp.train(t.with(job, { mlp_down_bf16 = true }))
local d16rs8 = gp.train(t.with(job, { mlp_down_bf16 = true, tp_overlap_fp8_rs = true }))
t.near(part(d16, "tp_comm").hidden - part(d16rs8, "tp_comm").hidden, 2 * d, 1e-9,
       "fc2 in bf16: its reduce-scatter stays 16-bit, the attention's alone in fp8")
-- The backward's reduce-scatters are the dgrad's, in 16 bits: the listed
-- op (the layer's collectives, whatever the overlap) is unchanged:
-- the same inputs, 1e-15 relative (the last bit).
t.near(op(rs8, "tp_comm").bwd, op(f8, "tp_comm").bwd, 1e-15, "the backward is unchanged")

-- Refusals: no fp8 recipe, no Userbuffers, no SP: no such reduce-scatter.
local function err(o)
  local ok, e = pcall(gp.train, t.with(job, o))
  return ok and "" or tostring(e)
end
t.like(err { tp_overlap_fp8_rs = true, precision = "bf16" },
       "tp_overlap_fp8_rs reduce%-scatters the fp8 GEMMs' output: it needs precision = fp8",
       "bf16 refused")
t.like(err { tp_overlap_fp8_rs = true, tp_overlap = false },
       "tp_overlap_fp8_rs is a setting of the TP overlap's Userbuffers: it needs tp_overlap",
       "without tp_overlap refused")
t.like(err { tp_overlap_fp8_rs = true, sp = false },
       "tp_overlap_fp8_rs is the reduce%-scatter of sequence parallelism's forward: it needs sp",
       "without sp refused")
