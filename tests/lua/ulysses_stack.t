-- Where the ulysses option runs: one rule (gpuplan.memory
-- ulysses_refusal) for gp.train, gp.memory (fit), gp.rl and the layout
-- search (gp.sweep, plan --ulysses-max).
--   stack megatron: Megatron-Core's Ulysses is its CP with Transformer
--   Engine's all-to-all exchange (cp_comm_type "a2a": "Like DeepSpeed
--   Ulysses, scatter attention heads across the CP group"), which repeats
--   no kv heads and splits 2 cp chunks a sequence: not verl's exchange,
--   which the engine prices, and no cp_rotate type holds it -- refused
--   (usage), and not searched.
--   stack hf: verl's FSDP workers' device mesh is (dp, sp) over every
--   rank ("mesh_shape=(dp, self.ulysses_sequence_parallel_size)"): no
--   pipeline and no TP -- ulysses beside pp > 1 or tp > 1 refused, and
--   searched at pp 1 and tp 1 only.
--   stack deepspeed: Megatron-DeepSpeed's ds_sequence_parallel_size runs
--   beside TP (its mpu's groups are tp x pp x sp x dp), but its pipeline
--   model's grid (DeepSpeed's PipeModelDataParallelTopology: pipe x data x
--   model) has no sequence axis and fails PipelineParallelGrid's "Invalid
--   Grid" assert (the axes' product is gpus / ulysses, not the world) --
--   ulysses beside pp > 1 refused, searched at pp 1 only; tp > 1 priced.
-- Run with ./gpuplan run tests/lua/ulysses_stack.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(22)

local job = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, ulysses = 2, seq = 8192,
              global_batch = 8 }

-- stack megatron: refused, naming the option, the stack and the CP the
-- user can give instead; a usage error (exit 2 on the command line)
local ok, e = pcall(gp.train, t.with(job, { stack = "megatron" }))
t.ok(not ok and tostring(e):find("ulysses 2 with stack = megatron: Megatron%-Core's "
  .. "Ulysses is its context parallelism with Transformer Engine's all%-to%-all exchange") ~= nil
  and tostring(e):find("give cp = 2 (the p2p ring)", 1, true) ~= nil,
  "gp.train: ulysses on stack megatron refused, cp = 2 offered")
t.ok(not ok and require("gpuplan.args").is_usage(e), "... a usage error")
-- pretrain's default stack is megatron: the same refusal
t.raises(function() gp.train(t.with(job, { method = "pretrain" })) end,
  "ulysses 2 with stack = megatron", "method pretrain (stack megatron by default): refused", true)
t.raises(function() gp.memory { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, ulysses = 2,
    stack = "megatron", method = "full" } end,
  "ulysses 2 with stack = megatron", "gp.memory (fit): the same rule", true)
-- the CP ring the message offers is priced
t.ok(gp.train(t.with(job, { stack = "megatron", ulysses = 1, cp = 2 })).step_s > 0,
  "cp = 2 on stack megatron: priced")

-- stack hf with a pipeline: refused, naming both options
t.raises(function() gp.train(t.with(job, { stack = "hf", pp = 2 })) end,
  "ulysses 2 with pp = 2 and stack = hf: verl's Ulysses runs on its FSDP workers",
  "stack hf: ulysses beside pp 2 refused", true)
t.raises(function() gp.rl { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, ulysses = 2,
    pp = 2, prompts = 8, response_len = 1024 } end,
  "ulysses 2 with pp = 2 and stack = hf", "gp.rl (stack hf by default): the same rule", true)
-- stack hf with TP: refused, naming both options (a usage error)
ok, e = pcall(gp.train, t.with(job, { stack = "hf", tp = 2 }))
t.ok(not ok and tostring(e):find("ulysses 2 with tp = 2 and stack = hf: verl's Ulysses runs on "
  .. "its FSDP workers, whose device mesh is data x sequence parallel (dp = gpus / ulysses), "
  .. "with no tensor parallelism; give tp = 1 or ulysses = 1", 1, true) ~= nil,
  "stack hf: ulysses beside tp 2 refused")
t.ok(not ok and require("gpuplan.args").is_usage(e), "... a usage error")
-- stack deepspeed with a pipeline: refused, naming both options
ok, e = pcall(gp.train, t.with(job, { stack = "deepspeed", pp = 2 }))
t.ok(not ok and tostring(e):find("ulysses 2 with pp = 2 and stack = deepspeed: DeepSpeed's "
  .. "pipeline engine lays its ranks out as pipe x data x model with no sequence axis", 1, true)
  ~= nil and tostring(e):find("give pp = 1 or ulysses = 1", 1, true) ~= nil,
  "stack deepspeed: ulysses beside pp 2 refused")
t.ok(not ok and require("gpuplan.args").is_usage(e), "... a usage error")
-- pp 1 on hf, and the deepspeed stack at pp 1 with or without TP, are priced
t.ok(gp.train(t.with(job, { stack = "hf" })).step_s > 0, "stack hf, pp 1: priced")
t.ok(gp.train(t.with(job, { stack = "deepspeed" })).step_s > 0,
  "stack deepspeed, pp 1: priced")
t.ok(gp.train(t.with(job, { stack = "deepspeed", tp = 2 })).step_s > 0,
  "stack deepspeed, tp 2: priced (Megatron-DeepSpeed's groups hold tp beside sp)")

-- The search: on stack megatron no Ulysses group is ranked, and the
-- defaults say why; on stack hf Ulysses groups are ranked, none beside a
-- pipeline, while pipelines without one are.
local sj = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, seq = 8192, ulysses_max = 4,
             pp_max = 4, top = 1000 }
local function count(r, f)
  local n = 0
  for _, c in ipairs(r.results) do if f(c) then n = n + 1 end end
  return n
end
local rm = gp.sweep(t.with(sj, { stack = "megatron" }))
t.is(count(rm, function(c) return c.ulysses > 1 end), 0, "stack megatron: no Ulysses layout ranked")
local said = table.concat(rm.defaults or {}, "\n")
t.ok(said:find("ulysses_max 4 not searched: Megatron-Core's Ulysses is Transformer Engine's "
  .. "all-to-all context parallelism", 1, true) ~= nil, "... the defaults say why")
t.ok(said:find("train refuses on stack = megatron)", 1, true) ~= nil,
  "... naming the stack by its Lua key (plan's line: --stack megatron)")
local rh = gp.sweep(t.with(sj, { stack = "hf" }))
t.ok(count(rh, function(c) return c.ulysses > 1 end) > 0, "stack hf: Ulysses layouts ranked")
t.is(count(rh, function(c) return c.ulysses > 1 and c.pp > 1 end), 0,
  "stack hf: none beside pipeline stages")
t.is(count(rh, function(c) return c.ulysses > 1 and c.tp > 1 end), 0,
  "stack hf: none beside TP")
local rd = gp.sweep(t.with(sj, { stack = "deepspeed" }))
t.ok(count(rd, function(c) return c.ulysses > 1 and c.tp > 1 end) > 0
  and count(rd, function(c) return c.ulysses > 1 and c.pp > 1 end) == 0,
  "stack deepspeed: Ulysses beside TP ranked, none beside pipeline stages")
t.ok(count(rh, function(c) return c.pp > 1 end) > 0, "stack hf: pipelines still ranked")
