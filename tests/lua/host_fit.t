-- The host memory an offload holds, against its host (engine/memory.c
-- mem_host_fit, one rule for gp.memory, gp.train, gp.sweep and gp.rl).
-- ZeRO-Offload keeps every GPU's partition of the offloaded states in its
-- own host's DRAM (DeepSpeed's pinned CPU buffers, one set per rank), so a
-- host holds cpu_bytes for each of the job's GPUs it carries; the node's
-- DRAM is its catalog system's host_memory (the DGX H100 datasheet's
-- "System Memory 2TB"; a GB200 NVL72 rack's 17 TB by tray of 4 GPUs).
-- Past it the job does not fit, whatever the GPU holds.
-- Run with ./gpuplan run tests/lua/host_fit.t.
local t = require "tap"
local gp = require "gpuplan"
local memory = require "gpuplan.memory"

t.plan(75)

local GiB = 2 ^ 30
-- 1e-9: the bytes are sums and products of the same doubles the engine
-- forms; only their rounding can differ.
local EXACT = 1e-9

local job405 = { model = "llama3.1-405b", gpu = "h100-sxm", gpus = 16, zero = 3,
                 offload = "params+optimizer", stack = "deepspeed", recompute = "full",
                 seq = 512 }
local function with(base, o)
  local c = {}
  for k, v in pairs(base) do c[k] = v end
  for k, v in pairs(o or {}) do c[k] = v end
  return c
end

