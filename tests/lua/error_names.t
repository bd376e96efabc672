-- An error names each option the way the user gave it: the Lua function
-- raises it with Lua keys, and the command line shows every option its
-- command takes by its flag (gpuplan.options flags_named), the user's
-- Lua key never ("--base-checkpoint needs response_max" named one option
-- by its flag and the next by its key).  Words that only look like keys
-- are left as they are.
local t = require "tap"
local gp = require "gpuplan"
local options = require "gpuplan.options"

local function named(cmd, msg, want, name) t.is(options.flags_named(cmd, msg), want, name) end

-- A name with an underscore is an identifier: the option wherever it
-- stands free, typed by the user or not.
named("rl", "rl: base_checkpoint needs response_max: the mean is assumed",
  "rl: --base-checkpoint needs --response-max: the mean is assumed",
  "every underscore key, typed or not")
-- Touched by a dot it is a catalog or case field's path, in quotes a
-- value the user gave, after a word character part of another name.
named("rl", "rl: rl.response_max is 'response_max' (num_response_max)",
  "rl: rl.response_max is 'response_max' (num_response_max)",
  "a field path, a quoted value and a longer name are not options")
-- A name the command's command line does not take stays a key: rl takes
-- --response-max, infer does not.
named("infer", "infer: response_max 8", "infer: response_max 8", "another command's option")

-- A one-word name is an option where the message writes it as one.
named("fit", "vpp 2 needs a pipeline (pp > 1; got pp 1)",
  "--vpp 2 needs a pipeline (--pp > 1; got --pp 1)",
  "opening the message, beside its number, in a comparison")
named("rl", "rl: staleness applies to separate pools (colocated = false)",
  "rl: --staleness applies to separate pools (--no-colocated)",
  "after the command's name; a flag's assignment as the user types it")
named("rl", "rl: gae_ops is PPO's (algo = ppo)", "rl: --gae-ops is PPO's (--algo ppo)",
  "a value's assignment becomes the flag and its value")
named("rl", "rl: rollout_gpus = auto needs colocated = false",
  "rl: --rollout-gpus auto needs --no-colocated", "two assignments, a clause each")
