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
-- An equation is not an assignment: its "=" stays, and a one-word name
-- in it stays a word ("dp x batch" is a product, not --batch).
named("rl", "rl: rollout_dp_attention needs rollout_ep = rollout_tp > 1",
  "rl: --rollout-dp-attention needs --rollout-ep = --rollout-tp > 1", "an equation of options")
named("train", "train: global_batch 12 is not a multiple of dp x batch = 8 x 1",
  "train: --global-batch 12 is not a multiple of dp x batch = 8 x 1", "a product keeps its words")
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

-- From Lua the same error names the keys the script wrote.
local ok, e = pcall(gp.rl, { model = "qwen3-8b", gpu = "h100-sxm", gpus = 8, base_checkpoint = true })
t.ok(not ok and tostring(e):find("rl: base_checkpoint needs response_max: ", 1, true),
  "Lua: the keys, as the script gave them")

t.done_testing()
