-- Hardening round 78, from Lua: gp.* calls whose bad values were refused
-- without the key the call wrote, or taken unread.  Each check fails on
-- the tree before its fix.
-- Run with ./gpuplan run tests/lua/harden78.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(13)

local function err_of(f, a)
  local ok, e = pcall(f, a)
  return not ok and tostring(e) or nil
end

-- 1. gp.comm's link overrides: up_bw 0 was refused by the engine as
-- "scale-up bandwidth must be 1..1e+18 B/s", up_latency 2.5 as "scale-up
-- latency", no key the call wrote; nic_bw -1 and nic_latency -1 on one
-- node (no NIC crossed) were taken unread.  Each now names its key and the
-- engine's bounds (engine/comm_topo.c link_check: 1 B/s to 1e18 B/s, 0 to
-- 1 s).
for _, kv in ipairs { { "up_bw", 0, "up_bw must be 1 B/s to 1e18 B/s (got 0)" },
    { "up_latency", 2.5, "up_latency must be 0 to 1 s (got 2.5)" },
    { "nic_bw", -1, "nic_bw must be 1 B/s to 1e18 B/s (got -1)" },
    { "nic_latency", -1, "nic_latency must be 0 to 1 s (got -1)" } } do
  local a = { gpu = "h100-sxm", gpus = 8, bytes = 2 ^ 20 }
  a[kv[1]] = kv[2]
  local e = err_of(gp.comm, a)
  t.ok(e and e:find("comm: " .. kv[3], 1, true) ~= nil, kv[1] .. " " .. tostring(kv[2])
    .. " refused by its key: " .. tostring(e))
end
-- In range, the same key prices (500 GB/s a direction, the card's own
-- order of magnitude).
do
  local ok = pcall(gp.comm, { gpu = "h100-sxm", gpus = 8, bytes = 2 ^ 20, up_bw = 5e11 })
  t.ok(ok, "up_bw 5e11 B/s prices")
end

-- 2. gp.memory's system: an unknown id said the script's FILE:LINE twice
-- ("t.lua:2: memory: system: t.lua:2: unknown system ''"), the position
-- of the inner call kept inside the message.
do
  local e = err_of(gp.memory, { model = "llama3-8b", gpu = "h100-sxm", system = "" })
  t.ok(e and e:find("memory: system: unknown system ''", 1, true) ~= nil
    and select(2, e:gsub("harden78%.t:%d+:", "")) == 1,
    "system '': one position, the call's: " .. tostring(e))
end

-- 3. swap_ab is DeepGEMM's fp8 masked grouped GEMM on Hopper (serve.lua
-- setup_kernels: the 32-row token blocks replace the 64-row fp8 tile):
-- with bf16 weights, or on Blackwell, no DeepGEMM tile is priced and the
-- flag changed nothing, in silence (every figure the same).  Refused,
-- naming the option, the weights and the card; fp8 on Hopper prices it.
do
  local base = { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 8, ep = 8, tp = 8 }
  local e = err_of(gp.infer, t.with(base, { swap_ab = true }))
  t.ok(e and e:find("infer: swap_ab is DeepGEMM's fp8 masked grouped GEMM on Hopper", 1, true)
    and e:find("weights bf16 on h100-sxm (hopper)", 1, true) ~= nil,
    "swap_ab with bf16 weights refused: " .. tostring(e))
  e = err_of(gp.infer, t.with(base, { swap_ab = true, weights = "fp8", gpu = "b200" }))
  t.ok(e and e:find("weights fp8 on b200 (blackwell)", 1, true) ~= nil,
    "swap_ab on Blackwell refused: " .. tostring(e))
  -- fp8 on Hopper: the routed experts' decode GEMM on 32-row blocks, a
  -- different (shorter or equal) decode step than the 64-row tile's
  local a = gp.infer(t.with(base, { weights = "fp8" }))
  local b = gp.infer(t.with(base, { weights = "fp8", swap_ab = true }))
  t.ok(b.itl_s ~= nil and b.itl_s <= a.itl_s and b.itl_s ~= a.itl_s,
    string.format("fp8 on Hopper: priced, ITL %.5f -> %.5f s", a.itl_s, b.itl_s or -1))
end

-- 4. A misspelt option whose last word's ending changed
-- ('zero_gather_copy' for zero_gather_copies) was offered 'zero', another
-- option (the fallback's first word), where no edit of two letters or a
-- word's start matched.  Now the option whose words each share a start
-- of all but one letter (and 3 or more) is offered.
do
  local e = err_of(gp.train, { model = "llama3-8b", gpu = "h100-sxm", gpus = 8,
    zero_gather_copy = true })
  t.ok(e and e:find("unknown option 'zero_gather_copy' (did you mean 'zero_gather_copies'?)",
    1, true) ~= nil, "zero_gather_copy: zero_gather_copies offered: " .. tostring(e))
  e = err_of(gp.train, { model = "llama3-8b", gpu = "h100-sxm", gpus = 8,
    legacy_permuted = true })
  t.ok(e and e:find("(did you mean 'legacy_permute'?)", 1, true) ~= nil,
    "legacy_permuted: legacy_permute offered: " .. tostring(e))
end

-- 5. A model field given as the job's option (shared_norm, the catalog's
-- parallel-layer field) was "unknown option" with no word of where it
-- goes; now it is said to be the model's, set in its catalog entry or a
-- model table.
do
  local e = err_of(gp.train, { model = "llama3-8b", gpu = "h100-sxm", gpus = 8,
    shared_norm = true })
  t.ok(e and e:find("unknown option 'shared_norm' (shared_norm is a field of the model, not of "
    .. "the job", 1, true) ~= nil and e:find("model = { ..., shared_norm = ... }", 1, true) ~= nil,
    "shared_norm on gp.train: the model's field: " .. tostring(e))
  e = err_of(gp.infer, { model = "llama3-8b", gpu = "h100-sxm", parallel_attn = true })
  t.ok(e and e:find("parallel_attn is a field of the model", 1, true) ~= nil,
    "parallel_attn on gp.infer: the model's field: " .. tostring(e))
end