-- A list assigned in Lua's form is the flag with its comma-joined values,
-- where the command line takes it (plan's --etp LIST); a command that
-- does not take the option keeps the Lua form.
named("plan", 'tp=1 (give etp = {"tp", 1} to search tp > 1)',
  "tp=1 (give --etp tp,1 to search tp > 1)", "a Lua list's assignment: the flag and its values")
named("infer", 'give etp = {"tp", 1}', 'give etp = {"tp", 1}', "... not where the command lacks it")
-- An equation is not an assignment: its "=" stays, and a one-word name
-- in it stays a word ("dp x batch" is a product, not --batch).
named("rl", "rl: rollout_dp_attention needs rollout_ep = rollout_tp > 1",
  "rl: --rollout-dp-attention needs --rollout-ep = --rollout-tp > 1", "an equation of options")
named("train", "train: global_batch 12 is not a multiple of dp x batch = 8 x 1",
  "train: --global-batch 12 is not a multiple of dp x batch = 8 x 1", "a product keeps its words")
-- A term after an operator is no assignment either: "tp x pp = 3" is
-- a product (it read "tp x --pp 3", the training pipeline, in an error
-- about the rollout engine's).
named("rl", "rl: an engine's tp x pp = 3 does not divide the 8 GPUs",
  "rl: an engine's tp x pp = 3 does not divide the 8 GPUs", "a product's term")
named("rl", "rl: rollout_tp x rollout_pp = 3 does not divide the 8 GPUs",
  "rl: --rollout-tp x --rollout-pp = 3 does not divide the 8 GPUs", "a product of options")
-- Words of the sentence that are one-word option names stay words.
named("infer", "infer: acceptance is the MTP drafts' acceptance: the model has no input",
  "infer: --acceptance is the MTP drafts' acceptance: the model has no input",
  "acceptance, model, input as words")
named("train", "train: the stack partitions by its own rule; memory runs out",
  "train: the stack partitions by its own rule; memory runs out", "stack and memory as words")
-- A declared value beside an enum's name: the option.
named("train", "train: the uneven split replaces the partition rule (partition parameters)",
  "train: the uneven split replaces the partition rule (--partition parameters)",
  "an enum beside one of its declared values")

-- A flag beside true or false is the flag as the user turns it.
named("fit", "train_llm false: method = grpo trains the policy's language model",
  "--no-train-llm: --method grpo trains the policy's language model", "a flag's false: --no-")
-- An assigned value that is also an option's name is still the value.
named("train", "train: host_bw needs it; give offload = optimizer or params+optimizer too",
  "train: --host-bw needs it; give --offload optimizer or params+optimizer too",
  "offload = optimizer, though optimizer is an option too")
named("infer", "infer: offload_layers needs it; give offload = true too",
  "infer: --offload-layers needs it; give --offload too", "infer's offload is a flag")
-- The values listed after "must be" stay values, though micro_batch is
-- also plan's option (its --micro-batch list of sizes): the plan error
-- read "--grad-sync must be --micro-batch or step".
named("plan", "plan: grad_sync must be micro_batch or step (got string 'x')",
  "plan: --grad-sync must be micro_batch or step (got string 'x')",
  "a listed value that is another option's name")
named("plan", "plan: fsdp must be micro_batch, step or micro_batch (got 1)",
  "plan: --fsdp must be micro_batch, step or micro_batch (got 1)", "every value of the list")
-- Only a list: an option named after "must be" in a sentence is the option.
named("plan", "plan: grad_sync must be given with micro_batch 2",
  "plan: --grad-sync must be given with --micro-batch 2", "not a list of values")
-- A chain of equalities is no assignment: its words stay.
named("infer", "infer: ep 8: the experts are split (ep = tp = 4)",
  "infer: --ep 8: the experts are split (ep = tp = 4)", "a chain of '='")

-- A flag is true or false: every flag each Lua function takes refuses
-- another value with the one message, naming the key and what it got
-- (each reader said it its own way: "(got no)", "(got string)").
local bad, flags = {}, 0
for _, cmd in ipairs(options.COMMANDS) do
  for name in pairs(options.keys(cmd)) do
    local d = options.get(name)
    local v = options.view(d, cmd)
    if d.kind == "flag" and v.type == "flag" and not v.own then
      flags = flags + 1
      local _, msg = options.check(name, "yes", cmd)
      if msg ~= name .. " must be true or false (got string 'yes')" then
        bad[#bad + 1] = cmd .. " " .. name .. ": " .. tostring(msg)
      end
    end
  end
end
t.ok(flags > 40, "the flags of five commands checked (" .. flags .. ")")
t.is(#bad, 0, "every flag refuses 'yes' with one message")
for _, b in ipairs(bad) do t.diag(b) end
-- gp.sweep (plan) takes a list of a flag to search both.
t.is(select(2, options.check("tp_overlap", { false, true }, "plan")), nil, "plan: a flag's list")
t.raises(function() gp.sweep { model = "llama3-8b", gpu = "h100-sxm", gpus = 8,
                               tp_overlap = { false, "yes" } } end,
  "sweep: tp_overlap[2] must be true or false (got string 'yes')", "plan: each element", true)
-- Only the flags it searches: another flag's list was taken as on, or
-- reached the engine's binding ("bad argument #4 to
-- 'gpuplan.core.sweep' (train.flash must be a boolean (got table))"),
-- and a table showed its address, which differs every run.
t.raises(function() gp.sweep { model = "llama3-8b", gpu = "h100-sxm", gpus = 8,
                               ckpt_outside_fsdp = { false, true } } end,
  "sweep: ckpt_outside_fsdp must be true or false (got a table)", "plan: a flag it does not search", true)
local okf, ef = pcall(gp.sweep, { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, flash = {} })
t.ok(not okf and tostring(ef):find("sweep: flash must be true or false (got a table)", 1, true)
  and not tostring(ef):find("gpuplan.core", 1, true), "plan: flash's list, not the binding's words")
-- gp.sweep's lists of values, each refused by its key and place (the
-- engine's binding named its field: "sweep.zero: values are 0..3",
-- "sweep.sp[1] must be a boolean").
for _, c in ipairs {
  { { zero = { 1, 5 } }, "sweep: zero[2] must be 0, 1, 2 or 3 (got 5)" },
  { { zero = { "a" } }, "sweep: zero[1] must be 0, 1, 2 or 3 (got string 'a')" },
  { { micro_batch = { 2, "a" } }, "sweep: micro_batch[2] must be a whole number 1..16777216 (got string 'a')" },
  { { sp = { "yes" } }, "sweep: sp[1] must be true or false (got string 'yes')" },
} do
  local o = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8 }
  for k, v in pairs(c[1]) do o[k] = v end
  local ok, e = pcall(gp.sweep, o)
  t.ok(not ok and tostring(e):find(c[2], 1, true) and not tostring(e):find("sweep.", 1, true),
    "gp.sweep: " .. c[2])
  if ok or not tostring(e):find(c[2], 1, true) then t.diag(tostring(e)) end
end
-- A training offload the engine does not know, named by its key (the
-- engine's own check named its field, train.offload).
t.raises(function() gp.train { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, zero = 2,
                               offload = "nvme" } end,
  "offload must be none, optimizer or params+optimizer (got string 'nvme')", "offload's values", true)
t.ok(not select(2, pcall(gp.train, { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, zero = 2,
  offload = "nvme" })):find("train.offload", 1, true), "not the engine's field")

-- From Lua the same error names the keys the script wrote.
local ok, e = pcall(gp.rl, { model = "qwen3-8b", gpu = "h100-sxm", gpus = 8, base_checkpoint = true })
t.ok(not ok and tostring(e):find("rl: base_checkpoint needs response_max: ", 1, true),
  "Lua: the keys, as the script gave them")

t.done_testing()
