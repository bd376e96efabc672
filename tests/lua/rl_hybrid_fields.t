-- gp.rl's hybrid-engine result fields hybrid_qkv_merge and
-- hybrid_lora_fuse are absent (nil) where nothing is priced, and their
-- declarations (docs/lua.md) say so: a script reading
-- r.hybrid_lora_fuse of a full actor got nil where the doc promised a
-- number of seconds.  Run with ./gpuplan run tests/lua/rl_hybrid_fields.t.
local t = require "tap"
local gp = require "gpuplan"
local results = require "gpuplan.results"

t.plan(6)

local base = { model = "llama2-7b", gpu = "a100-sxm-80gb", gpus = 8, rollout_engine = "hybrid",
               zero = 3, rollout_tp = 2, algo = "ppo" }
local full = gp.rl(t.with(base, {}))
local lora = gp.rl(t.with(base, { method = "lora" }))
local z2 = gp.rl(t.with(base, { zero = 2 }))
t.is(full.hybrid_lora_fuse, nil, "a full actor: no LoRA fuse, absent")
t.ok((lora.hybrid_lora_fuse or 0) > 0, "a LoRA actor: the fuse priced")
t.is(z2.hybrid_qkv_merge, nil, "ZeRO 2: no q/k/v re-fusion, absent")
t.ok((full.hybrid_qkv_merge or 0) > 0, "ZeRO 3: the re-fusion priced")
t.like(results.BY_NAME.hybrid_lora_fuse.help, "absent where none", "hybrid_lora_fuse: its doc says absent")
t.like(results.BY_NAME.hybrid_qkv_merge.help, "absent where none", "hybrid_qkv_merge: its doc says absent")
