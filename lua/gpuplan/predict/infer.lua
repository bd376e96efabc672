-- Predict an `infer` validation case (validation/SCHEMA.md) with
-- gpuplan.infer: output_tokens_per_s (whole system, steady state),
-- decode_tokens_per_s (one stream: 1 / ITL), itl_ms, ttft_ms; MoE serving
-- cases (EP, DP attention, one pool, MTP: gpuplan.serve)
-- output_tokens_per_s, itl_ms, ttft_ms (colocated), and
-- output_tokens_per_s_per_gpu (the decode pool) and
-- input_tokens_per_s_per_gpu (the prefill pool).
--
-- What the case does not state is a documented default, listed in
-- `defaults`:
--   kv dtype bf16 (the engines' default unless KV quantisation is enabled;
--   a runtime profile below may say otherwise, e.g. TensorRT-LLM's);
--   input 128 / output 256 tokens when not given;
--   runtime from the framework the case states (runtime_of below); the engine limits of gpuplan.infer (max_num_tokens 8192,
--   vLLM's for the card under runtime vllm,
--   max_batch 2048, KV reserved for input + output per sequence).

local infer = require "gpuplan.infer"
local case_ = require "gpuplan.predict.case"
local version = require "gpuplan.version"
local v, model_of = case_.v, case_.model

-- The runtime that served the case: its workload.framework (SCHEMA.md), one
-- of gp.infer's runtimes -- litgpt (eager with the ops of LitGPT's own
-- block), eager-pytorch (Hugging Face transformers' generate, Python
-- eager), autoawq (AutoAWQ's fused modules in its Python loop, eager),
-- nim-http (NIM measured over HTTP), trtllm, vllm, sglang, gpt-fast
-- (gpt-fast's loop and its weight-only kernels, gpuplan.infer's wo_stream;
-- torchao's benchmark script runs it), llama.cpp (ggml's kernels, offloaded
-- layers computed on the CPU), exllamav2 (CUDA-graph kernels, its own
-- memory) -- each a general rule on the tool, never on a case id.  A case
-- that states none is priced as a CUDA-graph serving engine.
-- A case's source.version as gpuplan.version reads it (every release rule
-- below), nil where it states none.  The case reader takes "X.Y" or
-- "X.Y.Z" only (gpuplan.version.plain: no tag's "v", no rc) and refuses
-- any other source.version naming its field and line, so a "v" or a
-- candidate never reaches these rules.
local function release(ver)
  return ver ~= nil and version.parse(tostring(ver)) or nil
end

-- Whether a case ran before a runtime's change (vLLM's, SGLang's release
-- rules): its source.version before release ref ("0.4.6"), else its
-- source.date before day; nil where the case states neither.
local function release_before(ver, date, ref, day)
  if ver then
    return version.before(release(ver), ref) == true
  elseif date then
    return tostring(date) < day
  end
end

