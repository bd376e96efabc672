-- bench.lua: how fast a Lua script can drive the engine (make bench).
--
-- The same Llama-2-70B layout grid as bench/sweep_bench.c, evaluated from
-- Lua through the binding (gpuplan.core), so the difference between the
-- two figures is the cost of crossing into C and building result tables.
local gp = require "gpuplan"
local core = gp.core()

local function clock() return os.clock() end

local model = { layers = 80, hidden = 8192, heads = 64, kv_heads = 8, head_dim = 128,
                ffn_hidden = 28672, ffn_gated = true, vocab = 32000 }

local function run(label, fn)
  local n, t0 = 0, clock()
  local dt
  repeat
    n = n + fn()
    dt = clock() - t0
  until dt >= 0.5
  print(string.format("%s: %.3g evaluations/s, %.0f ns each", label, n / dt, 1e9 * dt / n))
end

run("Lua model_params (binding round trip)", function()
  for _ = 1, 100 do core.model_params(model) end
  return 100
end)

if core.memory then
  local grid = {}
  for _, tp in ipairs { 1, 2, 4, 8 } do
    for _, pp in ipairs { 1, 2, 4, 8 } do
      for zero = 0, 3 do
        for _, mb in ipairs { 1, 2, 4 } do
          for _, rc in ipairs { "none", "selective", "full" } do
            grid[#grid + 1] = { method = "pretrain", recipe = "megatron-18", tp = tp, pp = pp,
              dp = 64 // (tp * pp), zero = zero, seq = 4096, micro_batch = mb,
              recompute = rc, flash = true, sp = tp > 1, capacity = 80 * 2 ^ 30, gpus = 64 }
          end
        end
      end
    end
  end
  run("Lua layout sweep (core.memory), Llama-2-70B on 64 GPUs", function()
    local fits, refused, why = 0, 0, nil
    for i = 1, #grid do
      local ok, r = pcall(core.memory, model, grid[i])
      if not ok then refused, why = refused + 1, r elseif r.fits then fits = fits + 1 end
    end
    -- Layouts the kernel refuses (e.g. a split it cannot make) are counted
    -- as evaluations, as in the C sweep; all of them refused is a bug here.
    assert(refused < #grid, "every layout refused: " .. tostring(why))
    return #grid
  end)
end

-- One GRPO step (gp.rl: ~100 decode steps of the rollout on the serving
-- model, a forward and an update through the training step) and the
-- search of the disaggregated split of 16 GPUs.
if core.rl then
  local job = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 16, zero = 3,
                recompute = "full", prompts = 64, group = 8, prompt_len = 512,
                response_len = 2048, response_max = 8192 }
  run("Lua gp.rl, one colocated GRPO step", function()
    for _ = 1, 10 do gp.rl(job) end
    return 10
  end)
  local split = {}
  for k, v in pairs(job) do split[k] = v end
  split.rollout_gpus = "auto"
  run("Lua gp.rl, the split of 16 GPUs searched", function()
    gp.rl(split)
    return 1
  end)
end
