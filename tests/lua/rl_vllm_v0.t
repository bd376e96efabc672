-- An rl case's vLLM V0 engine (validation/SCHEMA.md rl.vllm_v0): under
-- enforce_eager vLLM turns V0's async output processor off, so its
-- LLMEngine._process_model_outputs runs between two decode steps, and
-- the verl profile prices that at vLLM RFC #6913's measured V0 figure
-- (gpuplan.rl.ENGINE_V0_OUTPUT) in place of V1's in-process output
-- processor (gpuplan.rl.ENGINE_FRONTEND), through gp.rl's frontend_host.
-- gp.rl's own options say the same (vllm_version, vllm_v0: one
-- declaration in gpuplan.options, gpuplan.rl.v0_outputs the rule): the
-- case reader hands the case's fields to them.
-- Run with ./gpuplan run tests/lua/rl_vllm_v0.t.
local t = require "tap"
local gp = require "gpuplan"
local rl = require "gpuplan.rl"
local predict = require "gpuplan.predict.rl"
local V = require "gpuplan.validate"

t.plan(35)

-- RFC #6913: _process_model_outputs 0.2 ms at batch 1 and 3.4 ms at
-- batch 32, (3.4 - 0.2) / 31 = 0.103226 ms a sequence a decode step.
-- 1e-6 relative: the figure rounded to seven digits.
t.near(rl.ENGINE_V0_OUTPUT, 0.1032258e-3, 1e-6, "V0's output processing: 0.103 ms a sequence")

-- gp.rl charges frontend_host per sequence per step on the rollout's path
-- (serial with the GPU), so the rollout grows linearly with it: from V1's
-- figure to V0's by (V0 - V1) / V1 times what V1's added to none.  Fixed
-- 256-token responses keep the batch and the steps the same in all three
-- runs; 1e-9 relative: the same sums in another order.
local base = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, zero = 3, recompute = "full",
               prompts = 64, group = 8, response_len = 256, response_max = 256,
               response_dist = "fixed", rollout_eager = true }
local function roll(fh) return t.phase(gp.rl(t.with(base, { frontend_host = fh })), "rollout").seconds end
local r0, r1, rv0 = roll(0), roll(rl.ENGINE_FRONTEND), roll(rl.ENGINE_V0_OUTPUT)
local want = (r1 - r0) * (rl.ENGINE_V0_OUTPUT - rl.ENGINE_FRONTEND) / rl.ENGINE_FRONTEND
t.near((rv0 - r1) / want, 1, 1e-9, "V0's figure adds to the rollout in proportion to V1's")

-- The predictor: the options it hands gp.rl, caught as it makes them.
local cat = gp.catalog()
local orig, seen = rl.rl, nil
rl.rl = function(o) seen = o; return orig(o) end
local grpo, nemo, orl
for _, c in ipairs(V.read("validation/cases.json")) do
  if c.id == "verl-playverl-grpo-qwen2.5-0.5b-h100-8-fsdp-gsm8k" then grpo = c end
  if c.id == "nemo-rl-0.3-grpo-llama3.1-8b-h100-8" then nemo = c end
  if c.id == "openrlhf-paper-ppo-llama2-7b-a800-16" then orl = c end
end
t.ok(grpo and grpo.rl.vllm_v0 == true and grpo.rl.rollout_eager == true,
  "the play-verl GRPO case states its V0 engine under enforce_eager (its log: 'Falling back to V0')")
local p = predict(grpo, cat)
t.is(seen.frontend_host, rl.ENGINE_V0_OUTPUT, "verl + vllm_v0 + eager: V0's output processing")
t.like(table.concat(p.defaults or {}, "; "), "RFC #6913", "the defaults say where the figure comes from", true)
-- Without the field: V1's in-process frontend, as before.
local c1 = t.with(grpo, {})
c1.rl = t.with(grpo.rl, {})
c1.rl.vllm_v0 = nil
predict(c1, cat)
t.is(seen.frontend_host, rl.ENGINE_FRONTEND, "no vllm_v0: V1's in-process frontend")
-- With CUDA graphs V0's async output processor (vLLM 0.6 on) overlaps the
-- next forward: not priced, so the case is refused by gp.rl's vllm_v0
-- (the field maps to that option), naming it.
local c2 = t.with(grpo, {})
c2.rl = t.with(grpo.rl, { rollout_eager = false })
local q, why = predict(c2, cat)
t.ok(q == nil and tostring(why):find("vllm_v0 runs vLLM's V0 engine", 1, true) ~= nil
  and tostring(why):find("give rollout_eager", 1, true) ~= nil,
  "vllm_v0 without rollout_eager is refused, naming the field")
