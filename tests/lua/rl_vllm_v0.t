-- An rl case's vLLM V0 engine (validation/SCHEMA.md rl.vllm_v0): under
-- enforce_eager vLLM turns V0's async output processor off, so its
-- LLMEngine._process_model_outputs runs between two decode steps, and
-- the verl profile prices that at vLLM RFC #6913's measured V0 figure
-- (gpuplan.rl.ENGINE_V0_OUTPUT) in place of V1's in-process output
-- processor (gpuplan.rl.ENGINE_FRONTEND), through gp.rl's frontend_host.
-- Run with ./gpuplan run tests/lua/rl_vllm_v0.t.
local t = require "tap"
local gp = require "gpuplan"
local rl = require "gpuplan.rl"
local predict = require "gpuplan.predict.rl"
local V = require "gpuplan.validate"

t.plan(15)

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
