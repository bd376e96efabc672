-- The layout search with Megatron-Core's uneven pipeline ends
-- (first_stage_layers, last_stage_layers; `plan --first-stage-layers`):
-- the job's, fixed; the search keeps the pp they fit (engine/layout.h
-- layout_ends_ok, gp.train's rule: the other pp - 2 stages share the rest
-- of the layers evenly, one each at least), no pp 1 and no interleaving
-- (the split is priced without it), and prices each layout as gp.train
-- does with them.  Run with ./gpuplan run tests/lua/sweep_ends.t.
local t = require "tap"
local gp = require "gpuplan"

local same_as_train = t.same_as_train

-- Llama-3 8B (32 layers) on 8 H100s, first_stage_layers 4: the other
-- 28 layers over pp - 1 stages.  pp must divide 8 and be <= pp_max 4:
-- pp 2 (28 / 1) fits, pp 4 (28 / 3) does not, pp 1 has no stages; so
-- every result is pp 2.
local job = { model = "llama3-8b", seq = 4096, global_batch = 64, first_stage_layers = 4 }
local o = t.with(job, { gpu = "h100-sxm", gpus = 8, pp_max = 4, top = 1000 })
local r = gp.sweep(o)
local pps = {}
for _, c in ipairs(r.results) do pps[c.pp] = true end
local list = {}
for p in pairs(pps) do list[#list + 1] = p end
table.sort(list)
t.is(table.concat(list, " "), "2", "first_stage_layers 4 of 32 on 8 GPUs: pp 2 only")
same_as_train(job, r.results[1], "llama3-8b best")
-- The interleaved schedule is not searched with the ends: vpp stays 1.
local ri = gp.sweep(t.with(o, { vpp_max = 4 }))
local vmax = 1
for _, c in ipairs(ri.results) do vmax = math.max(vmax, c.vpp) end
t.is(vmax, 1, "vpp_max 4 with the ends: no interleaved layout")

-- DeepSeek-V3 on 2048 H800s, as the README prices the report's setup
-- (arXiv:2412.19437 sec. 3.2-3.3: fp8, DualPipe, EP64, ZeRO-1, 15360 x
-- 4096-token batches), with the 3 dense layers on the first stage and 2
-- MoE layers on the last (deepseek-ai/profile-data: "Each chunk contains
-- 4 MoE ... layers"; dualpipe.t): 61 - 5 = 56 over pp - 2 stages; of
-- the even pp up to 16 (DualPipe's rule), 56 / 14 at pp 16, 56 / 6 at
-- pp 8 no, 56 / 2 at pp 4 yes.  The search's best is the published
-- layout, PP16 DualPipe EP64 DP128, and it fits at the default margin
-- (dualpipe.t: 67.2 GiB); without the ends no pp 16 DualPipe layout fits
-- (rank 0 holds 4 layers x 16 micro-batches).
local ds = { model = "deepseek-v3", precision = "fp8", seq = 4096, global_batch = 15360,
             method = "pretrain", stack = "megatron", recipe = "deepseek-fp8",
             recompute_modules = "layernorm,mla_up_proj,moe_act", fp8_activations = true }
local dso = t.with(ds, { gpu = "h800-sxm", gpus = 2048, tp_max = 1, pp_max = 16, ep_max = 64,
                         zero = { 1 }, micro_batch = { 1 }, recompute = { "selective" },
                         schedule = { "dualpipe" }, top = 100, scaling = false })
local ends = t.with(ds, { first_stage_layers = 3, last_stage_layers = 2 })
local rd = gp.sweep(t.with(dso, { first_stage_layers = 3, last_stage_layers = 2 }))
local b = rd.results[1]
t.ok(b ~= nil, "DeepSeek-V3 with the 3/2 ends: a layout fits")
if b then
  t.is(string.format("pp%d %s ep%d dp%d", b.pp, b.schedule, b.ep, b.dp), "pp16 dualpipe ep64 dp128",
       "the best is the published PP16 DualPipe EP64 layout")
  local tr = same_as_train(ends, b, "DeepSeek-V3 best")
  t.ok(tr.memory.fits, "gp.train of it fits at the default margin")
end
local pp16 = false
for _, c in ipairs(gp.sweep(dso).results) do
  if c.pp == 16 then pp16 = true end
end
t.ok(not pp16, "without the ends: no pp 16 DualPipe layout fits")

-- Refusals, naming the options: no pp of the search fits the ends (pp 4
-- is the least that does on 2048 GPUs), or none at all.
local ok, e = pcall(gp.sweep, t.with(dso, { pp_max = 2, first_stage_layers = 3,
                                            last_stage_layers = 2 }))
t.ok(not ok and tostring(e):find("first_stage_layers 3 and last_stage_layers 2 fit no pp up to 2 "
  .. "(pp_max, clamped to the GPUs and layers): the other stages must share the rest of the "
  .. "model's 61 layers evenly; pp 4 fits (pp_max 4)", 1, true) ~= nil,
  "pp_max 2: refused, naming the ends and pp 4: " .. tostring(e))
ok, e = pcall(gp.sweep, t.with(dso, { first_stage_layers = 70 }))
t.ok(not ok and tostring(e):find("first_stage_layers 70 fits no pp that divides the GPU counts",
  1, true) ~= nil, "more than the layers: refused, naming it: " .. tostring(e))

t.done_testing()
