-- What NeMo RL's profile (lua/gpuplan/predict/rl.lua) reads from an rl
-- validation case: the vLLM engine's mode (rl.async_engine, the recipe's
-- vllm_cfg.async_engine).  Run with ./gpuplan run tests/lua/rl_nemo_profile.t.
local t = require "tap"
local gp = require "gpuplan"
local rl = require "gpuplan.rl"
local predict = require "gpuplan.predict.rl"

local cat = gp.catalog()

-- The options and the step the predictor hands gp.rl, caught.
local orig, seen, opts = rl.rl, nil, nil
rl.rl = function(o)
  opts = {}
  for k, x in pairs(o) do opts[k] = x end
  seen = orig(o)
  return seen
end

local copy = t.copy

-- Llama 3.1 8B on 8 H100s, 64 prompts x 32 = 2048 samples of a 128-token
-- prompt and a 1000-token mean response, colocated (one engine per GPU:
-- 256 samples each).
local base = {
  id = "nemo-rl-profile-test", kind = "rl",
  model = { name = "Llama 3.1 8B", layers = 32, hidden = 4096, heads = 32, kv_heads = 8,
            head_dim = 128, ffn_hidden = 14336, ffn_gated = true, vocab = 128256,
            tied_embeddings = false },
  hardware = { gpu = "h100-sxm", gpus = 8, gpus_per_node = 8 },
  parallel = { tp = 1, pp = 1, dp = 8 },
  workload = { method = "grpo", precision = "bf16", seq_len = 4096, framework = "nemo-rl" },
  rl = { prompts = 64, group = 32, prompt_len = 128, response_len = 1000,
         train_global_batch = 512, colocated = true, rollout_tp = 1 },
  measured = { metric = "step_time_s", unit = "s", value = 100 },
  source = { id = "github.com/NVIDIA-NeMo/RL (test)", title = "NeMo RL", where = "test" },
}

local p, why = predict(copy(base), cat)
if not p then t.diag(why) end
-- The synchronous engine (grpo_math_1B.yaml's async_engine: false): the
-- busiest engine's 256 samples x 1000 mean response tokens x 7.04 us a
-- scalar copy = 1.80224 s after its decode.
t.is(opts.token_host, 7.04e-6, "colocated, sync engine: the per-token copy charged")
t.near(seen.rollout.post, 256 * 1000 * 7.04e-6, 1e-9, "post = 256 x 1000 x 7.04 us")
-- ... and run in the worker's own process (VLLM_ENABLE_V1_MULTIPROCESSING
-- =0): its frontend's 12.47 us per sequence per decode step.
t.is(opts.frontend_host, rl.ENGINE_FRONTEND, "colocated, sync engine: the in-process frontend")
-- ... which also turns each sampled token's log-probability (logprobs=0)
-- into the request's output between two decode steps.
t.is(opts.logprob_host, rl.ENGINE_LOGPROB, "sync engine: the log-probabilities' host work")
local sync_host = seen.rollout.host
t.ok(p and p.defaults and table.concat(p.defaults, "; "):find("async_engine=false", 1, true),
     "the assumed engine is listed with the defaults")
local sync_s = p and p.value or 0

