-- The README's DeepSeek-V3 paragraph ("Beyond the cases, DeepSeek-V3's own
-- pre-training layout ...") states figures the model computes: the step
-- and memory of the report's layout priced four ways.  They are prose, not
-- an example tests/cli/readme.t replays, so this test recomputes each one
-- and checks the paragraph says it as the README prints it (one decimal
-- for seconds, GiB and percentages; whole GiB where the README rounds).
-- A model change that moves one fails here until the paragraph is edited.
-- (The paragraph had said "20.1 s, 1.3% slower than published" where the
-- model prices 20.15 s against 19.91 s: 1.2%.)
local t = require "tap"
local gp = require "gpuplan"

local f = assert(io.open(arg and arg[1] or "README.md", "rb"))
local readme = f:read("a")
f:close()
local para = readme:match("\nBeyond the cases, DeepSeek%-V3's own.-\n\n")
t.ok(para ~= nil, "the README has the DeepSeek-V3 paragraph")
para = (para or ""):gsub("%s+", " ")

local function says(text, what)
  if not t.ok(para:find(text, 1, true) ~= nil, what .. ": the README says '" .. text .. "'") then
    t.diag("the paragraph: " .. para)
  end
end

-- The published rate: 2.664M H800 GPU-hours for 14.8T tokens (arXiv
-- 2412.19437, sec. 1 and 3.2), 14.8e12 / (2.664e6 x 3600) = 1543.2
-- tokens/s a GPU; a step of 15360 x 4096 tokens over 2048 GPUs at that
-- rate is 15360 x 4096 / 2048 / 1543.2 = 19.91 s.
local per_gpu = 14.8e12 / (2.664e6 * 3600)
local published = 15360 * 4096 / 2048 / per_gpu
says(string.format("%.0f tokens/s per GPU, a %.1f s step", per_gpu, published),
  "the published rate and step")

local GiB = 2 ^ 30
local ds = { model = "deepseek-v3", gpu = "h800-sxm", gpus = 2048, tp = 1, pp = 16, ep = 64,
             zero = 1, precision = "fp8", seq = 4096, global_batch = 15360, stack = "megatron",
             recipe = "deepseek-fp8", fp8_activations = true, schedule = "dualpipe",
             mtp_layers = 1 }
local modules = "layernorm,mla_up_proj,moe_act"

-- As the report describes it, on an even layer split.
local even = gp.train(t.with(ds, { recompute_modules = modules }))
says(string.format("the step is %.1f s, %.1f%% slower", even.step_s,
  (even.step_s / published - 1) * 100), "even split: the step")
says(string.format("to %.0f GiB a GPU of the card's %.0f (%.1f GiB past the default 10%% safety margin",
  even.memory.total / GiB, even.memory.capacity / GiB, even.memory.short_by / GiB),
  "even split: the memory")
-- Without the recomputed modules.
local bare = gp.train(ds)
says(string.format("memory falls from %.0f GiB (without the recomputed modules)",
  bare.memory.total / GiB), "without --recompute-modules")
-- The router weights at the combine.
local combine = gp.train(t.with(ds, { recompute_modules = modules, moe_probs = "combine" }))
says(string.format("the job needs %.0f GiB", combine.memory.total / GiB), "--moe-probs combine")
-- The 3 dense layers first, 2 MoE layers last.
local ends = gp.train(t.with(ds, { recompute_modules = modules, first_stage_layers = 3,
                                   last_stage_layers = 2 }))
says(string.format("the step is %.1f s, %.1f%% slower than published, and the job fits at %.0f GiB",
  ends.step_s, (ends.step_s / published - 1) * 100, ends.memory.total / GiB), "3/2 ends")
t.ok(ends.fits and not even.fits, "the 3/2 ends fit where the even split does not")
t.done_testing()
