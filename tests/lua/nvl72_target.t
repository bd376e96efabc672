-- The --target search on an NVLink domain of several hosts (GB200 NVL72:
-- 18 trays of 4 GPUs, the system's host_gpus) sizes its instances in
-- hosts, as deployments there do (SGLang's GB200 runs: 12 trays, EP48,
-- decoding and 2 prefilling; its GB300 work decodes at DEP8), not in
-- whole 72-GPU domains: the search tried TP72, TP144 and EP72 up, and
-- planned DeepSeek-V3 at 50k output tok/s on 144 GB200s (EP72 pools;
-- the CLI printed 112 as TP8 replicas) where an EP8 instance, given,
-- needs 32.  engine/serve_plan.c candidates.
-- Run with ./gpuplan run tests/lua/nvl72_target.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(6)

local job = { model = "deepseek-v3", gpu = "gb200", target = 50000, input = 4096, output = 1024 }
local p = gp.infer_plan(job)
-- The layout the user could give (EP8 instances with DP attention) is
-- one the search now tries, so the search needs at most its GPUs.
local given = gp.infer_plan(t.with(job, { ep = 8, dp_attention = true }))
t.is(given.gpus, 32, "EP8 with DP attention, given: 32 GB200s")
t.ok(p.gpus <= given.gpus, string.format("the search: %d GPUs, at most the given layout's 32", p.gpus))
t.ok(p.tokens_per_s >= 50000 and p.itl_s <= 0.050, "it meets the target within the 50 ms ITL")
-- Its instances are whole trays of 4 within the rack's 72.
local r = p.result
t.ok(r.decode_gpus % 4 == 0 and r.ep % 4 == 0 and r.ep <= 72,
  string.format("decode instances of whole trays (EP%d)", r.ep))
t.ok(not p.prefill_gpus or p.prefill_gpus % 4 == 0, "prefill GPUs whole trays")

-- An HGX node is one host: its unit stays the 8-GPU node (B200: EP8
-- pools, 32 GPUs, as before).
local b = gp.infer_plan(t.with(job, { gpu = "b200" }))
t.is(b.gpus, 32, "b200 (HGX, one host a node): 32 GPUs, unchanged")