-- A V1 release before 0.14.0 ("Async scheduling is now enabled by
-- default", its release notes) schedules between the GPU's steps: the
-- case states its release (0.8.0, V1's first default, to 0.13.x) and does
-- not state chunked_prefill false (V0: "In vLLM V1, chunked prefill is
-- always enabled by default", vLLM docs).  gp.infer's async_scheduling =
-- false, on one model's replicas and the MoE serving model alike.
local function v1_sync(case)
  local src, wl = case and case.source or {}, case and case.workload or {}
  local r = release(v(src.version))
  return r ~= nil and not version.before(r, "0.8.0") and version.before(r, "0.14.0")
    and v(wl.chunked_prefill) ~= false
end

local RUNTIMES = { "autoawq", "eager-pytorch", "exllamav2", "gpt-fast", "litgpt", "llama.cpp",
                   "nim-http", "sglang", "trtllm", "vllm" }
local function runtime_of(case)
  local rt = case_.framework(case)
  if rt then return rt, "runtime=" .. rt .. " (workload.framework)" end
  return "graphs", "runtime=graphs (serving engine assumed)"
end

-- trtllm-bench's own batch limits when the benchmark does not give them
-- (tensorrt_llm/bench/build/tuning.py calc_engine_setting and
-- finetune_setting, called by get_benchmark_engine_settings with its
-- kv_cache_gpu_mem_fraction default 0.95): requests of isl + osl tokens
-- that the KV cache of (GPU memory - engine) x 0.95 holds, at least one KV
-- head per TP rank, capped at 4096 / pp; max_batch_size rounded up to 32
-- (at least 64) below 256, to 128 below 1024, else to 256; max_num_tokens
-- = batch x (1 + isl / osl), at most 32768, rounded up to 256 (at least
-- 2048) below 4096, to 512 below 8192, else to 1024.  Memory in GiB as NVML
-- reports it (gpuplan.memory.capacity: the usable figure, within 0.5%).
local function trtllm_bench_limits(model, g, tp, pp, isl, osl, wbytes, kvbytes)
  local gp = require "gpuplan"
  local GiB = 2 ^ 30
  local kv_heads = math.max(tp, model.kv_heads or model.heads)
  local head = model.head_dim or model.hidden / model.heads
  local per_token = 2 * model.layers * kv_heads * head * kvbytes / GiB
  local engine = gp.params(model).total * wbytes / GiB
  local avail = require("gpuplan.memory").capacity(g) / GiB * tp * pp - engine
  local reqs = avail * 0.95 / (per_token * (isl + osl))
  if not (reqs >= 1) then return nil end
  local bs = math.min(reqs, 4096) / pp
  local tok = math.min(bs * (1 + isl / osl), 32768)
  local max_bs
  if bs < 256 then max_bs = math.max(64, 32 * math.ceil(bs / 32))
  elseif bs < 1024 then max_bs = 128 * math.ceil(bs / 128)
  else max_bs = 256 * math.ceil(bs / 256) end
  local max_tok
  if tok < 4096 then max_tok = math.max(2048, 256 * math.ceil(tok / 256))
  elseif tok < 8192 then max_tok = 512 * math.ceil(tok / 512)
  else max_tok = 1024 * math.ceil(tok / 1024) end
  return math.tointeger(max_bs), math.tointeger(max_tok)
end

-- gp.infer's note on a per-query-head decode attention kernel (d:
-- "xqa=false: the kernel, the reads", or "paged_decode: ...") joined to
-- the runtime profile's reason for it ("xqa=false (release)",
-- "paged_decode (release)") as one entry, where there are both: true when
-- joined.  Two entries each named the kernel, the second the first's
-- mechanism again.
local function join_qhead(defaults, d)
  for _, key in ipairs { "xqa=false", "paged_decode" } do
    local rest = d:sub(1, #key + 2) == key .. ": " and d:sub(#key + 3)
    if rest then
      for i, e in ipairs(defaults) do
        if e:sub(1, #key + 2) == key .. " (" then
          defaults[i] = e .. ": " .. rest
          return true
        end
      end
      return false
    end
  end
  return false
end

-- The case's card as the runtime profiles read it (its catalog entry,
-- or the entry the case states inline): one place for both callers.
local function case_gpu(hw, cat)
  return type(hw.gpu) == "table" and hw.gpu
    or (cat or require("gpuplan").catalog()):get("gpus", hw.gpu)
end

-- Runtime profiles: what a runtime does where the case is silent, each
-- setting read from the runtime's own code or documentation.  A value the
-- case states always wins; every setting used is listed in the defaults.
-- Keyed on the runtime the case names (runtime_of), never on a case id.
local PROFILES = {
  -- SGLang's release rules.  DeepSeek's grouped-top-k routing runs in one
  -- kernel from 0.4.6 (sglang PR #5371, merged 2025-04-14, after v0.4.5 of
  -- 2025-04-07: gpuplan.infer M.fused_grouped_topk, on by default for
  -- runtime sglang); a case of 0.4.5 or before, or of no release dated
  -- before the PR, ran the torch.compile'd native path: fused_grouped_topk
  -- = false.  A release written 0.4.5 may be a post release with the PR or
  -- without: taken as without.  An MLA MoE model's (DeepSeek's grouped
  -- top-k), on one model's replicas and the MoE serving model alike.
  sglang = function(a, model, g, defaults, case)
    local src = case and case.source or {}
    local ver, date = v(src.version), v(src.date)
    local before = release_before(ver, date, "0.4.6", "2025-04-14")
    if before and a.fused_grouped_topk == nil and type(model) == "table"
        and model.mla ~= nil and model.moe ~= nil then
      a.fused_grouped_topk = false
      defaults[#defaults + 1] = "fused_grouped_topk=false (SGLang " .. tostring(ver or date)
        .. ": DeepSeek's grouped top-k routing as the native path's 9 kernels a layer; one "
        .. "kernel, moe_fused_gate, from sglang PR #5371, in 0.4.6)"
    end
    -- The dense block-fp8 linears on SGLang's Triton GEMM until DeepGEMM
    -- came on by default (sglang PR #5628, 2025-04-22, in 0.4.6:
    -- gpuplan.infer M.block_fp8_triton), on the MoE serving model, on
    -- Hopper: the fused MoE's multiple it is held to is measured there
    -- only (M.moe_fp8_bf16_x), and gp.infer refuses the flag elsewhere.
    if release_before(ver, date, "0.4.6", "2025-04-22") and a.block_fp8_triton == nil
        and a.weights == "fp8" and type(model) == "table" and type(model.moe) == "table"
        and (a.dp_attention or (a.ep or 1) > 1)
        and require("gpuplan.infer").moe_fp8_bf16_x.sglang[g and g.arch or ""] then
      a.block_fp8_triton = true
      defaults[#defaults + 1] = "block_fp8_triton (SGLang " .. tostring(ver or date)
        .. ": the dense block-fp8 linears on its Triton w8a8_block_fp8_matmul, at the fused "
        .. "MoE's multiple of the bf16 rate; DeepGEMM by default from sglang PR #5628, in 0.4.6)"
    end
  end,
  -- TensorRT-LLM's max-throughput benchmark (trtllm-bench throughput, the
  -- perf-overview workflow).
  trtllm = function(a, model, g, defaults, case)
    local fp8 = a.weights == "fp8" or a.weights == "fp4"
    -- trtllm-bench: "If the quantization is NVFP4 or FP8, force the KV cache
    -- dtype to FP8" (bench/build/build.py) -- on the `trtllm-bench build`
    -- engine path.  A `--backend pytorch` run keeps kv_cache_config's
    -- dtype "auto" (its _KV_CACHE_MAP fallback to fp8 applies only to a
    -- dtype of None, bench/benchmark/utils/general.py get_settings), and
    -- "auto" takes the checkpoint's kv_cache_quant_algo: FP8 where
    -- ModelOpt's export wrote it (hf_ptq.py --kv_cache_qformat default
    -- fp8).  nvidia/Llama-3.1-405B-Instruct-FP8's hf_quant_config.json
    -- reads "kv_cache_quant_algo": null, yet its perf-overview throughput
    -- needs the FP8 cache's capacity (docs/validation.md, the 1.0
    -- perf-overview rows' KV-cache dtype): FP8 stays the default, a
    -- case's kv_dtype over it.
    if a.kv == nil and fp8 then
      a.kv = "fp8"
      defaults[#defaults + 1] = "kv=fp8 (an FP8 KV cache for FP8/NVFP4 models: trtllm-bench's engine build forces it, "
        .. "ModelOpt's export writes it)"
    end
    -- SchedulerConfig.capacity_scheduler_policy defaults to
    -- GUARANTEED_NO_EVICT: a request starts only when the KV blocks for
    -- its prompt and its whole output are free.  gp.infer's setup applies
    -- it (gpuplan.infer's M.kv_reserve, the one place the rule lives, read
    -- by one model's replicas and the MoE serving model alike) and says it
    -- on the defaults line; a case's kv_policy wins there, not written
    -- twice here.
    -- (A static batch, workload.batching, holds the whole length in its
    -- contiguous cache whatever the scheduler: gp.infer says it.)
    local static = a.batching == "static"
    -- In-flight batching: "sequences in the context phase can be processed
    -- together with sequences in the generation phase" (docs, Paged
    -- Attention, IFB, and Request Scheduling), max_num_tokens counting both:
    -- a step that carries prompt tokens is one step of them and the
    -- decodes (gpuplan.infer's chunked_prefill; infer_run.c mixed_time).
    -- (gpuplan.infer's runtime table M.mixes says it for trtllm.)
    -- KvCacheConfig.free_gpu_memory_fraction: the KV pool is 0.90 of the
    -- memory free once the model is loaded (perf-overview: "the default
    -- setting of 0.90"; some rows ran 0.95, the page does not say which):
    -- gpuplan.infer's rule for runtime trtllm (M.runtime_memory, its
    -- source llm_args.py), read from there, not written twice.
    -- A fraction the case states (workload.kv_free_fraction: MLPerf's
    -- kvcache_free_gpu_mem_frac) is the run's own and wins.
    -- A static batch (gptSession, workload.batching) sizes its own
    -- contiguous cache (gpuplan.infer's M.static_memory says it).
    if a.kv_free_fraction == nil and not static then
      a.kv_free_fraction = require("gpuplan.infer").runtime_memory.trtllm.kv_free_fraction
      defaults[#defaults + 1] = string.format(
        "kv_free_fraction=%.2f (kv_cache_free_gpu_mem_fraction default)", a.kv_free_fraction)
    end
    -- Batch limits: trtllm-bench's heuristic for the tuned formats (FP8,
    -- NVFP4, unquantised: TUNED_QUANTS), else TensorRT-LLM's defaults.
    -- Only the one-model engine reads max_num_tokens (the MoE serving
    -- model refuses it, gpuplan.serve): the profiles run only for the
    -- cases that is_serve below leaves to gp.infer without the serving
    -- options; the serving cases go to serve_case, which runs no
    -- profile, so these limits never reach that model.
    -- A limit the case states (workload.max_batch, workload.max_num_tokens:
    -- the engine the run built) wins; the heuristic fills only the one it
    -- leaves, as trtllm-bench takes a --max_batch_size or --max_num_tokens
    -- given beside its tuned settings.
    -- A static batch runs the case's batch, all its prompts in one
    -- context pass (gp.infer sizes max_num_tokens for them): trtllm-bench's
    -- heuristic is not the engine it ran.
    local wb = ({ fp8 = 1, fp4 = 0.5, bf16 = 2, fp16 = 2 })[a.weights]
    if wb and not static and (a.max_batch == nil or a.max_num_tokens == nil) then
      local bs, tok = trtllm_bench_limits(model, g, a.tp or 1, a.pp or 1, a.input, a.output,
                                          wb, a.kv == "fp8" and 1 or 2)
      if bs then
        -- Without chunked context (the PyTorch backend's default, M.mixes'
        -- whole prompts in gpuplan.infer) trtllm-bench raises the budget to
        -- hold a whole prompt beside a full batch: "If chunked prefill is
        -- disabled, we need to ensure that the max_num_tokens is at least
        -- the max_isl", max_num_tokens = max(max_num_tokens, max_isl +
        -- max_batch_size) (bench/benchmark/utils/general.py get_settings,
        -- PR #5625 "sets the maximum number of tokens to the max of
        -- ISL+MBS when chunking is disabled").
        -- With chunked context (a.chunked_prefill, the case's) it keeps
        -- its own budget: a longer prompt goes in chunks.
        if not a.chunked_prefill then
          tok = math.max(tok, math.tointeger(a.input + bs) or a.input + bs)
        end
        local said = {}
        if a.max_batch == nil then
          a.max_batch = bs
          said[#said + 1] = string.format("max_batch=%d", bs)
        end
        if a.max_num_tokens == nil then
          a.max_num_tokens = tok
          said[#said + 1] = string.format("max_num_tokens=%d", tok)
        end
        defaults[#defaults + 1] = table.concat(said, ", ") .. " (trtllm-bench tuning heuristic)"
      end
    end
    -- The CUDA graphs of a run served by trtllm-serve (workload.server,
    -- the command the case states; never a word of its title or notes),
    -- where the case states none (workload.graph_sizes).  gp.infer's runtime trtllm
    -- captures trtllm-bench's list (gpuplan.infer M.graph_sizes: bench/
    -- benchmark/utils/general.py get_settings passes "padding_enabled":
    -- True up to its max_batch_size).  trtllm-serve passes no
    -- cuda_graph_config (tensorrt_llm/commands/serve.py get_llm_args), so
    -- the PyTorch backend takes TorchLlmArgs' own, "cuda_graph_config:
    -- Optional[CudaGraphConfig] = Field(default_factory=CudaGraphConfig)":
    -- max_batch_size 0 and enable_padding False, which its validator turns
    -- into "max_batch_size = config.max_batch_size or 128" ("If neither is
    -- provided, a default max_batch_size of 128 is used", the LLM API
    -- reference) and, without padding, "batch_sizes = list(range(1, 32)) +
    -- [32, 64, 128]" (CudaGraphConfig._generate_cuda_graph_batch_sizes,
    -- tensorrt_llm/llmapi/llm_args.py).  Unpadded, a decode batch runs a
    -- graph only at a captured size exactly: cuda_graph_runner.py
    -- maybe_get_cuda_graph, "if batch_size not in
    -- self.supported_batch_sizes: return False, None, None", so the step
    -- runs eagerly.  gp.infer's graph_sizes pads a batch to the next size
    -- (engine/infer_run.c graph_batch), so the list given is 1..32, which
    -- pads nothing and runs every batch above 32 off the graph: the same
    -- as TensorRT-LLM's list but for batches of exactly 64 and 128, which
    -- it graphs and this prices eager (two batch sizes of the burst's
    -- hundreds).  The list came with cuda_graph_config in the 1.0 line
    -- (the release candidates of mid-2025) and holds to the 1.3
    -- documentation; a run before it (use_cuda_graph, default False) is
    -- placed by serve_case below for the MoE serving model (enforce_eager,
    -- the dstack DeepSeek-R1 rows), not here: no one-model case of it.
    local serve = case and v((case.workload or {}).server) == "trtllm-serve"
    if serve and a.graph_sizes == nil and not a.enforce_eager then
      local gs = {}
      for i = 1, 32 do gs[i] = i end
      a.graph_sizes = gs
      defaults[#defaults + 1] = "graph_sizes=1..32 (trtllm-serve: TorchLlmArgs' CudaGraphConfig "
        .. "default, max_batch_size 128 without padding -- 1..32, 64, 128 -- so a decode batch "
        .. "over 32 runs off the graph but at 64 and 128 exactly)"
    end
    -- A TensorRT-LLM from before XQA decoded a GQA model on its masked MHA
    -- kernel, one thread block per query head (gp.infer's xqa = false,
    -- engine/infer.c mmha_decode).  XQA's code (decoderXQARunner) came
    -- into the main branch on 2023-12-01 ("Update TensorRT-LLM (#524)",
    -- version 0.6.0) behind an environment variable, "getenv(
    -- "TRTLLM_ENABLE_XQA")" in gptAttentionCommon.cpp, off unless it is
    -- "1", then a build flag "--enable_xqa, default=False" (2024-01-16),
    -- and on by default from 0.8.0.dev20240123 ("--disable_xqa"; the 0.8
    -- docs: "This is default enabled"); the release notes of 0.7.1 list
    -- "FP8 KV cache support for XQA kernel".  A release before 0.6 had no
    -- XQA, so its GQA runs are priced without it; a case of neither
    -- version nor date, or of 0.6-0.7, keeps XQA: the one such source
    -- priced, NVIDIA's Falcon180B-H200 blog (v0.7a), ran "improved ...
    -- GQA kernels, in the generation phase, providing up to 2.4x
    -- improvement on Llama-70B over TensorRT-LLM v0.5", the XQA blog's
    -- "w/ XQA" figure.  A run dated before 2023-12-01 without a release
    -- had no XQA to turn on.  MHA models are left alone: their group of
    -- one reads the cache once either way.
    local src = case and case.source or {}
    local ver, date = v(src.version), v(src.date)
    -- the release ("0.5.0"; the reader refuses a tag's "v0.5.0"); a case
    -- without one leaves the date to say
    local r = release(ver)
    local pre
    if r then
      pre = version.before(r, "0.6.0")
    elseif date then
      pre = tostring(date) < "2023-12-01"
    end
    local gqa = (model.kv_heads or model.heads) < model.heads
    local mla = type(model.mla) == "table" and (model.mla.kv_lora_rank or 0) > 0
    if pre and gqa and not mla and a.xqa == nil then
      a.xqa = false
      -- the reason; gp.infer's note on xqa = false, joined to it below
      -- (join_qhead), says the kernel and the reads it priced
      defaults[#defaults + 1] = "xqa=false (TensorRT-LLM before 0.6: no XQA kernel)"
    end
    -- A release with XQA ran it only on the shapes it was built for; any
    -- other GQA model decoded on the masked MHA kernel.  The runner's
    -- support test (DecoderXQARunner::shouldUse, decoderXQARunner.h) at
    -- 0.10.0.dev2024043000, the revision that carries the 0.10.0 release
    -- notes' fix "Removed the unnecessary check in XQA to fix code Llama
    -- 70b Triton crashes (#1256)": "if (xqaParams.head_size != 128 &&
    -- xqaParams.head_size != 256 && !isGPTJBeam4Kernel)
    -- SUPPORT_RETURN_FALSE("head_size")" and, for one query token a step,
    -- "if (nbQHeadsPerKV != 8 && nbQHeadsPerKV != 1)
    -- SUPPORT_RETURN_FALSE("nbHeads")", nbQHeadsPerKV the query heads over
    -- the KV heads the plugin is given, which are one rank's.  At 0.7.1 the
    -- test was narrower ("nbQHeadsPerKV != 8 || (nbKVHeads != 1 && ... !=
    -- 8)", "head_size != 128"), and the precompiled kernels of the era
    -- (cubin/xqa_kernel_cubin.h) are all "nqpkv_8" and "d_128"/"d_256"
    -- for a single query token, so a group of 8 at head size 128 or 256 is
    -- the one GQA shape XQA ran from 0.6 to 0.10.  When it declines, the
    -- generation attention is the masked MHA kernel (engine/infer.c
    -- mmha_decode), whose launcher still sets "dim3
    -- grid{static_cast<unsigned>(params.num_heads),
    -- static_cast<unsigned>(params.batch_size), 1}" -- a block per query
    -- head.  Falcon 180B (232 query heads over 8 KV heads, head size 64:
    -- 29 a KV head at any TP) and Mixtral 8x7B or Mistral 7B (32 over 8:
    -- 4) are such models.  Releases after 0.10 are left to XQA: at
    -- NVIDIA/TensorRT-LLM 9dbc5b38 (main of 2024-07-02, whose items
    -- 0.11.0's release notes list; the releases' revisions are the
    -- tensorrtllm_backend submodule pins, v0.10.0 9bd15f19 and v0.11.0
    -- 05316d33) the gate above has left decoderXQARunner.h and shouldUse
    -- asks the implementation, the JIT one by default ("If no env var set,
    -- default to JIT impl"), whose supportConfigHMMA (decoderXQAImplJIT/
    -- kernelUtils.cpp) takes any group up to 32: "if (head_grp_size *
    -- xqaParams.beam_width > 32) return false".  At 89ba1b1a (main of
    -- 2024-05-07, the header indexed before 0.10.0) the JIT code was
    -- already there but behind the header's "nbQHeadsPerKV != 8 &&
    -- nbQHeadsPerKV != 1" gate, so the 0.10 rule holds (docs/validation.md,
    -- "The kernel rule itself checked release by release").
    local rel = r ~= nil and version.before(r, "0.11.0")
    if rel and not pre and gqa and not mla and a.xqa == nil then
      -- one rank's heads: a KV head is replicated where TP exceeds them
      local group = infer.qheads_per_kv(model, a.tp or 1)
      local hd = model.head_dim or model.hidden / model.heads
      if group ~= 8 or (hd ~= 128 and hd ~= 256) then
        a.xqa = false
        defaults[#defaults + 1] = string.format("xqa=false (TensorRT-LLM %s: XQA runs %s; this "
          .. "model has %g query heads a KV head at head size %g)", tostring(ver),
          "8 query heads a KV head at head size 128 or 256 only", group, hd)
      end
    end
    -- XQA's TMA + GMMA kernel on Hopper (mha_sm90: an FP8 cache read at the
    -- streaming copy, gpuplan.infer M.attn_stream_of) came with 0.10.0,
    -- "Integrated the new NVIDIA Hopper XQA kernels for LLaMA 2 70B model"
    -- (its release notes; 0.9.0's list none): 0.10's precompiled runner
    -- gives an sm90 E4M3 beam-1 cubin the cache's CUtensorMap ("isGmmaKernel
    -- == (mSM == kSM_90 && ... DATA_TYPE_E4M3 && ... beam_width == 1)"),
    -- the runner before it none, the HMMA kernel on every SM.  A case of an
    -- earlier release, or of no release dated before 0.10.0's tag
    -- (tensorrtllm_backend v0.10.0, the commit pinning TensorRT-LLM
    -- 9bd15f19, 2024-06-05), ran the HMMA kernel: xqa_hopper = false, the
    -- GEMV rate of the fused kernels.  Said only where it changes the price
    -- (the kernel's own test, infer.attn_stream_of, holds).
    local hopper_pre = (r ~= nil and version.before(r, "0.10.0")) or
      (r == nil and date ~= nil and tostring(date) < "2024-06-05")
    if hopper_pre and a.xqa_hopper == nil and
       infer.attn_stream_of(a, g, model, a.tp or 1, a.kv) ~= nil then
      a.xqa_hopper = false
      defaults[#defaults + 1] = string.format("xqa_hopper=false (TensorRT-LLM %s: XQA's TMA + "
        .. "GMMA Hopper kernel came with 0.10.0; the HMMA kernel reads the FP8 cache at the GEMV "
        .. "rate)", ver ~= nil and tostring(ver) or "of " .. tostring(date))
    end
    -- gp.infer's ar_fusion_max (the all-reduce size up to which the
    -- residual add, RMSNorm and quantisation run fused in TensorRT-LLM's
    -- custom kernel, NCCL and a quantise kernel above) is the PyTorch
    -- flow's AllreduceOp.  That flow came with 0.17 ("The PyTorch workflow
    -- is an experimental feature in tensorrt_llm._torch", the 0.17.0
    -- release notes, NVIDIA/TensorRT-LLM PR #2725 of 2025-01-30); a run of
    -- an earlier release, or dated before it, built a TensorRT engine,
    -- which fuses no quantisation into its all-reduce: the engine's FP8
    -- linear quantises its own 16-bit input, "if x.dtype != trt.fp8:
    -- quantized_out = quantize(x, activation_scaling_factor, 'fp8')"
    -- (tensorrt_llm/quantization/layers.py FP8Linear; the 2023 revision
    -- 027cd518 the same, "quantized_out = quantize(x,
    -- self.activation_scaling_factor.value, 'fp8')"), a layer of the
    -- network after the norm, and the norm and that quantisation run as
    -- two kernels unless the engine is built with the later plugin knob
    -- that fuses them, off by default where it exists ("_norm_quant_fusion:
    -- bool = field(default=False ... "Fuse the LayerNorm and quantization
    -- kernels into a single kernel, resulting in improved end-to-end
    -- performance.", tensorrt_llm/plugin/plugin.py of the releases that
    -- carry it; 0.11's PluginConfig has no such field, and its all-reduce
    -- fusion, reduce_fusion, "Fuse the ResidualAdd and LayerNorm kernels
    -- after AllReduce", takes no quantisation and is off: "--reduce_fusion
    -- disable" in the 0.11 perf-overview command).  So an engine run
    -- quantises qkv's and gate_up's input in a pass of its own at every TP
    -- degree, as gp.infer already prices it on one GPU: ar_fusion_max 1
    -- byte, no all-reduce that small, every one followed by the pass.
    -- (Before this rule these runs took 0, fused at every size: no pass
    -- at tp > 1 but a pass at tp 1, which no engine runs.)  Set and said
    -- only where a linear is quantised (fp8 or fp4 weights).
    local engine = (r ~= nil and version.before(r, "0.17.0")) or
      (r == nil and date and tostring(date) < "2025-01-30")
    if engine and a.ar_fusion_max == nil and (a.tp or 1) > 1 and
       (a.weights == "fp8" or a.weights == "fp4") then
      a.ar_fusion_max = 1
      defaults[#defaults + 1] = "ar_fusion_max=1B (a TensorRT engine run, before the PyTorch "
        .. "flow of 0.17: its all-reduce fuses no quantisation, so the next FP8 linear's input "
        .. "is quantised in a kernel of its own after it, as on one GPU)"
    end
  end,
  -- vLLM's scheduler cap on the running batch, max_num_seqs, where the case
  -- does not set it.  Releases before 0.8.0 ran the V0 engine, whose
  -- EngineArgs default is "max_num_seqs: int = 256" at every GPU (vllm
  -- engine/arg_utils.py, 0.4-0.7).  0.8.0 made V1 the default (its release
  -- notes: "We have now enabled V1 engine by default (#13726)", quoted by
  -- dependabot bumps to 0.8.0 dated 2025-03-19, so released by then; the
  -- 2025-03-18 boundary below is a day early at most).  V1 takes its
  -- defaults by device; the rule modelled is the one since vllm PR #17073
  -- (2025-04-23, "Use larger batch sizes for A100/B100/B200/MI300x", made
  -- memory-based in review), arg_utils.py get_batch_defaults: "if
  -- device_memory >= 70 * GiB_bytes and 'a100' not in device_name: # For
  -- GPUs like H100 and MI300x, use larger default values", max_num_seqs
  -- 1024 for LLM_CLASS and OPENAI_API_SERVER, else 256.  Not modelled: the
  -- first V1 releases raised it to 1024 at every GPU (vllm PR #15357,
  -- 2025-03-24: "It's raised from 256 to 1024 by default"), and PR #16158
  -- (2025-04-07) then "reverts the default max_num_seqs from 1024 to 256
  -- for hardware other than H100/200" until #17073: a 0.8.0-0.8.4 run on a
  -- small card (1024, not 256) or on an MI300X/B200 after #16158 (256, not
  -- 1024) is priced with the later rule.  The release is the case's
  -- source.version, else the newest by its source.date, else the V1
  -- defaults.  A cap only: the KV cache may hold fewer.
  vllm = function(a, model, g, defaults, case)
    local src = case and case.source or {}
    local ver, date = v(src.version), v(src.date)
    local v0
    if ver then
      local r = release(ver)
      v0 = r ~= nil and version.before(r, "0.8.0")
    elseif date then
      v0 = tostring(date) < "2025-03-18"
    end
    local big = (g.memory or 0) >= 70 * 2 ^ 30 and
      not tostring(g.name or g.id or ""):lower():find("a100", 1, true)
    -- A V1 release before 0.14.0 ("Async scheduling is now enabled by
    -- default", its release notes) schedules between the GPU's steps
    -- unless --async-scheduling (vllm PR #19970) is given, which no case
    -- states: gp.infer's async_scheduling = false (M.engine_host).  Only a
    -- case that states its release (source.version 0.8.0, V1's first
    -- default, to 0.13.x) and runs V1: a case stating chunked_prefill
    -- false ran V0 ("In vLLM V1, chunked prefill is always enabled by
    -- default", vLLM docs; AMD's MLPerf runs set VLLM_USE_V1 0).
    if a.async_scheduling == nil and v1_sync(case) then
      a.async_scheduling = false
    end
    -- vLLM 0.11.0 and before run an MoE's shared expert on the model's one
    -- stream before the routed experts (SharedFusedMoE's "shared_out =
    -- self._shared_experts(hidden_states)"); the second stream came with
    -- vLLM PR #26440, merged after v0.11.0: gp.infer's shared_expert_stream
    -- = false.  Only a case that states its release.
    if ver and a.shared_expert_stream == nil then
      -- (0.11.0 and before: before 0.11.1)
      -- (a model without a shared expert takes nothing: gp.infer refuses
      -- the option there, as it would change nothing)
      if version.before(release(ver), "0.11.1") and infer.has_shared_expert(model) then
        a.shared_expert_stream = false
        defaults[#defaults + 1] = "shared_expert_stream=false (vLLM " .. tostring(ver)
          .. ": the MoE's shared expert runs apart on the model's one stream, its linears "
          .. "(with fp8 weights their input quantisations too) kernels of their own; a second "
          .. "stream came with vLLM "
          .. "PR #26440, after v0.11.0)"
      end
    end
    -- V0 (before 0.8.0) has no asynchronous scheduling at all: its
    -- LLMEngine.step schedules, rebuilds the model's inputs and waits for
    -- the sampled tokens between the GPU's steps ("many components (e.g.,
    -- scheduler and output processor) execute in a synchronous manner that
    -- blocks GPU execution", the vLLM v0.6.0 performance post; "For
    -- baseline, this overhead is incurred on every decode", vllm RFC #6854).
    -- No published figure gives that host time at a known batch on V0 (the
    -- post gives shares under load: 29% scheduling and input preparation,
    -- Llama 3 8B on an H100; RFC #6854 "about 4ms of GPU bubble" a decode
    -- in traces of no stated model or batch), so it is priced at V1's
    -- measured figures (async_scheduling = false, M.engine_host), a floor:
    -- V1 does a subset of that work ("In vLLM V0, input tensors and
    -- metadata for the model are recreated at each step, often leading to
    -- significant CPU overhead", the V1 post, whose persistent batch and
    -- NumPy updates replace it).  A case stating multi-step scheduling
    -- (workload.scheduler_steps above 1, V0's --num-scheduler-steps: one
    -- schedule and input preparation a run of that many steps, vllm PR
    -- #7000) is left out: not priced.
    -- A client on V0's in-process AsyncLLMEngine (workload.server
    -- async-llm-engine) sees each prompt's first token a decode step after
    -- its prefill where the release has the async output processor (0.6.0
    -- on, vllm PR #7049; on by default with CUDA graphs): the next step
    -- processes it, and the engine's asyncio stream wakes its client when
    -- that step's executor future completes (gp.infer's first_token_lag,
    -- gpuplan.options' declaration with its sources).  V1 and the OpenAI
    -- server's MQLLMEngine hand the output on at once.
    local srv = case and case.workload and v(case.workload.server)
    if srv == "async-llm-engine" and v0 and ver and a.first_token_lag == nil
       and not version.before(release(ver), "0.6.0") and not a.enforce_eager then
      a.first_token_lag = 1
      defaults[#defaults + 1] = "first_token_lag=1 (vLLM V0's AsyncLLMEngine in process: the "
        .. "async output processor hands a prompt's first token on inside the next step, whose "
        .. "end wakes the client: one decode step on the TTFT)"
    end
    local steps = case and case.workload and case.workload.scheduler_steps
    if v0 and a.async_scheduling == nil and (steps == nil or steps <= 1) then
      a.async_scheduling = false
    end
    -- Multi-step scheduling is V0's alone, whatever release the case
    -- states (a V1-era release run with VLLM_USE_V1 0 included): its host
    -- work is left unpriced, and the defaults say why rather than
    -- gp.infer's line for today's asynchronous scheduling.
    if a.async_scheduling == nil and steps ~= nil and steps > 1 then
      a.async_scheduling = true
      defaults[#defaults + 1] = string.format("async_scheduling=true (workload.scheduler_steps "
        .. "%d: V0's multi-step scheduling schedules once a run of %d decode steps; its host "
        .. "work between steps is not priced)", steps, steps)
    end
    if v0 then
      -- The sampler's settings the case states (workload.sampling) run on
      -- the V0 sampler of the case's release (gp.infer's vllm_version,
      -- whose kernel counts are read from that release's sampler.py); a
      -- release of no counted sampler, or a run stating no release, is
      -- refused by gp.infer by name.
      if a.sampling ~= nil and a.vllm_version == nil and ver then
        a.vllm_version = tostring(ver)
      end
      -- a max_num_seqs the case states (workload.max_batch) wins
      if a.max_batch == nil then
        a.max_batch = 256
        defaults[#defaults + 1] = "max_batch=256 (vLLM V0 engine: EngineArgs max_num_seqs default 256)"
      end
      -- V0 turned chunked prefill on by itself for a model whose context
      -- exceeds 32K (vllm PR #6666, 2024-07-23, "enables chunked prefill by
      -- default for long context (>32K) models"; engine/arg_utils.py: "if
      -- use_long_context: is_gpu = device_config.device_type == "cuda" ...
      -- self.enable_chunked_prefill = True", unless sliding window,
      -- speculative decoding, LoRA or a multimodal model), and with it
      -- SchedulerConfig's token budget "max_num_batched_tokens = 512" ("It is
      -- the values that have the best balance between ITL and TTFT on A100.
      -- Note it is not optimized for throughput").  ROCm was "cuda" to that
      -- test until vllm PR #11146 (2024-12-12, "[ROCm][AMD] Disable auto
      -- enabling chunked prefill on ROCm": "On ROCm platform chunked prefill
      -- is showing poor performance due to a suboptimal triton kernel").  A
      -- step then holds at most 512 tokens, the running decodes first and the
      -- prompts in what is left (gpuplan.infer's chunked_prefill), and a step
      -- that carries a prompt runs off the CUDA graph (V0's model runner:
      -- "if is_prompt: ... self.decode_only = False", and _use_captured_graph
      -- returns "decode_only and not ... enforce_eager and ...").  The release is
      -- the case's source.version (0.5.4, the first after the merge, to
      -- 0.7.x; on AMD before 0.6.5, the first after #11146), else its date;
      -- a case that states neither, or a model without max_seq, keeps the
      -- engine's budget.  The Triton prefix-prefill kernel's grid is priced
      -- below (prefix_prefill); not modelled: its own rate per compute
      -- unit, for which no measurement was found.
      -- An MLA model (DeepSeek V2/V3) is left out from 0.7.1, the release
      -- that brought vLLM's MLA attention (PR #12601): vllm PR #12642
      -- (2025-02-01, "Disable chunked prefill and/or prefix caching when MLA
      -- is enabled") made VllmConfig log "MLA is enabled; forcing chunked
      -- prefill and prefix caching to be disabled" and set
      -- enable_chunked_prefill = False, and the later V0 defaults
      -- (engine/arg_utils.py _set_default_args_v0) keep it: "Chunked prefill
      -- not supported for Multimodal or MLA in V0".  Before 0.7.1 vLLM ran
      -- these models without MLA, so the long-context rule applied to them.
      local ms = model.max_seq
      local amd = tostring(g.vendor or ""):upper() == "AMD"
      local mla = type(model.mla) == "table" and (model.mla.kv_lora_rank or 0) > 0
      local on
      if ver then
        local r = release(ver)
        on = r ~= nil and not version.before(r, "0.5.4") and (not amd or version.before(r, "0.6.5"))
          and not (mla and not version.before(r, "0.7.1"))
      elseif date then
        on = tostring(date) >= "2024-07-23" and (not amd or tostring(date) < "2024-12-12") and
          not (mla and tostring(date) >= "2025-02-01")
      end
      local wl = case and case.workload or {}
      if on and type(ms) == "number" and ms > 32768 and a.max_num_tokens == nil and
         not model.vision and not model.sliding_window and v(wl.lora) == nil and
         (v(wl.mtp) or 0) == 0 then
        a.max_num_tokens, a.chunked_prefill = 512, true
        defaults[#defaults + 1] = "chunked_prefill, max_num_tokens=512 (vLLM V0 turns chunked "
          .. "prefill on for a context over 32K: SchedulerConfig max_num_batched_tokens 512)"
        -- On ROCm every prompt chunk then runs V0's Triton prefix-prefill
        -- kernel (gp.infer's prefix_prefill, engine/infer.c
        -- fa2_prompt_nosplit): with chunked prefill on, V0's metadata
        -- builder gives each prompt chunk its block table
        -- (vllm/attention/backends/utils.py CommonMetadataBuilder: "elif
        -- ((chunked_prefill_enabled or not is_prompt) and block_tables is
        -- not None): ... block_table = block_tables[seq_id]"), so the ROCm
        -- backend's "prefill_meta.block_tables.numel() == 0" test fails and
        -- its "# prefix-enabled attention" branch calls
        -- PagedAttention.forward_prefix, context_attention_fwd of
        -- vllm/attention/ops/prefix_prefill.py (rocm_flash_attn.py at
        -- vllm@00df342); PR #11146's thread says the same of ROCm flash
        -- attention: "It's not getting called when chunked prefill is
        -- enabled".  On NVIDIA cards V0's FLASH_ATTN backend runs the chunks
        -- on flash_attn_varlen_func instead.
        if amd and a.prefix_prefill == nil then
          a.prefix_prefill = true
          defaults[#defaults + 1] = "prefix_prefill (vLLM V0 on ROCm: every prompt chunk on the "
            .. "Triton prefix-prefill kernel, a program per query head and 128-query block over "
            .. "all its keys, no split)"
        end
      elseif a.chunked_prefill == nil then
        -- otherwise V0 prefills in steps of its own, where gpuplan.infer's
        -- runtime vllm (V1) would chunk
        a.chunked_prefill = false
        defaults[#defaults + 1] = "no chunked prefill (vLLM V0: prefill steps of their own)"
      end
      -- A vLLM from before its CUDA graphs dispatched every decode step's
      -- kernels from Python: graphs came with vllm PR #1926 ("Optimize
      -- model execution with CUDA graph", approved 2023-12-17, which added
      -- enforce_eager: "If True, we will disable CUDA graph and always
      -- execute the model in eager mode"), so a run dated before
      -- 2023-12-17, or of a release before 0.2 (mid-2023), is priced as
      -- gp.infer's enforce_eager (its model classes op by op, each op at
      -- GP_EAGER_OP_TIME; the runtime's own kernels kept: AWQ ran vLLM's
      -- awq_gemm, a tensor-core GEMM at every batch, as gemv_max's 0
      -- says).  Before vllm PR #1667 ("Support fused add rmsnorm for
      -- LLaMA", approved 2023-11-19: "This PR reduces CPU overhead") the
      -- Llama layer added each residual in Python, "hidden_states =
      -- residual + hidden_states" after the attention and after the MLP,
      -- where fused_add_rms_norm now takes the residual: 2 ops a layer
      -- more than gp.infer's count of today's eager vLLM, for a run dated
      -- before 2023-11-19 (the count is a Llama-family layer's; the
      -- other models of that vLLM are left at today's).  A release 0.2.0
      -- to 0.2.6 is not placed against the merges (not checked): the
      -- date decides there.  Not modelled: that vLLM's per-step Python
      -- outside the model (scheduler, sampler, Ray workers at TP > 1).
      local nograph, unfused
      if ver then
        local r = release(ver)
        -- 0.2.x straddles both merges: left nil, for the date to decide
        -- (as said above); it read as a release with graphs
        if not (r and r.major == 0 and r.minor == 2) then
          nograph = r ~= nil and version.before(r, "0.2.0")
          unfused = nograph
        end
      end
      if nograph == nil and date then
        nograph = tostring(date) < "2023-12-17"
        unfused = tostring(date) < "2023-11-19"
      end
      if nograph and a.graph_sizes == nil and not model.moe then
        a.enforce_eager = true
        local why = "vLLM before its CUDA graphs (PR #1926, 2023-12)"
        if unfused then
          a.host_ops_per_layer = require("gpuplan.infer").eager_host_ops.vllm(model, a.tp or 1) + 2
          why = why .. ", residual adds in Python before PR #1667 (2023-11): 2 ops a layer more"
        end
        defaults[#defaults + 1] = "enforce_eager (" .. why .. ")"
      end
      -- V0 runs a decode step off its CUDA graph past max_seq_len_to_capture
      -- tokens of context (gpuplan.infer M.v0_graph_max_context: 8192 by
      -- default, which no case changes), so a V0 case decoding past it
      -- (the Qwen speed benchmarks at 30720: speed_benchmark_vllm.py passes
      -- the LLM class no max_seq_len_to_capture) launches every op from
      -- Python.  Not for the MoE serving model, which prices its own steps.
      if a.graph_max_context == nil and not a.enforce_eager
        and not require("gpuplan.serve").wants(a) then
        local cap = require("gpuplan.infer").v0_graph_max_context
        a.graph_max_context = cap
        -- the context the job decodes to: the prompt it prefills (the
        -- case's input_len and its chat template's tokens, served_input)
        -- and the output
        if (a.input or 0) + (a.output or 0) > cap then
          defaults[#defaults + 1] = string.format("graph_max_context=%d (vLLM V0's "
            .. "max_seq_len_to_capture default: a decode step past %d tokens of context runs off "
            .. "its CUDA graph, its ops dispatched from Python)", cap, cap)
        end
      end
      -- A vLLM from before flash-attn's decode ran every decode step's
      -- attention on its own PagedAttention kernel (gp.infer's paged_decode,
      -- engine/infer.c mmha_decode): PagedAttention.forward_decode, called
      -- by both backends of those releases for their decodes (FLASH_ATTN ran
      -- flash-attn, XFORMERS xformers, on prompts only), launches
      -- paged_attention_v1 or _v2 (csrc/attention/attention_kernels.cu) on
      -- a grid of one block per query head of each sequence ("const int head_idx = blockIdx.x; ...
      -- const int kv_head_idx = head_idx / num_queries_per_kv"), each block
      -- loading its KV head's cache, so a GQA model's cache is read once per
      -- query head, its dot products FMAs on the CUDA cores.  v1 or v2
      -- (paged_attn.py: "use_v1 = (max_seq_len <= 8192 and
      -- (max_num_partitions == 1 or num_seqs * num_heads > 512))", 512-token
      -- partitions) splits the context, not the heads: both read per query
      -- head.  flash-attn's decode (flash_attn_with_kvcache, whose
      -- mha_fwd_kvcache folds a GQA group's query heads into one tile at
      -- seqlen_q 1, reading the cache once) came with vllm PR #3648 ("[Kernel]
      -- Use flash-attn for decoding", 2024-05-13), reverted by #4820
      -- (2024-05-15) and relanded by #4907 ("[Kernel] Add flash-attn back",
      -- 2024-05-19); v0.4.2 is of 2024-05-05 and v0.4.3, the first release
      -- with it, of 2024-06-01.  So a release before 0.4.3, or a run of no
      -- release dated before 2024-05-19, decodes a GQA model on the
      -- PagedAttention kernel; MHA models are left alone (a group of one
      -- reads the cache once either way), and an MLA cache is not modelled.
      -- Not modelled: later V0 releases still decode on it where their
      -- XFORMERS backend runs (an FP8 KV cache, a card below compute
      -- capability 8.0, a head size flash-attn lacks).
      local paged = release_before(ver, date, "0.4.3", "2024-05-19")
      local paged_why = "vLLM before 0.4.3: no flash-attn decode"
      -- On ROCm the flash-attn decode never came to V0: the ROCm backend
      -- (vllm/attention/backends/rocm_flash_attn.py, ROCmFlashAttentionImpl)
      -- runs flash attention (Triton or CK) on prompts only, and "if
      -- decode_meta := attn_metadata.decode_metadata: # Decoding run.
      -- output[num_prefill_tokens:] = PagedAttention.forward_decode(...)",
      -- the same paged_attention_v1/_v2 (csrc/attention/attention_kernels.cu,
      -- hipified: its grid one block per query head of each sequence) as
      -- the CUDA releases before 0.4.3.  What replaced it there is AMD's
      -- custom paged attention kernel (csrc/rocm/attention.cu), brought
      -- upstream by vllm PR #8310 ("[Kernel][Hardware][Amd]Custom paged
      -- attention kernel for rocm", commit 1ef0d2e of 2024-09-13, after
      -- v0.6.1 of 2024-09-11; its table on llama-2-70b-chat-hf, 32 prompts
      -- 512/512: "626.82 tokens/s" without, "969.73 tokens/s" with).  So
      -- an upstream release before 0.6.2 on an AMD card decodes every GQA
      -- step on the PagedAttention kernel.  Stated releases only: AMD's own
      -- fork (ROCm/vllm, its docker images) carried the custom kernel
      -- from ROCm/vllm PR #22 (2024-05-30, "enabled by default"), so a case
      -- of no stated release, on an AMD card, is not placed by its date.
      -- Not modelled: later releases still fall back to the kernel for
      -- the shapes the custom one does not take (PR #8310: "enable rocm
      -- custom paged attention kernel for specific size and dtype").
      -- The same stated upstream releases built on ROCm 6.1: vLLM's ROCm
      -- page of v0.6.0 (docs.vllm.ai/en/v0.6.0, getting_started/
      -- amd-installation): "Dockerfile.rocm uses ROCm 6.1 by default"
      -- (v0.6.5's page: "uses ROCm 6.2 by default"; the releases between
      -- are not placed).  ROCm 6.1's HIP replays a captured graph node by
      -- node (gp.infer's graph_per_node: DEBUG_CLR_GRAPH_PACKET_CAPTURE
      -- off until ROCm 6.2.0), so the decode graph's kernels launch at
      -- the card's stream launch.  Not for the MoE serving model.
      if amd and ver and a.graph_per_node == nil and not a.enforce_eager
        and not require("gpuplan.serve").wants(a) then
        local r = release(ver)
        if r ~= nil and version.before(r, "0.6.2") then
          a.graph_per_node = true
          defaults[#defaults + 1] = "graph_per_node (upstream vLLM before 0.6.2 builds on ROCm "
            .. "6.1, whose HIP replays a graph node by node: DEBUG_CLR_GRAPH_PACKET_CAPTURE off "
            .. "until ROCm 6.2.0; each kernel at the card's stream launch)"
        end
      end
      if not paged and amd and ver then
        local r = release(ver)
        if r ~= nil and version.before(r, "0.6.2") then
          paged = true
          paged_why = "vLLM on ROCm before 0.6.2: its V0 ROCm backend decodes on "
            .. "PagedAttention.forward_decode, before AMD's custom paged attention, vllm PR #8310"
        end
      end
      local gqa = (model.kv_heads or model.heads) < model.heads
      if paged and gqa and not mla and a.paged_decode == nil then
        a.paged_decode = true
        -- the reason; gp.infer's note on paged_decode, joined to it below
        -- (join_qhead), says the kernel and the reads it priced
        defaults[#defaults + 1] = "paged_decode (" .. paged_why .. ")"
      end
      -- A release before vllm PR #4894 (after v0.4.2; gpuplan.infer
      -- M.v0_ray_step) on more than one GPU ran its workers under Ray, a
      -- Ray task a worker each step: gp.infer's ray_step.  The release is
      -- the case's source.version (before 0.4.3), else its source.date
      -- (before the PR's review of 2024-05-21).
      local pre_loop = release_before(ver, date, "0.4.3", "2024-05-21")
      if pre_loop and a.ray_step == nil and (a.tp or 1) * (a.pp or 1) > 1
        and not require("gpuplan.serve").wants(a) then
        a.ray_step = require("gpuplan.infer").v0_ray_step
        defaults[#defaults + 1] = string.format("ray_step=%.4g ms (vLLM before 0.4.3 on %d GPUs: "
          .. "its Ray executor submits a task to every worker each step and waits for them, "
          .. "vllm PR #3763's A100 TP 2 runs under Ray and its multiprocessing executor)",
          a.ray_step * 1e3, (a.tp or 1) * (a.pp or 1))
      end
      -- vLLM 0.4's own host work a step beyond V1's figures (gpuplan.infer
      -- M.v0_host_step: vllm PR #3763's one-A100 row, v0.4.0's main): a
      -- case of a 0.4.x release (source.version), else one of no release
      -- dated from v0.4.0 (2024-03-30) to before v0.5.0 (2024-06-11), on
      -- the V0 host work async_scheduling = false prices (multi-step
      -- scheduling came after 0.4, so every such case takes it).
      local in_04 = not release_before(ver, date, "0.4.0", "2024-03-30")
        and release_before(ver, date, "0.5.0", "2024-06-11")
      if in_04 and a.v0_step == nil and a.async_scheduling == false
        and not require("gpuplan.serve").wants(a) then
        a.v0_step = require("gpuplan.infer").v0_host_step
        defaults[#defaults + 1] = string.format("v0_step=%.3g ms (vLLM 0.4: its engine's host work "
          .. "a step beyond V1's, vllm PR #3763's one-A100 Llama-2-7B run, 24.2 s over 2000 "
          .. "tokens)", a.v0_step * 1e3)
      end
      -- A release before awq_marlin (vllm PR #6612, "[Kernel][Core] Add AWQ
      -- support to the Marlin kernel", first in v0.5.3 of 2024-07-23: PR
      -- #6654's docs change was to "be merged ... after vLLM 0.5.3 is
      -- released which is tomorrow", 2024-07-22) ran an AWQ checkpoint on
      -- AWQLinearMethod's "ops.awq_gemm(reshaped_x, qweight, scales,
      -- qzeros, pack_factor)" below 256 tokens, split_k_iters = pack_factor
      -- = 8, whose "_out_feats.sum(0)" is a kernel of its own after every
      -- linear: gp.infer's wo_split_k (engine infer.c splitk_sum).  The
      -- case names the method (workload.quant_method), since its 4-bit
      -- weight_dtype does not tell AWQ from GPTQ, whose kernels differ.
      local wl_q = case and case.workload or {}
      if v(wl_q.quant_method) == "awq" and a.wo_split_k == nil
        and release_before(ver, date, "0.5.3", "2024-07-23") then
        a.wo_split_k = require("gpuplan.infer").v0_awq_split_k
        defaults[#defaults + 1] = string.format("wo_split_k=%d (vLLM before awq_marlin, 0.5.3: "
          .. "awq_gemm's split_k_iters, its _out_feats.sum(0) a kernel after every linear)",
          a.wo_split_k)
      end
      -- V0's chunked steps run their decodes in a FlashAttention call of
      -- their own (flash_attn_with_kvcache under decode_metadata, one query
      -- a sequence: the GQA group folded), not V1's one varlen call with
      -- the prompt chunks (gpuplan.infer fa2_mixed, whose default follows
      -- a step that mixes, stated or V1's own), on the cards where that
      -- default would price it (a paged_decode release reads per query head
      -- on its own kernel, which gp.infer prices without it).
      if a.chunked_prefill == true and a.fa2_mixed == nil and not a.paged_decode
         and require("gpuplan.infer").fa2_archs[g.arch] then
        a.fa2_mixed = false
      end
    else
      if a.max_batch == nil then
        a.max_batch = big and 1024 or 256
        defaults[#defaults + 1] = string.format(
          "max_batch=%d (vLLM V1 engine: max_num_seqs default by device memory)", a.max_batch)
      end
      -- "In vLLM V1, chunked prefill is always enabled by default" (docs,
      -- configuration/optimization.md): the prompts ride in the decode steps.
      -- (gpuplan.infer's runtime table M.mixes says it for vllm.)
      -- Its step budget, max_num_batched_tokens, where the case states
      -- none: the API server's default (what gp.infer's runtime vllm
      -- serves) moved twice after V1 became the default engine.  vllm PR
      -- #12369 ("[V1] Increase default batch size for H100/H200",
      -- 2025-01-23; in 0.8.0's _set_default_args_v1) set "if "h100" in
      -- device_name or "h200" in device_name: # For H100 and H200, we use
      -- larger default values", OPENAI_API_SERVER 8192, "else: # TODO(woosuk):
      -- Tune the default values for other hardware", 2048.  PR #17073
      -- ("Use larger batch sizes for A100/B100/B200/MI300x", 2025-04-23) made
      -- the test the card's memory, 70 GiB or more (an A100 80GB, B200,
      -- MI300X and MI325X then 8192); PR #17885 ("[Perf] Use small
      -- max_num_batched_tokens for A100", 2025-05-09, "Setting large
      -- `max_num_batched_tokens` for A100 reduces throughput") put A100 back
      -- at 2048: today's rule, gp.infer's M.vllm_limits, which gp.infer
      -- applies and says itself.  So a release 0.8.0-0.8.4 (0.8.4 is
      -- reported in use before 2025-04-23, vllm issue #16886) or a run dated
      -- 2025-03-18 to 2025-04-22 gets #12369's rule; 0.8.5 (its .post1 was
      -- out by 2025-05-05, vllm-ascend PR #755, so before #17885; ASSUMED to
      -- hold #17073: its release day was not checked) or a run dated
      -- 2025-04-23 to 2025-05-08 #17073's; a later release or date, or a
      -- case of neither, today's.  Not modelled: the offline LLM class's
      -- budgets (LLM_CLASS 8192 / 16384), which a case cannot state.
      -- Only where the prompts are chunked: a case that states
      -- chunked_prefill false gets gp.infer's budget for that (the model's
      -- context, max_model_len).
      local era
      if v0 == false then
        local r = release(ver)
        if r then
          era = (version.before(r, "0.8.5") and "12369") or (version.before(r, "0.9.0") and "17073")
            or nil
        elseif date then
          era = (tostring(date) < "2025-04-23" and "12369") or
            (tostring(date) < "2025-05-09" and "17073") or nil
        end
      end
      if era and a.max_num_tokens == nil and a.chunked_prefill ~= false then
        local name = tostring(g.name or g.id or ""):lower()
        local large
        if era == "12369" then
          large = name:find("h100", 1, true) ~= nil or name:find("h200", 1, true) ~= nil
        else
          large = (g.memory or 0) >= 70 * 2 ^ 30
        end
        a.max_num_tokens = large and 8192 or 2048
        defaults[#defaults + 1] = string.format("max_num_tokens=%d (vLLM V1 %s, vllm PR #%s: the "
          .. "API server's max_num_batched_tokens %s; the chunked prefill's tokens a step)",
          a.max_num_tokens, ver and ("release " .. tostring(ver)) or ("run of " .. tostring(date)),
          era, era == "12369" and "8192 on an H100/H200 by name, else 2048"
            or "8192 on a card of 70 GiB or more, else 2048")
      end
    end
  end,
  -- NVIDIA NIM's FP8/NVFP4 profiles: TensorRT-LLM engines of NVIDIA's
  -- ModelOpt checkpoints, which carry kv_cache_quant_algo FP8 in
  -- hf_quant_config.json (ModelOpt hf_ptq.py --kv_cache_qformat default
  -- fp8); TensorRT-LLM's KV dtype "auto" follows the checkpoint, so the
  -- cache is FP8 as in trtllm-bench.  Only the KV dtype: NIM's own
  -- scheduler limits are not the benchmark's.
  ["nim-http"] = function(a, _, _, defaults)
    if a.kv == nil and (a.weights == "fp8" or a.weights == "fp4") then
      a.kv = "fp8"
      defaults[#defaults + 1] = "kv=fp8 (NIM's FP8 profiles: the ModelOpt checkpoint's FP8 KV cache)"
    end
  end,
}

-- A MoE serving case (expert parallelism, DP attention, one pool measured
-- alone, MTP, experts in a format of their own): gp.infer with
-- gpuplan.serve's options.  A pool measured on
-- its own ("assuming unlimited resources for the non-tested phase", as the
-- SGLang and DeepSeek figures are) is the decode or prefill pool of a
-- disaggregated deployment whose other pool has the same layout; the
-- metric is that pool's tokens/s per GPU.
-- Whether a case's itl_ms is the source's median (measured.statistic
-- "median", SCHEMA.md), the one rule both readers below take.  vLLM's
-- benchmark's "median_itl_ms = np.median(itls)" runs over every token gap
-- of the run (vllm/benchmarks/serve.py calculate_metrics): a prompt's
-- chunks ride a few steps (a 20000-token prompt at vLLM's 8192 tokens a
-- step: 3 of its request's ~2000), so the prompts lengthen the mean gap
-- but not the median one, which is the decode step at the batch
-- (gp.infer's itl_s, MoE serving's tpot_s; the mean: itl_load_s, MoE
-- serving's itl_s).
-- The prompt tokens the serving engine prefills a request: the case's
-- input_len plus the chat template's tokens the server wraps it in where
-- the case states them (workload.template_tokens, SCHEMA.md): a client
-- on a chat endpoint counts its prompt before the template
-- (vllm bench serve's "Total input tokens" sums the dataset's
-- prompt_len, tokenised without it), the server prefills both.
local function served_input(wl)
  local n, t = v(wl.input_len), v(wl.template_tokens)
  if n and t then return n + t end
  return n
end

-- gp.infer's refusal of a job (error r), cleaned; where the case's chat
-- template is part of the input it names, the input read back to the
-- case's two fields (a case of input_len 233 was told "input 41233 +
-- output 221 tokens exceed ..." with nothing saying where 41000 came from).
local function refused(wl, r)
  local why = require("gpuplan.cli").clean(r)
  local n, t = v(wl.input_len), v(wl.template_tokens)
  if n and t and why:find("input", 1, true) then
    why = string.format("%s (input: workload.input_len %d + workload.template_tokens %d)",
      why, n, t)
  end
  return why
end

local function median_itl(case, metric)
  return metric == "itl_ms" and case.measured.statistic == "median"
end

local function serve_case(case, cat, model, defaults)
  local hw, par, wl = case.hardware or {}, case.parallel or {}, case.workload or {}
  local metric = case.measured.metric
  local phase = v(wl.phase)
  if metric == "input_tokens_per_s_per_gpu" then phase = "prefill" end
  if metric == "output_tokens_per_s_per_gpu" and phase == nil then phase = "decode" end
  local tp = v(par.tp) or v(par.ep) or v(hw.gpus) or 1
  if (v(wl.mtp) or 0) > 0 and not model.mtp_layers then
    local n, id = case_.architecture_mtp(model, cat)
    if n then
      model.mtp_layers = n
      defaults[#defaults + 1] = string.format(
        "mtp_layers=%d (the MTP module of %s's architecture)", n, id)
    end
  end
  local a = {
    model = model, gpu = hw.gpu, cat = cat, tp = tp, ep = v(par.ep) or 1,
    dp_attention = v(par.dp_attention) == true,
    two_batch_overlap = v(wl.two_batch_overlap), swap_ab = v(wl.swap_ab),
    single_batch_overlap = v(wl.single_batch_overlap),
    redundant_experts = v(par.redundant_experts), imbalance = v(wl.imbalance),
    eplb = v(par.eplb),
    weights = v(wl.weight_dtype) or v(wl.precision) or "bf16", kv = v(wl.kv_dtype),
    expert_weights = v(wl.expert_weight_dtype),
    input = served_input(wl), output = v(wl.output_len) or 2,
    -- the share of the prompt tokens found in the prefix cache
    -- (gp.infer's prefix_hit, priced by both serving models alike)
    prefix_hit = v(wl.prefix_hit),
    mtp = v(wl.mtp), acceptance = v(wl.acceptance),
    prefill_tokens = v(wl.prefill_tokens), runtime = runtime_of(case),
    -- the engine's limits the case states (gp.infer's; the MoE serving
    -- model takes max_batch and kv_free_fraction and refuses
    -- max_num_tokens by name: its prompts go prefill_tokens a step)
    max_batch = v(wl.max_batch), max_num_tokens = v(wl.max_num_tokens),
    kv_free_fraction = v(wl.kv_free_fraction), margin = v(wl.margin),
    kv_tokens = v(wl.kv_tokens),
    -- a run of num_requests requests sent at once (gp.infer's requests):
    -- colocated, its fill and drain priced as gp.infer prices them
    requests = v(wl.num_requests),
    -- how their outputs spread (gp.infer's output_dist)
    output_dist = v(wl.output_dist),
    -- the requests' max_tokens, the longest of those outputs (gp.infer's
    -- output_max)
    output_max = v(wl.output_max),
    -- the sampler's settings (gp.infer's sampling: refused by the MoE
    -- serving model by name, not dropped in silence)
    sampling = v(wl.sampling),
    -- refused by the MoE serving model by name (gpuplan.serve: it chunks
    -- by prefill_tokens), not dropped in silence
    chunked_prefill = v(wl.chunked_prefill),
    -- refused by the MoE serving model by name (a static batch is priced
    -- for one model on its replicas), not dropped in silence
    batching = v(wl.batching),
    -- FlashAttention off (workload.flash false): refused by the MoE
    -- serving model by name (gpuplan.serve: it prices the runtimes' fused
    -- kernels), not dropped in silence as it was before
    flash = v(wl.flash),
    nics = v(hw.nics_per_node), nic_fabric = v(hw.inter_node),
    -- a pool measured alone: that pool and a prefill pool of its layout;
    -- colocated (no phase): the case's GPUs, prefill and decode on each
    disagg = phase ~= nil, gpus = phase ~= nil and 2 * tp or (v(hw.gpus) or tp),
    prefill_gpus = phase ~= nil and tp or nil,
  }
  if a.nics and not a.nic_fabric then a.nics = nil end
  if not a.input then return nil, "workload.input_len not given" end
  local itl = v(wl.itl_max_ms)
  if phase == "prefill" then
    a.batch = 1        -- the decode pool is not measured
  elseif v(wl.batch) then
    a.batch = v(wl.batch)
  elseif v(wl.concurrency) and phase == nil then
    -- requests in flight over the case's GPUs (one stream on a TP8
    -- instance: TensorRT-LLM's min-latency runs)
    a.concurrency = v(wl.concurrency)
  elseif itl then
    a.itl_max = string.format("%.17gms", itl)
  elseif a.requests and phase == nil then
    -- a burst: as many as the KV holds, at most a GPU's share of them
    -- (serve_plan.c decode_side)
  else
    return nil, "a decode case needs workload.batch (per GPU), workload.concurrency "
      .. "(colocated) or itl_max_ms"
  end
  -- A V1 release before 0.14.0 schedules between the GPU's steps (the
  -- vllm profile's rule above, gp.infer's async_scheduling = false): the
  -- MoE serving model's decode steps carry that host work too
  -- (engine/serve_step.c serve_step_time), its expert-parallel runs the
  -- same engine core and scheduler as the one-model path.
  if a.runtime == "vllm" and v1_sync(case) then
    a.async_scheduling = false
  end
  -- SGLang's release rules (the sglang profile: its routing before 0.4.6)
  -- hold on the MoE serving model's steps too.
  -- The card goes with them (the Triton block-fp8 rule holds on Hopper
  -- only); it was passed as nil, so that rule never saw the card.
  if a.runtime == "sglang" then
    PROFILES.sglang(a, model, case_gpu(hw, cat), defaults, case)
  end
  -- TensorRT-LLM's PyTorch flow served by trtllm-serve (workload.server)
  -- before its CUDA graphs came on by default ran every step eagerly:
  -- PyTorchConfig's "use_cuda_graph: bool = False" (tensorrt_llm/_torch/
  -- pyexecutor/config.py at 9b931c0f) with trtllm-serve passing only
  -- "PyTorchConfig(enable_overlap_scheduler=True)" (commands/serve.py
  -- get_llm_args of spring 2025), until TensorRT-LLM PR #5480 ("Breaking
  -- change: perf: [TRTLLM-4662] Enable cuda graph by default", opened
  -- 2025-06-25).  A case dated before that day, or of a release before
  -- 1.0 (the line that carries the change), runs gp.infer's enforce_eager
  -- (infer.lua M.eager_host_ops.trtllm: the host's dispatch of a step's
  -- ops a floor under it, engine/serve_step.c eager_floor).  A case
  -- stating neither, or trtllm-bench, keeps the graphs.
  if a.runtime == "trtllm" and v(wl.server) == "trtllm-serve" then
    local src = case.source or {}
    local ver, date = v(src.version), v(src.date)
    local r = release(ver)
    local pre
    if r then pre = version.before(r, "1.0.0")
    elseif date then pre = tostring(date) < "2025-06-25" end
    if pre then
      a.enforce_eager = true
      defaults[#defaults + 1] = "enforce_eager (trtllm-serve's PyTorch flow before TensorRT-LLM "
        .. "PR #5480, 2025-06-25: PyTorchConfig use_cuda_graph default False)"
    end
  end
  local ok, r = pcall(infer.infer, a)
  if not ok then return nil, refused(wl, r) end
  if not r.fits then return nil, "does not fit: " .. tostring(r.why) end
  for _, d in ipairs(r.defaults) do defaults[#defaults + 1] = d end
  -- A median ITL is the decode step a token, tpot_s (median_itl).
  local median = median_itl(case, metric)
  local pick = {
    output_tokens_per_s_per_gpu = r.decode_per_gpu,
    input_tokens_per_s_per_gpu = r.prefill_per_gpu,
    -- no ITL at output 1 (no decode step: the prefill cases)
    itl_ms = r.itl_s and (median and r.tpot_s or r.itl_s) * 1e3, output_tokens_per_s = r.tokens_per_s,
    -- a request's TTFT, colocated: its prompt's chunks, prefill steps of
    -- prefill_tokens each (serve_plan.c colocated: ttft = prompt_steps x
    -- the prefill step), gp.infer's ttft_s as the dense cases read it; a
    -- pool measured alone has no decode pool in it (phase), and its
    -- prefill case states a rate
    ttft_ms = phase == nil and r.ttft_s and r.ttft_s * 1e3 or nil,
  }
  if metric == "ttft_ms" and phase ~= nil then
    return nil, "metric ttft_ms: workload.phase " .. tostring(phase) .. " measures one pool alone, "
      .. "which has no colocated TTFT (a prefill pool states input_tokens_per_s_per_gpu)"
  end
  if pick[metric] == nil then return nil, "metric " .. tostring(metric) .. " is not a MoE serving metric" end
  -- r.batch is a replica's (results.lua); the case states a GPU's
  local per_gpu = r.batch_per_gpu
  defaults[#defaults + 1] = string.format("batch=%s per GPU",
    math.tointeger(per_gpu) and string.format("%d", per_gpu) or string.format("%.4g", per_gpu))
  local shows = { output_tokens_per_s_per_gpu = "r.decode_per_gpu",
                  input_tokens_per_s_per_gpu = "r.prefill_per_gpu",
                  itl_ms = median and "r.tpot_s * 1e3" or "r.itl_s * 1e3",
                  output_tokens_per_s = "r.tokens_per_s", ttft_ms = "r.ttft_s * 1e3" }
  return { value = pick[metric], defaults = defaults,
           job = a, call = "infer", shows = shows[metric],
           regime = require("gpuplan.ranges").regime("infer", a, r, cat) }
end

-- Cases the MoE serving model answers: EP > 1, DP attention, a pool
-- measured alone, MTP, or a per-GPU pool metric.
local function is_serve(case)
  local par, wl = case.parallel or {}, case.workload or {}
  local m = case.measured and case.measured.metric
  return (v(par.ep) or 1) > 1 or v(par.dp_attention) == true or v(wl.phase) ~= nil or
    v(wl.expert_weight_dtype) ~= nil or
    (v(wl.mtp) or 0) > 0 or m == "output_tokens_per_s_per_gpu" or
    m == "input_tokens_per_s_per_gpu"
end

local function predict(case, cat)
  local model, why = model_of(case.model or {}, cat)
  if not model then return nil, why end
  local hw, par, wl = case.hardware or {}, case.parallel or {}, case.workload or {}
  local metric = case.measured and case.measured.metric
  if v(hw.sm_clock) then
    return nil, "hardware.sm_clock: a serving case does not price a held SM clock (gp.train does)"
  end
  -- A training method on a serving case contradicts its kind: the train
  -- predictor refuses "method 'infer'"; this one read past "lora".
  if v(wl.method) and wl.method ~= "infer" then
    return nil, "workload.method '" .. tostring(wl.method) .. "' is not serving: an infer case's "
      .. "method is infer (or not given)"
  end
  -- One output token has no inter-token latency and no decode step: an
  -- itl_ms case at output_len 1 failed inside the pick ("prediction
  -- failed: .../predict/infer.lua:1032: attempt to perform arithmetic on
  -- a nil value (field 'itl_load_s')"), or read "not a MoE serving
  -- metric"; a decode_tokens_per_s one read "not predicted" (gp.infer's
  -- stream_tokens_per_s is nil there).  Said as the field, at its line,
  -- as hardware.gpu's refusal is.
  local no_decode = { itl_ms = "inter-token latency (metric itl_ms is (latency - ttft) / "
                        .. "(output_len - 1))",
                      decode_tokens_per_s = "decode step (the first token comes out of the "
                        .. "prompt's forward; metric decode_tokens_per_s is one stream's decode "
                        .. "rate)" }
  if no_decode[metric] and v(wl.output_len) == 1 then
    return nil, string.format("%scase '%s': field 'workload.output_len': 1 output token has no "
      .. "%s", case._file and (case._file .. ": ") or "", tostring(case.id), no_decode[metric])
  end
  if is_serve(case) then
    if not v(hw.gpu) then return nil, "hardware.gpu not given" end
    local okg, gwhy = case_.gpu(case, cat)
    if not okg then return nil, gwhy end
    if v(wl.offload) then
      return nil, "workload.offload: MoE serving (gpuplan.serve) keeps every layer on the GPUs"
    end
    if v(hw.power_limit) then
      return nil, "hardware.power_limit: MoE serving (gpuplan.serve) does not price a board "
        .. "power limit (gp.infer and gp.train do)"
    end
    local defaults = {}
    local _, rnote = runtime_of(case)
    defaults[1] = rnote
    return serve_case(case, cat, model, defaults)
  end
  local pick = {
    output_tokens_per_s = function(r) return r.tokens_per_s end,
    decode_tokens_per_s = function(r) return r.stream_tokens_per_s end,
    -- a benchmark's mean ITL / TPOT, other requests' prompts between a
    -- user's tokens ("(latency - ttft) / (output_len - 1)", vLLM's
    -- benchmark_serving): gp.infer's itl_load_s, the decode step at one
    -- sequence (infer_itl_loaded)
    itl_ms = function(r) return r.itl_load_s * 1e3 end,
    ttft_ms = function(r) return r.ttft_s * 1e3 end,
  }
  -- A median ITL is the decode step at the batch, itl_s (median_itl).
  local median = median_itl(case, metric)
  if median then pick.itl_ms = function(r) return r.itl_s * 1e3 end end
  -- A median TTFT of a burst is its requests' median (ttft_p50_s, where
  -- the burst's walk gives one); else the one TTFT priced.
  local ttft_median = metric == "ttft_ms" and case.measured.statistic == "median"
  if ttft_median then
    pick.ttft_ms = function(r) return (r.ttft_p50_s or r.ttft_s) * 1e3 end
  end
  if not pick[metric] then return nil, "metric " .. tostring(metric) .. " is not an infer metric" end
  if not v(hw.gpu) then return nil, "hardware.gpu not given" end
  local okg, gwhy = case_.gpu(case, cat)
  if not okg then return nil, gwhy end
  local defaults = {}
  local runtime, rnote = runtime_of(case)
  defaults[#defaults + 1] = rnote
  local a = {
    model = model, gpu = hw.gpu, gpus = v(hw.gpus) or 1, tp = v(par.tp) or 1,
    power_limit = v(hw.power_limit),
    pp = v(par.pp) or 1, weights = v(wl.weight_dtype) or v(wl.precision) or "bf16",
    kv = v(wl.kv_dtype), runtime = runtime, cat = cat,
    input = served_input(wl), output = v(wl.output_len),
  }
  if not a.input then a.input = 128; defaults[#defaults + 1] = "input=128" end
  if not a.output then a.output = 256; defaults[#defaults + 1] = "output=256" end
  if v(wl.offload) then
    -- Layers that do not fit the card live in host memory (gp.infer's
    -- offload): the runtime says where they run (gpuplan.infer), the
    -- host's DRAM bandwidth as the source states it, read at
    -- gpuplan.comm.host_bw's streaming fraction, and its capacity.
    a.offload = true
    local bw, mem = v(hw.host_mem_bw), v(hw.host_memory)
    if bw then
      a.host_bw = require("gpuplan.comm").host_bw(nil, { host_mem_bw = bw },
        function(s) defaults[#defaults + 1] = s end, "case",
        "0.8 of the host's stated DRAM bandwidth")
    end
    if mem then a.host_memory = mem end
    a.offload_layers = v(wl.offload_layers)
    -- pinned or pageable host layers, where the source states it
    -- (gp.infer's pin_memory; absent: the runtime's)
    a.pin_memory = v(wl.pin_memory)
  end
  -- weight-only weights dequantised by a kernel of their own before a
  -- 16-bit GEMM, where the source's runtime does so (gp.infer's
  -- unfused_dequant: DeepSpeed's quantized_initialization)
  a.unfused_dequant = v(wl.unfused_dequant)
  -- FlashAttention on or off, where the source states it (gp.infer's
  -- flash: llama.cpp's flash_attn, off by default in its builds of 2024)
  a.flash = v(wl.flash)
  -- llama.cpp before its CUDA graphs (PR #6766, merged 2024-05-08:
  -- gp.infer's cuda_graphs): a case dated before it launched its
  -- one-token steps' kernels one by one; where the case states no date
  -- the tool's own default stands.  Read by llama.cpp alone, so a case of
  -- another runtime that states it is refused rather than priced without
  -- it (as workload.server is below).
  if v(wl.cuda_graphs) ~= nil and runtime ~= "llama.cpp" then
    return nil, string.format("workload.cuda_graphs %s says whether llama.cpp replayed a "
      .. "one-token step as a CUDA graph, but the case's runtime is %s",
      tostring(v(wl.cuda_graphs)), runtime)
  end
  if runtime == "llama.cpp" and v(wl.cuda_graphs) ~= nil then
    a.cuda_graphs = v(wl.cuda_graphs)
  elseif runtime == "llama.cpp" and case.source and v(case.source.date)
    and tostring(v(case.source.date)) < "2024-05-08" then
    a.cuda_graphs = false
    defaults[#defaults + 1] = "cuda_graphs=false (llama.cpp dated before PR 6766's CUDA graphs, "
      .. "2024-05-08)"
  end
  -- A run of num_requests requests issued at once, measured over the run
  -- (gp.infer's requests): the batch's fill and drain count.
  a.requests = v(wl.num_requests)
  -- how their outputs spread around output_len (gp.infer's output_dist)
  a.output_dist = v(wl.output_dist)
  -- the requests' max_tokens, the longest of those outputs (gp.infer's
  -- output_max)
  a.output_max = v(wl.output_max)
  -- The share of the prompt tokens the run found in its engine's prefix
  -- cache (gp.infer's prefix_hit): their prefill is skipped.
  a.prefix_hit = v(wl.prefix_hit)
  -- The batch sizes the run captured CUDA graphs at, where its config
  -- states them (gp.infer's graph_sizes; else the runtime's own).
  a.graph_sizes = v(wl.graph_sizes)
  -- The engine's limits where the run's config states them (SCHEMA.md:
  -- MLPerf's gpu_batch_size, max_num_tokens, kvcache_free_gpu_mem_frac);
  -- the runtime profile below fills only what is left unstated.
  a.max_batch, a.max_num_tokens = v(wl.max_batch), v(wl.max_num_tokens)
  a.kv_free_fraction = v(wl.kv_free_fraction)
  -- The share of the card held back where the run states it (gp.infer's
  -- margin: 1 - vLLM's gpu_memory_utilization, the run's
  -- vllm:cache_config_info); else the runtime's rule (gpuplan.infer).
  a.margin = v(wl.margin)
  -- The KV pool the engine reported, where the run states it (gp.infer's
  -- kv_tokens: vLLM's kv_cache_size_tokens), in place of the rule's.
  a.kv_tokens = v(wl.kv_tokens)
  -- Chunked prefill where the run's command turns it on or off
  -- (gp.infer's chunked_prefill: TensorRT-LLM's --enable_chunked_prefill,
  -- its chunked context, off by default); the profile below keeps a value
  -- the case states.
  a.chunked_prefill = v(wl.chunked_prefill)
  -- One static batch run to completion, where the source's benchmark ran
  -- it so (gp.infer's batching: TensorRT-LLM's gptSessionBenchmark).
  a.batching = v(wl.batching)
  -- What the run's sampling parameters switch on in the sampler, where the
  -- source states them (gp.infer's sampling; the vllm profile names the
  -- release whose V0 sampler runs them).
  a.sampling = v(wl.sampling)
  local batch = v(wl.batch) or v(par.micro_batch)
  local conc = v(wl.concurrency)
  if conc then a.concurrency = conc elseif batch then a.batch = batch end
  -- workload.server names a TensorRT-LLM command: read by the trtllm
  -- profile alone, so a case of another runtime that states it is refused
  -- rather than silently priced without it.
  local server = v(wl.server)
  if server and server ~= "async-llm-engine" and runtime ~= "trtllm" then
    return nil, string.format("workload.server %s is a TensorRT-LLM command, but the case's "
      .. "runtime is %s", tostring(server), runtime)
  end
  -- async-llm-engine is vLLM's in-process AsyncLLMEngine (the vllm
  -- profile reads it), refused for another runtime the same way.
  if server == "async-llm-engine" and runtime ~= "vllm" then
    return nil, string.format("workload.server async-llm-engine is vLLM's in-process engine, "
      .. "but the case's runtime is %s", runtime)
  end
  if PROFILES[runtime] then
    PROFILES[runtime](a, model, case_gpu(hw, cat), defaults, case)
  end
  local ok, r = pcall(infer.infer, a)
  if not ok then return nil, refused(wl, r) end
  if not r.fits then return nil, "does not fit: " .. tostring(r.why) end
  for _, d in ipairs(r.defaults) do
    if not join_qhead(defaults, d) then defaults[#defaults + 1] = d end
  end
  defaults[#defaults + 1] = string.format("batch=%d", r.batch)
  -- gp.infer prices one TTFT for the run; a source's median of the
  -- requests' TTFTs is read as it, as its mean is (SCHEMA.md): said, not
  -- assumed unsaid.
  -- A burst's walk gives its requests' median (ttft_p50_s): read as it.
  if ttft_median and r.ttft_p50_s then
    defaults[#defaults + 1] = "median TTFT read as ttft_p50_s (the burst's requests' median)"
  elseif ttft_median then
    defaults[#defaults + 1] = "median TTFT read as ttft_s (one TTFT priced for the run, "
      .. "mean and median alike)"
  end
  local shows = { output_tokens_per_s = "r.tokens_per_s",
                  decode_tokens_per_s = "r.stream_tokens_per_s",
                  itl_ms = median and "r.itl_s * 1e3" or "r.itl_load_s * 1e3",
                  ttft_ms = ttft_median and r.ttft_p50_s and "r.ttft_p50_s * 1e3"
                    or "r.ttft_s * 1e3" }
  return { value = pick[metric](r), defaults = defaults,
           job = a, call = "infer", read = pick[metric], shows = shows[metric],
           regime = require("gpuplan.ranges").regime("infer", a, r, cat) }
end

-- The predictor, callable as predict(case, cat); frameworks: the names
-- workload.framework takes in an infer case (gp.infer's runtimes that run
-- a tool of that name).
return setmetatable({ frameworks = RUNTIMES }, {
  __call = function(_, case, cat) return predict(case, cat) end })