-- The asynchronous engine with the synchronous one's batch limits stated
-- (rl.max_batch, rl.max_num_tokens: vLLM's LLM class on an H100, 1024
-- and 16384), so that only the engine's host work differs.
local a = copy(base)
a.rl.async_engine = true
a.rl.max_batch = 1024
a.rl.max_num_tokens = 16384
local pa = predict(a, cat)
t.is(opts.token_host, nil, "async_engine true colocated: no per-token copy after the batch")
t.is(opts.frontend_host, nil, "async_engine true: the engine core runs in its own process")
t.is(opts.logprob_host, nil, "async_engine true: the log-probabilities packed beside the GPU")
t.is(opts.async_engine, nil, "the engine's mode is the profile's, not a gp.rl option")
t.is(seen.rollout.post, 0, "nothing after the decode")
-- The frontend's and the log-probabilities' share of the decode: 12.47 +
-- 10.35 us for each sequence in each decode step, about the engine's 256
-- samples x 1000 mean response tokens = 256,000 sequence-steps (5.84 s);
-- the decode integrates the exponential lengths over representatives of
-- their quantiles, hence 2%.
local per_seq = rl.ENGINE_FRONTEND + rl.ENGINE_LOGPROB
local fe = sync_host - seen.rollout.host
t.near(fe / per_seq, 256 * 1000, 0.02, "the frontend and log-probabilities: ~256,000 sequence-steps")
-- Everything else equal, the step is shorter by the copy and that host
-- work (the rollout is on the step's critical path colocated); the
-- prefill schedules each of the 256 requests once more.
t.near(sync_s - (pa and pa.value or 0),
       256 * 1000 * 7.04e-6 + fe + 256 * per_seq, 1e-6,
       "the step shorter by the copy, the frontend and the log-probabilities")

-- Separate pools: NeMo RL's async GRPO requires the async engine.
local d = copy(base)
d.hardware.gpus = 16
d.rl.colocated = false
d.rl.rollout_gpus = 8
d.rl.staleness = 1
local pd = predict(d, cat)
t.is(opts.token_host, nil, "a rollout pool of its own: async engine, no per-token copy")
t.is(opts.frontend_host, nil, "a rollout pool of its own: no in-process frontend")
-- AsyncLLM.from_engine_args (the engine context) leaves vLLM's batch at
-- its scheduler's defaults: 128 sequences and 2048 tokens a step.  Here
-- each of the 8 one-GPU engines holds 2048 / 8 = 256 samples, whose KV
-- fits at once (the synchronous engine's batch, below): the 128 cap runs
-- them 128 at a time.
t.is(opts.max_batch, 128, "the async engine: vLLM's engine-context max_num_seqs, 128")
t.is(opts.max_num_tokens, 2048, "and its max_num_batched_tokens, 2048")
t.is(seen.rollout.batch, 128, "the engine's batch capped at 128 of its 256 samples")
t.ok(pd and table.concat(pd.defaults, "; "):find("max_batch=128 (vLLM's AsyncLLM.from_engine_args",
     1, true), "said with the defaults")
-- the decode's GPU side: less the engine's host work between the steps
local async_roll = seen.rollout.decode - seen.rollout.host
local ds = copy(d)
ds.rl.async_engine = false
predict(ds, cat)
t.is(opts.token_host, 7.04e-6, "stated false on a pool of its own: charged")
t.is(opts.frontend_host, rl.ENGINE_FRONTEND, "stated false: the in-process frontend too")
t.is(opts.max_batch, nil, "the synchronous engine (vllm.LLM): gp.rl's default, the LLM class's")
t.is(seen.rollout.batch, 256, "all 256 samples of an engine at once")
t.ok(async_roll > seen.rollout.decode - seen.rollout.host,
     "128 at a time decodes longer on the GPU than 256 at once")
-- A batch the case states (a recipe's vllm_kwargs max_num_seqs) wins.
local dm = copy(d)
dm.rl.max_batch = 32
predict(dm, cat)
t.is(opts.max_batch, 32, "rl.max_batch stated: the recipe's max_num_seqs")
t.is(opts.max_num_tokens, 2048, "the token budget still the engine context's")
t.is(seen.rollout.batch, 32, "and the engine runs 32 at a time")

-- Every NeMo RL engine runs on vLLM's Ray executor: the profile gives its
-- cross-host round trip (rl.RAY_CGRAPH_XHOST, 1 / 640.64 s); gp.rl charges
-- it only to an engine over more than one host.  Here the engines are one
-- GPU each: nothing charged.
t.is(opts.engine_xhost_step, rl.RAY_CGRAPH_XHOST, "the profile gives the executor's round trip")
t.is(seen.engine_xhost_step, 0, "one-GPU engines within a host: not charged")
local dx = copy(d)
dx.hardware.gpus = 32
dx.rl.rollout_gpus = 16
dx.rl.rollout_tp = 16
predict(dx, cat)
t.near(seen.engine_xhost_step, 1 / 640.64, 1e-15,
       "an engine of TP 16 over two 8-GPU hosts: 1.56 ms a decode step")

-- Up to v0.4.0 a training pool of its own parks its optimizer states
-- around the log-probability forwards each step (prepare_for_lp_inference);
-- v0.5.0 keeps them (offload_optimizer_for_logprob: false).
local d4 = copy(d)
d4.source.version = "0.4.0"
predict(d4, cat)
t.is(opts.logprob_offload, true, "v0.4.0, pools of their own: logprob_offload")
local d5 = copy(d)
d5.source.version = "0.5.0"
predict(d5, cat)
t.is(opts.logprob_offload, nil, "v0.5.0: not")
local c4 = copy(base)
c4.source.version = "0.4.0"
predict(c4, cat)
t.is(opts.logprob_offload, nil, "v0.4.0 colocated: the rollout's offload_states already parks them")

-- From v0.4.0 the colocated refit streams the weights through a CUDA-IPC
-- buffer (NeMo RL PR #1267): a fixed cost a hand-off; v0.3.0 drove its
-- groups through Ray (not priced), and pools of their own broadcast.
t.is(opts.ipc_transfer, rl.NEMO_RL_IPC_TRANSFER, "v0.4.0 colocated: the IPC hand-offs")
t.ok(seen.ipc_transfers > 0, "and gp.rl counts them")
local c5 = copy(base)
c5.source.version = "0.5.0"
predict(c5, cat)
t.is(opts.ipc_transfer, rl.NEMO_RL_IPC_TRANSFER, "v0.5.0 colocated: too")
local cn = copy(base)
cn.source.version = nil
predict(cn, cat)
t.is(opts.ipc_transfer, rl.NEMO_RL_IPC_TRANSFER, "no source.version: the later refit")
local c3 = copy(base)
c3.source.version = "0.3.0"
predict(c3, cat)
t.is(opts.ipc_transfer, nil, "v0.3.0: the Ray-driven refit, not priced by it")
predict(d5, cat)
t.is(opts.ipc_transfer, nil, "pools of their own: the broadcast instead")
t.is(rl.NEMO_RL_IPC_TRANSFER, (35 - 10.0898) / 175,
     "PR #1267's 35 s less 10.0898 s priced otherwise, over its 175 hand-offs")

-- The recipe's logprob_batch_size (rl.logprob_batch): NeMo RL's
-- logprob_mb_tokens = max_total_sequence_length x logprob_batch_size,
-- 4096 x 4 = 16384 tokens a packed log-probability micro-batch; the
-- training bins stay 4096 x train_micro_batch_size 1.
local l = copy(base)
l.rl.logprob_batch = 4
local pl = predict(l, cat)
t.is(opts.logprob_pack_tokens, 16384, "logprob_batch 4: bins of 4096 x 4 tokens")
t.is(opts.pack_tokens, 4096, "the training bins unchanged")
t.is(opts.logprob_batch, nil, "the recipe's field is the profile's, not a gp.rl option")
t.ok(pl and pl.value < sync_s, "fuller bins: the forwards, so the step, shorter")
predict(copy(base), cat)
t.is(opts.logprob_pack_tokens, nil, "not given: the training bins (r0.6.0's base takes "
  .. "train_micro_batch_size)")
-- A case whose forwards are not NeMo RL's packed ones cannot use it.
local vb = copy(l)
vb.source.title = "verl"
vb.workload.framework = "verl"
vb.source.id = "github.com/volcengine/verl (test)"
local pv, whyv = predict(vb, cat)
t.ok(pv == nil and tostring(whyv):find("rl.logprob_batch sizes NeMo RL's packed", 1, true),
     "refused outside NeMo RL's packing: " .. tostring(whyv))

-- Sequence packing off (policy.sequence_packing.enabled false): whole
-- sequences at the batch's padded width, gp.rl's pad; no bins.
local u = copy(base)
u.rl.sequence_packing = false
local pu = predict(u, cat)
t.is(opts.pad, true, "sequence_packing false: padded")
t.is(opts.pack_tokens, nil, "and not packed")
t.ok(pu and pu.value > sync_s, "padded to the limit, the forwards and update are longer")
u.rl.logprob_batch = 1
t.ok(predict(u, cat) ~= nil, "unpacked, logprob_batch 1 = the training micro-batch: priced")
u.rl.logprob_batch = 2
local pu2, whyu = predict(u, cat)
t.ok(pu2 == nil and tostring(whyu):find("rl.logprob_batch", 1, true),
     "unpacked, a logprob_batch other than the training micro-batch is refused")

-- Every NeMo RL case computes its log-probabilities from fp32 logits
-- (DistributedLogprob): the profile sets fp32_logits, and the step then
-- carries its bytes (engine/rl.c rl_logits; values in tests/lua/rl.t).
predict(copy(base), cat)
t.is(opts.fp32_logits, true, "NeMo RL: fp32_logits")
t.ok(seen.logit_update > 0 and seen.logit_forward > 0, "its update and forwards carry them")
local vf = copy(base)
vf.source.title = "verl"
vf.workload.framework = "verl"
vf.source.id = "github.com/volcengine/verl (test)"
opts = nil
predict(vf, cat)
t.ok(opts and opts.fp32_logits == nil, "not verl's: its fused loss")

-- The release the case ran (source.version): v0.3.0's refit broadcasts
-- whole tensors over the pipeline (gather_params), later ones the stages'
-- slices.  The notes are not read for it: a note quoting another tag
-- changes nothing.
local v3 = copy(base)
v3.source.version = "0.3.0"
predict(v3, cat)
t.is(opts.sync_tp_first, true, "source.version 0.3.0: sync_tp_first")
t.is(opts.logit_onehot, true, "0.3.0: the log-probabilities' backward through an int64 one-hot")
t.is(opts.rollout_piecewise, true, "0.3.0 pins vLLM 0.9.0: piecewise CUDA graphs")
local v4 = copy(base)
v4.source.version = "0.4.0"
predict(v4, cat)
t.is(opts.rollout_piecewise, true, "0.4.0 pins vLLM 0.10.0: piecewise CUDA graphs")
t.near(seen.graph_gaps, 32 * rl.PIECEWISE_LAYER, 1e-15, "Llama 3.1 8B: 32 layers x 15 us")
local v4e = copy(base)
v4e.source.version = "0.4.0"
v4e.rl.rollout_eager = true
predict(v4e, cat)
t.is(opts.rollout_piecewise, nil, "an eager engine replays no graphs")
local v5 = copy(base)
v5.source.version = "0.5.0"
v5.notes = "compared with grpo_math_8B_megatron.yaml at tag v0.3.0"
predict(v5, cat)
t.is(opts.sync_tp_first, nil, "source.version 0.5.0: the stages' slices, whatever the notes quote")
t.is(opts.logit_onehot, nil, "0.5.0: the scatter of PR #761")
t.is(opts.rollout_piecewise, nil, "0.5.0 pins vLLM 0.11.2: one graph a decode step")
t.is(opts.async_scheduling, nil, "0.5.0's vLLM 0.11.2: no async scheduling")
-- v0.6.0 pins vLLM 0.17.1: async scheduling by default, on the one-GPU
-- engine's uni executor only; a TP 2 engine runs on the Ray executor,
-- which turns it off.  The engine's host work then hides behind the
-- GPU's: the same step is faster.
local v6 = copy(base)
v6.source.version = "0.6.0"
local p6 = predict(v6, cat)
t.is(opts.async_scheduling, true, "0.6.0, a one-GPU engine: async scheduling")
t.is(seen.async_scheduling, true, "and gp.rl prices it")
t.ok(p6 and p6.value < sync_s, "the step is shorter than the synchronous one")
t.ok(p6 and table.concat(p6.defaults, "; "):find("async_scheduling=true (NeMo RL v0.6",
     1, true), "said with the defaults")
-- v0.6.0's grpo_math_1B.yaml sets megatron_cfg gradient_accumulation_fusion:
-- false (kept in the converted checkpoint's config): the wgrad GEMMs write
-- a 16-bit .grad that the DDP hook adds into the main grad, more bytes a
-- step than the fused accumulation.  v0.3.0 to v0.5.0 leave it to the
-- model config's default, itself false without Apex, which no release
-- installs: the profile sets it false there too, with its own words.
t.is(opts.gradient_accumulation_fusion, false, "0.6.0: gradient_accumulation_fusion false")
t.ok(p6 and table.concat(p6.defaults, "; "):find("gradient_accumulation_fusion=false (NeMo RL "
     .. "v0.6.0", 1, true), "said with the defaults")
local fused = {}
for k, x in pairs(opts) do fused[k] = x end
fused.gradient_accumulation_fusion = true
local unfused_s, fused_s = seen.step_s, orig(fused).step_s
t.ok(unfused_s > fused_s, string.format("unfused accumulation costs time: %.6f > %.6f s",
     unfused_s, fused_s))
local p5g = predict(v5, cat)
t.is(opts.gradient_accumulation_fusion, false, "0.5.0: false, the config's default without Apex")
t.ok(p5g and table.concat(p5g.defaults, "; "):find("gradient_accumulation_fusion=false (NeMo RL "
     .. "v0.3-v0.5: no Apex", 1, true), "said with the defaults, the v0.3-v0.5 reason")
local v4g = copy(v5)
v4g.source.version = "0.4.0"
predict(v4g, cat)
t.is(opts.gradient_accumulation_fusion, false, "0.4.0: false as well")
local v3g = copy(v5)
v3g.source.version = "0.3.0"
predict(v3g, cat)
t.is(opts.gradient_accumulation_fusion, false, "0.3.0 (NeMo 2.0's GPTConfig): false as well")
local v6t = copy(v6)
v6t.rl.rollout_tp = 2
predict(v6t, cat)
t.is(opts.async_scheduling, nil, "0.6.0, a TP 2 engine: the Ray executor, none")
-- vLLM 0.17.1's fused grouped top-k: set for v0.6 cases of an MLA MoE
-- model (DeepSeek-V3 from the catalog), not for Llama 3.1 8B (no MoE),
-- nor for v0.5 (not established there).
t.is(opts.rollout_fused_grouped_topk, nil, "Llama 3.1 8B: no grouped top-k router")
local shipped = {}
for _, c in ipairs(require("gpuplan.validate").read("validation/cases.json")) do
  shipped[c.id] = c
end
local pds6 = predict(shipped["nemo-rl-0.6-grpo-deepseek-v3-gb200-128-onpolicy"], cat)
t.is(opts.rollout_fused_grouped_topk, true, "0.6.0, DeepSeek-V3: the fused grouped top-k")
t.ok(pds6 and table.concat(pds6.defaults, "; "):find("rollout_fused_grouped_topk=true",
     1, true), "said with the defaults")
predict(shipped["nemo-rl-0.5-grpo-deepseek-v3-gb200-128-onpolicy"], cat)
t.is(opts.rollout_fused_grouped_topk, nil, "0.5.0: not set")
predict(shipped["nemo-rl-0.6-grpo-qwen3-235b-gb200-64-onpolicy"], cat)
t.is(opts.rollout_fused_grouped_topk, nil, "0.6.0, Qwen3-235B: a softmax top-k router, not set")
-- vLLM 0.11.1 on: the softmax top-k routing in one kernel (PR #26717),
-- for Qwen3 MoE rows of v0.5 and v0.6, not v0.4's vLLM 0.10.0, not
-- DeepSeek-V3 (grouped) nor a dense model.
t.is(opts.rollout_fused_topk_softmax, true, "0.6.0, Qwen3-235B: the fused topk_softmax")
predict(shipped["nemo-rl-0.5-grpo-qwen3-235b-gb200-64-onpolicy"], cat)
t.is(opts.rollout_fused_topk_softmax, true, "0.5.0, Qwen3-235B: the fused topk_softmax")
predict(shipped["nemo-rl-0.4-grpo-qwen3-235b-h100-256-1off"], cat)
t.is(opts.rollout_fused_topk_softmax, nil, "0.4.0 (vLLM 0.10.0): not set")
predict(shipped["nemo-rl-0.6-grpo-deepseek-v3-gb200-128-onpolicy"], cat)
t.is(opts.rollout_fused_topk_softmax, nil, "DeepSeek-V3 (grouped router): not set")
predict(v6, cat)
t.is(opts.rollout_fused_topk_softmax, nil, "Llama 3.1 8B (dense): not set")
-- grpo_math_1B.yaml's megatron_cfg routes every MoE policy in float64
-- (moe_router_dtype: "fp64", v0.4.0 to v0.6.0, no recipe but the
-- DeepSeek-V3 fp8 one overriding it): the profile's default for a MoE
-- model; a dense model has no router; a case stating fp32 (that fp8
-- recipe, with the fused activation) keeps nothing to price.
predict(shipped["nemo-rl-0.6-grpo-qwen3-235b-gb200-64-onpolicy"], cat)
t.is(opts.moe_router_dtype, "fp64", "Qwen3-235B: the base config's fp64 router")
predict(shipped["nemo-rl-0.5-grpo-deepseek-v3-h100-256-onpolicy"], cat)
t.is(opts.moe_router_dtype, "fp64", "DeepSeek-V3 bf16: the base config's fp64 router")
predict(shipped["nemo-rl-0.6-grpo-deepseek-v3-h100-512-1off-fp8"], cat)
t.is(opts.moe_router_dtype, nil, "the fp8 recipe's stated fp32 beside the fused activation")
predict(v6, cat)
t.is(opts.moe_router_dtype, nil, "Llama 3.1 8B (dense): no router")
-- The fp64 router's DGEMMs are on the update's path: the same case with
-- the router stated in 16 bits (nil: moe_router_dtype absent) trains
-- faster.  Only the sign is asserted: the size is gp.train's
-- router_fp64 (engine/train_layer.c), tested with the training model.
local function update_s(r)
  for _, ph in ipairs(r.phases) do
    if ph.name == "actor_update" then return ph.seconds end
  end
end
local q16 = copy(shipped["nemo-rl-0.5-grpo-qwen3-30b-a3b-h100-32-onpolicy"])
predict(q16, cat)
local upd64 = update_s(seen)
q16.parallel.moe_router_dtype = "fp32"
q16.parallel.bias_activation_fusion = true
predict(q16, cat)
t.is(opts.moe_router_dtype, nil, "stated fp32 with the fused activation: nothing to price")
t.ok(upd64 > update_s(seen), "the fp64 router's update is the slower")
local vn = copy(base)
vn.notes = "examples/configs/grpo_math_8B_megatron.yaml at tag v0.3.0"
predict(vn, cat)
t.is(opts.sync_tp_first, nil, "no source.version: the later refit")
-- An fp8 case's cast scales (workload.fp8_scaling, NeMo RL's fp8_cfg
-- fp8_recipe "blockwise": block) reach gp.rl; absent, gp.rl's default.
local f8 = copy(base)
f8.workload.precision = "fp8"
f8.workload.fp8_scaling = "block"
predict(f8, cat)
t.is(opts.fp8_scaling, "block", "workload.fp8_scaling block reaches gp.rl")
local f8d = copy(base)
f8d.workload.precision = "fp8"
predict(f8d, cat)
t.is(opts.fp8_scaling, nil, "no workload.fp8_scaling: gp.rl's default")

-- The case reader refuses a version that is not a release, naming the
-- case and the field; "0.3" (major.minor) is one.
local function read(ver)
  local c = copy(base)
  c.source.version = ver
  return t.read_case(c)
end
for _, bad in ipairs { "v0.3", "0.3.x", "1", 3 } do
  local okr, e = read(bad)
  t.ok(not okr and e:find("case 'nemo-rl-profile-test': field 'source.version': expected a "
       .. 'release as "0.3.0" (major.minor[.patch]), got ' .. (type(bad) == "string"
       and string.format("%q", bad) or tostring(bad)), 1, true),
       "source.version " .. tostring(bad) .. " refused, named")
end
t.ok((read("0.3")), "source.version 0.3 read")
t.ok((read("0.10.2")), "source.version 0.10.2 read")
-- rl.max_batch and rl.max_num_tokens are counts, refused otherwise with
-- the case and the field named.
for _, f in ipairs { "max_batch", "max_num_tokens" } do
  for _, bad in ipairs { 0, 2.5, "128" } do
    local c = copy(base)
    c.rl[f] = bad
    local okr, e = t.read_case(c)
    t.ok(not okr and e:find("case 'nemo-rl-profile-test': field 'rl." .. f .. "'", 1, true),
         "rl." .. f .. " " .. tostring(bad) .. " refused, named")
  end
end

-- NeMo RL's precision-aware distributed optimizer with Megatron-Core's
-- store_param_remainders: the recipe of 16-bit master remainders, whose
-- master is 2 B a parameter (catalog/recipes.lua).
predict(copy(base), cat)
t.is(opts.recipe, "mixed-16-rem", "NeMo RL trains on the master-remainder recipe")
t.is(require("gpuplan.memory").recipe_record("recipe", "mixed-16-rem", cat).master, 2,
     "its master: 2 B a parameter")
-- Its fp8 recipes (fp8_param: false) keep those states and add Transformer
-- Engine's cached fp8 copy of each bf16 weight: 2 + 1 B of weights, bf16
-- grads 2, remainders 2, fp32 Adam 4 + 4 (catalog fp8-16-rem).
local f8r = copy(base)
f8r.workload.precision = "fp8"
predict(f8r, cat)
t.is(opts.recipe, "fp8-16-rem", "an fp8 NeMo RL case keeps the fp8 weight cache's recipe")
local rec = require("gpuplan.memory").recipe_record("recipe", "fp8-16-rem", cat)
t.is(rec.weights, 3, "fp8-16-rem: 2 B bf16 weight + 1 B cached fp8 cast")
t.is(rec.grads + rec.master + 2 * rec.state, 2 + 2 + 8, "fp8-16-rem: mixed-16-rem's states")

-- NeMo RL's clean-ups outside its prep timers (predict/rl.lua
-- nemo_cleanups), added to PR #1052's step_overhead.  The base case,
-- colocated, no release stated (the later code), with the reference
-- (the profile's ref_model): the reference swap's 2 gc.collect() + 2
-- empty_cache(), the colocated refit's 2 + 2, and one empty_cache() per
-- optimizer step, 2048 samples / 512 = 4: 4 x 0.172 + 8 x 0.080 = 1.328
-- s on 2.6 s: 3.928 s.  Exact but for float rounding (1e-12).
predict(copy(base), cat)
t.near(opts.step_overhead, 2.6 + 4 * 0.172 + 8 * 0.080, 1e-12,
       "colocated: 2.6 s and 4 gc.collect + 8 empty_cache")
-- One step off on pools of their own: 4.0 s, the reference's 2 + 2 and
-- the 4 optimizer steps' empty_cache: 4.0 + 2 x 0.172 + 6 x 0.080 = 4.824.
local sep = copy(base)
sep.hardware.gpus = 16
sep.rl.colocated = false
sep.rl.rollout_gpus = 8
sep.rl.staleness = 1
predict(sep, cat)
t.near(opts.step_overhead, 4.0 + 2 * 0.172 + 6 * 0.080, 1e-12,
       "separate pools: 4.0 s and 2 gc.collect + 6 empty_cache")
-- v0.3.0: the update's empty_cache is not counted (its recipes differ in
-- empty_unused_memory_level): 2.6 + 4 x 0.172 + 4 x 0.080 = 3.608.
local v3 = copy(base)
v3.source.version = "0.3.0"
local p3 = predict(v3, cat)
t.near(opts.step_overhead, 2.6 + 4 * 0.172 + 4 * 0.080, 1e-12,
       "v0.3: the update's empty_cache left out")
t.ok(p3 and table.concat(p3.defaults, "; "):find("and 4 gc.collect() + 4 "
     .. "torch.cuda.empty_cache() a step outside them", 1, true), "said with the defaults")

-- Its fp8 generation (the engine's weights fp8: workload.weight_dtype)
-- casts the synced 16-bit weights itself (fp8.load_weights); a bf16
-- engine is sent what it holds.
local f8 = copy(base)
f8.workload.weight_dtype = "fp8"
opts, seen = nil, nil
local pf8, whyf8 = predict(f8, cat)
if not pf8 then t.diag(whyf8) end
t.is(opts.sync_fp8_cast, true, "fp8 generation: the engine casts the synced weights")
t.is(seen.sync_fp8_cast, true, "and gp.rl prices it")
predict(copy(base), cat)
t.is(opts.sync_fp8_cast, nil, "bf16 generation: no cast")

-- The loss (rl.fuse_loss): by default one sequence at a time
-- (SequencePackingLossWrapper), the profile's 147 host ops a trained
-- sequence -- 2048 samples over 8 DP ranks, 256 x 147 x 24.84 us
-- (GP_EAGER_OP_TIME, an x86 host) = 0.93476 s a step; with
-- sequence_packing.fuse_loss once a packed micro-batch: none.  1e-9:
-- float rounding.
predict(copy(base), cat)
t.near(seen.loss_host, 2048 / 8 * 147 * 24.84e-6, 1e-9, "per-sequence loss: 256 x 147 ops")
local plain = seen.step_s
local fl = copy(base)
fl.rl.fuse_loss = true
predict(fl, cat)
t.ok(opts.loss_ops == 0 and seen.loss_host == 0 and seen.step_s < plain,
     "fuse_loss: no per-sequence loss, a shorter step")

rl.rl = orig
t.done_testing()
