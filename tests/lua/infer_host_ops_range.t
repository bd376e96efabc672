-- gp.infer's host_ops_per_layer has a declared range, 0 to 10000: no
-- decoder layer launches more than about 2,600 framework ops (an MoE
-- block looped expert by expert, transformers' MixtralSparseMoeBlock,
-- about 10 ops an expert over 256 experts).  Above it the ITL ran into
-- hours (1e12 ops a layer: an ITL of 1.5e9 s).
-- Run with ./gpuplan run tests/lua/infer_host_ops_range.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(5)

local function run(ops)
  return gp.infer { model = "llama3-8b", gpu = "h100-sxm", runtime = "vllm", enforce_eager = true,
                    host_op_time = 1e-5, batch = 1, input = 128, output = 128,
                    host_ops_per_layer = ops }
end
-- At the bound the eager step is the host's: (32 layers x 10000 ops +
-- 10 ops outside the layers, EAGER_OUTER_OPS) x 10 us = 3.2001 s, far
-- above an 8B model's ~10 ms GPU step at batch 1 (1e-9 relative: the
-- host's sum when it binds, rounding only).
t.near(run(10000).itl_s, (32 * 10000 + 10) * 1e-5, 1e-9,
       "host_ops_per_layer 10000 (the bound) is accepted: ITL = (32 x 10000 + 10) x 10 us")
t.raises(function() run(10001) end, "host_ops_per_layer must be a number in [0, 10000]",
         "one op above the bound is refused, naming the key", true)
t.raises(function() run(1e12) end, "host_ops_per_layer must be a number in [0, 10000]",
         "1e12 ops a layer is refused, naming the key", true)
t.raises(function() run(-1) end, "host_ops_per_layer must be a number in [0, 10000]",
         "a negative count is refused", true)
-- The engine checks the same range itself (engine/infer.c's
-- INFER_HOST_OPS_MAX), for configurations built without the declaration.
t.ok(run(0).itl_s > 0, "0 ops a layer: the GPU's step alone, accepted")