-- 1. The colleague's case: Llama 3.1 405B, ZeRO-3 params+optimizer
-- offload on 16 H100s (two DGX H100s).  DeepSpeed's bf16 recipe holds
-- 20 B per trainable parameter on the host (16-bit weights 2 + fp32
-- gradient 4 and the 16-bit accumulation partition 2 + fp32 master 4 +
-- Adam's two moments 8), each GPU its 1/16 partition: P x 20 / 16 a GPU,
-- and a node of 8 holds 8 of them, P x 10 = 4058.5e9 B = 3779.8 GiB,
-- against 2 TB = 2e12 B = 1862.65 GiB.
local r = gp.memory(job405)
local P = r.trainable
t.near(r.cpu_bytes, P * 20 / 16, EXACT, "405B: 20 B/param over 16 partitions a GPU")
t.near(r.host_need, P * 20 / 16 * 8, EXACT, "405B: a node holds its 8 GPUs' partitions")
t.is(r.host_ranks, 8, "405B: 8 of the 16 GPUs on one DGX H100")
t.is(r.host_memory, 2e12, "405B: dgx-h100's host_memory, 2 TB")
t.is(string.format("%.2f/%.2f", r.host_need / GiB, r.host_memory / GiB), "3779.80/1862.65",
  "405B: 3779.80 GiB a node against 1862.65 GiB")
t.ok(r.short_by < 0 and r.fits == false, "405B: the GPU holds it, the host does not: fits false")
t.like(memory.verdict(r), "fits: no (host memory: the offload holds 3779.8 GiB on a host of 8 "
  .. "GPUs, which has 1862.6 GiB; the GPU's headroom", "405B: the verdict names the host", true)
t.is(r.host_system, "dgx-h100", "405B: the system the host came from")

-- 2. The same job's step: refused by the same rule, the reason the host's.
local tr = gp.train(with(job405, { method = "full" }))
t.is(tr.fits, false, "train 405B: does not fit")
t.is(tr.why, "host memory: the offload holds 3779.8 GiB on a host of 8 GPUs, which has "
  .. "1862.6 GiB", "train 405B: why is the host")
t.near(tr.memory.host_need, r.host_need, EXACT, "train 405B: the host bytes gp.memory gives")

-- 3. 70B on one node: P x 20 = 1314.17 GiB under 1862.65 GiB, the host
-- is not the reason (the GPU's own verdict stands).
local r70 = gp.memory { model = "llama3-70b", gpu = "h100-sxm", gpus = 8, zero = 3,
                        offload = "params+optimizer", stack = "deepspeed" }
t.near(r70.host_need, r70.trainable * 20, EXACT, "70B on 8: the node holds P x 20 B")
t.ok(r70.host_need < r70.host_memory and not memory.verdict(r70):find("host", 1, true),
  "70B on 8: within the host, the verdict is the GPU's")

-- 4. gp.sweep (plan) refuses every layout past the host, and says how many;
-- with the node's DRAM raised to 8 TB (a user catalog) the same layouts run:
-- the host was the reason.
local sw = with(job405, { method = "full", gpus = 16, zero = { 3 } })
local s = gp.sweep(sw)
local st = s.stats["h100-sxm"]
t.is(#s.results, 0, "sweep 405B on 16: no layout fits")
t.ok(st.layouts > 0 and st.past_host == st.layouts, "sweep 405B: every layout past the host")
t.ok(st.host_least <= r.host_need * (1 + EXACT) and st.host_memory == 2e12,
  "sweep 405B: the least host need and the host's 2 TB")
local big = gp.catalog { dirs = { "catalog" } }
big.systems["dgx-h100"].host_memory = 8e12
local s8 = gp.sweep(with(sw, { cat = big }))
t.ok(#s8.results > 0 and s8.stats["h100-sxm"].past_host == 0,
  "sweep 405B with 8 TB nodes: layouts fit")

-- 5. A rack whose NVLink domain spans hosts: GB200 NVL72's 17 TB is its
-- 18 trays' (host_gpus 4), 17e12 x 4 / 72 = 944.4e9 B a host of 4 GPUs.
local g = gp.memory { model = "llama3-70b", gpu = "gb200", gpus = 8, zero = 3,
                      offload = "params+optimizer", stack = "deepspeed" }
t.near(g.host_memory, 17e12 * 4 / 72, EXACT, "gb200: a tray's share of the rack's DRAM")
t.is(g.host_ranks, 4, "gb200: 4 GPUs a host")
t.near(g.host_need, g.cpu_bytes * 4, EXACT, "gb200: the host holds its 4 GPUs' partitions")

-- 6. gp.rl: an RL trainer's offload follows the same rule.  Llama 3 8B,
-- ZeRO-3 optimizer offload on 8 H100s: 18 B per parameter on the host
-- (fp32 gradient 4 + accumulation 2 + master 4 + moments 8), P x 18 / 8 a
-- GPU, x 8 = 144.5e9 B a node.  Fine on 2 TB; a node of 50 GB is short.
local small = gp.catalog { dirs = { "catalog" } }
small.systems["dgx-h100"].host_memory = 50e9
local rl = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, zero = 3, offload = "optimizer",
             stack = "deepspeed" }
local ok = gp.rl(rl)
local u = ok.memory.update
t.near(u.host_need, u.trainable * 18, EXACT, "rl 8B: a node holds P x 18 B")
t.is(ok.fits, true, "rl 8B on a DGX H100: fits")
local short = gp.rl(with(rl, { cat = small }))
t.is(short.fits, false, "rl 8B on 50 GB nodes: does not fit")
t.is(short.why, string.format("host memory: the offload holds %.1f GiB on a host of 8 GPUs, "
  .. "which has %.1f GiB", u.host_need / GiB, 50e9 / GiB), "rl 8B: why is the host")

-- 7. A system that gives no host_memory (a user catalog's): nothing to
-- hold the offload against, and train says the host was not checked.
local none = gp.catalog { dirs = { "catalog" } }
none.systems["dgx-h100"].host_memory = nil
local tn = gp.train(with(job405, { method = "full", cat = none }))
t.is(tn.memory.host_memory, 0, "no host_memory: not checked")
local said = false
for _, d in ipairs(tn.defaults) do
  if d == "host memory not checked (system 'dgx-h100' gives no host_memory)" then said = true end
end
t.ok(said and tn.fits == true, "no host_memory: fits on the GPU, and the defaults say so")

-- The offloaded optimizer's step shares its host's DRAM bandwidth
-- (engine/train.c offload_step), by the same host rule as the bytes
-- (memory.h mem_host_share): a GB200 NVL72 rack is one 72-GPU node of 18
-- trays, each tray 2 Grace CPUs for 4 GPUs (catalog host_gpus 4), so 4
-- GPUs step at their tray's 4/72 of the node's host_bw, not the whole
-- rack's.  llama3-70b (P = 70553706496 parameters, r.memory.params) on 4
-- GB200 at ZeRO 3, optimizer offloaded: each rank steps P/4 elements at
-- 44 B each on the host (offload_step's hb: 12 + 2 x 8 for Adam's two
-- fp32 states + 2 + 2 + 4 for stage 3's 16-bit accumulator landing and
-- upcast + 6 + 2 for the parameters copied up), the 4 ranks together.  Raising host_bw from 1 to 2 TB/s takes away half the
-- host term: on a node of 4 GPUs (gpus_per_node = 4, one host)
-- P x 44 x (1/1e12 - 1/2e12) = P x 22e-12 = 1.552181543 s; on the rack's
-- node of 72 the same 4 GPUs hold 4/72 of it, 18 times that.
do
  local function opt_s(o)
    local r = gp.train(o)
    for _, p in ipairs(r.parts) do
      if p.name == "optimizer" then return p.seconds, r end
    end
  end
  local rack = { model = "llama3-70b", gpu = "gb200", system = "gb200-nvl72", gpus = 4,
                 zero = 3, offload = "optimizer" }
  local a1, r1 = opt_s(with(rack, { host_bw = "1TB/s", gpus_per_node = 4 }))
  local a2 = opt_s(with(rack, { host_bw = "2TB/s", gpus_per_node = 4 }))
  local b1 = opt_s(with(rack, { host_bw = "1TB/s" }))
  local b2 = opt_s(with(rack, { host_bw = "2TB/s" }))
  t.near(a1 - a2, r1.memory.params * 22e-12, EXACT,
         "a node of one host: the host term P x 44 B over the 4 ranks' host_bw")
  t.near((b1 - b2) / (a1 - a2), 18, EXACT,
         "a tray of the NVL72 rack: its 4 GPUs share 4/72 of the node's host_bw")
end

-- Inference's offloaded layers on a rack follow the same host rule
-- (engine/infer.h infer_host_share -> memory.h mem_host_share): the
-- llama.cpp CPU reads them from its own tray's DRAM, a GB200 NVL72 tray
-- (catalog host_gpus 4 of the node's 72) having 4/72 of the rack's host_bw
-- and host_memory.  llama3.1-405b bf16 on one GB200, llama.cpp, batch 1:
-- decode steps of 1 token run the host layers on the CPU at host_bw, so
-- decode offload_time = B/(host_bw x 4/72) - B/(HBM rate), B = r.offload_bytes
-- (the layers in host memory).  From host_bw 1 to 2 TB/s it falls by
-- B x (1/1e12 - 1/2e12) x 72/4 = B x 9e-12 s (main: B x 0.5e-12, the
-- rack's whole bandwidth).  Bytes: B = 643.92 GB a GPU (engine's); the
-- tray holds 17 TB x 4/72 = 944.44 GB, so one GPU fits and 4 GPUs on the
-- tray (4 x 643.92 = 2575.7 GB) do not (main held them to 17 TB: fit).
do
  local rack = { model = "llama3.1-405b", gpu = "gb200", system = "gb200-nvl72",
                 runtime = "llama.cpp", offload = true, batch = 1 }
  local r1 = gp.infer(with(rack, { host_bw = "1TB/s" }))
  local r2 = gp.infer(with(rack, { host_bw = "2TB/s" }))
  t.ok(r1.fits and r1.offload_bytes > 0, "405B bf16 offloads layers on one GB200")
  t.near(r1.decode.offload_time - r2.decode.offload_time, r1.offload_bytes * 9e-12, EXACT,
         "infer on a NVL72 tray: the CPU reads at 4/72 of the rack's host_bw")
  local r4 = gp.infer(with(rack, { gpus = 4 }))
  t.ok(not r4.fits and r4.why:find("has 944.44 GB", 1, true),
       "infer on a NVL72 tray: 4 GPUs' layers held to 17 TB x 4/72 = 944.44 GB")
  -- The eager runtime copies them from pageable memory, the driver
  -- staging each chunk through host DRAM: B/rate = B/PCIe + 2B/host_bw,
  -- host_bw the tray's 4/72, so 1 -> 2 TB/s takes away
  -- 2B x (1/1e12 - 1/2e12) x 72/4 = B x 18e-12 s (main: B x 1e-12).
  local eager = with(rack, { runtime = "eager" })
  local e1 = gp.infer(with(eager, { host_bw = "1TB/s" }))
  local e2 = gp.infer(with(eager, { host_bw = "2TB/s" }))
  t.near(e1.decode.offload_time - e2.decode.offload_time, e1.offload_bytes * 18e-12, EXACT,
         "infer on a NVL72 tray: pageable copies staged at 4/72 of the rack's host_bw")
  local core = require "gpuplan.core"
  local s, n = core.host_share(72, 4, 8)
  t.near(s, 4 / 72, EXACT, "core.host_share: a tray's 4 of the node's 72")
  t.is(n, 4, "core.host_share: 8 GPUs, 4 on a tray")
  s, n = core.host_share(8, 0, 2)
  t.ok(s == 1 and n == 2, "core.host_share: a server of one host keeps all of it")
  t.ok(not pcall(core.host_share, 0, 4, 8), "core.host_share refuses gpus_per_node 0")
end

-- The GPUs on one host stream their offloaded layers from its DRAM at
-- once, so each has its part of the host's bandwidth (memory.h
-- mem_host_bw_each, training's rule: train.c offload_step divides the
-- host's by its ranks).  llama3.1-70b bf16, llama.cpp, batch 1, on a DGX
-- H100 (one host of 8 GPUs, catalog host_mem_bw 614.4 GB/s): decode steps
-- of 1 token run the host layers on the CPU, offload_time = B/each -
-- B/(HBM rate), B = r.offload_bytes a GPU.  From host_bw 1 to 2 TB/s:
--   1 GPU:  B x (1/1e12 - 1/2e12)     = B x 0.5e-12 s
--   8 GPUs: B x (1/1e12 - 1/2e12) x 8 = B x 4e-12 s (8 replicas' CPUs
--           read one host's DRAM together; main: B x 0.5e-12, each at
--           the whole host's).
-- A replica's pp stages step in turn (infer_step sums them), so they read
-- one at a time: llama3.1-405b on 4 GPUs, pp 2 = 2 replicas, 2 streams
-- (not 4); a step passes both stages, each reading its B: 2 x B x 0.5e-12
-- x 2 = B x 2e-12 s (4 streams would give B x 4e-12; host_memory 16 TB so
-- the layers fit).
-- The eager runtime's pageable staging reads and writes DRAM twice:
-- 2B x 0.5e-12 x 8 = B x 8e-12 s on the 8 GPUs.  Pinned copies (vLLM)
-- read each byte once: a GPU copies at min(PCIe, host_bw x 0.8 / 8);
-- with a user catalog's host_mem_bw of 200 GB/s that is 20 GB/s, below
-- PCIe 5 x16's 16 x 0.985e9 x 4 x 0.8 = 50.43 GB/s, so offload_time =
-- B / 20e9 exactly.  Tolerance EXACT: the same doubles, no fit.
do
  local dgx = { model = "llama3.1-70b", gpu = "h100-sxm", system = "dgx-h100",
                runtime = "llama.cpp", offload = true, batch = 1 }
  local function delta(a)
    local r1 = gp.infer(with(a, { host_bw = "1TB/s" }))
    local r2 = gp.infer(with(a, { host_bw = "2TB/s" }))
    t.ok(r1.fits and r1.offload_bytes > 0, "offloads and fits: " .. tostring(r1.why))
    return (r1.decode.offload_time - r2.decode.offload_time) / r1.offload_bytes
  end
  t.near(delta(dgx), 0.5e-12, EXACT, "llama.cpp, 1 GPU: the host's whole host_bw")
  t.near(delta(with(dgx, { gpus = 8 })), 4e-12, EXACT,
         "llama.cpp, 8 GPUs on a DGX H100: each reads at host_bw / 8")
  t.near(delta({ model = "llama3.1-405b", gpu = "h100-sxm", system = "dgx-h100",
                 runtime = "llama.cpp", offload = true, batch = 1, gpus = 4, pp = 2,
                 host_memory = "16TB" }), 2e-12, EXACT,
         "llama.cpp, 4 GPUs pp 2: 2 stages in turn, 2 streams, host_bw / 2")
  t.near(delta(with(dgx, { gpus = 8, runtime = "eager" })), 8e-12, EXACT,
         "eager, 8 GPUs: pageable staging at host_bw / 8")
  local slow = gp.catalog { dirs = { "catalog" } }
  slow.systems["dgx-h100"].host_mem_bw = 200e9
  local v = gp.infer(with(dgx, { runtime = "vllm", gpus = 8, cat = slow }))
  t.near(v.decode.offload_time, v.offload_bytes / 20e9, EXACT,
         "vllm, 8 GPUs, 200 GB/s host: pinned copies at 200 x 0.8 / 8 = 20 GB/s")
  local v1 = gp.infer(with(dgx, { runtime = "vllm", cat = slow }))
  t.near(v1.decode.offload_time, v1.offload_bytes / (16 * 0.985e9 * 4 * 0.8), EXACT,
         "vllm, 1 GPU: 160 GB/s of DRAM is more than its PCIe 5 x16 link")
  local core = require "gpuplan.core"
  t.near(core.host_bw_each(18.4e12, 72, 4, 8, 1), 18.4e12 * 4 / 72 / 4, EXACT,
         "core.host_bw_each: a tray's 4/72 over its 4 GPUs")
  t.near(core.host_bw_each(100, 8, 0, 8, 2), 25, EXACT,
         "core.host_bw_each: 8 GPUs in stages of 2, 4 streams")
  t.near(core.host_bw_each(100, 8, 0, 8, 16), 100, EXACT,
         "core.host_bw_each: more stages than GPUs, one stream")
  -- Only the stages on one host take turns there (mem_host_streams): a
  -- replica's stages of tp GPUs laid out one after another, a host of 8
  -- holds min(pp, 8 / tp) of them.  llama3.1-405b over two DGX H100s
  -- (usable memory 40 GB so every stage offloads): tp 4 pp 4, two stages
  -- a host, 4 GPUs stream at once: a step's 4 stages x 0.5e-12 x 4 =
  -- 8e-12 (pp alone, 16 / 4 = 4 turns of 8 GPUs, would give 2 streams,
  -- 4e-12); tp 8 pp 2, a stage a host, all 8 stream: 2 x 0.5e-12 x 8 =
  -- 8e-12 (not 4 streams, 4e-12).  Runtime kernels, whose host layers
  -- run on the CPU as llama.cpp's do (gpuplan.infer offload_cpu_max):
  -- llama.cpp itself splits by rows or by layers, not both (tp with pp
  -- refused under it).
  local two = { model = "llama3.1-405b", gpu = "h100-sxm", system = "dgx-h100",
                runtime = "kernels", offload = true, batch = 1, gpus = 16,
                host_memory = "16TB", memory = "40GB" }
  t.near(delta(with(two, { tp = 4, pp = 4 })), 8e-12, EXACT,
         "kernels, tp 4 pp 4 over two hosts of 8: 2 stages a host take turns, 4 streams")
  t.near(delta(with(two, { tp = 8, pp = 2 })), 8e-12, EXACT,
         "kernels, tp 8 pp 2 over two hosts of 8: a stage a host, all 8 stream")
  local bw, n = core.host_bw_each(100, 8, 0, 16, 4, 4)
  t.ok(bw == 25 and n == 4, "core.host_bw_each: 16 GPUs, 4 stages of 4, 2 a host: 4 streams")
  bw, n = core.host_bw_each(100, 8, 0, 16, 2, 8)
  t.ok(bw == 12.5 and n == 8, "core.host_bw_each: 16 GPUs, 2 stages of 8, one a host: 8 streams")
  local okw, ew = pcall(core.host_bw_each, 100, 8, 0, 8, 2, 0)
  t.ok(not okw and ew:find("width", 1, true), "core.host_bw_each refuses width 0, naming it")
  local okb, e = pcall(core.host_bw_each, 100, 8, 0, 8, 0)
  t.ok(not okb and e:find("turns", 1, true), "core.host_bw_each refuses turns 0, naming it")
end

-- Activation offload (Megatron-Core's cpu_offloading_num_layers, TE's
-- cpu_offload.py) keeps the first N layers' saved activations in pinned
-- host tensors until the backward reloads them: N x act_layer x inflight
-- a GPU on its host, in cpu_bytes and so in the host check.  Llama 3.2 1B,
-- seq 8192 on 8 B200 (pp 1: one micro-batch in flight), N = 15:
-- host.activations = 15 x act_layer (0.579 GiB a layer: 8.69 GiB), the
-- node of 8 holds 8 x that = 69.49 GiB, within a DGX B200's 2 TB; a user
-- catalog's 50 GB node (46.57 GiB) is short, the GPU still has room.
-- Before: cpu_bytes 0, no host term, "fits: yes" on the 50 GB node.
do
  local a = { model = "llama3.2-1b", gpu = "b200", gpus = 8, stack = "megatron", seq = 8192,
              activation_offload_layers = 15 }
  local r = gp.memory(a)
  t.near(r.host.activations, 15 * r.act_layer * r.inflight, EXACT,
         "activation offload: N x act_layer x inflight on the host")
  t.near(r.host_need, 8 * r.cpu_bytes, EXACT, "activation offload: a host of 8 GPUs holds 8 x it")
  t.ok(r.cpu_bytes > 0 and r.host_need < r.host_memory and r.fits, "activation offload: fits 2 TB")
  local tiny = gp.catalog { dirs = { "catalog" } }
  tiny.systems["dgx-b200"].host_memory = 50e9
  local s = gp.memory(with(a, { cat = tiny }))
  t.ok(not s.fits and s.short_by < 0, "activation offload on a 50 GB node: the host refuses it")
  local tr = gp.train(with(a, { cat = tiny }))
  t.ok(not tr.fits and tr.why:find("host memory", 1, true), "gp.train: the host is why")
  local line = memory.host_line(r, 8)
  t.ok(line:find("+ activations 8.69 GiB), 69.49 GiB for the 8 GPUs", 1, true),
       "the host line names the activations: " .. line)
end

-- gp.rl: what the frozen models and the critic keep in host memory is held
-- against the host too (engine/rl_mem.c rl_frozen), in every phase, and a
-- model on a group of its own is held by its own hosts (rl_host_fits).
-- By hand, Llama 3 8B (P = u.params), 8 H100s:
--  - ZeRO-3 optimizer offload, GRPO: the actor's P x 18 / 8 a GPU (test 6);
--    PPO adds the critic's, offloaded as the actor's (DeepSpeed-Chat's
--    --offload configures both): exactly twice that (before: once);
--  - the colocated rollout keeps that offload on the host too (before: 0),
--    and with offload_states the update also holds the engine's parked
--    16-bit weights, P x 2 (tp 1), on top of it (before: instead of it);
--  - ref_reward_offload (ZeRO-3): the reference's and the reward model's
--    16-bit partitions, 2 x P x 2 / 8 = P / 2 a GPU (before: 0);
--  - ref_host (Megatron, tp 1): the reference's 16-bit weights, P x 2 a
--    GPU; Llama 3.2 1B x 2 x 8 GPUs = 19.77 GB a node, past a 10 GB node
--    (before: 0, fits).
-- Exact: the engine's own doubles, summed as written.
do
  local zo = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, zero = 3, stack = "deepspeed",
               offload = "optimizer" }
  local g = gp.rl(zo)
  local P = g.memory.update.params
  local one = g.memory.update.cpu_bytes
  t.near(one, P * 18 / 8, EXACT, "rl GRPO offload: the actor's P x 18 / 8")
  t.near(g.memory.rollout.cpu_bytes, one, EXACT, "rl colocated: the rollout keeps the offload on the host")
  local ppo = gp.rl(with(zo, { algo = "ppo" }))
  t.near(ppo.memory.update.cpu_bytes, 2 * one, EXACT, "rl PPO offload: the critic's as much again")
  t.near(ppo.memory.update.host_need, 16 * one, EXACT, "rl PPO offload: a host of 8 holds both")
  local os = gp.rl(with(zo, { offload_states = true }))
  t.near(os.memory.update.cpu_bytes, one + P * 2, EXACT,
         "rl offload_states: the engine's parked weights beside the optimizer offload")
  t.near(os.memory.rollout.cpu_bytes, one + 2 * P * 2 / 8, EXACT,
         "rl offload_states rollout: the offload and the parked actor and reference partitions")
  local rr = gp.rl({ model = "llama3-8b", gpu = "h100-sxm", gpus = 8, zero = 3, stack = "deepspeed",
                     reward_model = true, ref_reward_offload = true })
  t.near(rr.memory.update.cpu_bytes, P / 2, EXACT, "rl ref_reward_offload: 2 x P x 2 / 8 on the host")
  t.near(rr.memory.update.host.weights, P / 2, EXACT, "... counted as weights")
  local small = gp.catalog { dirs = { "catalog" } }
  small.systems["dgx-h100"].host_memory = 10e9
  local rh = { model = "llama3.2-1b", gpu = "h100-sxm", gpus = 8, ref_host = true, stack = "megatron" }
  local ok = gp.rl(rh)
  local p1 = ok.memory.update.params
  t.near(ok.memory.update.cpu_bytes, p1 * 2, EXACT, "rl ref_host: the reference's P x 2 on the host")
  t.ok(ok.fits, "rl ref_host 1B on a DGX H100: fits")
  local no = gp.rl(with(rh, { cat = small }))
  t.is(no.why, string.format("host memory: the offload holds %.1f GiB on a host of 8 GPUs, "
    .. "which has %.1f GiB", 8 * p1 * 2 / GiB, 10e9 / GiB), "rl ref_host on a 10 GB node: refused")
  small.systems["dgx-h100"].host_memory = 100e9
  local cg = gp.rl(with(zo, { algo = "ppo", gpus = 16, critic_gpus = 8, cat = small }))
  local cm = cg.memory.critic
  t.ok(cm.cpu_bytes > 0 and cm.host_ranks == 8 and cm.host_need == 8 * cm.cpu_bytes
       and not cm.fits, "rl critic on its own 8 GPUs: its hosts hold its offload, past 100 GB")
end
