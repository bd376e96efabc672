-- The hint after "unknown option '--no-NAME'" (gpuplan.options M.hint,
-- the command line's side): cli.parse takes --no-NAME for every switch,
-- so a --no- key is read as the switch it turns off before the near miss
-- over the whole key, which found the switch itself and offered the form
-- that turns it on, or an option that takes a value.
-- Run with ./gpuplan run tests/lua/no_form_hint.t.
local t = require "tap"
local options = require "gpuplan.options"

t.plan(6)

local function hint(cmd, flag) return options.hint(cmd, flag, "cli") end

-- '--no-flash-attention' wants flash attention off: '--no-flash', where
-- the whole key's nearest name, 'flash', turned it on.
t.is(hint("train", "no-flash-attention"), " (did you mean '--no-flash'?)",
  "a spelt-out switch's --no- form: the switch's --no-")
t.is(hint("train", "no-flsh"), " (did you mean '--no-flash'?)", "a misspelt switch's --no- form")
-- An option of the command that takes a value has no --no- form: said,
-- where '--no-cudnn' was offered '--cudnn'.
t.is(hint("train", "no-cudnn"), " ('--cudnn' takes a value and has no --no- form)",
  "a value option of the command: no --no- form")
t.is(hint("train", "no-gpus"), " ('--gpus' takes a value and has no --no- form)",
  "... --gpus alike")
-- Another command's value option: no switch of this one is offered
-- (b15febf0: --no-top got '--no-sp').
t.is(hint("train", "no-top"), "", "another command's value option: no hint")
-- The walk's own case stays (rl --no-reference-model).
t.is(hint("rl", "no-reference-model"), " (did you mean '--no-ref-model'?)",
  "rl --no-reference-model: --no-ref-model")
