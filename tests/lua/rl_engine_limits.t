-- vLLM's default batch limits (gpuplan.rl.engine_limits) follow the
-- card's memory and name as vLLM's EngineArgs reads them
-- ('device_memory >= 70 * GiB_bytes and "a100" not in device_name'), not
-- the catalog id.  Run with ./gpuplan run tests/lua/rl_engine_limits.t.
local t = require "tap"
local rl = require "gpuplan.rl"

t.plan(5)
local GiB = 2 ^ 30
local function limits(g) return table.concat({ rl.engine_limits(g) }, ",") end
t.is(limits { id = "lab-card", name = "NVIDIA A100-SXM4-80GB", memory = 80 * GiB }, "256,8192",
  "an 80 GiB A100 under the user's own id: the small defaults")
t.is(limits { id = "a100-like", name = "NVIDIA H100 80GB HBM3", memory = 80 * GiB },
  "1024,16384", "an H100 whose id starts with a100: the large ones")
t.is(limits { id = "h100-sxm", name = "NVIDIA H100 SXM5 80GB", memory = "80GiB" }, "1024,16384",
  "memory given as a string is parsed")
t.is(limits { id = "l40s", name = "NVIDIA L40S", memory = 48 * GiB }, "256,8192",
  "under 70 GiB: the small defaults")
local gp = require "gpuplan"
t.is(limits(gp.catalog().gpus["a100-sxm-80gb"]), "256,8192", "the shipped A100 80GB keeps them")
