-- The 4-GPU HGX board (hgx-h200-4gpu, fabric nvlink4-hgx4): four SXM
-- H200s wired straight to each other, 6 NVLink 4 links to each of the 3
-- peers, no NVSwitch (NVIDIA lists NVSwitch only on its 8-GPU HGX
-- baseboards; a 4 x H100 SXM node reads "NV6" between every pair,
-- NVIDIA/nccl#1617).  A pair moves its data over its own 6 links, a third
-- of the 18 (engine/comm.c up_mesh_peers); all four cards drive every
-- link, as through a switch.  Expectations are ratios against the same
-- board with the mesh switched off (up_mesh_peers = 0), so the fabric's
-- bw and achievable cancel.
local t = require "tap"
local gp = require "gpuplan"

local cat = gp.catalog()
local MiB = 2 ^ 20

t.is(cat.fabrics["nvlink4-hgx4"].mesh_peers, 3, "nvlink4-hgx4: 3 peers, 6 links each")
t.is(cat.fabrics["nvlink4-hgx4"].in_switch_reduction, nil, "no switch: no NVLS")
t.is(cat.systems["hgx-h200-4gpu"].gpus, 4, "hgx-h200-4gpu: four GPUs")
t.is(cat.systems["hgx-h200-4gpu"].scaleup, "nvlink4-hgx4", "hgx-h200-4gpu: the mesh")

local function ag(n, extra)
  local a = { system = "hgx-h200-4gpu", gpus = n, op = "all_gather", bytes = 128 * MiB }
  for k, v in pairs(extra or {}) do a[k] = v end
  return gp.comm(a)
end

-- A 128 MiB all-gather (a 7B micro-batch's T x h in bf16, KempnerForge's
-- TP message) is bandwidth-bound: time = L + X / share, L the fixed
-- latency (tens of us) against X 0.3-0.5 ms at the whole rate, so the
-- ratio falls short of 1 / share by a few percent; tolerance 5%.
--   2 GPUs: share (2 - 1) / 3 -> time x 3
--   4 GPUs: share 3 / 3 -> unchanged, to the bit
t.near(ag(2).time / ag(2, { up_mesh_peers = 0 }).time, 3, 0.05,
       "a pair on the 4-GPU board: its 6 of 18 links, 3x the time")
t.is(ag(4).time, ag(4, { up_mesh_peers = 0 }).time,
     "all four GPUs use every link: as a switch")

-- gp.train on the board: TP 2 runs its collectives at a third of the
-- switch's rate, so its tp_comm part triples within the latency's few
-- percent; TP 4 is priced as on a DGX H200 of the same 4 GPUs a node.
local model = { layers = 4, hidden = 4096, heads = 32, kv_heads = 8, ffn_hidden = 14336,
                ffn_gated = true, vocab = 32000 }
local function tr(tp, system)
  return gp.train { model = model, gpu = "h200-sxm", gpus = 4, gpus_per_node = 4,
                    system = system, tp = tp, sp = true, zero = 3, fsdp = "full_shard",
                    batch = 4, global_batch = 4 * 4 // tp, seq = 4096, stack = "hf",
                    recompute = "full", margin = 0 }
end
local function part(r, name)
  for _, p in ipairs(r.parts or {}) do if p.name == name then return p.seconds end end
end
local m2, d2 = tr(2, "hgx-h200-4gpu"), tr(2, "dgx-h200")
t.ok(part(d2, "tp_comm") and part(d2, "tp_comm") > 0, "TP 2 prices TP collectives")
t.near(part(m2, "tp_comm") / part(d2, "tp_comm"), 3, 0.05,
       "TP 2 on the board: tp_comm x 3 against the switch")
t.is(tr(4, "hgx-h200-4gpu").step_s, tr(4, "dgx-h200").step_s,
     "TP 4 on the board: every link, priced as the switch")

-- A case's hardware.system reaches gp.train (predict/train.lua): the
-- KempnerForge TP 2 row states hgx-h200-4gpu; the same case without it
-- falls back to the card's default node (the DGX H200's switch), whose
-- tp_comm is a third of the board's (within 5%, the latency as above).
local predict = require "gpuplan.predict.train"
local c = t.shipped_case("kempnerforge-mfu-h200-7b-4g-tp2-fsdp2")
t.is(c.hardware.system, "hgx-h200-4gpu", "the TP 2 row names its node")
local r = assert(predict(c, cat))
t.is(r.job.system, "hgx-h200-4gpu", "and gp.train gets it")
c.hardware.system = nil
local r0 = assert(predict(c, cat))
t.near(part(gp.train(r.job), "tp_comm") / part(gp.train(r0.job), "tp_comm"), 3, 0.05,
       "the case's tp_comm on the board: 3x the switch's")
t.done_testing()