-- Only the verl profile prices it: another framework's case refuses it.
local c3 = t.with(nemo, {})
c3.rl = t.with(nemo.rl, { vllm_v0 = true, rollout_eager = true })
q, why = predict(c3, cat)
t.ok(q == nil and tostring(why):find("rl.vllm_v0", 1, true) ~= nil,
  "vllm_v0 on a NeMo RL case is refused, naming the field")
-- OpenRLHF's engines on vLLM 0.4.2 (rl.vllm_version: its Dockerfile's
-- pin) run V0 before the async output processor of 0.6.0: V0's figure
-- with CUDA graphs on too (the case states no enforce_eager).
t.ok(orl and orl.rl.vllm_version == "0.4.2" and not orl.rl.rollout_eager,
  "the OpenRLHF paper case states its vLLM 0.4.2, no enforce_eager")
predict(orl, cat)
t.is(seen.frontend_host, rl.ENGINE_V0_OUTPUT, "openrlhf + vLLM 0.4.2: V0's output processing")
-- The same on 0.6.0, graphs on: the async output processor's overlap is
-- not priced, so the case is refused by gp.rl's vllm_version, naming it.
local c4 = t.with(orl, {})
c4.rl = t.with(orl.rl, { vllm_version = "0.6.0" })
q, why = predict(c4, cat)
t.ok(q == nil and tostring(why):find("vllm_version 0.6.0 runs vLLM's V0 engine", 1, true) ~= nil,
  "vLLM 0.6.0 with CUDA graphs is refused, naming the field")
-- 0.8.0 on, V1 is vLLM's default: OpenRLHF's profile prices none.
local c5 = t.with(orl, {})
c5.rl = t.with(orl.rl, { vllm_version = "0.8.5" })
predict(c5, cat)
t.is(seen.frontend_host, nil, "vLLM 0.8.5 (V1): no V0 output processing")
-- vllm_v0 names a fall-back from V1: on a V0 release it is refused.
local c6 = t.with(orl, {})
c6.rl = t.with(orl.rl, { vllm_v0 = true })
q, why = predict(c6, cat)
t.ok(q == nil and tostring(why):find("leave vllm_v0 out", 1, true) ~= nil,
  "vllm_v0 beside a V0 release is refused")
rl.rl = orig

-- One path: the options the predictor handed gp.rl for the OpenRLHF case
-- (vllm_version 0.4.2, the profile's frontend_host with them), less that
-- frontend_host, give gp.rl's own default the same figure, so the same
-- step to the last bit; without vllm_version too, none (a slower step
-- without V0's per-sequence work would make the test fail).
local function handed(c)
  local o
  rl.rl = function(x) o = t.copy(x); return orig(x) end
  local pr = predict(c, cat)
  rl.rl = orig
  return o, pr
end
local oo = handed(orl)
t.is(oo.vllm_version, "0.4.2", "the case's rl.vllm_version reaches gp.rl's vllm_version")
local from_case = gp.rl(oo)
local own = t.copy(oo)
own.frontend_host = nil
local from_opt = gp.rl(own)
t.is(from_opt.step_s, from_case.step_s, "OpenRLHF case: gp.rl's vllm_version 0.4.2 gives the case's step")
t.ok(t.said(from_opt, "frontend_host=0.0001032 (vllm_version 0.4.2: vLLM's V0 engine before 0.6.0 "
  .. "has no async output processor (vllm PR #7049)", true), "the defaults line names the release and why")
own.vllm_version = nil
t.ok(gp.rl(own).step_s < from_case.step_s, "without vllm_version: no V0 output processing, a faster step")
-- The same for the play-verl GRPO case (vllm_v0 under rollout_eager).
local og = handed(grpo)
t.is(og.vllm_v0, true, "the case's rl.vllm_v0 reaches gp.rl's vllm_v0")
local g_case = gp.rl(og)
local g_own = t.copy(og)
g_own.frontend_host = nil
t.is(gp.rl(g_own).step_s, g_case.step_s, "play-verl GRPO case: gp.rl's vllm_v0 gives the case's step")

-- gp.rl alone.  Fixed 256-token responses, 64 prompts x 8 on 8 GPUs: 8
-- engines of 64 sequences, rollout.steps decode steps at batch 64, and
-- the prefill schedules each of the 64 requests once (engine/rollout.c
-- roll_prefill: "each of the n requests scheduled once"), each a
-- per-sequence host charge (host.seq) serial with the GPU (no async
-- scheduling).  V0's output processing adds ENGINE_V0_OUTPUT to it:
-- (steps + 1) x 64 x 0.1032258 ms = 257 x 64 x 0.1032258e-3 = 1.69786 s
-- more rollout (dgx-h100: host_op_scale 1).  1e-9 relative: the engine
-- sums the same terms in another order.
local job = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, zero = 3, recompute = "full",
              prompts = 64, group = 8, response_len = 256, response_max = 256,
              response_dist = "fixed" }
local v1 = gp.rl(job)
local old = gp.rl(t.with(job, { vllm_version = "0.4.2" }))
t.is(old.rollout.steps, 256, "256-token responses: 256 decode steps")
t.near(t.phase(old, "rollout").seconds - t.phase(v1, "rollout").seconds,
  (old.rollout.steps + 1) * 64 * rl.ENGINE_V0_OUTPUT, 1e-9,
  "vllm_version 0.4.2: (steps + 1) x 64 x 0.103 ms more rollout")
t.is(gp.rl(t.with(job, { frontend_host = rl.ENGINE_V0_OUTPUT })).step_s, old.step_s,
  "the same step as frontend_host = ENGINE_V0_OUTPUT given")
-- A V0 release from 0.6.0 under enforce_eager, and V1's fall-back to V0
-- under it: the same figure on the eager engine.
local eager = gp.rl(t.with(job, { rollout_eager = true }))
local e063 = gp.rl(t.with(job, { rollout_eager = true, vllm_version = "0.6.3" }))
local efb = gp.rl(t.with(job, { rollout_eager = true, vllm_v0 = true }))
t.near(t.phase(e063, "rollout").seconds - t.phase(eager, "rollout").seconds,
  257 * 64 * rl.ENGINE_V0_OUTPUT, 1e-9, "vllm_version 0.6.3 + rollout_eager: V0's output processing")
t.is(efb.step_s, e063.step_s, "vllm_v0 + rollout_eager: the same step")
t.ok(t.said(efb, "(vllm_v0: vLLM's V0 engine under rollout_eager turns its async output "
  .. "processor off", true), "the defaults line names vllm_v0 and enforce_eager")
-- A V1 release: nothing added, nothing said.
local new = gp.rl(t.with(job, { vllm_version = "0.8.5" }))
t.is(new.step_s, v1.step_s, "vllm_version 0.8.5 (V1): the default step")
-- A given frontend_host wins over the release's.
t.is(gp.rl(t.with(job, { vllm_version = "0.4.2", frontend_host = 0 })).step_s, v1.step_s,
  "frontend_host given: the release's figure is not added")
-- Refusals, naming the argument.
t.raises(function() gp.rl(t.with(job, { vllm_version = "v0.4.2" })) end,
  "rl: vllm_version v0.4.2: not a vLLM release written plain, X.Y or X.Y.Z as 0.4.2 (no tag's v, "
  .. "rc or suffix)", "a tag's v refused, naming vllm_version", true)
t.raises(function() gp.rl(t.with(job, { vllm_version = "0.6.3" })) end,
  "rl: vllm_version 0.6.3 runs vLLM's V0 engine, whose async output processor (vLLM 0.6.0 on)",
  "0.6.3 with CUDA graphs refused (the overlap not priced)", true)
t.raises(function() gp.rl(t.with(job, { vllm_v0 = true })) end,
  "give rollout_eager (enforce_eager turns that processor off)", "vllm_v0 without rollout_eager refused", true)
t.raises(function() gp.rl(t.with(job, { vllm_v0 = true, rollout_eager = true, vllm_version = "0.7.3" })) end,
  "vllm_version 0.7.3 is a V0 release: leave vllm_v0 out", "vllm_v0 beside a V0 release refused", true)
t.raises(function() gp.rl(t.with(job, { vllm_v0 = "yes" })) end,
  "rl: vllm_v0 must be true or false", "vllm_v0 \"yes\" refused", true)
t.raises(function() gp.rl(t.with(job, { vllm_version = "0.4.2", rollout_engine = "hybrid" })) end,
  "rl: vllm_version is vLLM's; the hybrid engine", "vllm_version with the hybrid engine refused", true)

-- The case format: a boolean; "yes" is refused naming the field.
local path = os.tmpname()
local bad = t.shipped_case("verl-playverl-grpo-qwen2.5-0.5b-h100-8-fsdp-gsm8k")
bad.rl.vllm_v0 = "yes"
local f = assert(io.open(path, "w"))
f:write(require("cjson").encode { bad })
f:close()
local ok, err = pcall(V.read, path)
os.remove(path)
t.ok(not ok and tostring(err):find("rl.vllm_v0", 1, true) ~= nil,
  "rl.vllm_v0 \"yes\" is refused by the case schema, naming the field")
-- ... and rl.vllm_version a plain release: "0.4.x" is refused naming it.
bad = t.shipped_case("openrlhf-paper-ppo-llama2-7b-a800-16")
bad.rl.vllm_version = "0.4.x"
f = assert(io.open(path, "w"))
f:write(require("cjson").encode { bad })
f:close()
ok, err = pcall(V.read, path)
os.remove(path)
t.ok(not ok and tostring(err):find("rl.vllm_version", 1, true) ~= nil,
  "rl.vllm_version \"0.4.x\" is refused by the case schema, naming the field")
