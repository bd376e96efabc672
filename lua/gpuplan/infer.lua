-- gpuplan.infer: LLM serving estimates on the roofline.
--
--   local gp = require "gpuplan"
--   local r = gp.infer{ model = "llama3-70b", gpu = "h100-sxm", gpus = 2, tp = 2,
--                       weights = "fp8", kv = "bf16", concurrency = 64,
--                       input = 2048, output = 256, price = "$2.99/h" }
--   print(r.fits, r.ttft_s, r.itl_s, r.tokens_per_s, r.per_gpu, r.cost_per_mtok)
--   for _, op in ipairs(r.ops) do print(op.name, op.time, op.bound, op.intensity) end
--
-- Arguments (SI numbers, or strings with units where noted):
--   model     catalog id or a catalog-shaped model table          (required)
--   gpu       catalog id                                          (required)
--   gpus      total GPUs (default tp * pp); replicas = gpus / (tp * pp)
--   tp, pp    per replica (default 1)
--   weights   bf16 | fp16 | fp8 | int8 | w8a8 | int4 | gptq | awq | nf4 |
--             nf4-dq | fp4 | mxfp4 | fp6, a group variant (gptq-g64, awq-g32-fp32)
--             or bits per weight (4.85, GGUF-style): gpuplan.memory.weight_format,
--             the rule `fit` uses (default bf16); embeddings and lm_head stay 16-bit
--   kv        KV-cache dtype: bf16 | fp16 | fp8 | int8 | fp4 (default bf16)
--   kv_policy mean (default: paged KV, each running sequence holds input +
--             output/2 on average) | max (reserve input + output per
--             sequence, TensorRT-LLM GUARANTEED_NO_EVICT: the default
--             of runtime trtllm, M.kv_reserve) | preempt (the
--             default of runtime vllm, V1: mean, and a finite run whose
--             whole lengths overflow the cache preempts and recomputes,
--             infer_run.c infer_burst_preempt; refused where the steps do
--             not mix prompt chunks)
--   batch     fixed decode batch per replica, or
--   concurrency  requests in flight over the system; neither: as many as fit
--   input, output  tokens per request (default 2048, 256)
--   runtime   graphs (CUDA graphs, TensorRT-LLM/vLLM; default) | kernels | eager,
--             or a runtime name: trtllm, vllm, sglang, nim-http (= graphs),
--             eager-pytorch (= eager), litgpt (= eager, LitGPT's op count),
--             autoawq (= eager, AutoAWQ's fused modules' op count),
--             llama.cpp (= kernels), gpt-fast (= graphs, its own int4 and
--             int8 weight-only kernels: M.wo_stream), exllamav2 (= graphs,
--             its own memory: M.exllamav2); see M.runtimes and M.host_ops
--   flash     fused attention (default true)
--   memory    bytes per GPU the runtime may allocate (default: the GPU's usable
--             memory, the rule of gpuplan fit); the CUDA context, library
--             workspaces, NCCL buffers, fragmentation and the safety margin come
--             off it in the one inference-memory model gp.memory uses, so both
--             count the same sequences
--   margin    safety margin, fraction of memory (default: the catalog settings'
--             safety_margin, else 0.10: vLLM's gpu_memory_utilization 0.9;
--             runtime exllamav2: 0, M.exllamav2; llama.cpp: 0, trtllm:
--             kv_free_fraction 0.90, M.runtime_memory)
--   kv_free_fraction  the KV pool is this fraction of the memory free once the
--             model is loaded (TensorRT-LLM kv_cache_free_gpu_mem_fraction),
--             instead of what the margin leaves of the whole (default: off)
--   offload   true: layers that do not fit live in host memory; llama.cpp
--             runs them on the CPU for steps under 32 tokens at host_bw
--             (default: the system's host_mem_bw x 0.8, else 60 GB/s), every
--             other step (and runtime) copies them to the GPU at pcie_bw
--             (default: the GPU's PCIe x 0.8); host_memory (default: the
--             system's, else 32 GB); on a rack of several hosts (host_gpus)
--             both host figures are the rack's, each host having its share;
--             the GPUs of one host streaming at once divide its host_bw;
--             pin_memory says where the layers sit: true, pinned (the DMA
--             reads them at pcie_bw), false, pageable (the driver stages
--             each copy through host DRAM) (default: the runtime's,
--             M.offload_pageable)
--   system    catalog system id (host memory, NVLink domain)
--   price     per GPU-hour: a number (in currency), "$2.49/h", {amount =,
--             currency =} or a catalog price id (default: the cheapest
--             offer in the buyer's markets, gpuplan.prices.buyer)
--   currency, market  the buyer's (default GPUPLAN_CURRENCY, GPUPLAN_MARKET,
--             the catalog's settings; USD, and cn for a CNY buyer, else
--             us,global,overseas): what prices are converted to and where
--             the default price is offered
--   max_num_tokens, max_batch   engine limits (TensorRT-LLM defaults 8192, 2048;
--             runtime vllm: vLLM's max_num_tokens for the card, M.vllm_limits;
--             max_num_tokens is also the CLI's --max-num-tokens); the MoE
--             serving model refuses max_num_tokens (it reads no step budget);
--             one below input is refused unless the prompts are chunked
--   chunked_prefill  true: the prompts ride in the decode steps, max_num_tokens
--             a step in all (vLLM's chunked prefill, TensorRT-LLM's in-flight
--             batching; infer_run.c mixed_steps, run_finite; the CLI's
--             --chunked-prefill; on by default for runtime trtllm and vllm,
--             M.mixes); the MoE serving model refuses it (it
--             chunks its prompts by prefill_tokens itself)
--   requests  a run of this many requests issued at once: tokens_per_s over
--             the run, the batch's fill and drain included (trtllm-bench's
--             Total Output Throughput; infer_run.c run_finite, and with the
--             MoE serving options serve_plan.c burst, both infer_burst);
--             absent: the steady state
--   batching  "static": one batch of `batch` requests run to completion, as
--             TensorRT-LLM's gptSessionBenchmark ran it (its performance
--             pages to 0.9.0): every prompt in one context pass, then
--             output - 1 decode steps of the whole batch (infer_run.c
--             run_times); needs batch, no chunked_prefill, pp 1; on runtime
--             trtllm the batch's own contiguous KV (M.static_memory).
--             Default "continuous": the runtime's own batching
--   ep, dp_attention, disagg, mtp, ...   a MoE model across many GPUs: the
--             serving model of gpuplan.serve (see its header for every option
--             and the result's fields)
--
-- Result: a plain table.  fits (false: why), model, gpu, batch, replicas,
-- ttft_s (one prompt's prefill, unloaded; with requests, more than one a
-- replica and no concurrency below them: the burst's mean time to first
-- token, each request behind the prompts ahead of it, and ttft_one_s one
-- prompt's; a steady concurrency of more than one a replica on a
-- chunked-prefill engine: the TTFT under that load, ttft_loaded true and
-- ttft_one_s one prompt's -- engine/infer_run.c loaded_ttft), itl_s (decode step at the batch and mean context), itl_batch1_s,
-- itl_load_s (the mean gap between a user's tokens at the batch: the decode
-- step and the other sequences' prompts between them, what gp.infer_plan's
-- itl_max bounds and the MoE serving model's itl_s is),
-- tokens_per_s (system output), per_gpu, stream_tokens_per_s, cost_per_mtok,
-- tokens_per_s_per_dollar_hour, weights_gpu/kv_per_seq/kv_budget (bytes),
-- max_batch_kv, offload_layers, ops (decode step, one GPU) and prefill_ops:
-- {name, count, time (s, one instance), total (s per step), bound,
-- intensity (FLOP/B), flop, bytes, shape_eff}, ridge (FLOP/B, achievable, at
-- the compute precision), defaults (what was assumed).

local units = require "gpuplan.units"
local roofline = require "gpuplan.roofline"
local version = require "gpuplan.version"

local M = {}

local function core() return require "gpuplan.core" end
-- The places of the notes on a per-query-head decode attention kernel
-- (xqa = false: TensorRT-LLM's masked MHA kernel; paged_decode: vLLM's
-- PagedAttention kernel) among M.setup's defaults, worded by qhead_note
-- from the engine's result (M.infer, M.gpus_for).
local XQA_NOTE = "xqa=false"
local PAGED_NOTE = "paged_decode"
-- and of fa2_mixed's default (vLLM V1's mixed steps on FlashAttention-2),
-- worded by qhead_note from the result's mixed_kv_reads
local FA2_NOTE = "fa2_mixed"
local function catalog(cat) return cat or require("gpuplan").catalog() end
-- A latent (MLA) KV cache: the one test the per-query-head kernels'
-- refusals (xqa = false, paged_decode, fa2_mixed) and fa2_mixed's default
-- read.
local function latent_cache(model)
  return type(model) == "table" and type(model.mla) == "table"
    and (model.mla.kv_lora_rank or 0) > 0
end

-- Bytes per cached element by KV dtype: one table, gpuplan.memory's.
local kv_bytes = require("gpuplan.memory").kv_bytes

-- Serving runtimes by name -> how kernels reach the GPU.  Serving engines
-- replay decode steps as CUDA graphs and keep detokenisation and HTTP
-- streaming off the GPU's critical path (vLLM V1: the API server's own
-- process; v0.6: async output processing), so no per-step host cost is
-- added.  V1's engine core hands its outputs to the API server through an
-- unbounded queue (core_client.py AsyncMPClient "self.outputs_queue =
-- asyncio.Queue[...]()", no maxsize) and never waits for it; the server's
-- per-token work (detokenize, one SSE chunk a token a request) can only
-- cap the rate, at about 1 / 29.3 us = 34,078.85 streamed tokens/s a
-- server (vllm PR #27869: one API server, gpt-oss-20b on a B200, 1024
-- streams, "Output token throughput (tok/s): 34078.85", a bound of the
-- streamed path: "--stream-interval" 10 gave "a 57% end-to-end
-- performance gain", vLLM's gpt-oss blog post).  No vLLM case of the file
-- is priced above 15.4k tokens/s a replica, so that cap is not modelled
-- (docs/validation.md, the AIPerf Qwen3-0.6B section).  SGLang (v0.4's overlap scheduler), TensorRT-LLM (C++ executor
-- with an overlap scheduler) and vLLM from v0.14.0 ("Async scheduling is
-- now enabled by default", its release notes) also schedule during the
-- GPU's step.  vLLM V1 before v0.14.0 schedules, prepares the inputs and
-- reads the sampled tokens back between steps unless --async-scheduling
-- is given (vllm PR #19970, 2025-06: "an initial version of the
-- asynchronous scheduler ... enabled using the `--async-scheduling` flag",
-- off by default): the GPU waits for that host work every step.  It is
-- priced where the run says so (async_scheduling = false; validate sets it
-- for a case of a V1 release before 0.14.0) at gp.rl's figures for the
-- same engine (rl.lua ENGINE_HOST: 0.43 ms a step and 19.8 us a sequence,
-- from the 5-6 ms gap between two decodes at batch 256 of vllm issue
-- #10634 and the fixed part of vllm PR #42131), engine/infer.c
-- engine_time; a run that does not say is priced as today's vLLM, which
-- overlaps it.  vLLM V0 (before 0.8.0) never overlaps it and does more
-- of it (it rebuilds the model's inputs each step): validate prices a V0
-- case at these V1 figures too, a floor (predict/infer.lua's vllm profile).
M.engine_host = setmetatable({}, { __index = function(_, k)
  return require("gpuplan.rl").ENGINE_HOST[k]
end })
-- NIM is TensorRT-LLM behind an OpenAI-compatible HTTP server; its TTFT also
-- holds tokenisation, queueing and the network (NVIDIA NIM benchmarking
-- "Metrics"), but no published figure for those was found: 0, not a guess.
-- vLLM's API server (one process unless --api-server-count) also parses,
-- templates and tokenises every request before its engine sees it.  The
-- published figures found do not price v0.11.0's chat path: vllm PR #20065
-- ("1000 requests ... 6-8 seconds delay before prompts actually are
-- started to process", a Jinja parse per request) was fixed by caching in
-- June 2025, before v0.11.0; PR #27407 times about 3 ms of API-server work
-- a request (/v1/embeddings, Ryzen 9800X3D and Xeon 8575C); PR #23000's
-- 414.91 req/s (/v1/embeddings, 512 tokens) bounds it at 2.4 ms.  At
-- 3.5 ms a request, 1000 are admitted in 3.5 s while the vLLM bursts'
-- modelled runs take 3.5-38 s: such a limit could hold back only the
-- three 3.5-3.6 s ones, by a few tenths of a second.  Not priced.
-- A later search (vLLM PR #17546's --api-server-count, SGLang's
-- TokenizerManager, trtllm-serve's postprocess workers) found no figure
-- either, and the logs give no first token before the wait ends, which a
-- rate limit overlapping the engine cannot give (docs/validation.md).
-- Eager PyTorch (LitGPT, HF generate) dispatches every op from Python.
M.runtimes = {
  graphs = "graphs", kernels = "kernels", eager = "eager",
  trtllm = "graphs", vllm = "graphs", sglang = "graphs", ["nim-http"] = "graphs",
  ["eager-pytorch"] = "eager", litgpt = "eager", autoawq = "eager", ["llama.cpp"] = "kernels",
  ["gpt-fast"] = "graphs", exllamav2 = "graphs",
}
-- The names in the order the messages list them (the three kinds first),
-- and the names of those whose kind is `kind` (runtime_names("graphs"):
-- the CUDA-graph runtimes), ", "-joined: one list for every message that
-- names the runtimes (gp.infer's and the infer command's refusals).
M.RUNTIME_ORDER = { "graphs", "kernels", "eager", "trtllm", "vllm", "sglang", "nim-http",
  "eager-pytorch", "litgpt", "autoawq", "llama.cpp", "gpt-fast", "exllamav2" }
function M.runtime_names(kind)
  local out = {}
  for _, n in ipairs(M.RUNTIME_ORDER) do
    if kind == nil or M.runtimes[n] == kind then out[#out + 1] = n end
  end
  return table.concat(out, ", ")
end

-- ExLlamaV2 (turboderp/exllamav2; the same at 373bcc1, its README's
-- benchmark, and b9c025b) allocates by its own rule, not a serving
-- engine's fraction of the card, and test_inference.py -s (the README's
-- speed test) loads it that way: with no --gpu_split model_init's
-- post_init_load calls model.load(split = None), whose
-- set_device_map(gpu_split or [99999]) places the modules in a 99999 GB
-- allocation -- nothing held back (load_autosplit's 192 + 256 MiB
-- reserve is the --gpu_split auto path only).  So the margin is 0 where
-- the user gives none (vLLM's gpu_memory_utilization 0.9, the other
-- runtimes' default, is vLLM's), the CUDA context and the allocator's
-- fragmentation still priced (gpuplan.memory's reserve).  Its modules
-- size their scratch for max_input_len x max_batch_size tokens a forward
-- (attn.py temp_state_size and temp_q_size, mlp.py temp_state_size and
-- temp_a_size: "cfg.max_input_len * cfg.max_batch_size * ... * 2"), and
-- ExLlamaV2Config's defaults are "self.max_input_len = 2048" ("Maximum
-- length of input IDs in a single forward pass. Sequences longer than
-- this will be processed in multiple steps") and "self.max_batch_size =
-- 1" (exllamav2/config.py): the workspace's token budget and the
-- prefill's chunk are 2048 x the sequences a forward runs (max_batch: 1
-- where no batch or concurrency is given, else that many), in place of
-- TensorRT-LLM's 8192 / vLLM's profile budget.  Not priced alike: the
-- token embedding, which set_device_map keeps on the CPU (embed_cpu =
-- True), is counted on the GPU at 16 bits with a 16-bit head (EXL2
-- quantises the head, convert_exl2.py --head_bits default 6); the dequant
-- buffer (linear.py temp_dq_size, 2 x min(in x out, max_dq_size 512 Mi)
-- elements, 0.47 GB for Llama 2 70B's MLP) is not; ExLlamaV2Cache holds
-- max_seq_len tokens a sequence where gp.infer holds input + output.
M.exllamav2 = { max_input_len = 2048, max_batch_size = 1, margin = 0 }

-- What a serving runtime holds back of the card where the user gives
-- neither margin nor kv_free_fraction, each by its own source (the
-- catalog's safety_margin, 0.10, is vLLM's: "gpu_memory_utilization
-- ... default 0.9", the fraction of the card its profile run may use).
--   trtllm: TensorRT-LLM's KV pool is a fraction of the memory FREE once
--     the model is loaded, not of the card: llmapi/llm_args.py
--     KvCacheConfig "free_gpu_memory_fraction: Optional[float] =
--     Field(default=0.9, ... "The fraction of GPU memory fraction that
--     should be allocated for the KV cache. Default is 90%."" -- the rule
--     gp.infer's kv_free_fraction prices (memory_infer.c serve_reserve:
--     the margin is 0.1 of what weights, workspace and the reserve leave).
--     predict/infer.lua's trtllm profile sets the same for the cases.
--   llama.cpp: no fraction of the card.  llama_context allocates the
--     model's layers (-ngl of them on the GPU), the KV cache of n_ctx
--     cells and the compute buffer ggml-alloc reserves for the worst-case
--     graph ("compute buffer size = ... MiB", src/llama-context.cpp), and
--     nothing more; llama-bench and llama-cli take no utilization option.
--     So margin 0; the compute buffer is priced as the engine's workspace
--     and the CUDA context and fragmentation as gpuplan.memory's reserve.
--     (Newer builds' --fit sets only what the user left unset so that
--     --fit-target, 1024 MiB, stays free a device; priced here are runs
--     that give their layers and context, as the llama-bench cases do.)
--   sglang: not here.  ServerArgs' mem_fraction_static holds weights and
--     KV pool; the rest, 1 - fraction, holds activations and CUDA-graph
--     buffers (model_runner profile_max_num_token: "rest_memory =
--     available_gpu_memory - total_gpu_memory * (1 - mem_fraction_static)"),
--     so its rest is the engine's workspace plus a margin, not a margin
--     alone, and the fraction's default changed by release (0.88 to 0.79
--     by TP in 0.4.x; (gpu_mem - reserved_mem) / gpu_mem by card size
--     later): it keeps the catalog's 0.10.
M.runtime_memory = {
  trtllm = { kv_free_fraction = 0.90,
             said = "kv_free_fraction=0.90 (TensorRT-LLM free_gpu_memory_fraction default)" },
  ["llama.cpp"] = { margin = 0,
                    said = "margin=0.00 (llama.cpp holds no fraction of the card back)" },
  -- ExLlamaV2's model.load holds nothing back (M.exllamav2, its source)
  exllamav2 = { margin = M.exllamav2.margin,
                said = string.format("margin=%.2f (ExLlamaV2's model.load holds no memory back)",
                                     M.exllamav2.margin) },
}

-- What a static batch's runtime holds back (batching = "static"):
--   trtllm: gptSession, as TensorRT-LLM's performance pages to 0.9.0 ran it
--     (engines built "--paged_kv_cache disable"; 0.5's build left it off),
--     sizes a contiguous KV cache for the batch it runs: RuntimeBuffers::
--     reshape, "kvCacheShape = ITensor::makeShape({batchSize, 2,
--     modelConfig.getNbKvHeads(), maxSeqLength, ...getSizePerHead()})",
--     "utils::reshapeBufferVector(presentKeysVals, kvCacheShape)" (cpp/
--     tensorrt_llm/runtime/runtimeBuffers.cpp, early 2024).  No fraction
--     of the free memory is taken (KvCacheConfig's free_gpu_memory_fraction
--     sizes the paged pool only): margin 0, the reserve (context,
--     workspaces) and the engine's activations still counted.  A gptSession
--     run on a paged cache (its pool of 0.90 of the free memory) is not
--     what this prices.
M.static_memory = {
  trtllm = { margin = 0,
             said = "margin=0.00 (batching static: gptSession's contiguous KV cache is the "
               .. "batch's own, no fraction of the free memory held back)" },
}

-- Kernel-launching framework ops per Llama block at decode, for eager
-- runtimes whose model code was counted (the engine's default, 49, is
-- gpt-fast's plain-PyTorch block, the source of the per-op host time).
-- LitGPT (lit_gpt/model.py and rmsnorm.py, 2023, Block with
-- CausalSelfAttention, LLaMAMLP, RMSNorm, apply_rope, KVCache), views and
-- slices not counted: RMSNorm 6 (x*x, mean, +eps, rsqrt, mul, *weight) x 2,
-- qkv linear 1, apply_rope 5 x 2 (neg, cat, x*cos, rotated*sin, add), the
-- cat with the un-roped tail 2, KV index_copy_ 2, SDPA 1, proj 1, LLaMAMLP
-- 5 (fc_1, fc_2, silu, mul, proj), residual adds 2: 36.  (RMSNorm
-- revisions that upcast to fp32 add 2 casts each: 40.)
-- AutoAWQ's fused modules (casper-hansen/AutoAWQ v0.1.6, from_quantized
-- with fuse_layers=True; its examples/benchmark.py loop calls the model
-- once a token, no CUDA graph).  awq/models/llama.py LlamaFuser puts each
-- layer in awq/modules/fused/block.py LlamaLikeBlock, whose decode step
-- (one token, FasterTransformer's kernels installed) launches:
-- FasterTransformerRMSNorm 1 ("awq_inference_engine.layernorm_forward_
-- cuda") x 2; QuantAttentionFused (awq/modules/fused/attn.py): the fused
-- qkv_proj 1 (WQLinear), "ft_inference_engine.single_query_attention"
-- 1 (rotary, the cache write and the attention in one kernel), o_proj 1;
-- QuantLlamaMLP (awq/modules/fused/mlp.py): gate and up "self.linear"
-- 2, "F.silu(gate_output) * up_output" 2, down_proj 1; the residual adds
-- "h = hidden_states + attn_output", "out = h + self.mlp.forward(...)"
-- 2: 12 (views, slices and reshapes launch nothing).
M.host_ops = { litgpt = 36, autoawq = 12 }

-- vLLM V0's sampler (vllm/model_executor/layers/sampler.py, Sampler.forward,
-- run eagerly after the CUDA graph's forward on the driver): the kernels
-- each sampling setting (gp.infer's sampling) launches a step beyond greedy
-- sampling's, counted from the source at v0.4.2 (commit 8d8357c, "bump
-- version to v0.4.2 (#4600)") and v0.6.3 (the file as of #9261,
-- 2024-10-10; #9267 of 2024-10-16 changes only its type hints).  Every
-- count is of ops that launch a CUDA kernel (views, unsqueeze_, empty_like
-- launch none), and of the copies to the GPU they add; engine/infer.c
-- sample_extra prices each as one pass over the logits on the stream.
--   penalties (do_penalties: any repetition, presence or frequency
--   penalty; _apply_penalties, the same at both releases): 20 kernels --
--   _get_bin_counts_and_mask for the prompt and the output tokens, each
--   zeros, ones_like, scatter_add_ and "bin_counts > 0" (8); the
--   repetition penalties' repeat, "|", "~" and the assignment
--   "repetition_penalties[~(prompt_mask | output_mask)] = 1.0" (4: a
--   masked_fill_, PyTorch's index_put_ taking its canDispatchToMaskedFill
--   path for a one-element CPU value); torch.where(logits > 0, logits /
--   r, logits * r) (4); "logits -= frequency_penalties.unsqueeze_(dim=1)
--   * output_bin_counts" and the presence line (2 each).  From vllm PR
--   #5289 ("[Core] Avoid copying prompt/output tokens if no penalties are
--   used", 2024-06-06) SamplingTensors.from_lists builds the prompt and
--   output token tensors only under penalties ("if do_penalties: prompt_t
--   = make_tensor_with_pad(...)", an empty tensor otherwise), so their two
--   copies to the GPU ("prompt_tokens=prompt_t.to(device=device,
--   non_blocking=True)", on the stream after the forward) are the
--   penalties' too: 22 (v0.4.2 copies them for greedy sampling as well).
--   top_p (do_top_p_top_k: top_p < 1 or top_k set; _apply_top_k_top_p):
--   sort, k.to(torch.long), size - k, gather, "<", masked_fill_,
--   softmax, cumsum, "1 - p", "<=", "top_p_mask[:, -1] = False" (a fill),
--   masked_fill_ (12), then the unsort: v0.4.2 arange, scatter_ and
--   gather (3: 15 in all), and from vllm PR #8619 ("[Core] simplify logits
--   resort in _apply_top_k_top_p", 2024-09-20) one scatter_ (13 in all).
--   random (temperature > 0, SamplingType.RANDOM; _multinomial): the
--   exponential_ and div_ before the argmax that greedy sampling also
--   runs (2).
-- Greedy sampling's own kernels (temperature div_, softmax, log_softmax,
-- the index and argmax, the logprobs' gather, rank and topk) are the
-- "sample" row's, unchanged.  Releases: from v0.4.2 to v0.6.3 (git log
-- of both files) _apply_penalties and _get_bin_counts_and_mask are
-- unchanged and _multinomial changed only in its flashinfer branch (#7137,
-- off by default: VLLM_USE_FLASHINFER_SAMPLER "0"), so the counts move at
-- two merges alone: #5289 (penalties 20 to 22), not under "Bump version
-- to v0.4.3 (#5046)" and under "Bump version to v0.5.0 (#5384)" in git's
-- history, and #8619 (top_p 15 to 13), not under "bump version to
-- v0.6.1.post2 (#8473)"; 0.6.2 (2024-09-25, five days after it, its
-- version commit not found) is assumed to hold it.  Other releases were
-- not counted: gp.infer refuses them.
M.SAMPLING = { "random", "top_p", "penalties" }
M.v0_sampler = {
  random = 2,
  -- release ranges, major * 10000 + minor * 100 + patch
  { lo = 402, hi = 403, penalties = 20, top_p = 15 },
  { lo = 500, hi = 601, penalties = 22, top_p = 15 },
  { lo = 602, hi = 603, penalties = 22, top_p = 13 },
}

-- The sampling stages of a sampling value (a comma-separated string or a
-- list of M.SAMPLING names; "greedy" alone: none), as a set, or nil and
-- the error's text.
function M.sampling_stages(v)
  local list = v
  if type(v) == "string" then
    list = {}
    for w in (v .. ","):gmatch("([^,]*),") do list[#list + 1] = w:match("^%s*(.-)%s*$") end
  end
  if type(list) ~= "table" or #list == 0 then
    return nil, "sampling must be greedy or a list of " .. table.concat(M.SAMPLING, ", ")
      .. " (got " .. tostring(v) .. ")"
  end
  local set, known = {}, {}
  for _, n in ipairs(M.SAMPLING) do known[n] = true end
  for _, n in ipairs(list) do
    if n == "greedy" and #list == 1 then return set end
    if not known[n] then
      return nil, "sampling: unknown stage '" .. tostring(n) .. "' (expected greedy, or a list of "
        .. table.concat(M.SAMPLING, ", ") .. ")"
    end
    set[n] = true
  end
  return set
end

-- Whether model has a shared expert beside its routed ones (DeepSeek's,
-- Qwen2-MoE's): the one test of where shared_expert_stream applies, for
-- M.setup's refusal and default and validate's vLLM release rule alike.
function M.has_shared_expert(model)
  return type(model) == "table" and type(model.moe) == "table"
    and (model.moe.shared_experts or 0) > 0
end

-- The kernels vLLM V0's sampler of release ver ("X.Y.Z") launches a
-- step beyond greedy sampling's under the stages set; nil and the error's
-- text for a release not counted.
function M.v0_sampler_kernels(stages, ver)
  -- exactly X.Y.Z (gpuplan.version's reader, neither "v" nor rc)
  local rel = version.parse(ver)
  -- the counted row of the release's number, whatever its form
  local form, n = nil, rel and version.number(rel)
  for _, r in ipairs(M.v0_sampler) do
    if n and n >= r.lo and n <= r.hi then form = r end
  end
  if not (form and rel.plain and rel.parts == 3) then
    -- (a number as args.shown writes it: 0/0 was the C library's "-nan";
    -- an empty string as '', which printed as nothing at all)
    -- A counted release written with a tag's v, a candidate's rc or a
    -- suffix ("v0.5.0", "0.5.0rc1", "0.6.3.post1") was told only that
    -- 0.4.2 to 0.6.3 are counted, which it names: say the form.
    local how = ""
    if form and rel.parts == 3 then
      how = ": give the release alone, " .. rel.release .. " (no tag's v, rc or suffix)"
    end
    return nil, "vllm_version " .. (ver == "" and "''" or type(ver) == "string" and ver
      or require("gpuplan.args").shown(ver)) .. ": the V0 sampler's kernels are counted "
      .. "for releases 0.4.2 to 0.6.3 only (X.Y.Z)" .. how
  end
  local k = 0
  if stages.penalties then k = k + form.penalties end
  if stages.top_p then k = k + form.top_p end
  if stages.random then k = k + M.v0_sampler.random end
  return k
end

-- Graph runtimes that can also run every step eagerly (enforce_eager), and
-- the kernel-launching ops a layer then dispatches from Python, by model
-- and TP size.  vLLM's --enforce-eager ("Always use eager-mode PyTorch",
-- the flag vllm PR #1926 added with its CUDA graphs, 2023-12) runs its
-- model classes op by op: the same launches gpuplan.rl counts for a vLLM
-- rollout engine without graphs (rl.eager_ops_per_layer: a dense Llama
-- layer's fused add-RMSNorm, qkv_proj, rotary, KV cache write, attention,
-- o_proj, the second norm, gate_up_proj, SiluAndMul, down_proj, and 2 TP
-- all-reduces at TP > 1).  Each op at host_op_time (GP_EAGER_OP_TIME);
-- the runtime keeps its own kernels (M.gemv_max, M.custom_ar by name).
-- vLLM V0's longest context a decode step runs its CUDA graph at: past it
-- the model runner runs the step eagerly.  v0.4.x's LLM and EngineArgs
-- take "max_context_len_to_capture: int = 8192" ("Maximum context len
-- covered by CUDA graphs. When a sequence has context length larger than
-- this, we fall back to eager mode.", vllm/entrypoints/llm.py), and
-- worker/model_runner.py _prepare_decode sets "use_captured_graph = (not
-- self.model_config.enforce_eager and batch_size <=
-- _BATCH_SIZES_TO_CAPTURE[-1] and max_context_len <=
-- self.max_context_len_to_capture)"; 0.5 renamed it
-- max_seq_len_to_capture (same default), which
-- ModelInputForGPUBuilder._use_captured_graph tests as "max_decode_seq_len
-- <= self.runner.max_seq_len_to_capture" up to V0's removal.  V1 captures
-- by token count only (M.graph_sizes).
M.v0_graph_max_context = 8192

-- vLLM's Ray executor before vllm PR #4894 ("[Core] Eliminate parallel
-- worker per-step task scheduling overhead", reviewed 2024-05-21, after
-- v0.4.2 of 2024-05-05): with tensor or pipeline parallelism the engine ran
-- its workers under Ray (the default wherever Ray was installed until vllm
-- PR #5230, 2024-06-03: 'self.distributed_executor_backend = "ray" if
-- ray_found else "mp"'), and each step the driver's _run_workers submitted
-- execute_model to every worker as a Ray task ("worker.execute_method.remote
-- (...)") and waited on ray.get for their results, work the GPU waits for.
-- The PR's first version, vllm PR #3763 (2024-03-31), times it: "Using 80GB
-- A100s, with llama-2-7b openai completion API. Single request with 5 input
-- tokens, 2000 generated tokens", "TP=2 | 24.2" against "TP=2 with this PR
-- | 20.2": 4.0 s over 2000 steps, 2.0 ms a step (its TP 4 Llama-2-70B run,
-- "about 5% reduction in latency", about the same a step).  The same
-- table's run without Ray, "TP=2 with #3466 (without Ray) | 17.0" (the
-- multiprocessing executor, whose driver also hands each step to its
-- worker), is 1.6 ms a step faster again: Ray's executor costs 24.2 - 17.0
-- = 7.2 s over 2000 steps, 3.6 ms a step, against that executor, the task
-- (2.0 ms) and a part the PR does not name (1.6 ms; with the loop in both
-- executors, 20.2 s against 16.7 s, 1.75 ms).  That the multiprocessing executor
-- itself costs about nothing on top of the engine is what the TP=1 row
-- says once vLLM 0.4's own host work is priced (M.v0_host_step): the
-- 17.0 s row is then priced at 16.4 s, the 16.7 s row's executor with the
-- loop at the same, so the whole 3.6 ms is priced as Ray's.
-- engine/infer.c engine_time adds it to each step (gp.infer's ray_step;
-- validate sets it for a vLLM case of a release before 0.4.3, or of no
-- release dated before 2024-05-21, on more than one GPU: predict/infer.lua's
-- vllm profile).
M.v0_ray_step = (24.2 - 17.0) / 2000

-- vLLM 0.4's own host work a decode step beyond V1's figures
-- (M.engine_host, which async_scheduling = false prices for every V0
-- release as a floor).  V0's LLMEngine.step schedules, rebuilds the
-- model's inputs (model_runner.py _prepare_decode: Python lists of
-- positions, slot mappings and block tables turned into tensors each
-- step), runs the graph, then samples and builds the RequestOutputs with
-- the GPU idle between steps.  The same PR's single-GPU row times it
-- whole: vllm PR #3763 (2024-03-31, on v0.4.0's main), "Using 80GB A100s,
-- with llama-2-7b openai completion API. Single request with 5 input
-- tokens, 2000 generated tokens", "| TP=1 | 24.2 | 0 |": 12.10 ms a step.
-- gp.infer prices that job (llama2-7b, a100-sxm-80gb, runtime vllm,
-- async_scheduling = false, input 5, output 2000, batch 1: CUDA graphs,
-- v0.4's default) at 10.32 ms a step, 9.87 ms of GPU and 0.45 ms of V1's
-- host work, so 0.4's step costs 1.78 ms more (tests/lua/v0_step.t holds
-- the job to 24.2 s).  Its engine served the request through the OpenAI
-- server, which before 0.6 ran in the engine's process (AsyncLLMEngine),
-- so the figure is at most what an offline LLM.generate run pays.  One
-- measured release, so validate sets it for 0.4 only (gp.infer's v0_step:
-- a vLLM case of a 0.4.x release, or of none dated 2024-03-30 to
-- 2024-06-10, predict/infer.lua's vllm profile); a step cost, not a
-- sequence's (the row is one sequence).
M.v0_host_step = 24.2 / 2000 - 10.32e-3

-- vLLM's awq_gemm before awq_marlin (v0.5.3): the K slices its GEMM
-- writes apart and a kernel of its own sums after every AWQ linear
-- (gp.infer's wo_split_k; validate sets it for a vLLM case of AWQ weights,
-- workload.quant_method, before 0.5.3).  AWQLinearMethod.apply_weights
-- (vllm/model_executor/layers/quantization/awq.py, v0.4.2) calls
-- "ops.awq_gemm(reshaped_x, qweight, scales, qzeros, pack_factor)" with
-- pack_factor = 32 // weight_bits = 8, which awq_gemm takes as
-- split_k_iters: "_out_feats = torch::empty({split_k_iters, num_in_feats,
-- _kernel.size(1) * 8}, options)" ... "return _out_feats.sum(0);"
-- (csrc/quantization/awq/gemm_kernels.cu).
M.v0_awq_split_k = 8

-- TensorRT-LLM's PyTorch flow before its CUDA graphs came on by default
-- (PyTorchConfig "use_cuda_graph: bool = False", tensorrt_llm/_torch/
-- pyexecutor/config.py at 9b931c0f, the March 2025 commit dstack's
-- DeepSeek-R1 runs built; trtllm-serve's get_llm_args passed only
-- "PyTorchConfig(enable_overlap_scheduler=True)"; TensorRT-LLM PR #5480,
-- "Enable cuda graph by default", opened 2025-06-25) ran every step from
-- Python.  Counted for the one model that flow served as a MoE: DeepSeek-
-- V3's decoder (MLA + MoE, block-scaled fp8) in _torch/models/
-- modeling_deepseekv3.py at 9b931c0f, a generation step with TP
-- attention, an op being a call that launches a kernel:
--   MLA (modules/attention.py of that month, forward_generation): fused_a
--   2 (FP8 block-scale Linear: "torch.ops.trtllm.fp8_quantize_1x128" then
--   "fp8_block_scaling_gemm"), q_a_layernorm 1, kv_a_layernorm 1, q_b_proj
--   2, the latent cache's torch.concat 1, q_nope's
--   fp8_batched_quantize_1x128_permute102 and fp8_block_scaling_bmm_out 2,
--   the MLA generation op (mqa.forward) 1, the latent output's quantize and
--   bmm 2, o_proj 2: 14;
--   a MoE layer adds the fused all-reduce + residual + RMSNorm
--   (deepseek_allreduce, PRE_MOE_FUSION) 1, the shared expert (GatedMLP:
--   gate_up 2, activation 1, down 2) 5, the gate's cublas_mm 1, the
--   routing (Deepseekv3RoutingImpl: sigmoid, + bias, noaux_tc_op, two
--   .to()) 5, the fused MoE op 1, shared + routed 1, the all-reduce 1 and
--   the next layer's fused add-RMSNorm 1: 30 in all;
--   a dense layer (first_k_dense_replace) adds the o_proj all-reduce 1
--   (no PRE_MLP_FUSION for fp8), post_attention_layernorm 1, GatedMLP 5
--   and the all-reduce fused with the next norm (POST_MLP_FUSION) 1: 22.
-- The mean over the model's layers; at tp 1 the three all-reduces of a
-- layer are not called (tensor_parallel_size == 1).  Another model has
-- no count (nil): gp.infer refuses enforce_eager for it.
local function trtllm_eager_ops(model, tp)
  local mla = type(model.mla) == "table" and (model.mla.kv_lora_rank or 0) > 0
  local moe = type(model.moe) == "table" and (model.moe.experts or 0) > 0
  if not (mla and moe) then return nil end
  local L = model.layers
  local nd = math.min(L, model.moe.dense_layers or 0)
  local ar = (tp or 1) > 1 and 1 or 0
  -- without TP the fused all-reduce + norm calls are plain norms (1 each)
  local moe_l = 14 + 1 + 5 + 1 + 5 + 1 + 1 + ar + 1
  local dense_l = 14 + ar + 1 + 5 + 1
  return (nd * dense_l + (L - nd) * moe_l) / L
end

M.eager_host_ops = {
  vllm = function(model, tp) return require("gpuplan.rl").eager_ops_per_layer(model, tp) end,
  trtllm = trtllm_eager_ops,
}

-- SGLang's prompt (extend) pass off its CUDA graphs: CudaGraphRunner
-- captures decode batches only ("def can_run(self, forward_batch)" takes
-- forward_mode.is_cuda_graph(): decode, target-verify and idle,
-- python/sglang/srt/model_executor/cuda_graph_runner.py; piecewise
-- extend graphs are opt-in, --enable-piecewise-cuda-graph, off at 0.5.x),
-- so model_runner.forward_extend calls the model's forward from Python,
-- each call that launches a kernel at host_op_time (GP_EAGER_OP_TIME,
-- engine/common.h), a floor under the pass (engine/infer.c
-- infer_cfg.extend_host_ops).  Counted per decoder layer, TP attention,
-- 16-bit weights, from sgl-project/sglang's model files of the 0.5 line
-- (read at llama.py 00239548 and qwen3_moe.py, not at the 0.5.6 tag
-- itself; "ar" the TP all-reduce, absent at tp 1):
--   llama (llama.py LlamaDecoderLayer / LlamaAttention / LlamaMLP):
--     input_layernorm (fused_add_rmsnorm) 1, qkv_proj 1, rotary_emb 1,
--     RadixAttention's backend: the K and V stores of set_kv_buffer
--     ("self.k_buffer[layer_id][loc] = cache_k", "...v_buffer...") 2 and
--     the prefill kernel 1, o_proj 1 + ar, post_attention_layernorm 1,
--     gate_up_proj 1, SiluAndMul 1, down_proj 1 + ar: 11 + 2 ar;
--   qwen3_moe (Qwen3MoeAttention / Qwen3MoeSparseMoeBlock.forward_normal):
--     input_layernorm 1, qkv_proj 1, the q and k head norms (q.reshape(-1,
--     head_dim) of qkv.split's strided view copies, then RMSNorm, each:
--     2 + 2), rotary_emb with the KV store fused
--     (create_fused_set_kv_buffer_arg) 1, the prefill kernel 1, o_proj 1
--     + ar, post_attention_layernorm 1, gate (ReplicatedLinear) 1, TopK
--     (topk_softmax) 1, FusedMoE's Triton path (moe_align_block_size,
--     the w13 fused_moe_kernel, silu_and_mul, the w2 fused_moe_kernel,
--     moe_sum_reduce) 5, moe_tensor_model_parallel_all_reduce ar:
--     17 + 2 ar.
--   deepseek_v2 (DeepSeek-V3/R1: MLA + MoE, block-scaled fp8 weights,
--     read at sglang 00114aef, a mid-2025 commit of the 0.4 line, not at
--     the 0.5.3 / 0.5.6 tags the gpustack and cookbook rows state),
--     DeepseekV2AttentionMLA's prompt path with no prefix (fa3's
--     MHA_CHUNKED_KV, flashinfer's and Triton's MHA: the same
--     forward_normal prepare): input_layernorm 1,
--     fused_qkv_a_proj_with_mqa 2 (each fp8 block Linear: the activation's
--     per-token-group quant, then the GEMM), q_a_layernorm 1, q_b_proj 2,
--     "kv_a.contiguous()" 1, kv_a_layernorm 1, kv_b_proj 2, rotary_emb 1,
--     "q[..., self.qk_nope_head_dim :] = q_pe" 1, "k[..., :
--     self.qk_nope_head_dim] = k_nope" and "k[..., self.qk_nope_head_dim
--     :] = k_pe" 2, the two "latent_cache[:, :, ...] =" stores 2,
--     set_kv_buffer 1, attn_mha 1, fa3's "lse = torch.transpose(lse, 0,
--     1).contiguous()" 1, o_proj 2, post_attention_layernorm 1: 22 + ar;
--     a MoE layer (DeepseekV2MoE.forward_normal, the shared expert fused
--     into the routed ones, num_fused_shared_experts = n_shared_experts):
--     gate "F.linear" 1, the grouped top-k (moe_fused_gate) 1, FusedMoE's
--     Triton path as qwen3_moe's 5 plus one "A, A_scale =
--     sglang_per_token_group_quant_fp8(A, block_k)" before each of the two
--     fused_moe_kernel calls 2: 9 + ar, 31 + 2 ar a layer;
--     a dense layer (first_k_dense_replace) DeepseekV2MLP: gate_up_proj 2,
--     SiluAndMul 1, down_proj 2: 27 + 2 ar; the mean over the layers.
--     A floor: the rope is one call, --enable-deepep-moe's dispatch and
--     combine and a prefix's chunked loop are not counted.
--   gpt_oss (GptOssDecoderLayer / GptOssAttention /
--     GptOssSparseMoeBlock.forward_normal, read at sglang 009c6808 of the
--     0.5 line, not at the 0.5.6 tag the cookbook rows state):
--     input_layernorm 1, qkv_proj 1, "q, k = self.rotary_emb(positions,
--     q, k, **extra_args)" with the KV store fused
--     (create_fused_set_kv_buffer_arg) 1, "self.attn(*inner_state,
--     sinks=self.sinks, ...)" 1, o_proj 1 + ar, post_attention_layernorm
--     1, "router_logits, _ = self.router(hidden_states)" 1, "self.experts(
--     hidden_states, topk_output)" 1 + ar: 8 + 2 ar.  A floor: the TopK
--     call (a bypass where the MoE kernel routes, as flashinfer's TRT-LLM
--     MXFP4 MoE does from the router logits) and the experts' activation
--     quantisation are not counted.
-- Other families (hybrids) are not counted (nil): their prompt passes
-- stay priced at the graph launch.
-- Told apart by shape, as a case gives its model inline (no family):
-- llama a gated RMSNorm dense decoder with none of the features the other
-- files add (MLA, MoE, head norms, sinks, Mamba or sliding layers,
-- parallel blocks); qwen3_moe head norms and MoE in every layer, no
-- shared expert, no MLA; deepseek_v2 MLA with MoE; gpt_oss MoE in every
-- layer with sliding-window layers, no head norms, MLA or shared expert.
local function sglang_extend_ops(model, tp)
  local ar = (tp or 1) > 1 and 2 or 0
  local moe = type(model.moe) == "table" and (model.moe.experts or 0) > 0
  local mla = type(model.mla) == "table" and (model.mla.kv_lora_rank or 0) > 0
  local sw = type(model.sliding_window) == "table" and (model.sliding_window.layers or 0) ~= 0
  if mla and moe and not (model.mamba or model.attn_sinks or sw) then
    -- deepseek_v2 (above): 27 + ar a dense layer, 31 + ar a MoE layer
    local L = model.layers
    local nd = math.min(L, model.moe.dense_layers or 0)
    return (nd * (27 + ar) + (L - nd) * (31 + ar)) / L
  end
  if M.gpt_oss_shape(model) then
    return 8 + ar -- gpt_oss (above)
  end
  if mla or model.mamba or model.attn_sinks or sw or model.parallel_attn
    or model.norm ~= "rms" or not model.ffn_gated then return nil end
  if not moe and not model.qk_norm then return 11 + ar end
  if moe and model.qk_norm and (model.moe.shared_experts or 0) == 0
    and (model.moe.dense_layers or 0) == 0 then return 17 + ar end
  return nil
end

M.extend_host_ops = { sglang = sglang_extend_ops }

-- gpt_oss's shape, as sglang_extend_ops tells it apart (its comment above):
-- MoE in every layer with sliding-window layers, no head norms, MLA, Mamba,
-- parallel blocks or shared expert, gated RMSNorm.  SGLang keys its
-- GptOssForCausalLM defaults on the architecture; a case gives its model
-- inline, so the shape tells it (M.sglang_ar_norm_fusion and serve.lua's
-- MXFP4 padding read it too).
function M.gpt_oss_shape(model)
  if type(model) ~= "table" then return false end
  local moe = type(model.moe) == "table" and (model.moe.experts or 0) > 0
  local mla = type(model.mla) == "table" and (model.mla.kv_lora_rank or 0) > 0
  local sw = type(model.sliding_window) == "table" and (model.sliding_window.layers or 0) ~= 0
  return (moe and sw and not (mla or model.mamba or model.qk_norm or model.parallel_attn)
    and model.norm == "rms" and model.ffn_gated
    and (model.moe.shared_experts or 0) == 0 and (model.moe.dense_layers or 0) == 0) or false
end

-- Small-M kernels by runtime: a decode step of at most this many tokens runs
-- the weight-only linears (int4/GPTQ/AWQ, NF4, int8 weight-only, GGUF bits)
-- as CUDA-core GEMVs, larger ones -- and every step at 0 -- on tensor-core
-- tiles that pad the tokens to 16 (engine/roofline.c).  From the runtimes'
-- own dispatch code:
--   TensorRT-LLM (and NIM, its backend): weightOnlyQuantMatmulPlugin and
--     weightOnlyGroupwiseQuantMatmulPlugin run the batched GEMV while
--     m < SMALL_M_FAST_PATH = 5, the CUTLASS fpA_intB GEMM above: 4.
--   vLLM, SGLang: GPTQ/AWQ run as gptq_marlin / awq_marlin (Machete on
--     Hopper), tensor-core kernels with 16-token tiles at every batch: 0.
--   llama.cpp: ggml-cuda mul_mat_vec_q for up to MMVQ_MAX_BATCH_SIZE = 8
--     columns (its dp4a dot products are priced as the fp32 GEMV: an upper
--     bound on their cost): 8.
--   eager PyTorch / HF / LitGPT: bitsandbytes' gemv_4bit and AutoGPTQ's
--     exllama kernels for a single token: 1.
--   AutoAWQ: WQLinear_GEMV's "awq_inference_engine.gemv_forward_cuda"
--     (its GEMM version's gemm_forward_cuda is not told apart): 1.
-- The generic names follow the engines they stand for: graphs (vLLM-like,
-- the default) 0, kernels (llama.cpp) 8, eager 1.
M.gemv_max = {
  graphs = 0, kernels = 8, eager = 1,
  trtllm = 4, ["nim-http"] = 4, vllm = 0, sglang = 0,
  ["eager-pytorch"] = 1, litgpt = 1, autoawq = 1, ["llama.cpp"] = 8, ["gpt-fast"] = 0,
}

-- llama.cpp's prompt path, as the build of the llama-bench cases ran it
-- (b2824, 4426e298, May 2024: "ggml_cuda_init: GGML_CUDA_FORCE_MMQ:   no",
-- "ggml_cuda_init: CUDA_USE_TENSOR_CORES: yes" in the notebooks'
-- logs, XiongjieDai/GPU-Benchmarks-on-LLM-Inference 'LLaMA 3/Gaming
-- GPUs/4090*_v3.ipynb'):
--   wo_unfused_above: a quantized matrix times more than
--     MMQ_MAX_BATCH_SIZE columns leaves the MMQ kernels for dequantize +
--     cuBLAS on cards with tensor cores ("#define  MMQ_MAX_BATCH_SIZE 32
--     // max batch size to use MMQ kernels when tensor cores are
--     available"; "on modern hardware, using cuBLAS is recommended as it
--     utilizes F16 tensor cores which are very performant for large
--     computational tasks", ggml-cuda.cu at 005de593), and
--     ggml_cuda_op_mul_mat_cublas does "convert src0 and src1 to fp16,
--     multiply as fp16, convert dst to fp32": "to_fp16_cuda(src0_dd_i,
--     src0_as_f16.get(), ne, stream)" writes the whole matrix at 16 bits
--     before cublasGemmEx reads it -- the engine's wo_unfused, above 32
--     tokens.  Later builds turned to MMQ by default on cards with int8
--     tensor cores (llama.cpp PR 8075, "CUDA: use MMQ instead of cuBLAS by
--     default", June 2024), not priced here.
--   ubatch / ubatch_call: llama_context's n_ubatch 512 and n_batch 2048
--     ("llama_new_context_with_model: n_batch    = 2048", "n_ubatch   =
--     512" in the same logs, llama-bench's defaults), each ubatch a graph
--     of its own; the calls pipeline over a layer split ("pipeline
--     parallelism enabled (n_copies=4)", the multi-GPU logs): engine
--     infer_run.c ubatch_ttft.  The compute buffer llama_context reserves
--     is one such graph, its activations F32 (act_bytes 4; with flash off
--     one layer's F32 scores over n_ctx): infer_run.c mem_cfg.
--   score_bytes: with FlashAttention off ("flash_attn = 0" in the logs)
--     each attention score moves 24 bytes through KQ, its F16 -> F32
--     conversion, the F32 softmax and KQV's F32 -> F16 conversion, over
--     every key of the ubatch's context (scores_whole): engine infer.c
--     unfused_scores.
M.wo_unfused_above = { ["llama.cpp"] = 32 }
-- acc16_gemm: those cuBLAS GEMMs (the 16-bit weights', the dequantised
--   ones' above 32 tokens, the unfused attention's KQ and KQV) run
--   "cublasComputeType_t cu_compute_type = CUBLAS_COMPUTE_16F" at
--   GGML_PREC_DEFAULT (Llama's graph sets GGML_PREC_F32 on none of
--   them), so a card with a faster FP16-accumulate tensor rate runs
--   them at it (the catalog's acc16_x: GeForce cards), and each linear
--   converts its F32 input to F16 and its F16 output to F32 in kernels
--   of their own: engine infer.c acc16_convert.
M.acc16_gemm = { ["llama.cpp"] = true }
--   launches_16 / launches_dequant / launch_queue: the launches one
--     layer of a ubatch queues on its GPU's stream at b2824 (ggml-cuda.cu
--     4426e298: each linear's ggml_cuda_op_mul_mat_cublas converts src1
--     to F16, calls cublasGemmEx and converts dst to F32 -- 3 launches,
--     4 with the quantized weight's to_fp16 dequant -- and KQ and KQV
--     go through ggml_cuda_mul_mat_batched_cublas's conversion,
--     k_compute_batched_ptrs, cublasGemmBatchedEx and to_fp32 -- 4
--     each; the 9 other ops of llm_build_llama's layer launch 14
--     kernels: 7 x 3 + 8 + 14 = 43, 7 x 4 + 8 + 14 = 50) and the
--     pending launches a stream holds before the host's next launch
--     waits ("the buffer size is about 1000 kernel",
--     stackoverflow.com/questions/53970187): engine infer_run.c
--     ubatch_ttft, pipe_period.
M.ubatch = { ["llama.cpp"] = { ubatch = 512, call = 2048, act_bytes = 4,
  launches_16 = 43, launches_dequant = 50, launch_queue = 1000 } }
function M.ubatch_launches(runtime, bits)
  local u = M.ubatch[runtime or "graphs"]
  if not u or not u.launches_16 then return nil end
  return (bits or 16) < 16 and u.launches_dequant or u.launches_16
end
M.score_bytes = { ["llama.cpp"] = 24 }

-- flash = false (--no-flash) prices every attention step unfused (engine
-- model_ops.c op_attn: the scores written, softmaxed and read, prompt and
-- decode alike).  Runtimes without such a path, read from their source,
-- refuse it by name, where it once priced a stack that cannot run:
--   vllm, sglang, nim-http: every attention backend is a fused kernel
--     (vLLM's FLASH_ATTN / XFORMERS / FLASHINFER / FLASHMLA, SGLang's
--     flashinfer / fa3 / triton / flashmla; SGLang's torch_native calls
--     torch's scaled_dot_product_attention, itself fused); NIM serves
--     through one of these or TensorRT-LLM and takes no attention switch.
--   trtllm: trtllm-build's --context_fmha disable unfuses the context
--     phase only; generation runs the masked MHA / XQA kernel either way,
--     which flash = false would price as unfused decode.
--   litgpt, gpt-fast: the attention is F.scaled_dot_product_attention
--     with no switch (gpt-fast model.py Attention.forward: "y =
--     F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
--     dropout_p=0.0)"; litgpt model.py CausalSelfAttention.
--     scaled_dot_product_attention).
--   autoawq: its fused modules have no switch either: the prompt is
--     always torch.matmul + softmax and the decode always the FT kernel
--     ("scores = torch.matmul(xq, keys.transpose(2, 3))" ... else
--     "single_query_attention", awq/modules/fused/attn.py), so flash =
--     false would price its decode unfused.
--   exllamav2 at tp > 1: "Tensor parallel inference requires flash-attn"
--     (exllamav2/attn.py forward_tp_old); at tp 1 its config.no_flash_attn
--     (with no_xformers, no_sdpa) takes _attn_torch's matmul / softmax /
--     matmul, the path priced.
-- Kept: graphs, kernels, eager (a stack of the user's), eager-pytorch
-- (transformers' attn_implementation "eager"), llama.cpp (-fa off, its
-- scores priced by M.score_bytes).
M.no_flash_path = {
  vllm = "every vLLM attention backend (FLASH_ATTN, XFORMERS, FLASHINFER, FLASHMLA) is a fused kernel",
  sglang = "every SGLang attention backend (flashinfer, fa3, triton, flashmla, torch_native's SDPA) "
    .. "is a fused kernel",
  ["nim-http"] = "NIM serves through vLLM, SGLang or TensorRT-LLM and takes no attention switch",
  trtllm = "TensorRT-LLM's generation runs its masked MHA / XQA kernel whatever --context_fmha says, "
    .. "and flash = false would price its decode unfused",
  litgpt = "LitGPT's attention is torch's scaled_dot_product_attention, with no switch",
  ["gpt-fast"] = "gpt-fast's attention is F.scaled_dot_product_attention, with no switch",
  autoawq = "AutoAWQ's fused modules have no switch (the prompt is always matmul + softmax, the "
    .. "decode always its single_query_attention kernel)",
}
function M.check_flash_runtime(a, tp)
  if a.flash ~= false then return end
  local r = a.runtime or "graphs"
  local why = M.no_flash_path[r]
  if not why and r == "exllamav2" and (tp or 1) > 1 then
    why = "ExLlamaV2's tensor parallelism requires flash-attn (\"Tensor parallel inference "
      .. "requires flash-attn\"); give tp = 1"
  end
  if why then
    -- level 3 as setup's own refusals: gp.infer places it at the script's line
    error(require("gpuplan.args").usage("infer: flash = false with runtime = " .. r
      .. ": " .. why .. "; drop flash = false or give runtime eager-pytorch, llama.cpp, "
      .. "exllamav2 (tp 1), eager, kernels or graphs"), 3)
  end
end

-- Runtimes whose small-M GEMVs multiply in packed 16-bit FMAs, priced at
-- the card's non-tensor f16x2/bf16x2 rate (engine/roofline.c ROOF_VEC16):
-- TensorRT-LLM's weightOnlyBatchedGemv kernel (kernels/weightOnlyBatchedGemv
-- utility.h: mma() accumulates every weight pair of every row with
-- "MathWrapper<...>::fma2", which is "__hfma2(a, b, c)" for half and
-- bf16, in a TypeA -- 16-bit -- tile_acc).  llama.cpp's mul_mat_vec_q
-- multiplies int8-quantised activations with dp4a and bitsandbytes'
-- gemv_4bit was not read here: both keep the fp32-lane pricing.
M.gemv_packed = { trtllm = 1, ["nim-http"] = 1 }

-- Runtimes whose tensor parallelism splits each weight matrix's rows
-- over the GPUs and copies every matmul's input out and its output rows
-- back to the main GPU, with no all-reduce (engine/infer.c
-- row_split_time): llama.cpp's --split-mode row, before PR 4766
-- (2024-01) its CUDA backend's only multi-GPU mode (ggml-cuda.cu
-- ggml_cuda_op_mul_mat on GGML_BACKEND_GPU_SPLIT tensors).  Its layer
-- split (the default since) runs the GPUs one after another: --pp.
M.row_split = { ["llama.cpp"] = true }

-- Runtimes that replay a one-token decode step on one GPU as a CUDA graph
-- while launching their other steps' kernels one by one, and the cards
-- they do it on (engine/infer.c infer_step, cfg one_token_graphs):
-- llama.cpp since PR #6766 ("Introduction of CUDA Graphs to LLama.cpp",
-- merged 2024-05-08, "updated Makefile build to enable CUDA graphs"; the
-- CMake option GGML_CUDA_GRAPHS is on by default since, "CUDA graphs are
-- enabled by default in llama.cpp", slaren in PR #14499).  ggml-cuda keeps
-- the graph off "due to GPU architecture" below compute capability 8.0
-- (GGML_CUDA_CC_AMPERE) and builds it for CUDA alone (HIP's graphs are a
-- later, separate switch).  What the replay gains, measured on one RTX
-- 4090: LLaMA 2 7B q4_0 "./main tg 138.31 -> 146.81" t/s (PR #6766);
-- gp.infer's cuda_graphs = false prices an older build.
M.one_token_graphs = { ["llama.cpp"] = { ampere = true, ada = true, hopper = true,
                                           blackwell = true } }

-- Weight-only kernels that read their weights below the device's GEMM
-- streaming rate, by runtime: the fraction of the streaming copy (the
-- catalog's bandwidth x achievable.hbm) at which the runtime's int4 and
-- int8 weight-only linears stream their stored bytes (codes, scales and
-- zeros) at decode; engine/roofline.c prices every other GEMM at the
-- device's rate (achievable.stream, else ROOF_GEMV_BW 0.94, measured on
-- gpt-fast's own bf16 decode).  A format below 8 bits runs the runtime's
-- int4 kernel, 8 bits up to 16 its int8 one.
--   gpt-fast (torch.compile'd decode under CUDA graphs; torchao's
--   _models/llama/generate.py runs the same loop).  int4 is
--   torch.ops.aten._weight_int4pack_mm, the tinygemm kernel
--   (pytorch aten/src/ATen/native/cuda/int4mm.cu): one 256-thread block
--   of 8 warps per 8 output columns (grid "dim3(postKernelKTiles, nTiles,
--   mTiles)", HANDLE_Q_GROUP(8, 8, ...)), the token padded to the
--   m16n8k16 MMA's 16 rows, each warp loading its k-tiles' packed codes
--   and the group's bf16 scale and zero straight into registers and
--   converting 8 codes with 4 lop3 and 4 fma.bf16x2, then 4 __hfma2 for
--   the group's scale and zero, before its MMAs: no shared-memory stage
--   or asynchronous copy keeps the next k-tiles' loads in flight while it
--   converts.  Measured by torchao's README benchmarks (pytorch/ao
--   torchao/quantization/README.md at commit 317392d, "run on a machine
--   with a single A100 GPU using the script in _models/llama which
--   generates text in a latency optimized way (batchsize=1)"):
--   int4wo-64 (a bf16 scale and zero per 64: 4.5 bits) 201.14 tokens/s on
--   Llama-2-7B and 180.80 on Llama-3-8B, which this model's decode step
--   (a100-sxm-80gb, batch 1) meets with the linears at 0.635 and 0.666 of
--   the streaming copy: 0.65.  int8 is gpt-fast's WeightOnlyInt8Linear,
--   F.linear(x, weight.to(x.dtype)) * scales, which Inductor compiles
--   (generate.py: coordinate_descent_tuning = True) into one Triton
--   reduction that loads the int8 weight, casts and multiplies -- the
--   bf16 decode's kernel family reading 1-byte elements.  Measured by
--   gpt-fast's README (pytorch-labs/gpt-fast, "8xA100-80GB, power limited
--   to 330W", batch 1): "8-bit" Llama-3.1-8B 137.64 tokens/s and
--   Llama-3.1-70B 18.04, met at 0.780 and 0.784: 0.78 (its Llama-2 int8
--   rows, the validation cases, are not used; a user's A100 rerun of the
--   Llama-2-7B one with a late-2024 nightly, gpt-fast issue 207, "reached
--   158.68 tokens/sec" against the README's 155.58).  torchao's int8wo rows run
--   faster (0.89-0.91 of the copy): its recommended_inductor_config_setter
--   also sets coordinate_descent_check_all_directions and
--   force_fuse_int_mm_with_mul, which gpt-fast's generate.py does not.
--   Measured on A100 only: the same fractions stand for the kernels on
--   every card until a run elsewhere says otherwise.
--   vllm (int4 only): GPTQ/AWQ run as Marlin (gptq_marlin, awq_marlin from
--   v0.5.3, vllm PR #6612; IST-DASLab/marlin's mainloop), whose batch-1
--   rate on an A100 is the first line of a run of Marlin's bench.py posted
--   to vllm PR #2497 (2024-01-24): "batch=0001: s=0.00014,
--   TFLOP/s=004.626, GB/s=1158.601, speedup=3.12".  bench.py sums
--   Llama13B's four layer shapes (5120 x 15360, 5120 x 5120, 5120 x 27136,
--   13568 x 5120: 313.26M weights, 2 x 313.26M / 4.626e12 = 135.4 us) and
--   counts "2 * A.numel() + 4 * B.numel() + 2 * C.numel() + 2 *
--   s.numel()" bytes: 156.9 MB at groupsize -1 (one scale a column; 1157.7
--   GB/s, the line's figure, where group 128's scales would give 1194).
--   The card is an A100 80GB: torch.matmul's fp16 time is 3.12 x 135.4
--   us for 626.5 MB, 1.44 TB/s, past the 40GB A100's streaming copy (1381
--   GB/s, gpu-stream a100_40.txt in catalog/archs.lua), and torch's
--   implied 231 TFLOP/s at 4000 rows (141.1 / 0.61) is an A100's, not an
--   H100's (M.wo_bf16_x below).  This model prices those four
--   kernels (a100-sxm-80gb, one token, the int4 dequantisation and each
--   kernel's 3.9 us fill included) at 135.4 us with the weights streamed
--   at 0.81 of the copy (117.6 us at 0.94): 0.81.  Older vLLM AWQ kernels
--   (awq_gemm before v0.5.3) are held to it too, as no faster: Marlin's
--   README ("Marlin delivers essentially ideal speedups at all
--   batchsizes", its assets/peak.png on an A10 putting AWQ's kernel at
--   3.37 at batch 1 against "the optimal 3.87x").  Marlin runs on NVIDIA
--   cards from Ampere only: vLLM's "Supported Hardware for Quantization
--   Kernels" table (docs.vllm.ai, v0.5.3 to v0.14.0) marks "Marlin
--   (GPTQ/AWQ/FP8)" for Ampere, Ada and Hopper and not for Volta, Turing
--   or "AMD GPU", so elsewhere vLLM's int4 linears are some other kernel,
--   unmeasured here: the device's rate (archs below; Blackwell, newer than
--   the table's columns, runs the same sm80+ kernel).
M.wo_stream = {
  ["gpt-fast"] = { int4 = 0.65, int8 = 0.78 },
  vllm = { int4 = 0.81, archs = { ampere = true, ada = true, hopper = true, blackwell = true } },
}

-- The floating-point block formats, which no kernel measured above runs:
-- vLLM's MXFP4 and NVFP4 linears and experts go to their own kernels
-- (triton_kernels' matmul_ogs, FlashInfer's or CUTLASS's FP4 GEMMs, the
-- FP4/FP8 Marlin variants), none of them the int4 GPTQ/AWQ Marlin of
-- vllm PR #2497's bench, and gpt-fast has no FP4 or FP8 weights at all.
local WO_STREAM_FLOAT = { fp4 = true, mxfp4 = true, fp6 = true, fp8 = true }

-- The streaming fraction of runtime rt's weight-only kernel for a format
-- of `bits` per weight (weights: its name, when it has one) on a card of
-- arch; nil for 16-bit weights, a floating-point block format
-- (WO_STREAM_FLOAT), a runtime without one, or an arch its kernel does not
-- run on.  The one rule for every path that prices these kernels:
-- gp.infer's linears (infer_cfg.wo_stream) and the MoE serving model's
-- linears and routed experts (serve.lua passes it on: engine serve_row.c
-- sx_wo_stream).
function M.wo_stream_of(rt, bits, weights, arch)
  local k = M.wo_stream[rt or ""]
  if not k or bits >= 16 or WO_STREAM_FLOAT[M.weight_base(weights) or ""]
     or (k.archs and not k.archs[arch or ""]) then return nil end
  return bits < 8 and k.int4 or k.int8
end

-- The defaults line for a fraction wo_stream_of gave (frac) to `what`
-- (the weights, or the routed experts, in format fmt, `bits` a weight)
-- under runtime rt: one wording for gp.infer and the MoE serving model.
function M.wo_stream_said(rt, what, fmt, bits, frac)
  return string.format("%s %s run weight-only under %s: its %s kernel reads them at "
    .. "%g of the streaming copy at decode (%s)", tostring(fmt), what, tostring(rt),
    bits < 8 and "int4" or "int8", frac,
    rt == "vllm" and "Marlin's batch-1 bench run on an A100, vllm PR #2497; vLLM 0.4's "
      .. "awq_gemm is held to it too"
    or "its own A100 batch-1 runs, gpuplan.infer M.wo_stream")
end

-- The streaming fraction of TensorRT-LLM's decode attention on Hopper
-- with an FP8 cache (engine infer_cfg.attn_stream, roofline.h
-- roof_op.stream), where the other fused attention kernels take the
-- GEMV rate (roofline.c ROOF_GEMV_BW, 0.94 of the copy).  The kernel:
-- XQA's runner compiles its TMA + warpgroup-MMA kernel (mha_sm90.cu) when
-- supportConfigQGMMA holds -- "SM != kSM_90 ... return false",
-- "xqaParams.kv_cache_data_type != DATA_TYPE_E4M3 ... return false",
-- "beam_width != 1 ... return false", "head_grp_size * beam_width > 32
-- ... return false" (TensorRT-LLM cpp/tensorrt_llm/kernels/
-- decoderMaskedMultiheadAttention/decoderXQAImplJIT/kernelUtils.cpp,
-- 1.0-era), and the XQA README says "On Hopper, we try to use TMA+QGMMA
-- kernel (mha_sm90.cu) by default if possible"; otherwise the HMMA kernel
-- (mha.cu, LDGSTS loads, two V buffers: "@fixme: H100 SXM need more
-- in-flight requests") keeps the common rate.  XQA serves GQA only (a
-- group of one, MHA, runs the masked MHA kernel: "Do not use XQA kernel
-- for vanilla MHA case for performance reasons", the same file), and not
-- MLA.  The rate: a TMA-fed Hopper decode attention kernel is measured at
-- the copy or above -- FlashMLA, "up to 3000 GB/s in memory-bound
-- configuration ... on H800 SXM5" (deepseek-ai/FlashMLA README), where
-- the catalog's streaming copy of that memory is 3.35 x 0.84 = 2.81 TB/s
-- -- so the kernel reads at the copy (1.0, the most roof_op.stream
-- takes); no XQA-specific rate was found.
-- The kernel came with 0.10.0 ("Integrated the new NVIDIA Hopper XQA
-- kernels for LLaMA 2 70B model", its release notes): the precompiled
-- runner of that line (decoderXQAImplPrecompiled.cpp) reads each cubin's
-- kernelType, checks "isGmmaKernel == (mSM == kSM_90 &&
-- xqaParams.kv_cache_data_type == XQADataType::DATA_TYPE_E4M3 &&
-- xqaParams.beam_width == 1)" and passes the GMMA kernel a CUtensorMap
-- of the cache (makeTensorMapForPagedKVCache, cuTensorMapEncodeTiled: the
-- TMA loads); the runner before it (decoderXQARunner.cpp of the 0.8-0.9
-- line, Medusa's medusa_position_offsets already there) launches every
-- SM's cubin with the same seven parameters, no tensor map, and two warp
-- groups ("128, 1, 2"): one HMMA kernel on Hopper too.  gp.infer's
-- xqa_hopper = false says the earlier kernel (gpuplan.predict.infer sets
-- it for a TensorRT-LLM case of a release before 0.10.0 or dated before
-- it), which keeps the GEMV rate.
M.attn_stream_hopper_fp8 = 1.0
-- The query heads one rank's KV head serves (XQA's head_grp_size, its
-- nbQHeadsPerKV): the heads over the KV heads, each split over TP, a KV
-- head replicated where TP exceeds them.  nil where the model states no
-- usable heads.  The one rule for the XQA tests here and in
-- gpuplan.predict.infer (its release-by-release support test).
function M.qheads_per_kv(model, tp)
  local heads = tonumber(model.heads)
  local kvh = tonumber(model.kv_heads or model.heads)
  if not heads or not kvh or kvh <= 0 then return nil end
  tp = tp or 1
  return (heads / tp) / math.max(1, kvh / tp)
end
-- TensorRT-LLM decoding an FP8 cache on an NVIDIA Hopper card, a model
-- without a latent (MLA) cache: where XQA's QGMMA kernel (below) or the
-- masked MHA kernel's cap (M.mmha_stream_of) may apply.
local function trtllm_hopper_fp8(a, g, model, kv)
  return a.runtime == "trtllm" and kv == "fp8" and g ~= nil and g.arch == "hopper"
    and (g.vendor == nil or g.vendor == "NVIDIA") and type(model) == "table"
    and not latent_cache(model)
end
function M.attn_stream_of(a, g, model, tp, kv)
  if a.xqa == false or a.xqa_hopper == false or not trtllm_hopper_fp8(a, g, model, kv) then
    return nil
  end
  local group = M.qheads_per_kv(model, tp)
  if not group or group <= 1 or group > 32 then return nil end
  return M.attn_stream_hopper_fp8
end

-- TensorRT-LLM's decode attention of a multi-head model (a group of one
-- query head a KV head on a rank) on Hopper with an FP8 cache: not XQA
-- ("bool is_vanilla_mha = xqaParams.num_kv_heads == 0 ||
-- xqaParams.num_q_heads == xqaParams.num_kv_heads; if (is_vanilla_mha &&
-- xqaParams.beam_width == 1) { // Do not use XQA kernel for vanilla MHA
-- case for performance reasons.  return false; }", supportConfigCommon in
-- decoderXQAImplJIT/kernelUtils.cpp of the 2024 JIT runner that 0.11.0
-- runs by default; 0.10's precompiled XQA cubins are all "nqpkv_8"), so
-- the masked MHA kernel (decoderMaskedMultiheadAttention), whose threads
-- load the cache into registers a vector at a time and widen every FP8
-- element on the CUDA cores ("convert_from_fp8(vec_o, vec_i)", then the
-- scale's multiply and the FMAs in FP32).  Its rate is a property of the
-- SMs, not of the HBM behind them, past the H100 SXM's: the same
-- gptManagerBenchmark runs (perf-overview 0.10.0 and 0.11.0, the
-- trtllm-perf cases) measure an H200 SXM over an H100 SXM -- the same 132
-- GH100 SMs at the same clocks, 1.43 times the HBM -- at 1.07 for GPT-J
-- 6B FP8 128/2048 (8165.91 / 7643.02 tokens/s, 0.11.0), both cards at the
-- engine's max_batch_size of 128, so the same batch a step, and 1.15 for
-- Llama 2 7B (7867.28 / 6814.72, the H200 holding 1.85 times the
-- sequences), where the cache read is most of a step, while the GQA
-- models of the same pages, on XQA, gain
-- 1.31-1.36 (Falcon 180B TP 4, Llama 2 70B TP 2, Mixtral 8x7B TP 2 FP8 at
-- 128/2048).  Per cached element, with each row's whole miss put on its
-- decode attention, the MHA FP8 rows of both pages (less the 0.10.0 GPT-J
-- cells docs/validation.md finds above what the card can produce) imply a
-- median 2.9 G elements/ms on the H100 (at its HBM: its FP16-cache rows
-- read 1.2-1.7 G elements/ms, 2.5-3.5 TB/s) and 3.2 G on the H200, where
-- the H200's GEMV rate would be 4.0 G.  So the kernel reads an FP8
-- cache at no more than the H100 SXM's GEMV rate (ROOF_GEMV_BW, 0.94 of
-- its streaming copy, the one this kernel is priced at there) scaled by
-- the SMs' FP32 issue rate (peak.fp32: SMs x clock) over the H100 SXM's;
-- the value returned is that rate as a fraction of this card's streaming
-- copy, nil where it is not below the card's own GEMV rate (the H100 SXM
-- itself, an H800).  A 16-bit cache holds twice the bytes an element, past
-- any Hopper HBM at this element rate: not capped.  MHA runs the masked
-- kernel with XQA on or off (xqa = false changes nothing for a group of
-- one), so the cap holds either way.  No measurement of the kernel's own
-- instruction count was found; the cap is the H100's price, the lower
-- bound the H100 rows give.
-- d: the card's roofline device as the job resolved it (gpuplan.roofline
-- device: a gpu table of the job's own is priced by its own figures, not
-- by the catalog entry of the same id); the reference is the shipped
-- catalog's.
M.mmha_fp8_ref = "h100-sxm"
function M.mmha_stream_of(a, g, model, tp, kv, d)
  if not trtllm_hopper_fp8(a, g, model, kv) or M.qheads_per_kv(model, tp) ~= 1 then
    return nil
  end
  local r = roofline.device(M.mmha_fp8_ref)
  local pf, rf = d.peak.fp32, r.peak.fp32
  if not (pf and rf and pf > 0 and rf > 0) then return nil end
  local gemv = core().ROOF_GEMV_BW
  local f = gemv * r.mem_bw * r.hbm * (pf / rf) / (d.mem_bw * d.hbm)
  -- the reference card itself: f is gemv up to float rounding (1e-9)
  if f >= gemv * (1 - 1e-9) then return nil end
  return f
end

-- Weight-only linears multiplied below the 16-bit library rate, by
-- runtime (engine infer_cfg.wo_bf16_x, roofline.h roof_op.bf16_x): the
-- multiple of the card's bf16 GEMM rate at the op's shape at which the
-- runtime's dequantising kernel computes once the step is compute-bound.
-- vLLM runs every weight-only linear on Ampere as a Marlin GEMM: GPTQ/AWQ
-- as gptq_marlin / awq_marlin, and an FP8 checkpoint's linears and experts
-- as FP8 Marlin (model_executor/layers/quantization/fp8.py, read in its
-- mid-2025 and late-2025 forms on either side of v0.11.0: Fp8LinearMethod
-- sets use_marlin = not has_device_capability(89), and so does the MoE,
-- first Fp8MoEMethod itself, its apply calling
-- torch.ops.vllm.fused_marlin_moe with quant_type_id =
-- scalar_types.float8_e4m3fn.id, then get_fp8_moe_backend's "weight-only
-- path for older GPUs without native FP8" returning Fp8MoeBackend.MARLIN).  Marlin keeps at most
-- 64 rows of tokens in a tile and past 64 "will just run the batch 64
-- kernel repeatedly" (its author, IST-DASLab/marlin issue #2), converting
-- every weight again on the CUDA cores each time, so its rate stays flat
-- where cuBLAS's keeps rising.  Measured: a run of Marlin's bench.py
-- posted to vllm PR #2497 (Llama-13B's four layer shapes: 324M weights
-- from the batch-1 line's 1158.6 GB/s x 0.00014 s x 2) gives 139.7 to
-- 141.4 TFLOP/s from batch 64 to 4000, "speedup" (torch.matmul fp16 time
-- over Marlin's, same shapes) 0.60 at batch 2048 and 0.61 at 4000, where
-- both kernels are compute-bound: 0.605.  The comment names no GPU; the
-- figures place it on an A100: 1158.6 GB/s streamed at batch 1 is past an
-- A10's, A6000's, RTX 3090's or RTX 4090's memory bandwidth (600-1008
-- GB/s), and torch's implied 231-236 TFLOP/s is past their fp16 tensor
-- peaks, while on an H100 torch runs near 600 (speedup near 0.25).  Held
-- to the A100's balance of tensor to vector lanes (bf16 tensor peak 16x
-- the fp32 peak: GA100, A100 and A800); GA102 cards (A10, A40, A6000: 4x)
-- convert relatively faster and keep the library rate.  Marlin's mid
-- batches ran closer to torch (0.66-0.74 at 256-1024 tokens), so at those
-- shapes the cap is pessimistic.  The fused MoE's experts take the same
-- multiple: fused_marlin_moe is the same Marlin mainloop over each
-- expert's own blocks of at most 64 rows (vllm PR #14447).
M.wo_bf16_x = { vllm = 0.605 }

function M.wo_bf16_x_of(rt, g, bits)
  local x = M.wo_bf16_x[rt or ""]
  local peak = type(g) == "table" and type(g.peak) == "table" and g.peak or {}
  local bf16, fp32 = tonumber(peak.bf16) or 0, tonumber(peak.fp32) or 0
  if not x or bits >= 16 or g.arch ~= "ampere" or fp32 <= 0 or bf16 / fp32 < 16 then
    return nil
  end
  return x
end

-- A prompt's attention over an FP8 cache under vLLM's FlashAttention-3
-- on Hopper (engine infer_cfg.kv_fp8_prompt_x, roofline.h roof_op.bf16_x):
-- vLLM runs the whole attention in FP8 there ("runs the entire attention
-- computation (the QK and ScoreV matrix multiplications) in FP8", vLLM
-- blog 2026-04-22 "The State of FP8 KV-Cache and Attention Quantization
-- in vLLM"), but since its fork's two-level accumulation (vllm-project/
-- flash-attention PR #104, taken by vllm PR #27889, 2025-10-31: "Bump FA
-- version for FP8 two-level accumulation") the P.V partial sums are
-- flushed into a second FP32 accumulator every key tile, which "increases
-- the register pressure and causes slowdowns during prefill" (the post).
-- Measured with the fork's hopper/benchmark_flash_attention_fp8.py on an
-- H100 (vllm-project/flash-attention PR #122's table, before its
-- every-n-steps change): head dim 128, non-causal, 2 x 8192 tokens: bf16
-- 737.22, FP8 684.11 TFLOP/s (0.93); 1 x 16384: 695.77 and 684.83 (0.98);
-- head dim 256, 32 x 512: 557.51 and 278.25 (0.50).  The post's runs
-- (v0.19.1, after the tile retuning of flash-attention PR #125) see
-- "slight TTFT speedups of FP8 for long contexts" at head dim 128 and
-- prefill "speedups" at 64 and 128, and a 1.6x larger TTFT quadratic at
-- 256 (gemma-4-E2B, 6.93e-07 -> 1.12e-06 ms/token^2).  So the kernel runs
-- a prompt at the 16-bit rate, not twice it: 1.0 up to head dim 128 (the
-- measured 0.93-0.98 before the retuning, "slight" speedups after), 0.50
-- above (the table's head dim 256).  A decode keeps its rate (bound by
-- the cache's bytes, which FP8 halves).  vllm_version (a V0 release)
-- predates the accumulation: nil there.
M.kv_fp8_prompt_x = { narrow = 1.0, wide = 0.50, wide_above = 128 }
function M.kv_fp8_prompt_x_of(a, g, model, kv)
  if kv ~= "fp8" or a.runtime ~= "vllm" or a.vllm_version ~= nil then return nil end
  if type(g) ~= "table" or g.arch ~= "hopper" or not (g.vendor == nil or g.vendor == "NVIDIA") then
    return nil
  end
  if type(model) ~= "table" or latent_cache(model) then return nil end
  local hd = tonumber(model.head_dim) or
    ((tonumber(model.hidden) or 0) / math.max(1, tonumber(model.heads) or 1))
  local r = M.kv_fp8_prompt_x
  return hd > r.wide_above and r.wide or r.narrow
end

-- The fused attention kernel a runtime runs a prompt's (or chunk's)
-- attention on, where the catalog records it (engine infer_cfg
-- prompt_attn_fused, infer.c fused_attn: the kernel's measured fraction
-- and shape terms, as the MoE serving step and training price it; the
-- dense step priced it as a GEMM of its shape at the bf16 GEMM rate,
-- 647 TFLOP/s on an H100 at the sustained clock, where FA3's record is
-- 0.713 x 0.82 x 989 = 578).  vLLM V1's FlashAttention backend runs FA3
-- on Hopper: "fa_version = 3 if (device_capability.major == 9 and
-- is_fa_version_supported(3)) else 2" (vllm/v1/attention/backends/
-- fa_utils.py get_flash_attn_version), the kernel of the catalog's
-- hopper fa3 record (catalog/archs.lua).  Not priced elsewhere: FA2 on
-- Ampere and Ada (the record is the A100's training rate, left to a
-- change that measures those rows), SGLang (FlashInfer or FA3 by
-- release and model: model_runner.py is_fa3_default_architecture),
-- TensorRT-LLM (its own FMHA, no record), a V0 release (vllm_version),
-- and an MLA cache (vLLM's MLA backends).
function M.prompt_attn_kernel_of(a, g, model)
  if a.runtime ~= "vllm" or a.vllm_version ~= nil or a.flash == false then return nil end
  if type(g) ~= "table" or g.arch ~= "hopper" or not (g.vendor == nil or g.vendor == "NVIDIA") then
    return nil
  end
  if type(model) ~= "table" or latent_cache(model) then return nil end
  return "fa3"
end

-- The M tile a runtime's fp8 dense linears pad a decode step's tokens to,
-- by GPU arch (engine infer_cfg.m_tile; roofline.c ROOF_MIN_EDGE: the
-- library's 16 otherwise).  SGLang multiplies a block-scaled fp8
-- checkpoint's linears (DeepSeek-V3's, Qwen3-FP8's 128 x 128 blocks) with
-- DeepGEMM on Hopper: its DeepGEMM wrapper turns it on for sm90 unless
-- told otherwise ("if sm_version == 90: if get_bool_env_var(
-- "SGL_ENABLE_JIT_DEEPGEMM", default="true")", python/sglang/srt/layers/
-- quantization/deep_gemm.py of spring 2025; the later deep_gemm_wrapper's
-- _compute_enable_deep_gemm keeps that default; the 0.4.6.post1 tag itself
-- was not read) and w8a8_block_fp8_matmul_deepgemm calls its
-- gemm_fp8_fp8_bf16_nt, which keeps the tokens on the M side of a 64-row
-- WGMMA tile up to 64 tokens ("block_ms = (64 if m <= 64 else 128, )",
-- deep_gemm/jit_kernels/config.py get_best_configs) -- the rule
-- gpuplan.serve applies to the same kernels (serve.lua m_tile).  On a
-- card whose fp8 tensor rate is cut against its bandwidth (H20: 296
-- TFLOP/s over 4.0 TB/s, a ridge of 63 FLOP/B at the achievable rates) a
-- batch-1 step pays 128 FLOP per weight byte and is compute-bound; on
-- H100/H200 (ridge 294 on the H200) it stays memory-bound.  Measured: the
-- Qwen speed benchmark's FP8 rows on one H20 under SGLang 0.4.6.post1
-- (validation qwen3-speedbench-*-fp8-*) run at 150.25 and 46.17 tokens/s
-- for Qwen3-8B and -32B, a third of the bandwidth bound, as the padded
-- tile gives (141 and 37 predicted).  The fused MoE's expert GEMMs keep their own kernel (Triton
-- fused_moe) and the 16-bit lm_head the library's tiles.  A per-tensor fp8
-- checkpoint runs sgl-kernel's CUTLASS fp8_scaled_mm instead; --weights
-- does not say which, so fp8 under SGLang is taken as block-scaled.
M.m_tile = { sglang = { hopper = { fp8 = 64 } } }

function M.m_tile_of(rt, arch, base)
  local r = M.m_tile[rt or ""]
  local a = r and r[arch or ""]
  return a and a[base or ""] or nil
end

-- The KV bucket a runtime pads a decode step's attended cache to, by GPU
-- arch (engine infer_cfg.kv_bucket, infer_decode_ctx).  On Gaudi the
-- graph-captured path is optimum-habana's text-generation example
-- (run_generation.py --use_hpu_graphs), the harness of Intel's Gaudi
-- LLM throughput tables (its CI's fp8 rows run the Gaudi 2 table's
-- batches: Llama-2-7b at 1230, 163, 94 and 81, Mistral-7B at 896, 120,
-- 120 and 44, tests/test_text_generation_example.py, v1.14.1).  It runs
-- static shapes: the cache is allocated for input + output tokens, and
-- with the bucket flags its Llama fp8 rows carry ("--bucket_size 128",
-- "--bucket_internal") each decode step slices the keys and values to
-- the next multiple of 128 past its length, so the attention reads the
-- padding too (generation/utils.py "cache_idx = (idx + 1) *
-- bucket_size", models/llama/modeling_llama.py "key_states[:, :,
-- :cache_idx, :]").  Without those flags it reads the whole cache every
-- step: 128 is the least padding any of its static-shape paths reads.
-- Measured on Intel's Gaudi 3 table (validation intel-gaudi3-*): the
-- whole cache read every step would price Llama 3.1 8B's 128/2048 row at
-- -18.5%, the bucket at +20.9% (+24.9% before it).
M.kv_bucket = { graphs = { gaudi = 128 } }

function M.kv_bucket_of(rt, arch)
  local r = M.kv_bucket[rt or ""]
  return r and r[arch or ""] or nil
end

-- Runtimes whose QK-norm (model qk_norm: Qwen3's q_norm and k_norm) runs
-- inside the rope kernel: TensorRT-LLM's PyTorch backend builds Qwen3's
-- attention as a QKNormRoPEAttention with "fuse_qk_norm_rope: bool = True"
-- (tensorrt_llm/_torch/models/modeling_qwen3.py; Qwen3-MoE's layers use
-- it), and NIM runs that backend (M.gemv_max's note).  vLLM runs the norm
-- as a kernel of its own (PR #26682: "1 for qk-norm and 1 for qk-rope"),
-- SGLang as its q_norm and k_norm modules: engine/infer.c prices it there.
M.fused_qk_norm_rope = { trtllm = true, ["nim-http"] = true }

-- Runtimes that quantise an fp8/fp4 linear's bf16 input in a kernel of its
-- own where its producer did not write the format (engine/infer.c
-- act_quant): TensorRT-LLM's PyTorch flow, which trtllm-bench --backend
-- pytorch runs (modules/linear.py: torch.ops.trtllm.fp4_quantize unless
-- the input is an Fp4QuantizedTensor).  NIM's profiles are TensorRT engines
-- whose plugins fuse the quantisation into the norm: not counted there.
M.act_quant = { trtllm = true }

-- Runtimes that run an fp8 checkpoint's dense linears block-scaled (128 x
-- 128 weight blocks, as Qwen3-*-FP8 and DeepSeek-V3/R1 ship them) and
-- quantise each linear's bf16 input per 128-element group in a kernel of
-- its own before the GEMM (engine/infer.c block_quant): SGLang, whose
-- block-fp8 linear ("deepgemm_w8a8_block_fp8_linear_with_fallback" on
-- Hopper, its CUTLASS / Triton fallbacks alike) calls
-- sglang_per_token_group_quant_fp8 on its input before every GEMM
-- (python/sglang/srt/layers/quantization/fp8_utils.py): four passes a
-- layer (qkv, o_proj, gate_up, down).  --weights does not say how an fp8
-- checkpoint is scaled: fp8 under SGLang is taken as block-scaled, as
-- M.m_tile takes it.  vLLM's W8A8BlockFp8LinearOp quantises through its
-- QuantFP8 custom op, which V1's torch.compile can fuse into the norm or
-- the activation before it: not counted there without a source that
-- says the pass stays apart.
M.block_quant = { sglang = true }

-- The largest TP all-reduce, in bytes, into which a runtime fuses the
-- residual add, the RMSNorm and the fp8 / nvfp4 quantisation of the next
-- linear's input (engine/infer.c act_quant; gp.infer's ar_fusion_max), by
-- TP size.  TensorRT-LLM 1.0's AllreduceOp, under the AUTO strategy its
-- Llama layers take (cpp/tensorrt_llm/thop/allreduceOp.cpp
-- selectImplementation), sends a message larger than the custom kernels'
-- workspace to NCCL ("if (message_size_bytes > max_workspace_size) ...
-- return true" in ifFallbackToNCCL) and the QUANT_NVFP4 / QUANT_FP8
-- fusions below it to MIN_LATENCY, the fused kernel; that workspace is
-- getMaxRequiredWorkspaceSize, "if (worldSize <= 2) return 16 * 1000 *
-- 1000; return 8 * 1000 * 1000;" (common/customAllReduceUtils.h, "MUST
-- BE KEPT IN SYNC with tensorrt_llm/plugin/plugin.py" max_workspace_size_auto,
-- which sizes the workspace get_allreduce_workspace allocates).  Above it
-- fallbackRunSubsequentOps quantises norm_out in a kernel of its own.
-- Later releases enlarged the workspace to 64 MiB (PR #9145, Nov. 2025)
-- and pick by a measured table (PR #7870): not this default.
M.ar_fusion_max = { trtllm = function(tp) return tp <= 2 and 16e6 or 8e6 end }

-- Runtimes that run a request's prompt tokens inside the decode steps
-- rather than in prefill steps of their own (chunked_prefill's pricing,
-- engine/infer_run.c mixed_time), said on the defaults line: TensorRT-LLM's
-- in-flight batching ("sequences in the context phase can be processed
-- together with sequences in the generation phase", docs, Paged Attention,
-- IFB, and Request Scheduling) and vLLM's V1 engine, the one vLLM runs
-- since 0.8 ("In vLLM V1, chunked prefill is always enabled by default",
-- docs, configuration/optimization.md).  SGLang mixes only with
-- --enable-mixed-chunk (server_args.py, default False); a V0 release is a
-- validation profile's to state (predict/infer.lua).
M.mixes = {
  trtllm = "in-flight batching, TensorRT-LLM: prompts run in the decode steps",
  vllm = "vLLM V1 always chunks the prefill: prompts run in the decode steps",
}

-- The runtimes that preempt a running request when the KV cache has no
-- block for its next token, and admit a waiting one on its prompt's blocks
-- alone (gpuplan.infer's kv_policy preempt; engine infer_run.c
-- infer_burst_preempt, a finite run whose requests' whole lengths overflow
-- the cache): vLLM V1, whose scheduler on a failed allocate_slots runs
-- "preempted_req = self.running.pop()" (the last-admitted), frees its
-- blocks, sets "preempted_req.num_computed_tokens = 0" and puts it back
-- with "self.waiting.prepend_request(preempted_req)", admitting no waiting
-- request in that step (vllm/v1/core/sched/scheduler.py, v0.9.x to
-- v0.11.x).  Keyed as M.mixes: V1's steps (a V0 release, which states
-- chunked_prefill through the validation profile or names its sampler's
-- release in vllm_version, 0.4.2-0.6.3, keeps kv_policy mean: V0
-- also preempts by recompute, but admits a prompt only while its blocks
-- leave the 1% watermark free, not walked here).  TensorRT-LLM's default
-- GUARANTEED_NO_EVICT reserves the whole length (kv_policy max) and never
-- preempts; SGLang retracts decodes by its own rule (retract_decode, the
-- longest outputs first, and a new_token_ratio that throttles admission):
-- neither is this walk.
M.kv_preempt = {
  vllm = "vLLM V1: a full cache preempts the last-admitted request",
}

-- The runtimes whose scheduler admits a request only when the KV blocks
-- for its prompt and its whole output are free (kv_policy max; engine
-- infer_cfg.kv_reserve_max), each with the words of its defaults line:
-- TensorRT-LLM, whose SchedulerConfig.capacity_scheduler_policy defaults
-- to GUARANTEED_NO_EVICT: "TensorRT-LLM currently supports three batch
-- scheduler policies: GUARANTEED_NO_EVICT (default), MAX_UTILIZATION and
-- STATIC_BATCH" ... "GUARANTEED_NO_EVICT to guarantee that a started
-- request is never paused" (https://nvidia.github.io/TensorRT-LLM/
-- performance/performance-tuning-guide/useful-runtime-flags.html), which
-- it does by reserving the blocks of the prompt and the whole output
-- before it starts a request.  The one place the
-- rule lives: gp.infer's setup reads it, and so every path that prices a
-- trtllm run through it -- one model's replicas and the MoE serving model
-- (gpuplan.serve, whose setup is this one) alike.  A kv_policy the user
-- gives wins; a static batch holds the whole length whatever the runtime.
M.kv_reserve = {
  trtllm = "GUARANTEED_NO_EVICT, the capacity scheduler default",
}

-- vLLM V1's mixed steps on FlashAttention-2 (engine infer_cfg
-- mixed_kv_per_qhead, infer_run.c mixed_decode_cfg): a step that carries
-- prompt chunks runs its decodes' attention in the same varlen call, whose
-- kernel reads a decode's cache once per query head of its GQA group.
-- vLLM's FlashAttention backend picks the kernel by the card: "fa_version
-- = 3 if (device_capability.major == 9 and is_fa_version_supported(3))
-- else 2" (fa_utils.py get_flash_attn_version), so FA2 on compute
-- capability 8.x -- the ampere and ada archs -- and FA3 on Hopper, whose
-- varlen kernel schedules its own tiles and packs a group's heads over a
-- paged cache read without TMA (hopper/flash_api.cpp get_pack_gqa).  The
-- mechanism in vLLM's own words: "On FA2 GPUs (SM8x: A100/A800/A10/A40/
-- L4/RTX 30xx/40xx), FLASH_ATTN runs every mixed prefill+decode batch as
-- one flash_attn_varlen_func call ... The decodes also miss FA2's
-- max_seqlen_q == 1 path (packed GQA + split-KV), which only activates
-- when the whole call is decode" (vllm PR #58013, which splits the call
-- and leaves "FA3/FA4 (tile-scheduled)" untouched).  Where vLLM's steps
-- mix (mixes: V1's own default, M.mixes, or chunked_prefill = true stated,
-- the same V1 steps -- stating it turned the default off, and the answer
-- moved by the whole effect) and the model's cache is not a latent one
-- (MLA runs on vLLM's MLA backends).
-- fa2_mixed (the option) says it either way; the default is on where
-- both hold, said on the defaults line.
M.fa2_archs = { ampere = true, ada = true }
-- The KV caches vLLM's FlashAttention backend takes there: a 16-bit one.
-- Its FlashAttentionImpl refuses a quantized cache where the kernel is not
-- FA3 on Hopper ("if is_quantized_kv_cache(self.kv_cache_dtype) and not
-- flash_attn_supports_fp8(): raise NotImplementedError("FlashAttention
-- does not support fp8 kv-cache on this device.")", with
-- flash_attn_supports_fp8 "get_flash_attn_version() == 3 and
-- current_platform.get_device_capability().major == 9": vllm/v1/attention/
-- backends/flash_attn.py and fa_utils.py), and its supported_dtypes are
-- float16 and bfloat16: an 8-bit (or fp32) cache runs another backend.
M.fa2_kv = { bf16 = true, fp16 = true }
function M.fa2_mixed(a, g, model, mixes, kv)
  if a.fa2_mixed ~= nil then return a.fa2_mixed == true end
  if kv ~= nil and not M.fa2_kv[kv] then return false end
  -- Attention sinks (model attn_sinks: gpt-oss): vLLM's FlashAttention
  -- backend takes them on FA3 only, so off Hopper it runs another backend
  -- (vllm/platforms/cuda.py: "if has_sink and not
  -- cls.is_device_capability(90): logger.info_once("Using Triton backend
  -- on V1 engine.")"; later, vllm/v1/attention/backends/flash_attn.py
  -- supports_combination: "if has_sink and device_capability <
  -- DeviceCapability(9, 0): return "sink not supported on compute
  -- capability < 9.0""), one that takes a GQA group's heads together.
  if type(model) == "table" and model.attn_sinks then return false end
  -- vllm_version names a V0 release (its sampler's): V0's FlashAttention
  -- backend runs a step's decodes in a call of their own
  -- (flash_attn_with_kvcache under decode_metadata, one query a
  -- sequence: the group folded), so its mixed steps read the cache once.
  if a.vllm_version ~= nil then return false end
  -- paged_decode runs every decode on vLLM's PagedAttention kernel, which
  -- reads per query head in any step (kv_per_qhead): not FA2's varlen
  -- call, and the note said a kernel the job does not run
  if a.paged_decode then return false end
  if a.runtime ~= "vllm" or not mixes or not g or not M.fa2_archs[g.arch] then return false end
  if latent_cache(model) then
    return false
  end
  return true
end

-- Runtimes whose mixing (M.mixes) takes a prompt only whole: TensorRT-LLM
-- runs without chunked context unless asked (TorchLlmArgs
-- enable_chunked_prefill defaults False; trtllm-bench's
-- --enable_chunked_context is "disabled by default in pytorch backend",
-- PR #6956), and its MicroBatchScheduler then schedules a context request
-- only when its whole prompt fits the step's leftover max_num_tokens
-- (engine/infer_run.c run_finite quotes it).  chunked_prefill = true (the
-- user's chunked context) splits the prompts as vLLM V1 does.
M.whole_prompts = { trtllm = true }

-- CUDA-graph batch sizes by runtime (engine infer_cfg.graph_sizes,
-- infer_run.c graph_batch): a decode-only step replays the graph of the
-- smallest captured size >= its batch, the empty slots computed too, and
-- runs without a graph above the largest.  Each function takes the
-- engine's max_batch and max_num_tokens, the card and tp and returns the
-- list its runtime captures by default:
--   trtllm: trtllm-bench's own setting, the runtime gp.infer's trtllm
--     models (bench/benchmark/utils/general.py get_settings:
--     cuda_graph_config = {"padding_enabled": True, "max_batch_size":
--     max_batch_size}), whose list CudaGraphConfig.
--     _generate_cuda_graph_batch_sizes makes: "[1, 2, 4] + [i * 8 for i
--     in range(1, 17)]" with padding, "2**i for i in range(8,
--     math.ceil(math.log(max_batch_size, 2)))", those <= max_batch_size,
--     and max_batch_size itself (tensorrt_llm/llmapi/llm_args.py); then
--     M.trtllm_graph_cap.
--   vllm: V1's cuda_graph_sizes default "[min(max_num_seqs * 2, 512)]"
--     (vllm/config/scheduler.py) and its list "[1, 2, 4] + [i for i in
--     range(8, cuda_graph_sizes[0] + 1, 8)]" (vllm/config/__init__.py
--     VllmConfig), no size above max_num_batched_tokens.
--   sglang: ServerArgs._generate_cuda_graph_batch_sizes (python/sglang/
--     srt/server_args.py): "[1, 2, 4, 8, 12] + list(range(16, 257, 8)) +
--     list(range(272, 512, 16)) + list(range(512, self.cuda_graph_max_bs +
--     1, 32))" up to cuda_graph_max_bs, which _handle_gpu_memory_settings
--     sets by the card's memory and tp: under 20 GiB 8; under 35 GiB 24
--     (tp < 4) or 80; under 60 GiB 32 or 160; under 160 GiB (H100, H200,
--     H20) 256 (tp < 4) or 512; larger (B200, MI300) 512.
--   graphs (the generic runtime), nim-http, gpt-fast: none -- no one
--     runtime's list stands for them, so a graph at every batch as before
--     (a named runtime or graph_sizes says more).
local function trtllm_graph_list(max_bs)
  local t = { 1, 2, 4 }
  for i = 1, 16 do t[#t + 1] = 8 * i end
  for i = 8, math.ceil(math.log(max_bs, 2)) - 1 do t[#t + 1] = 1 << i end
  local r = {}
  for _, v in ipairs(t) do if v <= max_bs then r[#r + 1] = v end end
  if r[#r] ~= max_bs then r[#r + 1] = max_bs end
  return r
end
M.graph_sizes = {
  trtllm = function(max_bs) return trtllm_graph_list(max_bs) end,
  vllm = function(max_bs, max_tok)
    local top, r = math.min(max_bs * 2, 512), { 1, 2, 4 }
    for i = 8, top, 8 do r[#r + 1] = i end
    local k = {}
    for _, v in ipairs(r) do if v <= max_tok then k[#k + 1] = v end end
    return k
  end,
  sglang = function(_, _, g, tp)
    local mem = g.memory
    if type(mem) == "string" then mem = units.parse(mem, "bytes") end
    local gib, top = (mem or 0) / 2 ^ 30, nil
    if gib < 20 then top = 8
    elseif gib < 35 then top = tp < 4 and 24 or 80
    elseif gib < 60 then top = tp < 4 and 32 or 160
    elseif gib < 160 then top = tp < 4 and 256 or 512
    else top = 512 end
    local t = { 1, 2, 4, 8, 12 }
    for i = 16, 256, 8 do t[#t + 1] = i end
    for i = 272, 511, 16 do t[#t + 1] = i end
    for i = 512, top, 32 do t[#t + 1] = i end
    local r = {}
    for _, v in ipairs(t) do if v <= top then r[#r + 1] = v end end
    return r
  end,
}

-- TensorRT-LLM's PyTorch flow keeps the sizes a decode-only batch can
-- reach and pads to its cap above them (tensorrt_llm/_torch/pyexecutor/
-- model_engine.py _filter_cuda_graph_batch_sizes: "max_cuda_graph_bs =
-- min(max_batch_size, int(max_num_tokens / (1 + max_draft_len)))", the
-- sizes <= it kept, and where a larger one was given "padding to
-- max_cuda_graph_bs is acceptable", the cap appended), to the user's list
-- as to its own.
function M.trtllm_graph_cap(list, max_bs, max_tok)
  local cap = math.min(max_bs, math.floor(max_tok))
  local r, over = {}, false
  for _, v in ipairs(list) do
    if v <= cap then r[#r + 1] = v else over = true end
  end
  if over and r[#r] ~= cap then r[#r + 1] = cap end
  return r
end

-- vLLM's batch limits where the caller leaves them at their default
-- (vllm/engine/arg_utils.py EngineArgs.get_batch_defaults): "if
-- device_memory >= 70 * GiB_bytes and "a100" not in device_name: # For
-- GPUs like H100 and MI300x, use larger default values",
-- max_num_batched_tokens { LLM_CLASS: 16384, OPENAI_API_SERVER: 8192 } and
-- max_num_seqs 1024; else { LLM_CLASS: 8192, OPENAI_API_SERVER: 2048 } and
-- 256.  server: the API server's (vllm serve, what gp.infer's runtime vllm
-- serves), else the offline LLM class's (what RL frameworks drive).  vLLM
-- tests the device's name, so the catalog entry's name is asked, not its
-- id: a user's A100 under another id is still an A100.  Returns
-- max_num_seqs, max_num_batched_tokens.
function M.vllm_limits(gpu, server)
  local mem = gpu.memory
  if type(mem) == "string" then mem = units.parse(mem, "bytes") end
  local name = tostring(gpu.name or gpu.id):lower()
  local big = (mem or 0) >= 70 * 2 ^ 30 and not name:find("a100", 1, true)
  if big then return 1024, server and 8192 or 16384 end
  return 256, server and 2048 or 8192
end

-- SGLang's chunked_prefill_size where the caller leaves it unset: the most
-- prompt tokens a step takes (a longer prompt goes in chunks), and with
-- --enable-mixed-chunk (gp.infer's chunked_prefill for runtime sglang) the
-- step's budget beside the running decodes.  server_args.py
-- _handle_gpu_memory_settings, "Set chunked_prefill_size and
-- cuda_graph_max_bs based on the GPU memory capacity. This is because GPUs
-- with more memory are generally more powerful, we need to use a larger
-- chunked_prefill_size", by the card's memory in MiB: "< 20 * 1024" (T4,
-- 4080) and "< 35 * 1024" (A10, 4090, 5090) 2048, "< 60 * 1024" (A100
-- 40GB, L40) 4096, "< 90 * 1024" (H100, A100) and "< 160 * 1024" (H20,
-- H200) 8192, else (B200, MI300) 16384.  Earlier releases had coarser
-- rules ("gpu_mem < 25_000: 2048, else 8192", then "< 35 * 1024: 2048,
-- < 160 * 1024: 8192, else 16384"); every form found gives 8192 from 60
-- to 160 GiB (A100 80GB, H100, H200, H20), and the releases that changed
-- it were not placed, so one rule, today's, stands for all.
function M.sglang_chunk(gpu)
  local mem = gpu.memory
  if type(mem) == "string" then mem = units.parse(mem, "bytes") end
  local mib = (mem or 0) / 2 ^ 20
  if mib < 35 * 1024 then return 2048
  elseif mib < 60 * 1024 then return 4096
  elseif mib < 160 * 1024 then return 8192 end
  return 16384
end

-- The prompt tokens one step takes where the user gives no budget (a
-- longer prompt goes in chunks of it), by the runtime's own rule: vLLM's
-- API server's max_num_batched_tokens (M.vllm_limits: 8192 on an H100),
-- SGLang's chunked_prefill_size (M.sglang_chunk: 8192 on an H100 or H200,
-- 16384 on a B200 or MI300X); nil for any other runtime (the caller's
-- engine default: gp.infer's TensorRT-LLM max_num_tokens 8192, engine/
-- infer.c; the MoE serving model's prefill_tokens 16384, engine/serve.c).
-- One rule for gp.infer's replicas (max_num_tokens) and the MoE serving
-- model (prefill_tokens, gpuplan.serve), which priced a vLLM chunk at
-- 16384 where vLLM schedules 8192 a step.  Returns the tokens and whose
-- they are, or nil.
function M.step_budget(runtime, gpu)
  local on = tostring(gpu.id or gpu.name)
  if runtime == "vllm" then
    local _, tok = M.vllm_limits(gpu, true)
    return tok, "vLLM's API server's on " .. on
  elseif runtime == "sglang" then
    return M.sglang_chunk(gpu), "SGLang's chunked_prefill_size on " .. on
  end
  return nil
end

-- SGLang's prompt attention for an MLA model (DeepSeek-V2/V3/R1, Kimi K2)
-- where a burst packs several prompts into each prefill step.  SGLang
-- sends an extend batch to multi-head attention only when its requests'
-- cached prefixes sum to 0 or to at least 8192 tokens
-- (python/sglang/srt/models/deepseek_v2.py, _handle_attention_backend,
-- the fa3 / flashinfer / flashmla / cutlass_mla backends: "(
-- sum_extend_prefix_lens >= attn.chunked_prefix_cache_threshold and not
-- attn.disable_chunked_prefix_cache) or sum_extend_prefix_lens == 0",
-- the threshold get_int_env_var("SGL_CHUNKED_PREFIX_CACHE_THRESHOLD",
-- 8192)); any other batch runs the latent (absorbed) form decode runs,
-- whose core multiplies q.k over kv_lora_rank + rope and p.v over
-- kv_lora_rank for every head (engine/infer.c mla_latent_attn).  A burst
-- of P-token prompts fills each step to its chunked_prefill_size C
-- (M.sglang_chunk: 8192 on an H200) and cuts the last prompt there
-- (PrefillAdder's chunked request), which the next step finishes with a
-- prefix of 1..P-1 tokens: for P < C, P < 8192, every step but those
-- that start on a prompt's boundary is such a batch -- a share gcd(C, P)
-- / P of them start on one, none when P does not divide into C (1997 or
-- 3995 tokens into 8192), all when it does (4096 into 16384).  Taken as
-- all of them where P does not divide C, the prompts' attention in the
-- latent form; else, and for prompts of a chunk or more (32K prompts:
-- their later chunks carry prefixes >= 8192, and one chunk in four or so
-- a shorter one), the multi-head form.  On Hopper (SGLang's default MLA
-- backend there fa3: server_args "if is_hopper_with_cuda_12_3(): fa3");
-- Blackwell's trtllm_mla keeps MHA for every extend while the chunked
-- prefix cache is on (handle_attention_trtllm_mla).  The radix cache may
-- also match a short shared prefix (a chat template's first tokens),
-- which would send even aligned bursts to the latent form; a case does
-- not say what its prompts share, so that is not assumed.  Returns
-- true and the defaults line, or nil.
function M.mla_latent_prefill_of(a, model, g, c)
  if a.runtime ~= "sglang" or type(model) ~= "table" or type(model.mla) ~= "table" or
     (model.mla.kv_lora_rank or 0) <= 0 or g.arch ~= "hopper" or a.flash == false then
    return nil
  end
  local P, n = c.input, c.requests
  local C = c.max_num_tokens or M.sglang_chunk(g)
  if not (P and n and P >= 1 and n * P > C and P < C and P < 8192) then return nil end
  P = math.floor(P + 0.5)
  if C % P == 0 then return nil end
  return true, string.format("mla_prefill=latent (SGLang: a step that finishes a prompt cut at "
    .. "the last one's %d-token chunk carries a cached prefix of 1..8191 tokens, which sends "
    .. "the step's attention to MLA's latent form; %d-token prompts do not divide into it)",
    C, P)
end

-- Runtimes whose fused MoE permutes the tokens' rows into the experts'
-- blocks in a kernel of its own before the first grouped GEMM
-- (engine/infer.c moe_expand): TensorRT-LLM's CUTLASS MoE, the PyTorch
-- flow's default MoE backend (expandInputRowsKernel).  NIM's engines run the
-- same MoE plugin; its rows here are dense, so it is left to the runtime
-- named trtllm until a NIM MoE case says otherwise.
M.moe_expand = { trtllm = true }

-- Runtimes whose fused MoE quantises the fp8 expert GEMMs' inputs in
-- kernels of their own (engine/infer.c moe_quant): vLLM's and SGLang's
-- Triton fused_experts, which call moe_kernel_quantize_input on the tokens
-- before the first grouped GEMM and again on the activation's output
-- ("qintermediate_cache2, a2q_scale = moe_kernel_quantize_input(...)")
-- before the second (vllm/model_executor/layers/fused_moe/fused_moe.py;
-- SGLang's fused_moe_triton likewise per_token_group_quant_fp8 in
-- invoke_fused_moe_kernel).  TensorRT-LLM's is act_quant's (its CUTLASS
-- MoE's one fp4/fp8 quantise of the input).
M.moe_quant = { vllm = true, sglang = true }

-- Runtimes that run an MoE's shared expert as dense linears of their own
-- beside the fused MoE, on the same stream (engine/infer.c shared_apart):
-- vLLM's DeepseekV2MoE builds "self.shared_experts = DeepseekV2MLP(...)"
-- and its SharedFusedMoE calls it before the routed experts
-- (vllm/model_executor/models/deepseek_v2.py and layers/shared_fused_moe/
-- shared_fused_moe.py, v0.11.0; a second stream came with vLLM PR #26440,
-- after it).  SGLang runs DeepSeek-V3/R1's shared expert at TP 8 as one
-- more expert of its fused MoE (num_fused_shared_experts), the layout
-- model_layer_ops prices.
M.moe_shared_apart = { vllm = true }

-- The largest step (tokens) whose shared expert the runtime runs on a
-- second CUDA stream beside the routed experts, priced then as one of them
-- (engine/infer.c shared_apart): vLLM from v0.11.1 -- PR #26440 (merged
-- after v0.11.0) "executes the shared_experts part of the FusedMoE on a
-- separate GPU stream, so that the execution is parallelized with the
-- 'selected_experts' part", and PR #28406 went on to "limit parallel stream
-- execution to <=256 batch size" ("staged_hidden_states.shape[0] <=
-- DUAL_STREAM_TOKEN_THRESHOLD").  shared_expert_stream = false (validate's
-- for a case of vLLM 0.11.0 or before) leaves every step's shared expert
-- apart.
M.shared_stream_max = { vllm = 256 }

-- Runtimes whose fused MoE routes a grouped-top-k router (DeepSeek's: the
-- MLA models', engine/infer.c moe_route) in one kernel by default, where
-- the native path launches MOE_GROUPED_TOPK_KERNELS (9).  SGLang: sglang
-- PR #5371 ("apply fused moe gate in ds v3/r1", 2025-04-14, 8 x H200,
-- DeepSeek-V3 TP 8) sends biased_grouped_topk to sgl-kernel's
-- moe_fused_gate where "experts_per_group <= 32 and
-- is_power_of_two(num_experts)" (256 experts in 8 groups): "Only one
-- kernel now. 36us->8us." (the torch profile of one layer's routing; the
-- engine prices the native 9 kernels at 44 us, the one at 4.9); sglang PR
-- #15347 (2025-12-18) moved it to flashinfer's fused_topk_deepseek, one
-- kernel too (python/sglang/srt/layers/moe/topk.py biased_grouped_topk_gpu).
-- Merged after v0.4.5 (2025-04-07), in every release from 0.4.6:
-- fused_grouped_topk = false (validate's for a case of SGLang 0.4.5 or
-- before, or of no release dated before the PR) prices the 9.  vLLM's
-- fused kernel (PR #28124, 2025-11) is left to the option: the file's
-- vLLM cases of DeepSeek name releases before it.
M.fused_grouped_topk = { sglang = true }

-- The fused MoE's expert GEMMs in fp8 on Hopper, as vLLM and SGLang run
-- them without expert parallelism: their Triton fused_moe kernel (SGLang's
-- fused_moe_triton; DeepGEMM's grouped GEMMs only behind DeepEP), which
-- multiplies a block of fp8 tokens by a block of fp8 weights with tl.dot
-- and, for a block-scaled checkpoint (DeepSeek-V3/R1's, Qwen3-FP8's 128 x
-- 128 blocks), scales the fp32 accumulator by the K block's activation
-- and weight scales every 128 elements of K ("accumulator +=
-- tl.dot(a, b) * a_scale[:, None] * b_scale[None, :]", fused_moe.py
-- fused_moe_kernel, use_fp8_w8a8 with group_k).  Each K step's product
-- is read before the next is issued, so the WGMMA pipeline that gives
-- Hopper's fp8 rate twice its bf16 one is not kept full.  Measured: the
-- same Triton loop as a dense GEMM (w8a8_block_fp8_matmul, its tuned H100
-- config, DeepSeek-V3's N 2112 x K 7168) against torch's bf16 GEMM of
-- the shape on one H100 (vLLM PR #23280, "TFLOP/s comparison
-- (block_size=(128, 128))"): 366.8 / 619.8, 396.0 / 648.2, 403.0 / 715.8
-- and 406.5 / 666.4 TFLOP/s at 1024, 2048, 4096 and 8192 tokens: 0.592,
-- 0.611, 0.563, 0.610 of the bf16 library rate, mean 0.594 -- below
-- bf16, not twice it.  The fused MoE's own timings agree: vLLM's
-- benchmark_moe for Qwen3-30B-A3B in fp8 on one H100 (vLLM PR #24700,
-- "Main": 911.64 and 1647.57 us at 2048 and 4096 tokens for E 128, N
-- 768, K 2048, top 8) is 169 and 188 TFLOP/s, under the cap this gives.
-- What the loop loses is the SM's (each K step's wait and its scaling on
-- the CUDA cores), not the tensor cores' width: the ceiling is the H100's
-- per SM, 0.594 of an H100 SXM's bf16 peak per SM (989 TFLOP/s over 132
-- SMs), and the engine takes it as a multiple of the card's own bf16 rate
-- at the GEMM's shape (roof_op.bf16_x), scaled by the two cards' bf16
-- peaks per SM: 0.594 on the H100, H200 and H800 (the same SM at the same
-- peak), 2.35 on the H20, whose tensor cores are cut to a quarter per SM
-- (148 TFLOP/s over 78 SMs), so that its own fp8 rate binds first.  Ant
-- Group's H20 TP 8 prefill under SGLang 0.5.2 (validation ant-dsr1-h20-
-- tp8-prefill-4096, 2062.5 tokens/s a GPU on this kernel, experts sliced
-- by TP) refutes the cap taken in proportion to the card's tensor rate
-- instead: -10.3% -> -53.5%.  Only Hopper, the measurements' arch; with
-- expert parallelism SGLang's DeepEP hands the experts to DeepGEMM
-- (gpuplan.serve applies the cap at ep 1 only).  --weights does not say
-- how an fp8 checkpoint is scaled: fp8 under these runtimes is taken as
-- block-scaled, as M.m_tile takes it (a per-tensor checkpoint's loop
-- accumulates inside the MMA, "accumulator = tl.dot(a, b,
-- acc=accumulator)", and the cap would overstate its loss).
M.moe_fp8_bf16_x = { vllm = { hopper = 0.594 }, sglang = { hopper = 0.594 } }

-- SGLang's dense block-fp8 linears before DeepGEMM (block_fp8_triton):
-- the same Triton loop the multiple above was measured on.  Until
-- DeepGEMM came on by default for them ("Turn on DeepGemm By Default",
-- sglang PR #5628, 2025-04-22, first in 0.4.6; opt-in from PR #5580,
-- 2025-04-21), SGLang's apply_w8a8_block_fp8_linear ran vLLM's Triton
-- kernel ported ("w8a8_block_fp8_matmul") or, on SM90 where both weight
-- dims divide by 128, sgl-kernel's CUTLASS blockwise GEMM (sglang PR
-- #3267, 2025-02-03, "mainly from vllm" PR #11868).  Both run below
-- DeepGEMM, whose rate the engine's fp8 linears take: on one H200 in the
-- release of 0.4.3.post2 (sglang PR #3893, 2025-02-26, "The FP8
-- block-wise GEMM of DeepGeem consistently outperforms the SGLang/VLLM
-- implementation under all circumstances ... for H200"), m 4096 x n
-- 24576 x k 7168: DeepGEMM 1354.0 us, SGLang 4067.3 us, vLLM 4033.6 us
-- (1066, 355 and 358 TFLOP/s), m 2048: 731.4 / 2157.6 / 2119.9 us; at
-- DeepSeek-V3's o_proj, N 7168 x K 16384, one device, after 0.4.3
-- (sglang PR #5207, 2025-04-09, "vllm / sgl-kernel / sglang triton /
-- deepgemm", us): 92.6 / 94.2 / 130.3 / 63.6 at 1 token, 90.4 / 93.1 /
-- 78.3 / 61.1 at 8: Triton 1.28-2.05x DeepGEMM's time, the CUTLASS port
-- 1.48x.  The engine holds these linears to the fused MoE's multiple
-- (M.moe_fp8_bf16_x_of, the same cap on the same loop), which prices the
-- o_proj of an H200 decode step of 1 token 1.66x its DeepGEMM time (34.8
-- -> 57.7 us), within that spread.  Only SGLang, the release rule's
-- runtime: vLLM 0.7.x ran its own CUTLASS block-fp8 kernel there
-- ("Default (using our existing CUTLASS Block FP8)", vLLM PR #13996,
-- 2025-02-27), whose multiple is not measured here.
M.block_fp8_triton = { sglang = true }
-- H100 SXM's bf16 dense peak per SM (catalog h100-sxm: 989 TFLOP/s, 132
-- SMs): the SM the 0.594 was measured on.
M.MOE_TRITON_REF_SM = 989e12 / 132

-- The multiple for runtime rt on device d (gpuplan.roofline.device: peak,
-- sms) of arch `arch` with weights of base format `base`; nil where the
-- runtime's experts keep their precision's rate.
function M.moe_fp8_bf16_x_of(rt, arch, base, d)
  local r = M.moe_fp8_bf16_x[rt or ""]
  local x = base == "fp8" and r and r[arch or ""]
  local bf16 = d and d.peak and d.peak.bf16
  if not x or not bf16 or not (bf16 > 0) or not d.sms or not (d.sms > 0) then return nil end
  -- at most 4 (the engine's bound): past 2 fp8's own rate binds anyway
  return math.min(4, x * M.MOE_TRITON_REF_SM / (bf16 / d.sms))
end

-- The fused MoE's expert GEMMs in NVFP4 on Blackwell, as TensorRT-LLM's
-- PyTorch flow runs them on one GPU (CutlassFusedMoE: fp4_quantize of the
-- bf16 rows, the CUTLASS block-scaled grouped GEMMs, SwiGLU, finalize),
-- held to a multiple of the card's bf16 GEMM rate as M.moe_fp8_bf16_x
-- holds Triton's fp8 experts on Hopper (engine infer.c: the moe_up and
-- moe_down of a step computing in fp4).  Measured: NVIDIA's AIConfigurator
-- times that op (create_moe(...).forward(hidden_states, router_logits),
-- CUDA graph, autotuned: routing, quantisation, both GEMMs and finalize,
-- the gate GEMM out; collector/trtllm/collect_moe.py) on one B200 under
-- TensorRT-LLM 1.2.0rc5 (ai-dynamo/aiconfigurator@095f58a5,
-- aic-core/src/aiconfigurator_core/systems/data/b200_sxm/moe/trtllm/
-- 1.2.0rc5/moe_perf.parquet, kernel_source moe_torch_flow_cutlass,
-- balanced routing, moe_tp 1, moe_ep 1) at Qwen3-30B-A3B's shape (hidden
-- 2048, inter 768, 128 experts, top 8): nvfp4 0.2127, 0.3064, 0.5256,
-- 0.9612, 1.8562 ms at 1024, 2048, 4096, 8192, 16384 tokens, and the same
-- op in bf16 0.2743, 0.3295, 0.4752, 0.7927, 1.4803 ms: from 3,072 tokens
-- up the NVFP4 experts run slower than the bf16 ones, 666 TFLOP/s at
-- 16,384 tokens (1.24e12 FLOP), 7% of the 9 PFLOP/s FP4 peak.  Their
-- marginal from 8,192 to 16,384 tokens is 0.895 ms for 6.18e11 FLOP, 0.69
-- PFLOP/s, against 1.76 for B200's bf16 library rate (2.25 PFLOP/s x its
-- 0.78 GEMM fraction).  The multiple is the one at which the engine's
-- price of that op (the step's moe_quant, moe_up, moe_act, moe_down,
-- moe_route, moe_sum and moe_expand rows, its own shape losses at each
-- row count) meets the measurement at 8,192 tokens: 0.66 gives 956 us
-- there, and 151, 205, 315, 522 us at 256, 1,024, 2,048 and 4,096
-- tokens against 144.8, 212.7, 306.4 and 525.6 measured (without it the
-- engine gave 148, 178, 218, 299 and 465 us: 0.48x the measurement at
-- 8,192).  The 1.2 CUTLASS kernel's multiple: the same table for 1.3.0rc10
-- gives 0.8216 ms at 8,192 tokens (later tactics), and its trtllm-gen
-- path (moe_torch_flow_min_latency, the TRTLLM backend) 0.2505.  Only TensorRT-LLM on
-- Blackwell, the measurement's runtime and arch; an NVFP4 checkpoint whose
-- step computes in fp8 (DeepSeek-R1's, FP8 attention) keeps its rate.
M.moe_fp4_bf16_x = { trtllm = { blackwell = 0.66 } }

-- The multiple for runtime rt on arch `arch` with weights of base format
-- `base`; nil where the runtime's NVFP4 experts keep their precision's rate.
function M.moe_fp4_bf16_x_of(rt, arch, base)
  local r = M.moe_fp4_bf16_x[rt or ""]
  return base == "fp4" and r and r[arch or ""] or nil
end

-- What the defaults line says of that multiple x (M.moe_fp8_bf16_x_of's)
-- for runtime rt on device d: nil where it changes nothing -- a dense
-- model, or a card whose own fp8 rate binds first (x at or past its fp8 /
-- bf16 peaks: the H20's 2.35 against 2) -- else the cap, which moved
-- Qwen3-30B-A3B's fp8 TTFT on one H100 under vLLM from 31 to 42 ms and
-- went unsaid.
M.MOE_FP8_RUNTIME = { vllm = "vLLM", sglang = "SGLang" }
function M.moe_fp8_said(rt, x, d, model)
  local moe = type(model) == "table" and model.moe
  if not x or not (moe and (moe.experts or 0) > 0) then return nil end
  local bf16, fp8 = d and d.peak and d.peak.bf16, d and d.peak and d.peak.fp8
  if not (bf16 and fp8 and bf16 > 0 and x < fp8 / bf16) then return nil end
  return string.format("moe_fp8_bf16_x=%.3g (%s's Triton fused MoE: block-scaled fp8 experts "
    .. "at %.3g x this card's bf16 rate, not its fp8 rate: 0.594 of an H100's bf16 peak per SM, "
    .. "vLLM PR #23280)", x, M.MOE_FP8_RUNTIME[rt] or tostring(rt), x)
end

-- What the defaults line says of the NVFP4 multiple x (M.moe_fp4_bf16_x_of's)
-- for a model: nil for a dense one, which has no fused MoE to cap.  One
-- sentence for gp.infer and the MoE serving model (serve.lua).
function M.moe_fp4_said(x, model)
  local moe = type(model) == "table" and model.moe
  if not x or not (moe and (moe.experts or 0) > 0) then return nil end
  -- not an option: said as what it is, not as name=value (the defaults
  -- line's name=value entries are options a user can give)
  return string.format("NVFP4 expert GEMMs: %.3g x this card's bf16 rate (TensorRT-LLM's "
    .. "CUTLASS NVFP4 fused MoE, as AIConfigurator's B200 timings of it run)", x)
end

-- Runtimes that all-reduce a TP group within one host with their own
-- peer-to-peer kernels rather than NCCL: vLLM's custom all-reduce
-- (vllm/distributed/device_communicators/custom_all_reduce.py, on by
-- default: disable_custom_all_reduce = False) and SGLang's, which runs the
-- same kernels (sgl-kernel's custom_all_reduce); engine/infer.c prices it
-- (custom_ar_time).  TensorRT-LLM's own one-shot / two-shot kernels are
-- not modelled: NCCL's price stands there.
M.custom_ar = { vllm = true, sglang = true }

-- SGLang's FlashInfer all-reduce fusion, which its server turns on by
-- itself for gpt-oss on Blackwell: python/sglang/srt/server_args.py, for
-- "GptOssForCausalLM", "if is_sm100_supported(): if not
-- self.enable_dp_attention: self.enable_flashinfer_allreduce_fusion =
-- True" (a copy of the 0.5 line of mid-2025), later "if
-- is_blackwell_supported(): # workaround for https://github.com/
-- flashinfer-ai/flashinfer/issues/2006 if not self.enable_dp_attention and
-- self.nnodes == 1: self.enable_flashinfer_allreduce_fusion = True" (a
-- copy of late 2025, with fp4_e2m1 KV and NSA); neither copy pinned to
-- the 0.5.1 / 0.5.6 tags the LMSYS and cookbook rows state, both on
-- either side of them.  With it each TP all-reduce that a residual add
-- and an RMSNorm follow (after o_proj, and after the experts before the
-- next layer's input norm) runs as one FlashInfer trtllm_allreduce_fusion
-- kernel (layers/communicator.py, "apply_flashinfer_allreduce_fusion(
-- batch_size)": "batch_size > 0 and batch_size <=
-- FUSE_ALLREDUCE_MAX_BATCH_SIZE", 2048, and "not is_dp_attention_
-- enabled()").  The engine prices it in serve_a2a.c (sx_ar_fused) for the
-- MoE serving model; gp.infer's one-model path (the BF16 rows) does not
-- take it.  The server's own layout conditions (DP attention, nnodes, a
-- TP group to reduce over, no experts' exchange) are each pool's: a
-- disaggregated deployment's prefill and decode pools are servers of
-- their own, each launched with its own --tp-size, --enable-dp-attention
-- and --nnodes (sglang@08edc506 docs/advanced_features/
-- pd_disaggregation.md: "--disaggregation-mode prefill" ... "--nnodes 2"
-- "--tp-size 16" "--dp-size 8" "--enable-dp-attention", and the decode
-- server's own), so the engine decides them per pool (serve.h
-- serve_ar_norm_on).  Returns the defaults line's words where the
-- runtime turns it on for this model on this card, or nil.
function M.sglang_ar_norm_fusion(runtime, model, g)
  if runtime ~= "sglang" or not M.gpt_oss_shape(model) then return nil end
  -- (the arch, not sm100: a consumer Blackwell, sm120, has no NVLink,
  -- which the engine's sx_ar_fused requires anyway)
  if not (g and g.arch == "blackwell") then return nil end
  return "ar_norm_fusion (SGLang turns on FlashInfer's all-reduce + residual + RMSNorm "
    .. "kernel for GptOssForCausalLM on Blackwell without DP attention, on one node: one "
    .. "kernel for the TP all-reduce and the norm after it, up to 2048 tokens a step)"
end

-- Scale-up fabrics on which every GPU pair of a host is NVLink-connected
-- through NVSwitch, what vLLM's custom all-reduce needs beyond two GPUs
-- (custom_all_reduce.py: "Custom allreduce is disabled because it's not
-- supported on more than two PCIe-only GPUs" unless
-- cuda_platform.is_full_nvlink finds every pair NVLink-connected).  Not
-- the V100 hybrid cube-mesh (nvlink2) nor the bridges, which join GPUs in
-- pairs.
M.custom_ar_fabrics = { nvlink3 = true, ["nvlink3-a800"] = true, nvlink4 = true,
                        ["nvlink4-h800"] = true, nvlink5 = true }

-- The largest TP group `runtime`'s custom all-reduce serves on GPU g of
-- system sys (nil: the catalog system holding g, else its NVLink
-- domain): the GPUs of one host (the system's host_gpus, e.g. a GB200
-- NVL72 compute tray's 4), at most 8 (the kernels' _SUPPORTED_WORLD_SIZES
-- are 2, 4, 6 and 8); 0 where the runtime has none or the fabric is not a
-- full NVLink mesh.
function M.custom_ar_gpus(runtime, g, sys, cat)
  if not M.custom_ar[runtime or ""] then return 0 end
  local host
  if not sys and cat then sys = require("gpuplan.train").default_node(g, cat) end
  local fab = sys and sys.scaleup or (g.scaleup and g.scaleup.fabric)
  if not M.custom_ar_fabrics[fab or ""] then return 0 end
  host = sys and (sys.host_gpus or sys.gpus) or (g.scaleup and g.scaleup.domain) or 8
  return math.min(8, host)
end

-- Where host-resident layers run (--offload), by runtime: llama.cpp
-- computes them on the CPU for steps of fewer than 32 tokens (ggml's
-- backend scheduler sends larger batches to the GPU: PR 6083 "offload large
-- batches to GPU", min batch 32): 31.  Every other runtime copies them to
-- the GPU each forward pass (vLLM --cpu-offload-gb, HF accelerate's
-- device_map hooks, DeepSpeed-Inference): 0.
M.offload_cpu_max = { kernels = 31, ["llama.cpp"] = 31 }

-- Runtimes whose host-resident layers sit in pageable memory, copied to
-- the GPU from there: HF accelerate's offload keeps them in an ordinary
-- CPU state dict (hooks.py AlignDevicesHook's weights_map, moved by
-- set_module_tensor_to_device), which the eager PyTorch runtimes run on.
-- vLLM pins its copy (model_executor/models/utils.py maybe_offload_to_cpu:
-- "use pin_memory if possible").  From pageable memory "the CUDA driver
-- must first allocate a temporary page-locked, or 'pinned', host array,
-- copy the host data to the pinned array, and then transfer the data from
-- the pinned array to device memory" (NVIDIA, "How to Optimize Data
-- Transfers in CUDA C/C++"): each byte is read and written once more in
-- host DRAM before the DMA reads it.
M.offload_pageable = { eager = true, ["eager-pytorch"] = true, litgpt = true, autoawq = true }

local args = require "gpuplan.args"
local shown = args.shown

-- A whole-number argument (a tail call: errors keep the caller's level).
local function int_arg(a, k, lo) return args.int_field(a, k, lo, "infer") end

-- A number >= 0 (> 0 with positive), or a string with units of kind.
local function num_arg(a, k, kind, positive)
  local v = a[k]
  if v == nil then return nil end
  if type(v) == "string" and kind then
    -- A quantity of a declared kind: its unit required, the option named.
    local n, msg = require("gpuplan.options").quantity(k, v)
    if msg then error("infer: " .. msg, 3) end
    v = n
  end
  if type(v) ~= "number" or v ~= v or v < 0 or v == math.huge or (positive and v == 0) then
    error("infer: " .. k .. " must be a " .. (positive and "positive" or "non-negative")
          .. " number (got " .. shown(a[k]) .. ")", 3)
  end
  return v
end

local function bool_arg(a, k)
  if a[k] ~= nil and type(a[k]) ~= "boolean" then
    error("infer: " .. k .. " must be a boolean (got " .. type(a[k]) .. ")", 3)
  end
  return a[k]
end

-- unfused_dequant: the run's weight-only linears dequantise their weights
-- to 16 bits in a kernel of their own before a plain 16-bit GEMM (DeepSpeed's
-- quantized_initialization, ZeRO-Inference's --quant_bits: engine infer.c
-- step_layers, wo_unfused); true or nil.  Refused where the weights are
-- 16 bits or more: nothing is dequantised.
function M.unfused_dequant(a, bits)
  local v = bool_arg(a, "unfused_dequant")
  if v and bits >= 16 then
    error(args.usage(string.format("infer: unfused_dequant dequantises weight-only weights; "
      .. "the weights are %g bits (give weights below 16 bits, e.g. 4.5)", bits)), 4)
  end
  return v or nil
end

-- wo_split_k: the K slices a weight-only GEMM writes apart, summed by a
-- kernel of its own after each linear (M.v0_awq_split_k; engine infer.c
-- splitk_sum); a whole number 2..64 or nil (the option's declared range,
-- options.lua, checks it before this; engine INFER_MAX_SPLIT_K again).
-- Refused where the weights are 16 bits or more: no weight-only GEMM runs.
function M.wo_split_k(a, bits)
  local v = int_arg(a, "wo_split_k", 2)
  if v and bits >= 16 then
    error(args.usage(string.format("infer: wo_split_k splits weight-only GEMMs; the weights "
      .. "are %g bits (give weights below 16 bits, e.g. int4)", bits)), 4)
  end
  return v
end

-- Price per GPU-hour in the buyer's currency (gpuplan.prices.per_hour):
-- the caller's, else the cheapest offer in the buyer's markets (said), or
-- none (said where the card is offered).
local function price_of(p, cat, g, buyer, default)
  local ok, v = pcall(require("gpuplan.prices").per_hour, cat, p, g.id, buyer, default)
  if not ok then error("infer: " .. tostring(v), 0) end
  return v
end

-- Tokens per request (input, output): whole numbers up to 2^24, the
-- engine's count bound (gpuplan.memory.TOKENS_MAX).
local function tokens_arg(a, k)
  local v = a[k]
  if v == nil then return nil end
  -- the tokens rule and its words are gpuplan.options bad_tokens's
  local msg = require("gpuplan.options").bad_tokens(k, v)
  if msg then error("infer: " .. msg, 0) end
  -- a count, an integer: input = 1024.0 came back in the result as 1024.0
  return math.tointeger(v)
end

-- Bytes an element of a hybrid stack's SSM state (engine/model.h
-- GP_MAMBA_SSM_STATE_BYTES: vLLM's mamba_ssm_cache_dtype, float32 for
-- Nemotron-H when left "auto"), from the option v (its enum, checked by
-- gpuplan.options); nil for a model without Mamba layers, where v given
-- is refused (it would change nothing).  The default is said through
-- default(text).
function M.mamba_ssm_bytes(v, model, default, who)
  local hybrid = type(model) == "table" and type(model.hybrid_pattern) == "string"
    and model.hybrid_pattern:find("M") ~= nil
  if not hybrid then
    if v ~= nil then
      error(args.usage(string.format("%s: mamba_ssm_cache_dtype %s given for %s, which has no "
        .. "Mamba layers (no hybrid_pattern with M): it keeps no SSM state", who, tostring(v),
        tostring(type(model) == "table" and (model.id or model.name) or model))), 3)
    end
    return nil
  end
  if v == nil then
    default("mamba_ssm_cache_dtype=fp32 (vLLM's for Nemotron-H: \"Only float32 is known to have "
      .. "no accuracy issues by default\")")
    v = "fp32"
  end
  return require("gpuplan.memory").kv_bytes[v]
end

-- The scale-up fabric and the GPUs of the node one TP group runs on, on
-- GPU g of system sys (nil: its NVLink domain, else 8); nil where the card
-- has no scale-up fabric.
local function tp_node(g, sys)
  local fab = sys and sys.scaleup or (g.scaleup and g.scaleup.fabric)
    or (g.pcie and ("pcie" .. g.pcie.gen))
  if not fab then return nil end
  return fab, (sys and sys.gpus) or (g.scaleup and g.scaleup.domain) or 8
end

-- Scale-up topology of one TP group on this GPU (for comm_cost).
local function tp_topology(g, sys, cat)
  local comm = require "gpuplan.comm"
  local fab, per = tp_node(g, sys)
  if not fab then return nil end
  local ok, t = pcall(comm.from_fabrics, { scaleup = fab, nodes = 1, nics = 0,
    gpus_per_node = per }, cat)
  if not ok then return nil end
  -- The part's collective library may run no LL128 (RCCL on CDNA 3 and 4:
  -- the arch's nccl_ll128, comm.lua's ll128_off), as on a node_spec node.
  local arch = g and g.arch and cat.archs[g.arch]
  t.ll128_off = comm.ll128_off(arch)
  -- (not RCCL's base latency: a TP group's small all-reduces on ROCm are the
  -- runtime's own custom all-reduce, not priced, RCCL standing in; docs/validation.md)
  return t
end

-- The operator rows of a phase or a decode step (core.infer's and
-- core.serve's ops), as gp.infer returns them: one for either model.
function M.op_rows(ph)
  local rows = {}
  for i, o in ipairs(ph.ops or {}) do
    rows[i] = { name = o.name, count = o.count, time = o.time, total = o.total,
                bound = o.bound, intensity = o.intensity, flop = o.flop,
                bytes = o.bytes, shape_eff = o.shape_eff, t_launch = o.t_launch,
                t_compute = o.t_compute, t_memory = o.t_memory }
  end
  return rows
end

-- Every argument gp.infer reads (the MoE serving model's included),
-- declared in gpuplan.options; anything else is a misspelling (tp_size
-- for tp) that would otherwise estimate a different deployment in silence.
local options = require "gpuplan.options"

local function check_args(a, level)
  if type(a) ~= "table" then error("infer: expected a table of arguments", level + 1) end
  -- The resolve step of every command: keys, and quantities' units.
  options.resolve("infer", a, "infer", level + 1)
end

-- graph_sizes as the user gave it: a list of whole numbers or their
-- comma-joined string ("1,2,4,8"); sorted, each once.  Nil when absent.
local function graph_sizes_arg(a)
  local v = a.graph_sizes
  if v == nil then return nil end
  local t = {}
  if type(v) == "string" then
    for w in (v .. ","):gmatch("([^,]*),") do
      local n = tonumber(w)
      if n == nil then
        -- text that is no list of numbers ('1,2,x', '8,') is a value the
        -- option cannot parse: a usage error on the command line
        -- (docs/output.md), as plan's --gpus 'abc' and '8,' are
        error(args.usage(string.format("infer: graph_sizes must be whole numbers joined by "
          .. "commas (got '%s')", v)), 4)
      end
      t[#t + 1] = n
    end
  elseif type(v) == "table" and #v > 0 then
    for k in pairs(v) do
      if math.type(k) ~= "integer" or k < 1 or k > #v then
        error("infer: graph_sizes must be a list of batch sizes (got a table with key "
          .. args.shown(k) .. ")", 4)
      end
    end
    for i = 1, #v do t[i] = v[i] end
  else
    error("infer: graph_sizes must be a list of batch sizes or a string such as '1,2,4,8' (got "
      .. args.shown(v) .. ")", 4)
  end
  local seen = {}
  for i, n in ipairs(t) do
    local bad = options.bad_count(string.format("graph_sizes[%d]", i), n)
    if bad then error("infer: " .. bad, 4) end
    if seen[n] then error(string.format("infer: graph_sizes names %d twice", n), 4) end
    seen[n] = true
    t[i] = math.tointeger(n)
  end
  if #t > 128 then
    error(string.format("infer: graph_sizes holds %d sizes, at most 128", #t), 4)
  end
  table.sort(t)
  return t
end

-- The format a weight name computes in: its base name (gptq-g64 -> gptq,
-- nf4-dq -> nf4); nil for bits per weight (a weight-only format).
function M.weight_base(w)
  if type(w) ~= "string" or tonumber(w) then return nil end
  return w:match("^(%a+%d?)%-g%d+") or w:match("^(nf4)%-dq$") or w
end

-- The rest of M.setup (which tail-calls it, so that its errors are
-- raised at the same level): the card's memory and the margin, CPU
-- offload, the TP topology and the price, into c; info: the defaults
-- list, weights and kv, completed with the currency and the card.
local function setup_memory(a, cat, model, g, sys, d, c, tp, pp, default, info)
  -- The card's capacity (the rule every command uses) and the margin; the
  -- reserve and the margin come off it in the engine's memory model
  -- (memory.c mem_infer), the same call gp.memory makes.
  local mem = num_arg(a, "memory", "bytes", true)
  if not mem then
    local usable, derived = require("gpuplan.memory").capacity(g)
    mem = usable
    default(string.format("memory=%.1fGB (%s)", mem / 1e9,
                          derived and string.format("memory x %.3f",
                            require("gpuplan.memory").USABLE_FRACTION) or "usable_memory"))
  else
    -- The runtime allocates on the card: more than the card holds would
    -- price a KV pool that is not there (1TB on a b200 read 839 GB of KV
    -- budget per GPU and its tokens/s).  The card's full memory is the
    -- bound, not its usable capacity, so '80GiB' on an 80GiB card stands.
    local card = g.memory
    if type(card) == "string" then card = units.parse(card, "bytes") end
    if type(card) == "number" and mem > card then
      -- in the units the user reads: the value as typed, a number of
      -- bytes in GB and GiB (the card's GiB), not "memory 9e+10"
      error(string.format("infer: memory %s is more than %s's %s, the card's memory (the "
        .. "runtime allocates on the card: at most that)", type(a.memory) == "string"
        and "'" .. a.memory .. "'" or string.format("%s (%s)", units.fmt_bytes(mem, "GB"),
        units.fmt_bytes(mem, "GiB")), tostring(g.id),
        units.fmt_bytes(card, "GiB")), 3)
    end
  end
  c.capacity = mem
  local margin = num_arg(a, "margin")
  if margin ~= nil and margin >= 1 then
    error("infer: margin must be below 1 (got " .. shown(a.margin) .. ")", 3)
  end
  c.kv_free_fraction = num_arg(a, "kv_free_fraction")
  if c.kv_free_fraction and (c.kv_free_fraction == 0 or c.kv_free_fraction > 1) then
    error("infer: kv_free_fraction must be in (0, 1] (got " .. shown(a.kv_free_fraction) .. ")", 3)
  end
  if margin ~= nil and c.kv_free_fraction then
    error("infer: " .. require("gpuplan.memory").KV_RULES_BOTH, 3)
  end
  if margin == nil and not c.kv_free_fraction and M.runtime_memory[a.runtime] then
    -- the runtime's own memory rule (M.runtime_memory; a static batch's,
    -- M.static_memory, where it has one)
    local rule = (c.static_batch and M.static_memory[a.runtime]) or M.runtime_memory[a.runtime]
    margin, c.kv_free_fraction = rule.margin, rule.kv_free_fraction
    default(rule.said)
  end
  if margin == nil then
    margin = (cat.settings and cat.settings.safety_margin) or 0.10
    -- With kv_free_fraction the rest of the free memory is the margin.
    if not c.kv_free_fraction then default(string.format("margin=%.2f", margin)) end
  end
  c.margin = margin
  if a.offload then
    -- What the offload assumes (host memory, the link, host DRAM) is said
    -- only where a layer is offloaded: M.infer drops these entries when
    -- the engine places none in host memory (the weights fit).
    local said, outer = {}, default
    info.offload_said = said
    local function default(s) said[s] = true; outer(s) end
    c.offload_cpu_max = M.offload_cpu_max[a.runtime or "graphs"] or 0
    -- Pinned or pageable host layers: the run's statement (pin_memory:
    -- DeepSpeed ZeRO-3's offload_param "pin_memory", ZeRO-Inference's
    -- --pin-memory), else the runtime's (M.offload_pageable).
    local pageable = M.offload_pageable[a.runtime or "graphs"]
    local pin = bool_arg(a, "pin_memory")
    if pin ~= nil then pageable = not pin
    else
      -- said under the option's name: the pcie_bw entry below gives the
      -- rate it sets, not which way the runtime holds the layers
      default(string.format("pin_memory=%s (runtime %s's: %s)", tostring(not pageable),
        tostring(a.runtime or "graphs"), pageable and "pageable host layers"
          or "pinned host layers"))
    end
    if c.offload_cpu_max > 0 then
      -- The CPU computing the layers reads them from host DRAM
      -- (gpuplan.comm.host_bw: the system's, else the desktop's).
      c.offload_bw = num_arg(a, "host_bw", "bandwidth", true)
      if not c.offload_bw then
        c.offload_bw = require("gpuplan.comm").host_bw(nil, sys, default, "infer",
          "the CPU runs offloaded layers")
      end
    elseif a.host_bw ~= nil and not pageable then
      error(args.usage("infer: host_bw is the CPU's memory bandwidth, which llama.cpp (runtime "
            .. "llama.cpp or kernels) computes offloaded layers at and the eager runtimes "
            .. "stage their pageable copies at; runtime " .. tostring(a.runtime or "graphs")
            .. (pin and " with pin_memory" or "")
            .. " copies them from pinned memory over PCIe (pcie_bw)"), 3)
    end
    -- The layers the run placed in host memory, when stated (at most a
    -- stage's: the model's layers over pp, the first stages holding the
    -- extra ones).
    c.offload_layers = int_arg(a, "offload_layers", 1)
    if c.offload_layers and c.offload_layers > math.ceil(model.layers / pp) then
      error(string.format("infer: offload_layers %d exceeds the %d layers of a GPU's stage",
        c.offload_layers, math.ceil(model.layers / pp)), 3)
    end
    c.host_capacity = num_arg(a, "host_memory", "bytes", true)
    if not c.host_capacity then
      c.host_capacity = sys and sys.host_memory or 32e9
      default(string.format("host_memory=%.0fGB", c.host_capacity / 1e9))
    end
    -- host_memory and host_bw are the node's (the system's); where its
    -- NVLink domain spans hosts (GB200 NVL72: 18 trays of 2 Grace CPUs
    -- and 4 GPUs, the catalog's host_gpus 4) the engine holds each
    -- host's GPUs to that host's share of both (memory.h
    -- mem_host_share, training's rule).  A run of more GPUs than the
    -- system has spans nodes, each holding its own GPUs' layers.
    if sys then
      c.host_node_gpus, c.host_gpus = sys.gpus, sys.host_gpus or 0
      if sys.host_gpus and sys.host_gpus < sys.gpus then
        default(string.format("host share=%d/%d of host_memory and host_bw (one host's GPUs)",
                              sys.host_gpus, sys.gpus))
      end
    end
    -- Every GPU of the run on one host streams its layers from that
    -- host's DRAM at once (each replica's CPU computing them, or each
    -- GPU's copies: the DMA reads the pinned pages, the driver's staging
    -- copy reads and writes the pageable ones), so each gets the host's
    -- share divided among them: core.host_bw_each, the engine's rule
    -- (memory.h mem_host_bw_each; train.c offload_step alike).
    -- A replica's pp stages of tp GPUs hold the GPU in turn (the
    -- engine sums them a step), so those on one host stream one at a
    -- time; ranks: the GPUs of a host that stream at once.
    local hnode, hgpus = c.host_node_gpus or c.gpus, c.host_gpus or 0
    local _, ranks = core().host_bw_each(1, hnode, hgpus, c.gpus, pp, tp)
    local function each(bw) return (core().host_bw_each(bw, hnode, hgpus, c.gpus, pp, tp)) end
    local function split(bw)
      return ranks > 1 and string.format(", %.0f / %d GPUs of a host", bw / 1e9, ranks) or ""
    end
    if c.offload_cpu_max > 0 and ranks > 1 then
      default(string.format("CPU reads at %.0fGB/s a GPU (host_bw over the %d GPUs of a host "
                            .. "reading their layers at once)", each(c.offload_bw) / 1e9, ranks))
    end
    -- The copies cross PCIe at gpuplan.comm.pcie_bw (0.8 of the link,
    -- pinned copies).  From pageable memory the driver's staging copy
    -- (a read and a write of host DRAM at host_bw) and the DMA take
    -- turns on each chunk: 1/rate = 1/pcie + 2/host_bw.  Pinned, the
    -- DMA reads each byte from DRAM once: a GPU copies at the smaller
    -- of its link and its part of the host's DRAM bandwidth.
    c.offload_link_bw = num_arg(a, "pcie_bw", "bandwidth", true)
    if not c.offload_link_bw then
      local comm = require "gpuplan.comm"
      local link = comm.pcie_bw(g) or 25e9
      if pageable then
        -- The staging copy runs in its own host's DRAM: that host's
        -- share, divided among the GPUs copying at once.
        local node_bw = comm.host_bw(a.host_bw, sys, default, "infer",
          "the driver stages pageable copies through host DRAM")
        local hbw = each(node_bw)
        c.offload_link_bw = 1 / (1 / link + 2 / hbw)
        default(string.format("pcie_bw=%.1fGB/s (pageable copies: PCIe %.1f, staged at "
                              .. "host_bw %.0f%s)", c.offload_link_bw / 1e9, link / 1e9,
                              hbw / 1e9, split(node_bw)))
      else
        c.offload_link_bw = link
        local dram = c.offload_bw or (sys and sys.host_mem_bw and sys.host_mem_bw * 0.8)
        if dram and each(dram) < link then
          c.offload_link_bw = each(dram)
          default(string.format("pcie_bw=%.1fGB/s (offloaded layers copied to the GPU each step "
                                .. "from the host's DRAM%s; PCIe %.1f)",
                                c.offload_link_bw / 1e9, split(dram), link / 1e9))
        elseif c.offload_cpu_max == 0 then
          default(string.format("pcie_bw=%.1fGB/s (offloaded layers copied to the GPU "
                                .. "each step%s)", c.offload_link_bw / 1e9,
                                pin and " from pinned host memory" or ""))
        end
      end
    end
  end
  if a.pin_memory ~= nil and not a.offload then
    error(args.usage("infer: pin_memory says where offloaded layers sit in host memory; give "
      .. "offload = true too"), 3)
  end
  if a.offload_layers ~= nil and not a.offload then
    error(args.usage("infer: offload_layers places layers in host memory; give offload = true "
      .. "too"), 3)
  end
  if tp > 1 or pp > 1 then
    c.topo = tp_topology(g, sys, cat)
    -- A card with neither a scale-up fabric nor a PCIe link in its entry
    -- (a user's gpu{} without scaleup or pcie) and no system: the engine
    -- fell back to its alpha-beta placeholder, 360 GB/s -- an NVLink's
    -- rate for a card that states no link at all -- said only as "a
    -- placeholder".  gp.train refuses that card past one GPU (comm.node_spec:
    -- "has no scale-up fabric; give system = ID"); so does this.
    if not c.topo then
      error(string.format("infer: gpu '%s' has no scale-up fabric (nor a pcie link in its "
        .. "catalog entry) for the %s to cross: give system = ID, or scaleup or pcie in the "
        .. "gpu's entry", tostring(g.id), tp > 1 and "TP all-reduce" or "pipeline's hand-offs"),
        3)
    end
    if c.topo then c.custom_ar_gpus = M.custom_ar_gpus(a.runtime, g, sys, cat) end
    if c.topo then c.p2p_bw = c.topo.up_bw * (c.topo.up_achievable or 1) end
  end
  local okb, buyer = pcall(require("gpuplan.prices").buyer, cat, a, "infer")
  if not okb then error(buyer, 0) end
  local currency = buyer.currency
  c.price = price_of(a.price, cat, g, buyer, default)
  info.currency, info.gpu, info.system = currency, g, sys
  return model, d, c, info
end

-- How the runtime attends over a cache of dtype kv on card g (M.kv_path):
-- {half_math = true} where the kernel converts the cache to 16 bits and
-- multiplies there, {unfused = true} where a pass of its own dequantises
-- the whole pool every step (engine/infer.c kv_dequant), {} where it
-- multiplies as stored; raises, naming --kv, where no runtime attends
-- over it on that card.
--   fp4: an NVFP4 cache (E2M1, an E4M3 scale per 16 elements) is read by
--     Blackwell kernels only: FlashInfer's nvfp4_quantize_paged_kv_cache
--     is "for the SM100 trtllm-gen MHA kernel", SGLang's FP4 MHA backends
--     are "triton", "torch_native", "flex_attention" and the SM100
--     "trtllm_mha" (server_args.py KV4_ATTENTION_MHA_BACKEND_CHOICES), and
--     vLLM's cache dtypes are "auto", "bfloat16" and fp8 ones (fp8,
--     fp8_e4m3, fp8_e5m2, fp8_inc, fp8_ds_mla: vllm/config/cache.py
--     CacheDType).  Off Blackwell only SGLang's first three take it, over
--     MHATokenToKVPoolFP4, whose get_key_buffer dequantises the whole
--     layer pool to bf16 for them (engine/infer.c kv_dequant); its MLA
--     pool (MLATokenToKVPoolFP4) was not read, so an MLA model is refused.
--     llama.cpp's 4-bit caches are q4_0/q4_1 (integer blocks), not fp4.
--   int8: converted to 16 bits in the attention kernel (TensorRT-LLM's
--     INT8 KV cache, dequantised in its attention kernels), never fp8 math.
--   fp8: multiplied in fp8 with fp8 tensor cores (FlashAttention-3, FP8
--     FMHA); without them converted in the kernel and multiplied in 16 bits
--     (vLLM's paged attention on Ampere, its fp8 "scaled_convert" in
--     csrc/attention), the cache read at 1 B an element either way.
--   int8 is TensorRT-LLM's (and llama.cpp's q8_0) and vLLM's (its
--     CacheDType, vllm/config/cache.py, lists "int8_per_token_head" since
--     the list above was read), no cache dtype of SGLang's (server_args.py
--     --kv-cache-dtype choices "auto", "fp8_e5m2", "fp8_e4m3", "bf16",
--     "bfloat16", "fp4_e2m1"; its quantized KV cache docs: "lower-precision
--     data types (FP8 or FP4)"): refused there, as fp4 is where no kernel
--     takes it.
-- Why card g's runtime attends no FP8 KV cache, or nil where it does
-- (FP8 tensor cores: natively; else converted in the kernel, M.kv_path):
--   TensorRT-LLM (runtime trtllm, nim-http) without FP8 tensor cores: its
--     support matrix lists no FP8 below Ada (M.FP8_NATIVE_ONLY); its
--     Ampere cache is INT8.
--   an NVIDIA card below compute capability 8.0 (no bf16 tensor cores:
--     Volta, Turing -- the mark M.FP8_WEIGHTS_FLOOR reads too): vLLM's
--     fp8 cache is E4M3, which its attention there (Triton; FlashAttention
--     needs 8.0) cannot compile -- on a V100, "type fp8e4nv not supported
--     in this architecture. The supported fp8 dtypes are ('fp8e4b15',
--     'fp8e5')", and vllm-project/vllm PR 35720 (v0.16.0 on a V100):
--     "Setting --kv-cache-dtype fp8 causes a crash on CUDA devices with
--     compute capability below 8.9" (closed unmerged).  The fit hints
--     (cmd/infer.lua) suggest --kv fp8 only where this is nil.
function M.kv_fp8_refusal(g, runtime)
  local peak = type(g) == "table" and type(g.peak) == "table" and g.peak or {}
  if (tonumber(peak.fp8) or 0) > 0 then return nil end
  if M.FP8_NATIVE_ONLY[runtime or ""] then
    return M.FP8_NATIVE_ONLY[runtime] .. "; give kv = int8 (its INT8 KV cache)"
  end
  if (g.vendor == nil or g.vendor == "NVIDIA") and not ((tonumber(peak.bf16) or 0) > 0) then
    return "an FP8 KV cache (vLLM's fp8 is E4M3) needs compute capability 8.0: on a V100 "
      .. "vLLM's Triton attention fails (\"type fp8e4nv not supported in this architecture\"; "
      .. "vLLM PR 35720: \"--kv-cache-dtype fp8 causes a crash on CUDA devices with compute "
      .. "capability below 8.9\"); give kv = fp16"
  end
  return nil
end

-- Whether gp.infer arguments a could serve an FP8 KV cache (the card and
-- runtime they name: M.kv_fp8_refusal; llama.cpp has none), for the fit
-- hints; a card that does not resolve reads as able (its own refusal
-- comes first).
function M.kv_fp8_runs(a)
  if a.runtime == "llama.cpp" then return false end
  local ok, g = pcall(function()
    return type(a.gpu) == "table" and a.gpu or catalog(a.cat or a.catalog):get("gpus", a.gpu)
  end)
  return not (ok and type(g) == "table" and M.kv_fp8_refusal(g, a.runtime))
end

function M.kv_path(kv, g, runtime, model, serve_model)
  local peak = type(g.peak) == "table" and g.peak or {}
  if kv == "fp8" and runtime ~= "llama.cpp" then
    local why = M.kv_fp8_refusal(g, runtime)
    if why then
      error(string.format("infer: kv fp8 on %s%s: %s", tostring(g.id or g.name or "this card"),
        M.FP8_NATIVE_ONLY[runtime or ""] and (" with runtime = " .. runtime) or "", why), 3)
    end
  end
  if kv == "int8" and runtime == "sglang" then
    error("infer: --kv int8: SGLang has no INT8 KV cache (its --kv-cache-dtype is FP8 or FP4); "
      .. "TensorRT-LLM and vLLM have one (gpuplan infer --runtime trtllm or vllm), or give --kv fp8",
      3)
  end
  -- llama.cpp's cache types (-ctk/-ctv, common/arg.cpp kv_cache_types):
  -- f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1 -- integer
  -- blocks below 16 bits, no fp8 and no fp4 type (ggml has none for a
  -- cache): its 8-bit cache is q8_0, --kv int8 here.
  if runtime == "llama.cpp" and (kv == "fp8" or (kv == "fp4" and g.arch == "blackwell")) then
    error("infer: --kv " .. kv .. ": llama.cpp has no " .. kv:upper() .. " KV cache (its "
      .. "--cache-type-k/-v are f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1); give "
      .. "--kv int8 (its q8_0) or bf16, or a runtime with an " .. kv:upper() .. " cache "
      .. "(gpuplan infer --runtime " .. (kv == "fp8" and "vllm, sglang or trtllm" or "sglang")
      .. ")", 3)
  end
  if kv == "int8" then return { half_math = true } end
  if kv == "fp8" and not ((tonumber(peak.fp8) or 0) > 0) then
    return { half_math = true }
  end
  if kv ~= "fp4" then return {} end
  local name = tostring(g.id or g.name or "this card")
  if g.arch == "blackwell" and (g.vendor == nil or g.vendor == "NVIDIA") then return {} end
  local why = string.format("infer: --kv fp4 on %s (arch %s): an NVFP4 KV cache is attended "
    .. "only by Blackwell kernels (FlashInfer's nvfp4_quantize_paged_kv_cache is \"for the "
    .. "SM100 trtllm-gen MHA kernel\"; vLLM's cache dtypes are bf16 and fp8 ones)", name,
    tostring(g.arch))
  if runtime ~= "sglang" then
    error(why .. "; off Blackwell only SGLang takes it (gpuplan infer --runtime sglang), dequantising "
      .. "its whole pool to bf16 every step" .. (M.kv_fp8_refusal(g, runtime) and ""
        or " (or give --kv fp8)"), 3)
  end
  if type(model) == "table" and type(model.mla) == "table" then
    error(why .. "; SGLang's FP4 pool for an MLA cache (MLATokenToKVPoolFP4) is not "
      .. "modelled: give --kv fp8", 3)
  end
  if serve_model then
    error(why .. "; SGLang's unfused FP4 pool is priced by the dense serving model only, "
      .. "not with --ep, --dp-attention or disaggregation: give --kv fp8", 3)
  end
  return { unfused = true, note = string.format("kv=fp4 on %s: SGLang dequantises its whole "
    .. "FP4 pool to bf16 before every step's attention (MHATokenToKVPoolFP4; its docs: "
    .. "\"extremely slow if dequantization is not fused\")", name) }
end

-- The line a concurrency past what the deployment runs at once gets, or
-- nil where all of it runs: conc requests in flight, `batch` of them
-- running on each of `replicas` replicas (the engine's infer_queue_batch
-- capped each replica's share at what its KV and max_batch hold), the
-- KV's own sequences a replica kv_seqs.  The rest wait in the
-- scheduler's queue (vLLM's, SGLang's and TensorRT-LLM's: infer.h
-- infer_queue_batch).  Where max_batch, not the KV, holds the batch down
-- (kv_seqs above it) the line names max_batch: max_batch 8 with
-- concurrency 16 read "8 a replica, what its KV holds" of a KV that
-- holds 205.  gp.infer's one-model path and the MoE serving model
-- (gpuplan.serve, a replica there a decode instance; `gpu` its batch a
-- GPU, said beside it) both say it here.  A burst of `requests` (sent
-- at once, nil: none) has no more than its requests in flight whatever
-- the concurrency: concurrency 4800 over a burst of 64 that all run read
-- "64 run at once ..., the other 4736 wait".
function M.queue_note(conc, batch, replicas, kv_seqs, gpu, requests)
  local n = batch * replicas
  local flight = requests and math.min(conc, requests) or conc
  if not (n < flight) then return nil end
  local function num(x) return math.tointeger(x) and string.format("%d", x)
                         or string.format("%.4g", x) end
  local why = (kv_seqs or 0) > batch
    and string.format("max_batch %s, the engine's sequences a step; its KV holds %s",
                      num(batch), num(kv_seqs))
    or "what its KV holds"
  return string.format("concurrency=%d: %s run at once (%s a replica%s, %s), the other %s "
    .. "wait", conc, num(n), num(batch),
    gpu and string.format(", %s a GPU", num(gpu)) or "", why, num(flight - n))
end

-- Both a fixed batch and a concurrency: refused by gp.infer's one-model
-- setup and by the MoE serving model's (gpuplan.serve), in these words.
M.BATCH_AND_CONCURRENCY = "infer: give batch = N or concurrency = N, not both"

-- The catalog model dtypes (the weights as released) that infer serves
-- by default: the quantized ones (catalog/FORMAT.md model.dtype).
M.RELEASED_QUANT = { fp8 = true }

-- How a card runs FP8 weights: "native" on FP8 tensor cores (W8A8:
-- Ada, Hopper, Blackwell, MI300), "weight-only" where it has none but
-- has bf16 tensor cores (compute capability 8.0 and up: Ampere), nil
-- where it cannot.  vLLM's docs (quantization/fp8): "Currently, only
-- Hopper and Ada Lovelace GPUs are officially supported for W8A8.
-- Ampere GPUs are supported for W8A16 (weight-only FP8) utilizing Marlin
-- kernels"; vllm/model_executor/layers/quantization/fp8.py: "For GPUs
-- that lack FP8 hardware support, we can leverage the Marlin kernel for
-- fast weight-only FP8 quantization", use_marlin = not
-- has_device_capability(89), and "Disable marlin for rocm";
-- utils/marlin_utils_fp8.py is_fp8_marlin_supported: capability >= 80
-- (has_device_capability(80); later releases 75, still above Volta's
-- 70), Fp8Config.get_min_capability 80.  SGLang's FP8 linears take the
-- same Marlin path where the card has no FP8 (can_auto_enable_marlin_
-- fp8).  bf16 tensor cores are the sm80 mark in the catalog (Volta and
-- Turing have none); an AMD card without FP8 (MI250X) has no Marlin.
M.FP8_WEIGHTS_FLOOR = "FP8 checkpoints need FP8 tensor cores or, weight-only (vLLM's and "
  .. "SGLang's FP8 Marlin), compute capability 8.0 (vLLM is_fp8_marlin_supported)"
-- TensorRT-LLM (runtime trtllm, and NIM's LLM engine, which is it) has
-- no weight-only FP8: its support matrix lists "Hopper (SM90) - FP32,
-- FP16, BF16, FP8, INT8, INT4", "Ada Lovelace (SM89) - ... FP8 ..." and
-- "Ampere (SM80, SM86) - FP32, FP16, BF16, INT8, INT4" (TensorRT-LLM
-- docs, reference/support-matrix, 0.18), so on a card without FP8 tensor
-- cores its FP8 is none; the words say what it does run.
M.FP8_NATIVE_ONLY = {
  trtllm = "TensorRT-LLM's FP8 needs FP8 tensor cores, compute capability 8.9 (its support "
    .. "matrix: \"Ampere (SM80, SM86) - FP32, FP16, BF16, INT8, INT4\"; FP8 on Ada and Hopper)",
}
M.FP8_NATIVE_ONLY["nim-http"] = M.FP8_NATIVE_ONLY.trtllm

-- The 16-bit dtype a card serves in: bf16, or fp16 on a card without bf16
-- (Volta, Turing), where vLLM refuses bf16 ("Bfloat16 is only supported
-- on GPUs with compute capability of at least 8.0 ... You can use float16
-- instead").  The same 2 bytes: only the name changes.  One rule for
-- gp.infer's and gp.memory's (fit --method infer) weights and KV defaults.
-- Returns the dtype and, for fp16, the defaults line's reason.
function M.half_dtype(g)
  if type(g) == "table" and type(g.peak) == "table" and not ((g.peak.bf16 or 0) > 0)
     and (g.peak.fp16 or 0) > 0 then
    return "fp16", string.format("%s has no bf16", tostring(g.id))
  end
  return "bf16", nil
end
function M.fp8_weights_on(g, runtime)
  local peak = type(g) == "table" and type(g.peak) == "table" and g.peak or {}
  if (tonumber(peak.fp8) or 0) > 0 then return "native" end
  if M.FP8_NATIVE_ONLY[runtime or ""] then return nil end
  if (tonumber(peak.bf16) or 0) > 0 and g.vendor ~= "AMD" then return "weight-only" end
  return nil
end

-- The weight format gp.infer prices for arguments a: a.weights, else the
-- catalog model's released quantized dtype, else nil (the 16-bit
-- default).  The command's fit hints read it, so as not to suggest the
-- format already priced.
local function model_of(a)
  local ok, model = pcall(function()
    return type(a.model) == "table" and a.model or catalog(a.cat or a.catalog):get("models", a.model)
  end)
  return ok and type(model) == "table" and model or nil
end
M.model_of = model_of
function M.released_weights(a)
  if a.weights ~= nil then return a.weights end
  local model = model_of(a)
  if model and M.RELEASED_QUANT[model.dtype] then return model.dtype end
  return nil
end
-- The routed experts' released format (the catalog model's expert_dtype)
-- where neither weights nor expert_weights is given, else nil.
function M.released_experts(a)
  if a.weights ~= nil or a.expert_weights ~= nil then return nil end
  local model = model_of(a)
  return model and type(model.expert_dtype) == "string" and model.expert_dtype or nil
end

-- llama.cpp's GGUF types as `weights` (Q4_K_M, Q8_0 ...): llama-quantize
-- writes each tensor in a type of its own, and the file's bits follow
-- from its rules (ggml-org/llama.cpp src/llama-quant.cpp,
-- llama_tensor_get_type_impl, at 007dbbf):
--   output.weight (and token_embd where the two are tied): "else if
--     (new_type != GGML_TYPE_Q8_0) { new_type = GGML_TYPE_Q6_K; }" --
--     Q6_K for every type here but Q8_0, which keeps Q8_0 (Q8_0 too where
--     the hidden width is no multiple of the type's block: "nx % qk_k !=
--     0");
--   token_embd.weight, untied: none of these types changes it -- the
--     type's base (Q4_K for Q4_K_M);
--   attn_v: "(ftype == LLAMA_FTYPE_MOSTLY_Q4_K_M || ftype ==
--     LLAMA_FTYPE_MOSTLY_Q5_K_M) && use_more_bits(qs.i_attention_wv,
--     qs.n_attention_wv)) new_type = GGML_TYPE_Q6_K", Q4_K_S "&&
--     qs.i_attention_wv < 4) new_type = GGML_TYPE_Q5_K", and on a 70B
--     model (llama.cpp's LLM_TYPE_70B: 80 layers with grouped KV heads)
--     "if (new_type == GGML_TYPE_Q3_K || new_type == GGML_TYPE_Q4_K)
--     new_type = GGML_TYPE_Q5_K";
--   ffn_down: Q4_K_M "if (use_more_bits(i_layer, n_layer)) new_type =
--     GGML_TYPE_Q6_K", Q5_K_M alike, Q4_K_S Q5_K where "i_layer <
--     n_layer/8";
--   use_more_bits(i, n): "i_layer < n_layers/8 || i_layer >=
--     7*n_layers/8 || (i_layer - n_layers/8)%3 == 2";
--   the rest: the type's base; a tensor whose rows are no multiple of the
--     block falls back (tensor_type_fallback: Q4_K -> Q5_0, Q5_K -> Q5_1,
--     Q6_K -> Q8_0).
-- A type's bits a weight are its block's bytes (ggml-common.h):
-- block_q4_K 144 B a 256-weight block (4.5), block_q5_K 176 (5.5),
-- block_q6_K 210 (6.5625), block_q8_0 34 B a 32 (8.5), block_q4_0 18
-- (4.5), block_q5_0 22 (5.5), block_q5_1 24 (6).  Llama 3 8B at Q4_K_M:
-- 4.80 bits a layer weight, token_embd 4.5, output 6.5625 -- 4.91 GB,
-- the file's 4.92 GB (tools/quantize/README.md: "| Q4_K_M | 4.8944 |
-- 4.58 |", bits a weight over all tensors and GiB), where 4.89 bits with
-- 16-bit ends read 6.37 GB; Llama 3 70B at Q4_K_M 42.51 GB.
-- Norms stay f32 (1-D: "quantize only 2D and 3D tensors"), priced at 16
-- bits as every format's.  Dense models only: an MoE's expert tensors
-- (and Mixtral's 8-expert rules) are not laid out here.
M.GGUF_BLOCK = { q4_0 = { 4.5, 32 }, q5_0 = { 5.5, 32 }, q5_1 = { 6.0, 32 },
                 q8_0 = { 8.5, 32 }, q4_k = { 4.5, 256 }, q5_k = { 5.5, 256 },
                 q6_k = { 6.5625, 256 } }
M.GGUF_TYPES = { q4_0 = "q4_0", q8_0 = "q8_0", q6_k = "q6_k", q4_k_s = "q4_k",
                 q4_k_m = "q4_k", q5_k_s = "q5_k", q5_k_m = "q5_k" }
local GGUF_FALLBACK = { q4_k = "q5_0", q5_k = "q5_1", q6_k = "q8_0" }

local function use_more_bits(i, n)
  return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2
end

-- The mix of GGUF type name w (any case) for model: nil where w is no
-- GGUF type, else { name, layer_bits (the layers' linears, averaged),
-- embed_bits, head_bits, said (the defaults' words) }; refused on a model
-- the rules are not laid out for.
function M.gguf_mix(w, model)
  if type(w) ~= "string" then return nil end
  local ft = w:lower()
  local base = M.GGUF_TYPES[ft]
  if not base then return nil end
  -- An MoE or MLA file is refused, saying why.  llama-quantize has rules
  -- of its own there (src/llama-quant.cpp at 007dbbf): with 8 experts
  -- attn_k and attn_v go to Q8_0 ("if (qs.model.hparams.n_expert == 8)
  -- { ... new_type = GGML_TYPE_Q8_0; }") and Q4_K_S/Q4_K_M's attn_output
  -- to Q5_K; every ffn_down of layer i -- the routed experts' merged
  -- ffn_down_exps, the shared experts', a leading dense layer's -- takes
  -- layer i's use_more_bits ("sscanf(name, \"blk.%d.\", &i_layer)");
  -- the router (ffn_gate_inp) stays unquantized; MLA's attn_kv_b counts
  -- as attn_v.  Laying those out is not the only part: the MoE serving
  -- model (engine/serve.c) prices the routed experts at expert_bits apart
  -- from the rest and the output head at the embedding's bits, so a mix
  -- needs the experts' mean, the rest's and a head_bits of its own there.
  if type(model) ~= "table" or model.moe or model.mla then
    local why = type(model) ~= "table" and "" or model.mla and ": an MLA model's attention "
      .. "tensors (attn_kv_b as attn_v, src/llama-quant.cpp) and its experts' own rules are "
      .. "not laid out" or ": an MoE file's own rules (src/llama-quant.cpp: attn_k and attn_v "
      .. "Q8_0 and attn_output Q5_K with 8 experts, each layer's expert ffn_down by its block) "
      .. "and its experts' bits apart from the rest's and the output head's are not laid out"
    error(string.format("infer: weights %s: llama.cpp's per-tensor types are laid out for dense "
      .. "models; give the file's bits per weight instead (its size x 8 / parameters)%s", w,
      why), 0)
  end
  local h, L = model.hidden, model.layers
  local hd = model.head_dim or h // model.heads
  local qd, kvd = model.heads * hd, (model.kv_heads or model.heads) * hd
  local f = model.ffn_hidden
  local function fit(t, ncols)
    if ncols % M.GGUF_BLOCK[t][2] ~= 0 then t = GGUF_FALLBACK[t] or "q8_0" end
    return t
  end
  local function bits(t, ncols) return M.GGUF_BLOCK[fit(t, ncols)][1] end
  local is70b = L == 80 and kvd < qd
  -- each tensor of a layer: its weights, its rows' width (ncols, ne[0]),
  -- and its type in layer i
  local function v_type(i)
    local t = base
    if (ft == "q4_k_m" or ft == "q5_k_m") and use_more_bits(i, L) then t = "q6_k"
    elseif ft == "q4_k_s" and i < 4 then t = "q5_k" end
    if is70b and t == "q4_k" then t = "q5_k" end
    return t
  end
  local function down_type(i)
    if (ft == "q4_k_m" or ft == "q5_k_m") and use_more_bits(i, L) then return "q6_k" end
    if ft == "q4_k_s" and i < L // 8 then return "q5_k" end
    return base
  end
  local sum, n = 0, 0
  for i = 0, L - 1 do
    local ts = {
      { h * qd, h, base }, { h * kvd, h, base }, { h * kvd, h, v_type(i) },
      { qd * h, qd, base }, { h * f, h, base }, { f * h, f, down_type(i) },
    }
    if model.ffn_gated ~= false then ts[#ts + 1] = { h * f, h, base } end
    for _, t in ipairs(ts) do
      sum, n = sum + t[1] * bits(t[3], t[2]), n + t[1]
    end
  end
  local out_t = base == "q8_0" and "q8_0" or "q6_k"
  if h % M.GGUF_BLOCK[base][2] ~= 0 then out_t = "q8_0" end
  local head = bits(out_t, h)
  local emb = model.tied_embeddings and head or bits(base, h)
  local name = ft:upper()
  return { name = name, layer_bits = sum / n, embed_bits = emb, head_bits = head,
           said = string.format("weights=%s (llama.cpp's mix, src/llama-quant.cpp: %.3g bits a "
             .. "layer weight%s, output.weight %s at %.4g, token_embd %s at %.4g)", name, sum / n,
             ft:match("_m$") and ", attn_v and ffn_down Q6_K in half the layers" or "",
             out_t:upper(), head, model.tied_embeddings and out_t:upper() or base:upper(), emb) }
end

-- Build the engine's (model, device, cfg) from gp.infer arguments.
-- An option that picks one runtime's own attention kernel (xqa, paged_decode,
-- fa2_mixed): given under another runtime it is refused, naming its value and
-- the runtime it needs; set to the value that runs that kernel (active) it is
-- refused where the MoE serving model prices its own attention (serving,
-- chosen by `by`).  what: the kernel it picks; label: the option as the
-- serving refusal names it; priced: what is priced for one model only.
local function runtime_kernel(a, key, active, runtime, what, label, priced, serving, by)
  local v = a[key]
  if v ~= nil and a.runtime ~= runtime then
    error(args.usage("infer: " .. key .. " = " .. tostring(v) .. " picks " .. what .. ": --runtime "
      .. runtime .. " only (got runtime " .. tostring(a.runtime or "graphs") .. ")"), 4)
  end
  if v == active and serving then
    error(args.usage("infer: " .. label .. ": the MoE serving model (chosen by " .. by .. ") prices "
      .. "its own attention; " .. priced .. " priced for one model only"), 4)
  end
end

-- llama.cpp's KV cache type where -ctk/-ctv are not given, as the
-- defaults line says it (M.setup; gpuplan.memory's fit of a GGUF type)
M.LLAMACPP_KV_SAID = "kv=fp16 (llama.cpp's default cache type: common.h cache_type_k "
  .. "= GGML_TYPE_F16)"

-- llama-server's slots where -np is not given (the batch's default under
-- runtime llama.cpp; the source at its use in M.setup).
M.llamacpp_slots = 4

-- A GGUF type name as the weights (Q4_K_M, Q8_0: M.GGUF_TYPES) is a
-- llama.cpp file: no other runtime loads GGUF, so where no runtime is
-- given it is llama.cpp, said on the defaults line (it was priced under
-- CUDA graphs, "runtime=graphs", a stack that never reads the file).
-- Returns a (unchanged) or a copy with runtime = "llama.cpp".
local gguf_runtime_said = setmetatable({}, { __mode = "k" })
function M.gguf_runtime(a)
  if type(a) ~= "table" or a.runtime ~= nil or type(a.weights) ~= "string"
     or gguf_runtime_said[a] then
    return a
  end
  if not M.GGUF_TYPES[a.weights:lower()] then return a end
  local b = {}
  for k, v in pairs(a) do b[k] = v end
  b.runtime = "llama.cpp"
  gguf_runtime_said[b] = "runtime=llama.cpp (a GGUF type: llama.cpp's format)"
  return b
end

function M.setup(a)
  a = M.gguf_runtime(a)
  check_args(a, 3)
  -- a concurrency the replicas split unevenly (set below): the groups
  local info_split
  local cat = catalog(a.cat or a.catalog)
  if a.model == nil then error(args.usage("infer: model is required"), 3) end
  if a.gpu == nil then error(args.usage("infer: gpu is required"), 3) end
  local model = type(a.model) == "table" and a.model or cat:get("models", a.model)
  -- A model table's released formats, by the catalog's own enums
  -- (gpuplan.schema model: dtype, expert_dtype), which a catalog file is
  -- checked against and a table is not (the engine's reader ignores both
  -- fields): dtype = "FP8" or 8 was served in bf16 in silence, and
  -- expert_dtype = "MXFP4" refused as expert_weights, an argument never
  -- given.
  if type(a.model) == "table" then
    local schema = require "gpuplan.schema"
    for _, k in ipairs { "dtype", "expert_dtype" } do
      if model[k] ~= nil then
        local _, e = schema.check(model[k], schema.model.fields[k])
        if e then error(string.format("infer: model.%s: %s", k, e.msg), 3) end
      end
    end
  end
  -- gpu = 5 was told the catalog's "gpu must be an id, a string", though
  -- a gpu table is taken too (gp.train's words)
  if type(a.gpu) ~= "string" and type(a.gpu) ~= "table" then
    error(args.usage("infer: gpu must be an id or a table (got " .. shown(a.gpu) .. ")"), 3)
  end
  local g = type(a.gpu) == "table" and require("gpuplan.catalog").entry("gpu", a.gpu)
    or cat:get("gpus", a.gpu)
  -- a system table is checked as a catalog system{...} is (system = {1}
  -- was priced as no system at all, in silence)
  local sys = a.system and (type(a.system) == "table"
    and require("gpuplan.catalog").entry("system", a.system) or cat:get("systems", a.system))
  -- A system of another card: its host memory, NICs and NVLink domain
  -- priced this card's serving in silence ("--gpu h100-sxm --system
  -- dgx-a100"); gp.train refuses it in the same words.
  if sys and sys.gpu and g and sys.gpu ~= g.id then
    error(string.format("infer: system '%s' holds %s, not %s", tostring(sys.id or a.system),
      tostring(sys.gpu), tostring(g.id)), 3)
  end
  -- The board's power limit (the job's, else the card's default): the
  -- tensor-bound ops at the clock it leaves (roofline.lua clock_at).
  local okd, d, clock, limit = pcall(roofline.device, g, cat, nil, a.power_limit)
  -- roofline.device is an API function: its error already names the
  -- script's line, which "infer: " would put in the middle
  if not okd then error("infer: " .. tostring(d):gsub("^[^%s:]+:%d+: ", "", 1), 3) end
  -- The prompt's attention on the runtime's own kernel record
  -- (M.prompt_attn_kernel_of): the card's device with that kernel's
  -- attention fields; where the catalog has none, the GEMM of its shape.
  local pk = M.prompt_attn_kernel_of(a, g, model)
  if pk and d.attn_kernel ~= pk then
    local okk, dk = pcall(roofline.device, g, cat, pk, a.power_limit)
    if okk and dk.attn_fwd then d = dk else pk = nil end
  end
  bool_arg(a, "flash")
  bool_arg(a, "offload")
  -- graph_per_node: a graph replayed node by node.  The HIP runtime of
  -- ROCm 6.1 (ROCm/clr at rocm-6.1.2, rocclr/utils/flags.hpp:
  -- "release(bool, DEBUG_CLR_GRAPH_PACKET_CAPTURE, false, ...)") runs
  -- hipGraphLaunch as hipamd/src/hip_graph_internal.cpp GraphExec::Run:
  -- with the flag off each node is "topoOrder_[i]->CreateCommand(...);
  -- topoOrder_[i]->EnqueueCommands(stream);", one command and one AQL
  -- dispatch from the host a kernel, as a stream launch does; the
  -- captured-packet path ("dispatchAqlPacket(topoOrder_[i]->
  -- GetAqlPacket(), accumulate)", one accumulated command for the graph)
  -- is the default from rocm-6.2.0 (commit ae0368d12, "Enable
  -- DEBUG_CLR_GRAPH_PACKET_CAPTURE environiment variable").  So each
  -- kernel of a graphed step is priced at the card's stream launch
  -- (roof_device launch, catalog/archs.lua launch_overhead), as
  -- engine/infer_run.c eager_step prices a step's kernels off the graph,
  -- not at its graph launch.
  if bool_arg(a, "graph_per_node") then
    if a.enforce_eager == true then
      error(args.usage("infer: give graph_per_node or enforce_eager, not both: an eager run "
        .. "replays no graph"), 3)
    end
    d.graph_launch = d.launch
  end
  local defaults = {}
  local function default(s) defaults[#defaults + 1] = s end
  if a.power_limit == nil and clock < 1 then
    default(string.format("power_limit=%gW (%s's default limit, TDP %gW: tensor clock %.3f "
      .. "of the TDP's)", limit, tostring(g.id), g.tdp, clock))
  end

  -- One rule for --weights with `gpuplan fit` (gpuplan.memory.weight_format):
  -- a name (gptq-g64, nf4-dq ...) or GGUF-style bits per weight (4.85).
  -- The compute dtype follows the format's base name; bits alone are a
  -- weight-only format (dequantised, multiplied in 16 bits, as llama.cpp).
  -- A card without bf16 (Volta, Turing) serves in fp16: vLLM refuses
  -- bf16 there ("Bfloat16 is only supported on GPUs with compute
  -- capability of at least 8.0 ... You can use float16 instead"), so the
  -- defaults are fp16 weights and KV, not bf16 ones it cannot hold (the
  -- same 2 bytes: only the names change).
  local no_bf16 = M.half_dtype(g) == "fp16"
  local weights = a.weights or M.half_dtype(g)
  -- A model released in a quantized format (the catalog's dtype: DeepSeek-V3's
  -- checkpoint is fp8, its config.json quantization_config) is served as
  -- released unless --weights says otherwise: vLLM and SGLang load the
  -- quantization_config's format as it is.  A 16- or 32-bit dtype keeps
  -- the 16-bit default above (an fp32 checkpoint is served in bf16).
  -- FP8 weights on a card without FP8 tensor cores (M.fp8_weights_on):
  -- weight-only on sm80 and up, none below.  A released FP8 checkpoint
  -- there is served converted to 16 bits (DeepSeek-V3's repository ships
  -- fp8_cast_bf16.py for this), said; an explicit --weights fp8 refused.
  local fp8_on = M.fp8_weights_on(g, a.runtime)
  -- the floor's words: the runtime's own where it has no weight-only FP8
  local floor = M.fp8_weights_on(g) and M.FP8_NATIVE_ONLY[a.runtime or ""] or M.FP8_WEIGHTS_FLOOR
  if a.weights == nil and type(model) == "table" and M.RELEASED_QUANT[model.dtype] then
    if model.dtype == "fp8" and fp8_on == nil then
      default(string.format("weights=%s (%s's checkpoint is fp8, which %s cannot run: %s; "
        .. "served converted to 16 bits)", weights, tostring(model.id or model.name),
        tostring(g.id), floor))
    else
      weights = model.dtype
      default(string.format("weights=%s (%s's checkpoint as released: the catalog model's "
        .. "dtype)", weights, tostring(model.id or model.name)))
    end
  end
  if M.weight_base(weights) == "fp8" and fp8_on == nil then
    if floor ~= M.FP8_WEIGHTS_FLOOR then
      -- the card runs weight-only FP8 elsewhere (vLLM's and SGLang's Marlin)
      error(string.format("infer: weights fp8 on %s with runtime = %s: %s; give runtime = vllm or "
        .. "runtime = sglang (FP8 Marlin, weight-only), or weights = int8", tostring(g.id),
        tostring(a.runtime), floor), 3)
    end
    error(string.format("infer: weights fp8 on %s: %s; give weights = %s or int8",
      tostring(g.id), floor, no_bf16 and "fp16" or "bf16"), 3)
  end
  if M.weight_base(weights) == "fp8" and fp8_on == "weight-only" then
    local wx = M.wo_bf16_x_of(a.runtime, g, 8)
    default(string.format("fp8 weights run weight-only on %s (no FP8 tensor cores): vLLM's "
      .. "and SGLang's FP8 Marlin kernel (W8A16) converts each weight to %s and multiplies "
      .. "in %s%s", tostring(g.id), no_bf16 and "fp16" or "bf16", no_bf16 and "fp16" or "bf16",
      wx and string.format(", under vLLM at no more than %g of the bf16 library GEMM rate "
        .. "(Marlin's A100 run in vllm PR #2497)", wx) or ""))
  end
  -- Experts alone released quantized (expert_dtype): a format of their own
  -- is the MoE serving model's (gpuplan.serve expert_weights); one model on
  -- its replicas prices one format for every linear, so it is said.
  if a.weights == nil and a.expert_weights == nil and type(model) == "table"
      and type(model.expert_dtype) == "string" and not require("gpuplan.serve").wants(a) then
    default(string.format("weights=%s (%s's checkpoint keeps its routed experts in %s, the "
      .. "rest 16-bit: --expert-weights %s prices them so, by the MoE serving model)", weights,
      tostring(model.id or model.name), model.expert_dtype, model.expert_dtype))
  end
  if type(weights) ~= "string" and type(weights) ~= "number" then
    error("infer: weights must be a format name or bits per weight (got "
          .. shown(weights) .. ")", 3)
  end
  -- A GGUF type (M.gguf_mix): its layers' mean bits are the format
  -- (weight-only, multiplied in 16 bits as llama.cpp does), its ends
  -- their own types.
  local okg, gguf = pcall(M.gguf_mix, weights, model)
  if not okg then error(gguf, 0) end
  if gguf then
    weights = gguf.layer_bits
    default(gguf.said)
  end
  local okw, wf = pcall(require("gpuplan.memory").weight_format, weights)
  -- (the script's position, raised at the caller's level, dropped
  -- whatever its chunk's name: cli.clean knows only "x.lua:N: ", and a
  -- tests/x.t or a #! script kept "infer: x.t:3: unknown weight format")
  if not okw then
    -- (and under its key: "unknown weight format 'x'" named no key of
    -- gp.infer; the range refusal, "weights: 0 bits ...", already did)
    local why = tostring(require("gpuplan.cli").clean(wf)):gsub("^[^%s:]+:%d+: ", "", 1)
    if not why:match("^weights[: ]") then why = "weights: " .. why end
    -- (a usage refusal stays one: args marks it by its words)
    error(args.is_usage(wf) and args.usage("infer: " .. why) or ("infer: " .. why), 3)
  end
  local bits = require("gpuplan.memory").weight_bits(wf)
  local base = M.weight_base(weights)
  -- AutoAWQ serves AWQ's 4-bit checkpoints alone: from_quantized loads a
  -- quant_config of w_bit 4, and its WQLinear refuses any other ("Only
  -- 4-bit are supported for now.", awq/modules/linear at v0.1.6); a 16-bit,
  -- 8-bit or fp8 model is no AutoAWQ run, and the fused modules' op count
  -- (M.host_ops.autoawq) was priced on it in silence.
  if a.runtime == "autoawq" and base ~= "awq" and base ~= "int4" then
    error(args.usage(string.format("infer: runtime autoawq serves AWQ's 4-bit checkpoints "
      .. "(AutoAWQForCausalLM.from_quantized, w_bit 4): give weights = awq or int4 (got %s%s)",
      tostring(weights), a.weights == nil and ", the default" or "")), 3)
  end
  if base == "fp32" then
    error("infer: weights 'fp32': serving multiplies in bf16/fp16 or lower and fp32 "
          .. "matmuls are not modelled; use bf16", 3)
  end
  weights = gguf and gguf.name or tostring(weights)
  -- The defaults are the declared ones (gpuplan.options).
  local kv, kv_said = a.kv, nil
  if kv == nil then
    kv, kv_said = options.default("kv")
    local half, why = M.half_dtype(g)
    if why and kv == "bf16" then
      kv, kv_said = half, string.format("kv=%s (%s)", half, why)
    elseif a.runtime == "llama.cpp" and kv == "bf16" then
      -- llama.cpp's cache is f16 unless -ctk/-ctv say otherwise
      -- (ggml-org/llama.cpp common/common.h: "ggml_type cache_type_k =
      -- GGML_TYPE_F16; // KV cache data type for the K"): the same two
      -- bytes, named as llama.cpp names it.
      kv, kv_said = "fp16", M.LLAMACPP_KV_SAID
    end
  end
  if not kv_bytes[kv] then
    -- a number or a boolean shown as one (NaN read '-nan', the C library's)
    error(require("gpuplan.args").usage("infer: unknown kv dtype " .. (type(kv) == "string"
      and ("'" .. kv .. "'") or shown(kv)) .. " (expected bf16|fp16|fp8|int8|fp4|int4|fp32)"), 3)
  end
  if kv_said then default(kv_said) end
  local ssm_bytes = M.mamba_ssm_bytes(a.mamba_ssm_cache_dtype, model, default, "infer")
  local kv_path = M.kv_path(kv, g, a.runtime, model, require("gpuplan.serve").wants(a))
  if kv_path.note then default(kv_path.note) end
  local tp = int_arg(a, "tp", 1) or options.default("tp")
  local pp = int_arg(a, "pp", 1) or options.default("pp")
  -- llama.cpp splits a model over its GPUs one way, its --split-mode:
  -- "none", "layer" or "row" (llama.h enum llama_split_mode), rows being
  -- tp here (M.row_split) and layers pp; its pipeline runs under the
  -- layer split alone.  tp 2 with pp 2 was priced as both, a layout it
  -- cannot run.
  if M.row_split[a.runtime or ""] and tp > 1 and pp > 1 then
    error(args.usage(string.format("infer: tp %d with pp %d and runtime = %s: its --split-mode is "
      .. "row (tp, every matrix's rows over all the GPUs) or layer (pp, whole layers a GPU), not "
      .. "both; give tp = %d or pp = %d", tp, pp, a.runtime, tp * pp, tp * pp)), 3)
  end
  -- AutoAWQ spreads a model over its GPUs by whole decoder layers:
  -- from_quantized hands accelerate "load_checkpoint_and_dispatch(model,
  -- ..., device_map=device_map, no_split_module_classes=[self.layer_type])"
  -- (awq/models/base.py), a layer split run one GPU after another, with no
  -- tensor parallelism; and its fused modules' cache is 16-bit ("self.v =
  -- torch.zeros(cache_v_shape).to(device).half()", awq/modules/fused/
  -- cache.py WindowedCache).  tp 2 or an fp8 cache was priced as a stack
  -- AutoAWQ cannot run.
  if a.runtime == "autoawq" then
    if tp > 1 then
      error(args.usage(string.format("infer: tp %d with runtime = autoawq: AutoAWQ splits a model "
        .. "over its GPUs by whole layers (accelerate's device_map, no_split_module_classes), "
        .. "with no tensor parallelism; give pp = %d", tp, tp * pp)), 3)
    end
    if kv_bytes[kv] ~= 2 then
      error(args.usage(string.format("infer: kv %s with runtime = autoawq: AutoAWQ's fused "
        .. "modules keep a 16-bit cache (WindowedCache: .half()); give kv = fp16", tostring(kv))), 3)
    end
  end
  -- Eager steps on a graph runtime (M.eager_host_ops): only where the
  -- runtime's eager op count is known; the MoE serving model prices its
  -- own steps.
  if a.enforce_eager ~= nil and type(a.enforce_eager) ~= "boolean" then
    error("infer: enforce_eager must be true or false (got " .. tostring(a.enforce_eager) .. ")", 3)
  end
  if a.enforce_eager and not M.eager_host_ops[a.runtime or ""] then
    error(args.usage("infer: enforce_eager runs a graph runtime's steps eagerly, and its host ops "
      .. "are "
      .. "counted for runtime vllm and trtllm only (got runtime " .. tostring(a.runtime or "graphs")
      .. "; runtime eager, eager-pytorch or litgpt price plain PyTorch)"), 3)
  end
  if a.enforce_eager and a.runtime == "trtllm" and a.host_ops_per_layer == nil
    and not M.eager_host_ops.trtllm(model, 1) then
    error(args.usage("infer: enforce_eager with runtime trtllm: its PyTorch flow's eager ops are "
      .. "counted for a DeepSeek-V3-shaped model (MLA and MoE) only; give the count as "
      .. "host_ops_per_layer (a Lua key of gp.infer, no flag)"), 3)
  end
  -- the MoE serving model named by the argument that chose it (it said
  -- "(gpuplan.serve)", a module the command line's user never named)
  local serving, by = require("gpuplan.serve").wants(a)
  if serving then
    local v = a[by]
    by = (type(v) == "number" or type(v) == "boolean" or type(v) == "string")
      and string.format("%s = %s", by, tostring(v)) or by
  end
  -- The MoE serving model runs eager steps for TensorRT-LLM's PyTorch
  -- flow alone (M.eager_host_ops.trtllm; engine/serve_step.c
  -- eager_floor); vLLM's eager count is a dense layer's.
  if a.enforce_eager and serving and a.runtime ~= "trtllm" then
    error(args.usage("infer: enforce_eager: the MoE serving model (chosen by " .. by .. ") prices its "
      .. "own steps under CUDA graphs, but for runtime trtllm (got runtime "
      .. tostring(a.runtime or "graphs") .. ")"), 3)
  end
  if a.enforce_eager and a.graph_sizes ~= nil then
    error(args.usage("infer: give enforce_eager or graph_sizes, not both: an eager run captures no "
      .. "CUDA graphs"), 3)
  end
  -- The decode's bucketed KV (options kv_bucket: its default and the
  -- defaults line's words; M.kv_bucket by runtime and card) is one
  -- model's (engine/infer_run.c infer_decode_ctx): nothing in engine/
  -- serve*.c reads it, so the MoE serving model neither assumes it nor
  -- takes it -- given, it would change nothing, in silence.
  local kv_bucket, kv_bucket_said = int_arg(a, "kv_bucket", 0), nil
  if kv_bucket ~= nil and serving then
    error(args.usage("infer: kv_bucket: the MoE serving model (chosen by " .. by .. ") attends "
      .. "each sequence's own KV length; a bucketed cache is priced for one model on its "
      .. "replicas (without the serving options)"), 3)
  end
  if kv_bucket == nil and not serving then
    kv_bucket, kv_bucket_said = options.default("kv_bucket", { runtime = a.runtime, gpu = g })
  end
  -- ar_fusion_max is the all-reduce size up to which a runtime that
  -- quantises the next linear's input apart (M.act_quant: TensorRT-LLM's
  -- PyTorch flow) fuses that quantisation into the all-reduce (engine/
  -- infer.c act_quant).  Another runtime quantises nothing apart, and the
  -- MoE serving model's steps (engine/serve*.c) read neither: given, it
  -- would change nothing, in silence.
  if a.ar_fusion_max ~= nil then
    if serving then
      error(args.usage("infer: ar_fusion_max: the MoE serving model (chosen by " .. by .. ") "
        .. "prices no quantise pass after its all-reduce; it is one model's on its replicas "
        .. "(without the serving options)"), 3)
    end
    -- (an unknown runtime is refused below, in its own words)
    local rt = a.runtime or "graphs"
    if M.runtimes[rt] and not M.act_quant[rt] then
      error(args.usage("infer: ar_fusion_max is the all-reduce size up to which TensorRT-LLM fuses "
        .. "the next linear's activation quantisation in its PyTorch flow; runtime " .. rt
        .. " runs no such pass: it needs runtime = trtllm (got " .. (a.runtime == nil and
        "no runtime" or "runtime = " .. tostring(a.runtime)) .. ")"), 3)
    end
  end
  -- TensorRT-LLM's generation attention without XQA (engine/infer.c
  -- mmha_decode): its masked MHA kernel, whose KV reads are counted per
  -- query head; a runtime of its own kernels only, and not the MoE
  -- serving model's steps.
  -- (said with its value: the command line's flag is --no-xqa, which
  -- "xqa picks ..." named as "--xqa")
  if a.cuda_graphs ~= nil and type(a.cuda_graphs) ~= "boolean" then
    error("infer: cuda_graphs must be true or false (got " .. tostring(a.cuda_graphs) .. ")", 3)
  end
  if a.cuda_graphs ~= nil and not M.one_token_graphs[a.runtime or "graphs"] then
    error(args.usage("infer: cuda_graphs = " .. tostring(a.cuda_graphs) .. " says whether "
      .. "llama.cpp replays a one-token step as a CUDA graph: --runtime llama.cpp only (got "
      .. "runtime " .. tostring(a.runtime or "graphs") .. ")"), 3)
  end
  -- Given as true under a split, the graph would change nothing, in
  -- silence (engine/infer.c infer_step keeps no graph at tp or pp > 1):
  -- a row split (tp) puts split buffers in the step, which ggml-cuda
  -- keeps out of a graph; a layer split (pp) rotated its input copies
  -- every token before PR 13814 (2025-05-27, "Due to changes in the graph
  -- in each evaluation when pipeline parallelism is enabled, CUDA graphs
  -- could not be used"), and the later builds' graphs under a layer
  -- split are not priced.  cuda_graphs = false under a split prices what
  -- the split prices anyway, and stands.
  if a.cuda_graphs == true and (tp > 1 or pp > 1) then
    error(args.usage(string.format("infer: cuda_graphs = true with %s: llama.cpp's one-token "
      .. "CUDA graph is priced on one GPU only (a row split's buffers keep the step out of a "
      .. "graph; a layer split's graphs, llama.cpp PR 13814 of 2025-05-27 on, are not "
      .. "modelled); drop cuda_graphs, or run on one GPU (tp 1, pp 1)",
      tp > 1 and pp > 1 and string.format("tp %d and pp %d", tp, pp) or tp > 1 and
      string.format("tp %d", tp) or string.format("pp %d", pp))), 3)
  end
  runtime_kernel(a, "xqa", false, "trtllm", "TensorRT-LLM's generation attention (its XQA kernel "
    .. "or the masked MHA kernel before it)", "xqa = false", "TensorRT-LLM's masked MHA kernel is",
    serving, by)
  -- XQA's Hopper kernel or the HMMA kernel before it (M.attn_stream_of):
  -- TensorRT-LLM's alone
  runtime_kernel(a, "xqa_hopper", false, "trtllm", "TensorRT-LLM's XQA kernel on Hopper (its "
    .. "TMA + GMMA kernel from 0.10, or the HMMA kernel before it)", "xqa_hopper = false",
    "TensorRT-LLM's decode attention is", serving, by)
  if a.xqa == false and latent_cache(model) then
    error("infer: xqa = false: TensorRT-LLM's masked MHA kernel over a latent (MLA) "
      .. "cache is not modelled", 3)
  end
  -- vLLM's own PagedAttention decode kernel (paged_decode): the same
  -- per-query-head reads as TensorRT-LLM's masked MHA kernel (engine/infer.c
  -- mmha_decode), a kernel of vLLM's alone, and not the MoE serving
  -- model's steps.
  runtime_kernel(a, "paged_decode", true, "vllm", "vLLM's decode attention (its PagedAttention "
    .. "kernel or flash-attn's)", "paged_decode", "vLLM's PagedAttention kernel is", serving, by)
  if a.paged_decode and latent_cache(model) then
    error("infer: paged_decode: vLLM's PagedAttention kernel over a latent (MLA) cache is not "
      .. "modelled", 3)
  end
  -- fa2_mixed: vLLM V1's varlen FlashAttention-2 call (M.fa2_mixed), a
  -- kernel of vLLM's, in gp.infer's own mixed steps, over a K/V cache.
  runtime_kernel(a, "fa2_mixed", true, "vllm", "vLLM V1's attention kernel in its mixed steps",
    "fa2_mixed", "vLLM V1's mixed-step FlashAttention-2 reads are", serving, by)
  -- prefix_prefill: vLLM V0's Triton prefix-prefill kernel for the prompt
  -- chunks (engine/infer.c fa2_prompt_nosplit), a kernel of vLLM's, in
  -- gp.infer's own steps; without chunked prefill V0 prefills whole prompts
  -- on its flash-attention kernel instead, and the option would price a
  -- kernel that run does not launch.
  runtime_kernel(a, "prefix_prefill", true, "vllm", "vLLM V0's prompt-chunk attention kernel",
    "prefix_prefill", "vLLM V0's Triton prefix-prefill kernel is", serving, by)
  if a.prefix_prefill and a.chunked_prefill == false then
    error(args.usage("infer: prefix_prefill = true prices vLLM V0's prompt chunks on its Triton "
      .. "prefix-prefill kernel: chunked_prefill = false prefills whole prompts on the "
      .. "flash-attention kernel instead"), 3)
  end
  -- Its reads are priced in the steps that carry prompt chunks beside
  -- decodes (infer_run.c mixed_decode_cfg); without chunked prefill
  -- there are none, and the option would change nothing, in silence.
  if a.fa2_mixed and a.chunked_prefill == false then
    error(args.usage("infer: fa2_mixed = true prices vLLM V1's steps that carry prompt chunks "
      .. "beside decodes: chunked_prefill = false runs none (each prompt in a step of its own)"), 3)
  end
  if a.fa2_mixed and model.attn_sinks then
    error(args.usage("infer: fa2_mixed = true with " .. tostring(model.id or "this model") .. "'s "
      .. "attention sinks (attn_sinks): vLLM's FlashAttention backend takes sinks on FA3 only "
      .. "(\"sink not supported on compute capability < 9.0\"), never FlashAttention-2"), 3)
  end
  if a.fa2_mixed and not M.fa2_kv[kv] then
    error(args.usage("infer: fa2_mixed = true with kv = " .. tostring(kv) .. ": vLLM's "
      .. "FlashAttention-2 backend takes a 16-bit KV cache only (bf16 or fp16; \"FlashAttention "
      .. "does not support fp8 kv-cache on this device\"): vLLM runs another backend"), 3)
  end
  if a.fa2_mixed and latent_cache(model) then
    error("infer: fa2_mixed: a latent (MLA) cache runs on vLLM's MLA backends, not "
      .. "FlashAttention-2's varlen kernel", 3)
  end
  -- Two kernels for the same decodes: paged_decode puts every decode on
  -- vLLM's PagedAttention kernel (one thread block per query head, in
  -- mixed steps too), so a stated fa2_mixed changed nothing in silence
  -- (llama3-8b on an A100: 773.0 tok/s a GPU with either value).
  if a.fa2_mixed ~= nil and a.paged_decode then
    error(args.usage("infer: fa2_mixed = " .. tostring(a.fa2_mixed) .. " says how FlashAttention-2 "
      .. "reads a mixed step's decodes; paged_decode runs every decode on vLLM's PagedAttention "
      .. "kernel instead: give one or the other"), 3)
  end
  -- vllm_version names a V0 release (M.fa2_mixed: its FlashAttention
  -- backend runs a step's decodes in a call of their own, the group
  -- folded): V1's one varlen call stated beside it priced a kernel path
  -- that release does not take (llama3-8b on an A100, vllm_version 0.6.3:
  -- 1215 -> 767 tok/s a GPU).
  if a.fa2_mixed == true and a.vllm_version ~= nil then
    error(args.usage("infer: fa2_mixed = true prices vLLM V1's one varlen call of a mixed step; "
      .. "vllm_version " .. tostring(a.vllm_version) .. " names a V0 release, whose "
      .. "FlashAttention backend runs a step's decodes in a call of their own: give one or the "
      .. "other"), 3)
  end
  -- A kernel the card cannot run: FlashAttention-2 needs compute
  -- capability 8.0 ("FlashAttention-2 currently supports: Ampere, Ada, or
  -- Hopper GPUs (e.g., A100, RTX 3090, RTX 4090, H100). Support for Turing
  -- GPUs (T4, RTX 2080) is coming soon, please use FlashAttention 1.x",
  -- Dao-AILab/flash-attention README), the mark M.kv_fp8_refusal reads
  -- (an NVIDIA card without bf16 tensor cores: Volta, Turing).  A V100's
  -- mixed steps were priced with FA2's per-head reads (llama3-8b on
  -- v100-sxm2-32gb, runtime vllm: 472 -> 398 tok/s a GPU).
  if a.fa2_mixed and type(g) == "table" and (g.vendor == nil or g.vendor == "NVIDIA")
     and not ((tonumber(type(g.peak) == "table" and g.peak.bf16) or 0) > 0) then
    error("infer: fa2_mixed: FlashAttention-2 needs compute capability 8.0 (Ampere or later); "
      .. tostring(g.id or g.name) .. " (" .. tostring(g.arch) .. ") runs another of vLLM's "
      .. "attention backends", 3)
  end
  -- The sampler's settings (sampling), counted for vLLM V0's sampler of the
  -- release vllm_version (M.v0_sampler_kernels): vLLM's alone, with its
  -- CUDA graphs (under enforce_eager the host launches every kernel on the
  -- step's path, which the eager step's host count leaves the sampler
  -- out of), one model's steps.
  local sample_kernels, stages
  -- A release not of the form X.Y.Z ('abc', -1, 0/0) is no release at
  -- all: without sampling it was told "vllm_version abc says whose sampler
  -- runs sampling, which is greedy", as if it named one.  Refused first,
  -- as M.v0_sampler_kernels refuses it with sampling.
  local vllm_release = version.parse(a.vllm_version)
  if a.vllm_version ~= nil and not (vllm_release and vllm_release.plain
      and vllm_release.parts == 3) then
    local _, why = M.v0_sampler_kernels({}, a.vllm_version)
    error(args.usage("infer: " .. why), 3)
  end
  if a.sampling ~= nil then
    local err
    stages, err = M.sampling_stages(a.sampling)
    if not stages then error(args.usage("infer: " .. err), 3) end
  end
  if stages and next(stages) then
    local said = type(a.sampling) == "table" and table.concat(a.sampling, ",") or tostring(a.sampling)
    if a.runtime ~= "vllm" then
      error(args.usage("infer: sampling " .. said .. " is priced for vLLM V0's sampler: "
        .. "--runtime vllm only (got runtime " .. tostring(a.runtime or "graphs") .. ")"), 3)
    end
    if a.vllm_version == nil then
      error(args.usage("infer: sampling " .. said .. ": give vllm_version, the vLLM "
        .. "release whose V0 sampler runs it (0.4.2 to 0.6.3)"), 3)
    end
    if serving then
      error(args.usage("infer: sampling: the MoE serving model (chosen by " .. by .. ") prices its "
        .. "own steps; vLLM V0's sampler is priced for one model only"), 3)
    end
    if a.enforce_eager then
      error(args.usage("infer: sampling with enforce_eager: the sampler's kernels are priced "
        .. "behind a CUDA graph's forward only"), 3)
    end
    local err
    sample_kernels, err = M.v0_sampler_kernels(stages, a.vllm_version)
    if not sample_kernels then error(args.usage("infer: " .. err), 3) end
  elseif a.vllm_version ~= nil then
    error(args.usage("infer: vllm_version " .. tostring(a.vllm_version) .. " says whose sampler runs "
      .. "sampling, which is greedy: give sampling, or leave vllm_version out (a greedy V0 "
      .. "run states its CUDA-graph context limit by graph_max_context, V0's default 8192)"), 3)
  end
  -- One static batch (batching = "static"; the option's declaration in
  -- gpuplan.options has its sources; engine/infer_run.c run_times prices
  -- it): a fixed batch of one model's requests, each run to its output,
  -- its prompts in one context pass and none beside the decodes.
  local static = a.batching == "static"
  if static then
    if serving then
      error(args.usage("infer: batching static: the MoE serving model (chosen by " .. by
        .. ") prices its own scheduling; a static batch is priced for one model on its "
        .. "replicas"), 3)
    end
    if a.batch == nil then
      error(args.usage("infer: batching static runs one batch of a fixed size: give batch = N "
        .. "(the benchmark's batch size)" .. (a.concurrency ~= nil and ", not concurrency" or "")),
        3)
    end
    if a.chunked_prefill then
      error(args.usage("infer: batching static runs the batch's prompts in one context pass "
        .. "before its decodes, none in a decode step: give chunked_prefill or batching "
        .. "static, not both"), 3)
    end
    -- GptSession splits a batch into micro-batches over its pipeline
    -- stages (its MicroBatchConfig: "numGenBatches = pipelineParallelism"
    -- where none is given), a schedule not priced here.
    if pp > 1 then
      error(args.usage(string.format("infer: batching static with pp %d: the static session's "
        .. "micro-batches over pipeline stages are not modelled; give pp = 1", pp)), 3)
    end
    -- gptSessionBenchmark forces every request to its full output
    -- ("samplingConfig.minLength = ... maxNewTokens" unless
    -- --disable_force_max_tokens): no spread of lengths.
    if a.output_dist ~= nil and a.output_dist ~= "mean" then
      error(args.usage(string.format("infer: output_dist %s with batching static: every request "
        .. "of a static batch runs to its output (gptSessionBenchmark forces min_length to the "
        .. "output); give output_dist mean or leave it out", tostring(a.output_dist))), 3)
    end
  end
  -- The runtime's own mixing (M.mixes), where the user did not say; the
  -- MoE serving model (gpuplan.serve) decides its colocated steps itself;
  -- a static batch mixes nothing.
  local mixes = a.chunked_prefill == nil and not static and
    not require("gpuplan.serve").wants(a) and M.mixes[a.runtime or ""] or nil
  -- Replicas of tp x pp GPUs: a count they do not divide is options that
  -- do not go together, whatever the model and card -- a usage error, as
  -- fit, train and rl refuse --gpus 7 --tp 2 (the engine's own check,
  -- infer.c, said it as a plain error: exit 1 where they exit 2).
  local ngpus = int_arg(a, "gpus", 1)
  if ngpus and not require("gpuplan.serve").wants(a) and ngpus % (tp * pp) ~= 0 then
    error(args.usage(string.format("infer: gpus %d is not a multiple of tp*pp = %d", ngpus,
      tp * pp)), 3)
  end
  local c = {
    weight_bits = bits, embed_bits = gguf and gguf.embed_bits or 16,
    head_bits = gguf and gguf.head_bits or nil, kv_bytes = kv_bytes[kv], mamba_ssm_bytes = ssm_bytes,
    kv_half_math = kv_path.half_math, kv_unfused = kv_path.unfused,
    wo_unfused = M.unfused_dequant(a, bits),
    kv_per_qhead = a.xqa == false or a.paged_decode == true,
    mixed_kv_per_qhead = M.fa2_mixed(a, g, model, (a.chunked_prefill == true or mixes)
      and not serving, kv) or nil,
    prefix_prefill = a.prefix_prefill == true or nil,
    compute = core().infer_compute_dtype(d, base or "bf16"),
    tp = tp, pp = pp, gpus = int_arg(a, "gpus", 1) or tp * pp,
    batch = int_arg(a, "batch", 1), concurrency = int_arg(a, "concurrency", 1),
    input = tokens_arg(a, "input") or options.default("input"),
    output = tokens_arg(a, "output") or options.default("output"),
    runtime = a.enforce_eager and "eager" or M.runtimes[a.runtime or "graphs"],
    flash = a.flash ~= false,
    max_num_tokens = num_arg(a, "max_num_tokens"), max_batch = int_arg(a, "max_batch", 1),
    -- the KV pool the engine reports, where it is stated (engine/
    -- infer_run.c run_kv)
    kv_tokens = int_arg(a, "kv_tokens", 1),
    chunked = a.chunked_prefill == true or (mixes and true) or nil,
    whole_prompts = mixes and M.whole_prompts[a.runtime] or nil,
    static_batch = static or nil,
    requests = int_arg(a, "requests", 1),
    host_op_time = num_arg(a, "host_op_time", "time"),
    host_ops_per_layer = num_arg(a, "host_ops_per_layer") or
      (a.enforce_eager and M.eager_host_ops[a.runtime or ""] and
       M.eager_host_ops[a.runtime](model, tp)) or M.host_ops[a.runtime or ""],
    -- a graph runtime's prompt pass run op by op (M.extend_host_ops)
    extend_host_ops = not a.enforce_eager and M.extend_host_ops[a.runtime or ""] and
      M.extend_host_ops[a.runtime](model, tp) or nil,
    kv_reserve_max = a.kv_policy == "max" or
      (a.kv_policy == nil and not static and M.kv_reserve[a.runtime or ""] and true) or false,
    kv_preempt = a.kv_policy == "preempt" or
      (a.kv_policy == nil and mixes and a.vllm_version == nil and M.kv_preempt[a.runtime or ""]
       and true) or nil,
    gemv_max = M.gemv_max[a.runtime or "graphs"],
    gemv_packed = M.gemv_packed[a.runtime or "graphs"] or 0,
    wo_unfused_above = M.wo_unfused_above[a.runtime or "graphs"],
    acc16_gemm = M.acc16_gemm[a.runtime or "graphs"],
    wo_split_k = M.wo_split_k(a, bits),
    ubatch = M.ubatch[a.runtime or "graphs"] and M.ubatch[a.runtime].ubatch or nil,
    ubatch_call = M.ubatch[a.runtime or "graphs"] and M.ubatch[a.runtime].call or nil,
    graph_act_bytes = M.ubatch[a.runtime or "graphs"] and M.ubatch[a.runtime].act_bytes or nil,
    ubatch_launches = M.ubatch[a.runtime or "graphs"] and M.ubatch_launches(a.runtime, bits) or nil,
    launch_queue = M.ubatch[a.runtime or "graphs"] and M.ubatch[a.runtime].launch_queue or nil,
    score_bytes = a.flash == false and M.score_bytes[a.runtime or "graphs"] or nil,
    scores_whole = a.flash == false and M.score_bytes[a.runtime or "graphs"] and true or nil,
    row_split = M.row_split[a.runtime or "graphs"] or nil,
    one_token_graphs = (a.cuda_graphs ~= false and M.one_token_graphs[a.runtime or "graphs"]
      and M.one_token_graphs[a.runtime][g.arch] and (g.vendor == nil or g.vendor == "NVIDIA"))
      or nil,
    wo_stream = M.wo_stream_of(a.runtime, bits, weights, g.arch),
    attn_stream = M.attn_stream_of(a, g, model, tp, kv)
      or M.mmha_stream_of(a, g, model, tp, kv, d),
    wo_bf16_x = M.wo_bf16_x_of(a.runtime, g, bits),
    kv_fp8_prompt_x = M.kv_fp8_prompt_x_of(a, g, model, kv),
    prompt_attn_fused = pk and true or nil,
    m_tile = M.m_tile_of(a.runtime, g.arch, base),
    kv_bucket = kv_bucket,
    moe_fp8_bf16_x = M.moe_fp8_bf16_x_of(a.runtime, g.arch, base, d) or
      M.moe_fp4_bf16_x_of(a.runtime, g.arch, base),
    fused_qk_norm_rope = M.fused_qk_norm_rope[a.runtime or "graphs"] or nil,
    act_quant = M.act_quant[a.runtime or "graphs"] or nil,
    block_quant = M.block_quant[a.runtime or "graphs"] or nil,
    ar_fusion_max = num_arg(a, "ar_fusion_max", "bytes") or
      (M.ar_fusion_max[a.runtime or "graphs"] and M.ar_fusion_max[a.runtime](tp)) or nil,
    moe_expand = M.moe_expand[a.runtime or "graphs"] or nil,
    moe_quant = M.moe_quant[a.runtime or "graphs"] or nil,
    moe_shared_apart = M.moe_shared_apart[a.runtime or "graphs"] or nil,
    shared_stream_max = a.shared_expert_stream ~= false and
      M.shared_stream_max[a.runtime or "graphs"] or nil,
    fused_grouped_topk = (a.fused_grouped_topk == nil and
      M.fused_grouped_topk[a.runtime or "graphs"] or a.fused_grouped_topk) or nil,
    sample_kernels = sample_kernels,
  }
  if not c.runtime then
    error("infer: " .. (type(a.runtime) == "string" and ("unknown runtime '" .. a.runtime .. "'")
          or ("runtime must be a name, a string (got " .. shown(a.runtime) .. ")"))
          .. " (" .. M.runtime_names() .. ")", 3)
  end
  -- TensorRT-LLM is NVIDIA's, for NVIDIA's GPUs alone ("TensorRT LLM
  -- supports the full spectrum of NVIDIA GPU architectures", its Supported
  -- Hardware page, nvidia.github.io/TensorRT-LLM/supported-hardware.html;
  -- the support matrix: "optimizes the performance of a range of
  -- well-known models on NVIDIA GPUs"): on an AMD or Intel card its
  -- kernels' pricing (XQA, its all-reduce fusion, trtllm-bench's graphs)
  -- was applied in silence to a stack that cannot run there.
  if a.runtime == "trtllm" and type(g) == "table" and g.vendor ~= nil and g.vendor ~= "NVIDIA" then
    error(args.usage(string.format("infer: runtime trtllm is NVIDIA's TensorRT-LLM, which runs on "
      .. "NVIDIA GPUs only; %s is %s's: give another runtime", tostring(g.id or g.name),
      tostring(g.vendor))), 3)
  end
  M.check_flash_runtime(a, tp)
  if a.kv_policy ~= nil and a.kv_policy ~= "max" and a.kv_policy ~= "mean" and
     a.kv_policy ~= "preempt" then
    error("infer: kv_policy must be 'mean', 'max' or 'preempt' (got " .. shown(a.kv_policy)
      .. ")", 3)
  end
  -- A static batch's contiguous cache holds every sequence's whole length
  -- (RuntimeBuffers::reshape: maxSeqLength a sequence, M.static_memory):
  -- kv_policy max, whatever the runtime's own.
  if static then
    if a.kv_policy == "mean" or a.kv_policy == "preempt" then
      error(args.usage("infer: kv_policy " .. a.kv_policy .. " with batching static: a static "
        .. "batch's cache holds input + output tokens a sequence from its start (give kv_policy "
        .. "max or leave it out)"), 3)
    end
    c.kv_reserve_max = true
    c.kv_preempt = nil
  elseif a.kv_policy == "preempt" and not (c.chunked and not c.whole_prompts) then
    -- The walk (infer_run.c run_finite) follows steps that mix prompt
    -- chunks into the decodes, as V1's do; where the steps hold whole
    -- prompts, or prefill in steps of their own, kv_policy preempt priced
    -- the run as kv_policy mean, in silence.
    error(args.usage(string.format("infer: kv_policy preempt walks vLLM V1's steps, which mix "
      .. "prompt chunks into the decodes; runtime %s here %s, where it would price the run as "
      .. "kv_policy mean (give chunked_prefill = true, or leave kv_policy out)",
      tostring(a.runtime or "graphs"), c.whole_prompts and "takes a prompt into a step only whole"
        or "prefills in steps of its own")), 3)
  elseif a.kv_policy == nil and c.kv_preempt then
    default("kv_policy=preempt (" .. M.kv_preempt[a.runtime] .. ")")
  elseif a.kv_policy == nil and c.kv_reserve_max then
    default("kv_policy=max (" .. M.kv_reserve[a.runtime] .. ")")
  elseif a.kv_policy == nil then default("kv_policy=mean") end
  if kv_bucket_said then default(kv_bucket_said) end
  -- The runtime's fused all-reduce workspace (M.ar_fusion_max), where it
  -- decides anything (engine/infer.c act_quant: the quantisation of an fp8
  -- or fp4 linear's input fused into a TP all-reduce, which a hidden of
  -- 4096 or less never is): it moved Llama 3.1 70B fp8 at tp 4 under
  -- TensorRT-LLM by 2.8% in ITL and 3.4% in TTFT, unsaid.
  if a.ar_fusion_max == nil and c.act_quant and (c.ar_fusion_max or 0) > 0 and tp > 1
     and (c.compute == "fp8" or c.compute == "fp4") and (model.hidden or 0) > 4096 then
    default(string.format("ar_fusion_max=%s (TensorRT-LLM 1.0's custom all-reduce workspace "
      .. "at tp %d: a larger all-reduce runs NCCL, then a kernel quantising the next linear's "
      .. "input, and ar_fusion_max 0B fuses every size)", units.fmt_bytes(c.ar_fusion_max, "MB"),
      tp))
  end
  -- (the MoE serving model says it where its layout has ep 1: serve.lua)
  local moe_fp4 = M.moe_fp4_bf16_x_of(a.runtime, g.arch, base)
  local moe_fp8 = not serving and not moe_fp4 and
    M.moe_fp8_said(a.runtime, c.moe_fp8_bf16_x, d, model)
  if moe_fp8 then default(moe_fp8) end
  if moe_fp4 and not serving and c.compute == "fp4" then
    local said = M.moe_fp4_said(moe_fp4, model)
    if said then default(said) end
  end
  -- The weight-only kernel's cap (M.wo_bf16_x), applied by the engine to
  -- every linear whose weights are below 16 bits and multiplied in 16
  -- (infer.c step_layers' wo): said here for GPTQ/AWQ-style int4/int8
  -- weights, as the fp8 line above says it for an FP8 checkpoint, so that
  -- the cap is never applied unsaid.
  if c.wo_bf16_x and bits < 16 and M.weight_base(weights) ~= "fp8" and
      (c.compute == "bf16" or c.compute == "fp16") then
    default(string.format("%s weights run weight-only on %s under vLLM: the kernel converts each "
      .. "weight to %s and multiplies at no more than %g of the %s library GEMM rate (the "
      .. "bound Marlin's A100 run reached, vllm PR #2497; older kernels such as vLLM 0.4's "
      .. "awq_gemm are held to it too)", tostring(weights), tostring(g.id),
      c.compute, c.wo_bf16_x, c.compute))
  end
  -- The weight-only kernel's streaming fraction (M.wo_stream), said where
  -- the runtime's measured kernel replaces the device's GEMM rate.
  -- Only where the linears multiply in 16 bits (the engine's weight-only
  -- test, infer.c step_layers' wo; serve_row.c sx_wo_stream): a W4A8 or
  -- W8A8 GEMM reads no weight-only kernel's rate.
  if c.wo_stream and bits < 16 and (c.compute == "bf16" or c.compute == "fp16") then
    default(M.wo_stream_said(a.runtime, "weights", weights, bits, c.wo_stream))
  end
  if c.batch and c.concurrency then error(args.usage(M.BATCH_AND_CONCURRENCY), 3) end
  -- One batch prices every replica (engine/infer_run.c run_batch:
  -- ceil(concurrency / replicas) each), so a concurrency the replicas do
  -- not split evenly was priced with more requests in flight than given
  -- (3 over 2 H100 replicas of Llama 3 8B ran 2 + 2, 519 tok/s where
  -- 2 + 1 make 395), then refused.  A client holding N requests in flight
  -- against R replicas behind a router leaves floor(N / R) or ceil(N / R)
  -- on each: a round-robin router hands request i to replica i mod R, and
  -- a least-outstanding one (vLLM's router, dynamo's KV router at equal
  -- prefixes, nginx's least_conn) sends each new one to a replica with the
  -- fewest in flight, so the counts never differ by more than one.  The
  -- split (M.split_replicas) prices N mod R replicas at ceil(N / R) and
  -- the rest at floor(N / R) (zero: the replica idles), M.infer running
  -- the engine once per group.  A finite run's requests would split by
  -- the same router in an order the engine's walk does not price: kept
  -- refused there.
  local reps = c.tp * c.pp > 0 and c.gpus // (c.tp * c.pp) or 1
  if c.concurrency and reps > 1 and c.gpus % (c.tp * c.pp) == 0 and c.concurrency % reps ~= 0 then
    if c.requests then
      error(args.usage(string.format("infer: concurrency %d does not split evenly over %d "
        .. "replicas of %d GPU%s with requests = %d: a burst's walk prices one share a replica; "
        .. "give a multiple of %d", c.concurrency, reps, c.tp * c.pp,
        c.tp * c.pp == 1 and "" or "s", c.requests, reps)), 3)
    end
    local n = c.concurrency
    local lo, m = n // reps, n % reps
    info_split = { concurrency = n, replicas = reps, hi = lo + 1, hi_replicas = m, lo = lo,
                   lo_replicas = reps - m }
    -- the engine's run: every replica at ceil (the memory's and the
    -- first group's); M.infer prices the floor group apart
    c.concurrency = (lo + 1) * reps
    default(string.format("concurrency=%d over %d replicas: %d run %d stream%s, %d run %d%s "
      .. "(a router balancing requests in flight, round-robin or least-outstanding: the "
      .. "source's router assumed so)", n, reps, m, lo + 1, lo + 1 == 1 and "" or "s",
      reps - m, lo, lo == 0 and ", idle" or ""))
  end
  -- The default prompt in a model whose context is shorter than it and the
  -- output (2048-token GPT-3, BLOOM, the Megatron-GPT family): the context
  -- less the output, said, where it was refused as "input 2048 + output 256
  -- tokens exceed ...'s context", a prompt the user never gave.
  local ctx_cut = a.input == nil and model.max_seq and (model.encoder_layers or 0) == 0
    and c.input + c.output > model.max_seq and model.max_seq > c.output
  if ctx_cut then
    c.input = model.max_seq - c.output
    default(string.format("input=%d (the model's context, %d, less the output)", c.input,
      model.max_seq))
  elseif a.input == nil then default("input=2048") end
  if a.output == nil then default("output=256") end
  -- A request holds its prompt and its output in the model's context: past
  -- max_seq the positions the model was trained on run out.  Not for an
  -- encoder-decoder: its two stacks have a length each, and T5's relative
  -- position buckets have no last position (max_seq is its training length).
  if model.max_seq and (model.encoder_layers or 0) == 0
     and c.input + c.output > model.max_seq then
    error(string.format("infer: input %d + output %d tokens exceed %s's context of %d tokens "
      .. "(max_seq)%s", c.input, c.output, model.id or "the model", model.max_seq,
      require("gpuplan.memory").longer_context(model, c.input + c.output, cat)), 3)
  end
  -- A burst's output lengths (output_dist, gpuplan.options' declaration
  -- with its sources): spread ones exponential around output, none past a
  -- limit (engine infer_output_quantiles), so the burst lasts until its
  -- longest end; mean (or none given) every request at output.  Only a
  -- burst reads it: the steady state's batch turns over at the mean.
  local od = a.output_dist
  if a.output_max ~= nil and (od == nil or od == "mean" or od == "uniform") then
    -- The Lua surface names Lua keys (the command line's flags_named
    -- turns "output 256" into --output 256): it read "runs to --output"
    -- in gp.infer's message.  A whole number is said as one: a case
    -- file's 150 (lua-cjson decodes it as 150.0) read "output_max 150.0".
    local om = math.type(a.output_max) == "float" and math.tointeger(a.output_max) or a.output_max
    error(args.usage(string.format("infer: output_max %s caps the outputs of a spread burst: give "
      .. "output_dist exp or sharegpt (%s)", shown(om),
      od == "uniform" and "uniform outputs end at twice their mean less one"
        or string.format("every request of a mean burst runs to output %d tokens",
          math.floor(c.output)))), 3)
  end
  if od ~= nil and od ~= "mean" then
    if c.requests == nil then
      error(args.usage(string.format("infer: output_dist %s spreads the outputs of a burst: "
        .. "give requests = N (the steady state runs at the mean lengths)", od)), 3)
    end
    local cap, said
    if od == "uniform" then
      -- SGLang bench_serving's random lengths at --random-range-ratio 0
      -- (gpuplan.options' declaration): uniform over 1 .. L, mean
      -- (L + 1) / 2, so the longest is 2 output - 1.  The prompts are
      -- drawn the same way, apart from the outputs; they are priced at
      -- their mean: the burst's prefill tokens are the requests' sum
      -- whichever lengths they come in, and a decode's context holds
      -- its own prompt, which is the mean's on average at every output
      -- length since the two are drawn apart.
      if not (c.output >= 2) then
        error(args.usage(string.format("infer: output_dist uniform spreads outputs from 1 to "
          .. "twice their mean less one: output %s leaves none to spread (give 2 or more)",
          shown(c.output))), 3)
      end
      c.output_max, c.output_uniform = 2 * c.output - 1, true
      -- The longest output with a prompt at the mean, as exp's limit
      -- reads it: SGLang refuses a request whose prompt and
      -- max_new_tokens pass the context ("Requested token count exceeds
      -- the model's maximum context length", tokenizer_manager.py
      -- _validate_one_request), so such a burst never ran whole.
      if model.max_seq and c.input + c.output_max > model.max_seq then
        error(string.format("infer: output_dist uniform: outputs reach %d tokens (twice the "
          .. "mean %d less one), past %s's context of %d tokens less the input %d (give an "
          .. "output of %d at most)", math.floor(c.output_max), math.floor(c.output),
          model.id or "the model", math.floor(model.max_seq), math.floor(c.input),
          math.floor((model.max_seq - c.input + 1) / 2)), 3)
      end
      default(string.format("output_dist=uniform: outputs uniform from 1 to %d tokens (mean %d), "
        .. "prompts from 1 to %d (priced at their mean %d), as SGLang bench_serving's random "
        .. "dataset at --random-range-ratio 0; the burst lasts until its longest ends",
        math.floor(c.output_max), math.floor(c.output), math.floor(2 * c.input - 1),
        math.floor(c.input)))
    else
      if od == "sharegpt" then
        cap, said = 2048 - c.input, "2048 with the prompt in ShareGPT's sampling"
      else
        if not model.max_seq then
          error(string.format("infer: output_dist exp needs the model's context (max_seq) for "
            .. "its longest output; %s states none (give output_dist sharegpt or mean)",
            model.id or "the model"), 3)
        end
        cap, said = model.max_seq - c.input, "the model's context"
      end
      -- The requests' own max_tokens (output_max, gpuplan.options'
      -- declaration with its source): no answer runs past it, where it is
      -- shorter than the limit above.
      if a.output_max ~= nil and a.output_max < cap then
        cap, said = a.output_max, "the requests' max_tokens, output_max"
      end
      -- A cap equal to the mean: no answer runs past it and their mean is
      -- it, so every answer ran to it (dstack's one-prompt vLLM rows ask
      -- 'max_tokens' 150 and generate 150): the burst's outputs are fixed,
      -- priced as the mean burst, every request at output.
      local fixed = a.output_max ~= nil and a.output_max == cap and cap == c.output
      if fixed then
        default(string.format("output_dist=%s: output_max %d is the mean output: every answer "
          .. "ran to the requests' max_tokens, the burst priced at %d tokens each", od,
          math.floor(cap), math.floor(cap)))
      elseif not (cap > c.output) then
        -- "less the input" is the context's limit's (max_seq - input);
        -- output_max is the requests' own cap on the output: it read
        -- "(the requests' max_tokens, output_max, less the input 2048)"
        error(string.format("infer: output_dist %s: outputs of mean %d cannot spread below its "
          .. "limit of %d tokens (%s%s)", od, math.floor(c.output),
          math.floor(cap), said, said:find("output_max", 1, true) and ""
            or string.format(", less the input %d", math.floor(c.input))), 3)
      else
        c.output_max = cap
        default(string.format("output_dist=%s: outputs exponential around %d tokens, none past "
          .. "%d (%s); the burst lasts until its longest ends", od, math.floor(c.output),
          math.floor(cap), said))
      end
    end
  elseif c.requests ~= nil and od == nil and not static then
    default(string.format("output_dist=mean: every request of the burst at output %d tokens",
      math.floor(c.output)))
  end
  -- A prefix-cache hit (prefix_hit, a share of the prompt tokens, the
  -- engines' hit rate): the engine prefills input - cached tokens of each
  -- request (engine/infer_run.c new_prompt), at least the last, whose
  -- logits give the first output token (vLLM's KVCacheManager: "When all
  -- tokens hit the cache, we must recompute the last token to obtain
  -- logits. Thus, set max_cache_hit_length to prompt_length - 1.").  The
  -- KV is priced as each request's own: requests that share a cached
  -- prefix at once share its blocks, which this leaves out (a batch that
  -- KV holds is not raised by it).
  if a.prefix_hit ~= nil then
    local h = a.prefix_hit
    c.cached = math.min(h * c.input, c.input - 1)
    if c.cached < h * c.input then
      default(string.format("prefix_hit=%s: %d of %d prompt tokens from the prefix cache, the "
        .. "last computed for its logits", shown(h), math.floor(c.cached), math.floor(c.input)))
    end
  end
  -- A static batch's context phase runs every prompt of the batch in one
  -- pass (engine/infer_run.c run_times: the B prompts priced as one step):
  -- the session hands the engine the whole batch's packed input
  -- (gptSessionBenchmark: "ITensor::makeShape({batchSize *
  -- maxInputLength})") as one context micro-batch (GptSession's
  -- MicroBatchConfig at pp 1), so the engine's token budget held them all
  -- (the performance pages' builds give no --max_num_tokens).  A budget
  -- the user gives below it is refused; none given, the batch's prompt
  -- tokens (the activations are sized for them, gpuplan.memory's
  -- chunk_tokens).  A run of several batches repeats the
  -- batch: requests a multiple of the batch on every replica.
  if static then
    local need = c.batch * (c.input - (c.cached or 0))
    if a.max_num_tokens ~= nil and c.max_num_tokens < need then
      error(args.usage(string.format("infer: max_num_tokens (%s) is below a static batch's "
        .. "prompt tokens (batch %d x %d): its context phase runs them in one pass; give "
        .. "max_num_tokens of %d or more, or leave it out", shown(a.max_num_tokens), c.batch,
        math.floor(c.input - (c.cached or 0)), math.ceil(need))), 3)
    end
    if a.max_num_tokens == nil then
      c.max_num_tokens = need
      default(string.format("max_num_tokens=%d (batching static: the batch's prompt tokens, "
        .. "one context pass)", math.ceil(need)))
    end
    local reps = c.gpus // (c.tp * c.pp)
    if c.requests and c.requests % (c.batch * reps) ~= 0 then
      error(args.usage(string.format("infer: requests %d with batching static: a run of static "
        .. "batches serves batch x replicas = %d requests a batch; give a multiple of %d",
        c.requests, c.batch * reps, c.batch * reps)), 3)
    end
    default(string.format("batching=static: one batch of %d a replica, its prompts in one "
      .. "context pass, then %d decode steps of the whole batch, input + output KV held a "
      .. "sequence", c.batch, math.floor(c.output - 1)))
  end
  if a.runtime == nil then default("runtime=graphs")
  elseif gguf_runtime_said[a] then default(gguf_runtime_said[a]) end
  -- A vision-language model is served text only (engine/infer.c: its
  -- tower's weights held, "which text serving does not run"): the same
  -- TTFT as its language model alone, which nothing said.
  if type(model.vision) == "table" then
    -- (not "name=": the line's names are options, and infer has no vision option)
    default("text requests only: the vision tower's weights held, its encoder not run "
      .. "(infer takes no images)")
  end
  -- vLLM's own engine choices, refused under another runtime: its host
  -- work between two steps where the engine schedules in step with the
  -- GPU (async_scheduling = false: M.engine_host), and its MoE's shared
  -- expert on a second stream (shared_expert_stream: M.shared_stream_max).
  -- (Their true/false check is the declaration's, in check_args.)
  for _, o in ipairs {
    { "async_scheduling", "--async-scheduling", "schedules as its own engine does" },
    { "ray_step", "its Ray executor's task a worker each step", "runs its own executor" },
    { "v0_step", "vLLM 0.4's own host work a step", "runs its own engine" },
    { "shared_expert_stream", "its MoE's shared expert on a second CUDA stream",
      "runs the shared expert as its own engine does" },
  } do
    if a[o[1]] ~= nil and a.runtime ~= "vllm" then
      error(args.usage("infer: " .. o[1] .. " is vLLM's (" .. o[2] .. "); runtime "
        .. tostring(a.runtime or "graphs") .. " " .. o[3]), 3)
    end
  end
  -- A run that names its vLLM release by vllm_version names a V0 one
  -- (0.4.2 to 0.6.3, the sampler's: M.v0_sampler_kernels), whose engine
  -- never schedules ahead of the GPU: its LLMEngine.step schedules,
  -- rebuilds the inputs and waits for the sampled tokens between steps
  -- ("many components (e.g., scheduler and output processor) execute in
  -- a synchronous manner that blocks GPU execution", the vLLM v0.6.0
  -- performance post), so it takes async_scheduling = false unless the
  -- run says otherwise -- validate's rule for a V0 case (predict/infer.lua's
  -- vllm profile), which also leaves out multi-step scheduling.
  local async, async_why = a.async_scheduling, ""
  if async == nil and a.runtime == "vllm" and a.vllm_version ~= nil then
    async = false
    async_why = string.format(" (vllm_version %s: V0 schedules between the GPU's steps)",
      tostring(a.vllm_version))
  end
  if async == false then
    c.engine_host_step, c.engine_host_seq = M.engine_host.step, M.engine_host.seq
    default(string.format("async_scheduling=false%s: vLLM's host work between steps, V1's %.2f "
      .. "ms a step and %.1f us a sequence (V0's at least these), adds to each step",
      async_why, M.engine_host.step * 1e3,
      M.engine_host.seq * 1e6))
  elseif async == nil and a.runtime == "vllm" and not serving then
    -- Not stated: priced as today's vLLM, which overlaps that host work
    -- with the GPU's step; said, since a run of an earlier release pays it.
    default("async_scheduling=true (vLLM's default from v0.14.0: the engine's host work "
      .. "between steps runs under the GPU's step; --no-async-scheduling for V1 before 0.14 "
      .. "or V0)")
  end
  -- vLLM's Ray executor's task a worker each step (M.v0_ray_step): given,
  -- the GPU waits for it every step beside the engine's own host work.
  -- A replica of one GPU ran no Ray workers: vLLM 0.4 ran it on its
  -- GPUExecutor, the driver's own worker (OpenRLHF's LLMRayActor, reading
  -- vllm's executor/gpu_executor.py at 0650e593: "self.use_gpu_executor =
  -- kwargs["tensor_parallel_size"] == 1"), so the task is not there:
  -- refused, not priced in silence (validate's rule asks tp x pp > 1 too).
  if a.ray_step ~= nil and a.ray_step > 0 then
    if c.tp * c.pp == 1 then
      error(args.usage(string.format("infer: ray_step %g is the task vLLM's Ray executor sends "
        .. "each worker of a replica of more than one GPU; this replica is one GPU (tp 1, pp 1), "
        .. "run by the driver alone: give tp or pp above 1, or no ray_step", a.ray_step)), 3)
    end
    -- A release named from 0.4.3 on runs PR #4894's worker loop (merged
    -- 2024-05-21, "Eliminate parallel worker per-step task scheduling
    -- overhead"): no task a step to price.
    local r = version.parse(a.vllm_version)
    if r and r.parts == 3 and not version.before(r, "0.4.3") then
      error(args.usage(string.format("infer: ray_step %g with vllm_version %s: from 0.4.3 vLLM's "
        .. "Ray workers run their own loop (vllm PR #4894, \"Eliminate parallel worker per-step "
        .. "task scheduling overhead\"), with no task a step: give a release before 0.4.3, or "
        .. "no ray_step", a.ray_step, tostring(a.vllm_version))), 3)
    end
    c.engine_host_step = (c.engine_host_step or 0) + a.ray_step
  end
  -- vLLM 0.4's own host work a step beyond V1's figures (M.v0_host_step):
  -- V0 never schedules ahead of the GPU, so it adds to the host work
  -- async_scheduling = false prices; a run scheduling ahead (async
  -- scheduling on) or naming a release the figure is not of is refused.
  if a.v0_step ~= nil and a.v0_step > 0 then
    if async ~= false then
      -- (a vllm_version switches async scheduling off only where the run
      -- leaves it unsaid: async_scheduling = true keeps it on)
      error(args.usage(string.format("infer: v0_step %g is vLLM 0.4's host work between the "
        .. "GPU's steps, which a V0 engine never overlaps: give async_scheduling = false%s, "
        .. "or no v0_step", a.v0_step,
        a.async_scheduling == nil and " or a vllm_version" or "")), 3)
    end
    local r = version.parse(a.vllm_version)
    if r and r.parts == 3 and (version.before(r, "0.4.0") or not version.before(r, "0.5.0")) then
      error(args.usage(string.format("infer: v0_step %g with vllm_version %s: the figure is "
        .. "vLLM 0.4's (vllm PR #3763's one-GPU row); give a 0.4.x release, or no v0_step",
        a.v0_step, tostring(a.vllm_version))), 3)
    end
    c.engine_host_step = (c.engine_host_step or 0) + a.v0_step
  end
  -- The shared expert on vLLM's second stream (M.shared_stream_max): said
  -- where a model has one, since vLLM 0.11.0 and before run it apart on
  -- the one stream (validate's cases of those releases say so).
  if a.shared_expert_stream == nil and a.runtime == "vllm" and not serving
      and M.has_shared_expert(model) then
    default(string.format("shared_expert_stream (vLLM's from v0.11.1: the shared expert "
      .. "beside the routed experts in steps of at most %d tokens; "
      .. "--no-shared-expert-stream for 0.11.0 and before)", M.shared_stream_max.vllm))
  end
  -- Given for a model without a shared expert it would change nothing, in
  -- silence (M.shared_stream_max prices a shared expert's place only):
  -- refused, as fused_grouped_topk is below.
  if a.shared_expert_stream ~= nil and not M.has_shared_expert(model) then
    error(args.usage("infer: shared_expert_stream given for a model without a shared expert "
      .. "(DeepSeek's, Qwen2-MoE's): " .. tostring(model.id or "this model")
      .. (type(model.moe) == "table" and " has routed experts only" or " has no MoE layers")), 3)
  end
  -- SGLang's Triton block-fp8 dense linears (M.block_fp8_triton): the
  -- MoE serving model prices them (gpuplan.serve's linear_fp8_bf16_x);
  -- asked for elsewhere it would change nothing, in silence -- refused.
  -- The cap is the fused MoE's multiple (M.moe_fp8_bf16_x_of), measured on
  -- Hopper only: on another card serve.lua's linear_fp8_bf16_x is nil and
  -- the flag priced nothing, in silence -- refused as well, naming the card.
  -- The weights as served (weights: --weights, else a checkpoint released
  -- in fp8, DeepSeek-V3's, which serve.lua's linear_fp8_bf16_x reads too):
  -- a.weights refused DeepSeek-V3 served as released, "got ... weights bf16".
  if a.block_fp8_triton and (a.runtime ~= "sglang" or not serving or weights ~= "fp8"
      or not M.moe_fp8_bf16_x_of(a.runtime, g.arch, "fp8", d)) then
    error(args.usage("infer: block_fp8_triton is SGLang's dense block-fp8 GEMM before DeepGEMM, "
      .. "priced by the MoE serving model with fp8 weights on Hopper (runtime sglang, weights "
      .. "fp8, an MoE model served with expert or DP-attention layouts, a card whose Triton fp8 "
      .. "multiple is measured); got runtime " .. tostring(a.runtime or "graphs") .. ", weights "
      .. tostring(weights) .. ", gpu " .. tostring(g.id) .. " ("
      .. tostring(g.arch) .. ")"), 3)
  end
  -- The grouped-top-k router in one kernel (M.fused_grouped_topk):
  -- vLLM's and SGLang's fused MoE route so (engine/infer.c moe_route; the
  -- MoE serving model's one moe_topk row, and with false the native
  -- path's 8 more, serve.lua M.NATIVE_GROUPED_TOPK_EXTRA); the other
  -- runtimes route their own way.  Said where SGLang's default prices it.
  if a.fused_grouped_topk ~= nil and a.runtime ~= "sglang" and a.runtime ~= "vllm" then
    error(args.usage("infer: fused_grouped_topk is the routing kernel of vLLM's and SGLang's "
      .. "fused MoE; runtime " .. tostring(a.runtime or "graphs") .. " routes its own way"), 3)
  end
  -- It routes one kind of router, the MLA models' grouped top-k (moe_route
  -- counts it only there): asked for on another model it would change
  -- nothing, in silence -- refused, as gp.rl refuses
  -- rollout_fused_grouped_topk.
  if a.fused_grouped_topk ~= nil and not (type(model.mla) == "table" and type(model.moe) == "table") then
    error(args.usage("infer: fused_grouped_topk given for a model without a grouped-top-k MoE "
      .. "router (the MLA models' MoE layers, DeepSeek's): " .. tostring(model.id or "this model")
      .. (type(model.moe) == "table" and " routes by softmax top-k" or " has no MoE layers")), 3)
  end
  if a.fused_grouped_topk == nil and not serving and M.fused_grouped_topk[a.runtime or "graphs"]
      and type(model.mla) == "table" and type(model.moe) == "table" then
    default("fused_grouped_topk (SGLang's from 0.4.6: DeepSeek's grouped top-k routing in one "
      .. "kernel, moe_fused_gate, sglang PR #5371, not 9; --no-fused-grouped-topk for 0.4.5 "
      .. "and before)")
  end
  -- The note on xqa = false or paged_decode says the factor the engine
  -- priced (its result's kv_reads, engine/infer.c infer_kv_reads): its
  -- place in the line is held here, its words are qhead_note's once the
  -- engine ran.
  if a.xqa == false then default(XQA_NOTE) end
  if a.paged_decode then default(PAGED_NOTE) end
  -- fa2_mixed's default: its place held here, worded (or dropped, for a
  -- group of one) by qhead_note from the engine's mixed_kv_reads.
  if c.mixed_kv_per_qhead and a.fa2_mixed == nil and c.chunked then default(FA2_NOTE) end
  if c.prompt_attn_fused then
    default("prompt attention on FlashAttention-3's measured rate (vLLM V1's FlashAttention "
      .. "backend on Hopper, fa_utils.py get_flash_attn_version)")
  end
  if c.kv_fp8_prompt_x then
    default(string.format("FP8 prompt attention at %.2gx the 16-bit rate (vLLM's "
      .. "FlashAttention-3 on Hopper: its two-level FP8 accumulation, vllm-project/"
      .. "flash-attention PR #104)", c.kv_fp8_prompt_x))
  end
  if sample_kernels then
    local names = {}
    for _, n in ipairs(M.SAMPLING) do if stages[n] then names[#names + 1] = n end end
    default(string.format("sampling=%s: %d kernels a step beyond greedy sampling's (vLLM %s's "
      .. "V0 sampler, outside the CUDA graph)", table.concat(names, ","), sample_kernels,
      tostring(a.vllm_version)))
  end
  if a.enforce_eager then
    default(string.format("enforce_eager: %.4g host ops a layer at %.4g us (%s's eager launches)",
      c.host_ops_per_layer, (c.host_op_time or core().DEFAULTS.host_op_time) * 1e6, a.runtime))
  end
  -- vLLM's own step budget (M.vllm_limits, its API server's), not the
  -- engine's TensorRT-LLM default, where the user gives none.  Without
  -- chunked prefill vLLM raises it to hold the longest sequence ("if not
  -- self.enable_chunked_prefill: # If max_model_len is too short, use the
  -- default for higher throughput. self.max_num_batched_tokens =
  -- max(model_config.max_model_len, self.max_num_batched_tokens)",
  -- engine/arg_utils.py; V0's SchedulerConfig: max(max_model_len, 2048)),
  -- max_model_len defaulting to the model's context (max_seq).
  -- The MoE serving model reads no max_num_tokens (gpuplan.serve refuses
  -- it; its chunk is prefill_tokens, the same rule, M.step_budget): its
  -- defaults line said "max_num_tokens=131072 (vLLM without chunked
  -- prefill ...)" beside "mixed steps (vLLM V1 always chunks the
  -- prefill)" for gpt-oss-20b under vLLM.
  local budget_said = "TensorRT-LLM's"
  if a.runtime == "vllm" and a.max_num_tokens == nil and not serving then
    local tok
    tok, budget_said = M.step_budget(a.runtime, g)
    if not c.chunked and (model.max_seq or 0) > tok then
      tok = model.max_seq
      default(string.format("max_num_tokens=%d (vLLM without chunked prefill: max_model_len, "
        .. "the model's context)", tok))
    end
    c.max_num_tokens = tok
  end
  -- SGLang's chunk (M.sglang_chunk) where its prompts ride in the decode
  -- steps (--enable-mixed-chunk) and the user gives no budget: its
  -- chunked_prefill_size, not TensorRT-LLM's 8192.
  if a.runtime == "sglang" and c.chunked and a.max_num_tokens == nil then
    c.max_num_tokens, budget_said = M.step_budget(a.runtime, g)
  end
  -- SGLang's MLA prefill in the latent form (M.mla_latent_prefill_of).
  do
    local lat, why = M.mla_latent_prefill_of(a, model, g, c)
    if lat then
      c.mla_latent_prefill = true
      default(why)
    end
  end
  -- vLLM's running sequences at most, its max_num_seqs (M.vllm_limits:
  -- 1024 on cards of >= 70 GiB other than A100, else 256), not
  -- TensorRT-LLM's max_batch_size of 2048 (engine/infer.c), where the user
  -- gives none: the scheduler admits no more ("if len(self.running) ==
  -- self.max_num_running_reqs: break", vllm/v1/core/sched/scheduler.py).
  -- Without it a 40 GiB card's as-many-as-fit batch reached 2048, its
  -- 2048-token budget held no prompt beside them, and the job was refused
  -- for a conflict of two defaults.  A batch or concurrency the user gives
  -- is the user's max_num_seqs (vLLM runs what it is told to hold).
  if a.runtime == "vllm" and a.max_batch == nil and a.batch == nil and a.concurrency == nil then
    c.max_batch = M.vllm_limits(g, true)
    default(string.format("max_batch=%d (vLLM's max_num_seqs on %s)", c.max_batch,
      tostring(g.id or g.name)))
  end
  -- llama-server's slots: it decodes at most -np/--parallel sequences at
  -- once, and where none is given its auto is 4 (ggml-org/llama.cpp@aa6192d3
  -- tools/server/server.cpp: "n_parallel is set to auto, using n_parallel
  -- = 4 and kv_unified = true"; common/arg.cpp: "number of server slots
  -- (default: %d, -1 = auto)"); as many as the KV held (69 on an RTX 4090
  -- for llama3-8b Q4_K_M) was no llama.cpp default.  A batch or concurrency
  -- the user gives is the user's -np (llama-bench's one sequence is
  -- batch 1).
  if a.runtime == "llama.cpp" and a.max_batch == nil and a.batch == nil and a.concurrency == nil then
    c.max_batch = M.llamacpp_slots
    default(string.format("max_batch=%d (llama-server's slots: -np auto = %d, "
      .. "tools/server/server.cpp)", c.max_batch, c.max_batch))
  end
  -- ExLlamaV2's config (M.exllamav2): one sequence where none is given
  -- (max_batch_size 1), and a forward's tokens at most max_input_len x
  -- the sequences it runs -- the workspace's budget and the prefill's
  -- chunk.
  if a.runtime == "exllamav2" then
    local x = M.exllamav2
    if a.max_batch == nil and a.batch == nil and a.concurrency == nil then
      c.max_batch = x.max_batch_size
      default(string.format("max_batch=%d (ExLlamaV2Config max_batch_size)", c.max_batch))
    end
    if a.max_num_tokens == nil then
      local seqs = c.batch or c.concurrency or c.max_batch or x.max_batch_size
      c.max_num_tokens = x.max_input_len * seqs
      budget_said = "ExLlamaV2's"
      default(string.format("max_num_tokens=%d (ExLlamaV2Config max_input_len %d x %d "
        .. "sequence%s a forward)", c.max_num_tokens, x.max_input_len, seqs,
        seqs == 1 and "" or "s"))
    end
  end
  -- A step budget below the prompt, where the prompt is not cut into
  -- chunks, leaves the prompt no step to run in: vLLM refuses the
  -- configuration ("max_num_batched_tokens ... is smaller than
  -- max_model_len ... makes vLLM reject longer sequences", SchedulerConfig
  -- _verify_args, when chunked prefill is not enabled) and TensorRT-LLM's
  -- LLM API the request ("should not exceed max_num_tokens", llmapi/llm.py
  -- _check_arguments, without enable_chunked_prefill).  Refused, where it
  -- was priced as one prompt a prefill step (engine/infer_run.c run_times'
  -- pb) or as chunked (run_finite).  The engine's default budget is not the
  -- user's: a longer prompt under it keeps that pricing.
  if a.max_num_tokens ~= nil and c.input > c.max_num_tokens and
     (not c.chunked or c.whole_prompts) then
    error(args.usage(string.format("infer: max_num_tokens (%s) is below the prompt (input %d tokens): "
      .. "without chunked prefill no step can hold that prompt (vLLM and TensorRT-LLM refuse "
      .. "it); give chunked_prefill, or max_num_tokens of %d or more", shown(a.max_num_tokens),
      c.input, c.input)), 3)
  end
  if mixes then default("chunked_prefill (" .. mixes .. ")") end
  -- With chunked_prefill the step's token budget decides how many steps
  -- carry a prompt (engine/infer_run.c mixed_steps): the default (engine/
  -- infer.c, TensorRT-LLM's 8192; runtime vllm: vLLM's) is said, not taken
  -- in silence.
  if c.chunked and a.max_num_tokens == nil then
    default(string.format("max_num_tokens=%d (%s; the chunked prefill's tokens a step)",
      c.max_num_tokens or 8192, budget_said))
  end
  -- The CUDA-graph batch sizes a decode-only step pads to (M.graph_sizes;
  -- engine/infer_run.c graph_batch): the user's list, else the named
  -- runtime's own, TensorRT-LLM's capped by its engine limits
  -- (M.trtllm_graph_cap).  The MoE serving model prices its own steps.
  local serve_model = require("gpuplan.serve").wants(a)
  if a.graph_sizes ~= nil and (c.runtime ~= "graphs" or serve_model) then
    error(args.usage("infer: graph_sizes is the batch sizes a CUDA-graph runtime captures for one model "
      .. "on its replicas (runtime " .. M.runtime_names("graphs") .. "); "
      .. (serve_model and "the MoE serving model does not read it" or
          ("runtime " .. tostring(a.runtime) .. " runs no graphs"))), 3)
  end
  if c.runtime == "graphs" and not serve_model then
    local gs, rt = graph_sizes_arg(a), a.runtime or "graphs"
    local mb, mt = c.max_batch or 2048, c.max_num_tokens or 8192
    local said = nil
    -- A static batch decodes at its own size (GptSession captures, where
    -- its CUDA-graph mode is on, the step it runs: no padding to a
    -- serving benchmark's list).
    if gs == nil and M.graph_sizes[rt] and not static then
      gs = M.graph_sizes[rt](mb, mt, g, tp)
      said = ({ trtllm = "trtllm-bench's", vllm = "vLLM's", sglang = "SGLang's" })[rt]
    end
    if gs and rt == "trtllm" then gs = M.trtllm_graph_cap(gs, mb, mt) end
    if said and #gs > 0 then
      default(string.format("graph_sizes=%d sizes %d..%d (%s captured CUDA-graph batches; a "
        .. "decode step pads to the next, runs eager above)", #gs, gs[1], gs[#gs], said))
    end
    if gs and #gs > 0 then c.graph_sizes = gs end
  end
  -- vLLM V0's context limit on its graphs (M.v0_graph_max_context;
  -- engine/infer_run.c graph_step): given, else V0's default where the
  -- run names its V0 release (vllm_version).  Past it a decode step runs
  -- the model op by op, priced at the eager launches counted for vLLM
  -- (M.eager_host_ops) unless host_ops_per_layer says otherwise.
  local gmc, gmc_why = int_arg(a, "graph_max_context", 1), ""
  if gmc ~= nil and (c.runtime ~= "graphs" or serve_model or not M.eager_host_ops[a.runtime or ""]) then
    error(args.usage("infer: graph_max_context is vLLM V0's context limit on its CUDA graphs "
      .. "(runtime vllm, one model on its replicas); "
      .. (serve_model and "the MoE serving model does not read it" or
          (a.enforce_eager and "enforce_eager runs no graphs" or
           ("got runtime " .. tostring(a.runtime or "graphs"))))), 3)
  end
  if gmc == nil and c.runtime == "graphs" and not serve_model and a.runtime == "vllm"
    and a.vllm_version ~= nil then
    gmc, gmc_why = M.v0_graph_max_context, string.format(", vllm_version %s: V0's default",
      tostring(a.vllm_version))
  end
  if gmc then
    c.graph_max_ctx = gmc
    c.host_ops_per_layer = c.host_ops_per_layer or M.eager_host_ops[a.runtime](model, tp)
    -- assumed (not the run's own value): said where a request's decode
    -- can pass it
    if gmc_why ~= "" and (c.input or 0) + (c.output or 0) > gmc then default(string.format("graph_max_context=%d (vLLM V0's max_seq_len_to_capture%s): a decode "
      .. "step past %d tokens of context runs off its CUDA graph, %.4g host ops a layer at %.4g us",
      gmc, gmc_why, gmc, c.host_ops_per_layer,
      (c.host_op_time or core().DEFAULTS.host_op_time) * 1e6)) end
  end
  return setup_memory(a, cat, model, g, sys, d, c, tp, pp, default,
    { defaults = defaults, weights = weights, kv = kv, split = info_split })
end

-- The runtimes whose documentation runs one TP group over several nodes
-- (the value: its source), each rank a GPU of whole nodes:
M.tp_over_nodes = {
  -- sgl-project/sglang benchmark/deepseek_v3/README.md, "Example: Serving
  -- with two H20*8 nodes": "python -m sglang.launch_server --model-path
  -- deepseek-ai/DeepSeek-V3 --tp 16 --dist-init-addr 10.0.0.1:5000
  -- --nnodes 2 --node-rank 0" (and the same on two H200 x 8 nodes)
  sglang = "SGLang's --tp N --nnodes M",
  -- docs.vllm.ai/en/v0.4.3/serving/distributed_serving.html: "you can run
  -- inference and serving on multiple machines by launching the vLLM
  -- process on the head node by setting tensor_parallel_size to the number
  -- of GPUs to be the total number of GPUs across all machines"
  vllm = "vLLM's tensor_parallel_size over a Ray cluster",
}

-- The topology of a TP group of tp GPUs over tp / per whole nodes of GPU
-- g (system sys, else the card's shipped one, gpuplan.train.default_node):
-- the nodes' scale-up fabric within, their NICs between, as a training
-- job's topology (comm.node_spec, comm.from_fabrics).  A node without
-- NICs is refused in comm.no_nics's words.
function M.tp_nodes_topology(g, sys, cat, tp, per, runtime, default)
  local comm = require "gpuplan.comm"
  local node = sys
  if not node then
    local note
    node, _, note = require("gpuplan.train").default_node(g, cat)
    if node or note then
      default((node and "system=" .. node.id or "no system") .. (note and " (" .. note .. ")" or ""))
    end
  end
  local spec = comm.node_spec(node, g, default, "infer", {}, tp)
  local bad = comm.no_nics(spec, tp, "infer: the TP group (tp " .. tp .. ")", cat)
  if bad then error(bad, 0) end
  spec.nodes = tp // per
  local t = comm.from_fabrics(spec, cat)
  t.nic_path_bw = comm.pcie_bw(g) or t.nic_path_bw
  default(string.format("tp %d over %d nodes of %d (%s): the TP all-reduces cross %d x %s NICs "
    .. "a node", tp, tp // per, per, M.tp_over_nodes[runtime], t.nics, tostring(spec.nic_fabric)))
  return t
end

-- A replica's TP group is priced on one node's scale-up fabric (c.topo,
-- M.setup's): a group past it was refused by the collective's pricing,
-- "16 gpus exceed the topology (1 nodes x 8 gpus)", naming neither tp nor
-- what to give instead.  (gp.rl's rollout engines, which set up their own
-- topology beyond a node, do not come here.)
-- The one rule, for gp.infer and gp.memory's method infer (gpuplan fit
-- --method infer planned the memory of a TP group infer refuses): the
-- refusal's words for tp over the node of GPU g (system sys), nil within.
-- runtime: the job's (nil: the default); a runtime of M.tp_over_nodes
-- takes a group of whole nodes.  false: the caller takes no runtime
-- (gpuplan fit), so the refusal names pp alone.
function M.tp_beyond_node(tp, pp, g, sys, runtime)
  local _, per = tp_node(g, sys)
  if per and tp > per then
    if M.tp_over_nodes[runtime or ""] then
      if tp % per == 0 then return nil end
      -- the runtime takes a group over nodes, but of whole nodes: naming
      -- it as the way out ("or runtime = sglang or vllm") read wrong when
      -- it was the job's runtime already
      return string.format("tp %d over %s nodes of %d GPUs (%s): its TP group spans whole nodes, "
        .. "tp a multiple of %d (tp %d or %d)", tp, tostring(g.id), per,
        M.tp_over_nodes[runtime], per, tp // per * per, (tp // per + 1) * per)
    end
    local rts = {}
    for k in pairs(M.tp_over_nodes) do rts[#rts + 1] = k end
    table.sort(rts)
    local msg = string.format("tp %d is more than the %d GPUs of a %s node, whose scale-up "
      .. "fabric the TP group's all-reduces run on; for more GPUs a replica give pp "
      .. "(tp %d, pp %d)", tp, per, tostring(g.id), per, tp // per * pp)
    if runtime == false then return msg end
    return msg .. string.format(", or runtime = %s, whose TP group spans whole nodes over "
      .. "their NICs (tp a multiple of %d)", table.concat(rts, " or "), per)
  end
end

-- Refused past the node, or, on a runtime that runs a TP group over
-- whole nodes (M.tp_over_nodes), c.topo set to those nodes: its
-- all-reduces cross the nodes' NICs, priced by the collective model as a
-- training job's inter-node all-reduce is.  (Here, not in M.setup:
-- gp.rl's rollout engines set up their own topology beyond a node.)
local function tp_within_node(a, info, c)
  local g, sys = info.gpu, info.system
  local msg = M.tp_beyond_node(c.tp, c.pp, g, sys, a.runtime)
  if msg then error("infer: " .. msg, 3) end
  local _, per = tp_node(g, sys)
  if c.topo and per and c.tp > per then
    local function default(x) info.defaults[#info.defaults + 1] = x end
    c.topo = M.tp_nodes_topology(g, sys, catalog(a.cat or a.catalog), c.tp, per, a.runtime,
      default)
  end
end

-- The note on a per-query-head decode attention kernel in defaults
-- (M.setup's XQA_NOTE or PAGED_NOTE), in the words of the engine's
-- kv_reads: the times a decode step reads the KV cache.  One wording for
-- both kernels, each named with what it stands against.
local QHEAD_KERNELS = {
  [XQA_NOTE] = { kernel = "TensorRT-LLM's masked MHA kernel", short = "masked MHA kernel",
                 other = "XQA" },
  [PAGED_NOTE] = { kernel = "vLLM's PagedAttention kernel", short = "PagedAttention kernel",
                   other = "flash-attn's decode" },
}
-- fa2_mixed's default note (FA2_NOTE) takes mixed_reads, the engine's
-- infer_mixed_kv_reads, and arch, the card's; it goes for a group of one.
local function qhead_note(defaults, reads, mixed_reads, arch)
  for i = #defaults, 1, -1 do
    if defaults[i] == FA2_NOTE then
      if (mixed_reads or 1) > 1 then
        defaults[i] = string.format("fa2_mixed (vLLM V1 on FlashAttention-2, %s: a step with "
          .. "prompt chunks reads each decode's cache %.4g times, once per query head)",
          tostring(arch), mixed_reads)
      else
        table.remove(defaults, i)
      end
    end
  end
  for i, e in ipairs(defaults) do
    local k = QHEAD_KERNELS[e]
    if k then
      -- the dot products' units: CUDA cores on NVIDIA, the vector ALUs of
      -- an AMD CDNA card (the same FMAs, the kernel hipified)
      local units = tostring(arch or ""):match("^cdna") and "the vector ALUs" or "the CUDA cores"
      defaults[i] = reads > 1 and string.format("%s: %s, one thread block a query head: the KV "
        .. "cache read %.4g times a decode step (%.4g query heads a KV head), on %s",
        e, k.kernel, reads, reads, units)
        or string.format("%s: no change for a model of one query head a KV head (MHA): the %s "
        .. "reads its cache once, as %s would", e, k.short, k.other)
    end
  end
end

-- gp.infer{...}: see the header; the MoE serving options (ep, dp_attention,
-- disagg, mtp, ...: gpuplan.serve) take the MoE serving model.
function M.infer(a)
  if type(a) == "table" and type(a.gpu) == "table" and a.gpu[1] ~= nil then
    return M.cards(a)
  end
  a = M.gguf_runtime(a)
  -- itl_max and ttft_max bound the MoE serving model's batch and layout,
  -- and a target's plan (gp.infer_plan): alone they bound nothing one
  -- model's replicas price, so refused by the command line's rule
  -- ("--itl-max needs --target or the MoE serving options"), not taken as
  -- a request for the serving model (llama3-8b's TTFT went 53 -> 410 ms).
  if type(a) == "table" and not require("gpuplan.serve").wants(a) then
    for _, k in ipairs { "itl_max", "ttft_max" } do
      if a[k] ~= nil then
        error(args.usage("infer: " .. k .. " needs the MoE serving options (ep, dp_attention, "
          .. "disagg ...) or a target: gp.infer_plan{target = ..., " .. k .. " = ...}"), 2)
      end
    end
  end
  if type(a) == "table" and require("gpuplan.serve").wants(a) then
    -- A hybrid stack (hybrid_pattern: Mamba, attention and MoE layers) is
    -- priced on one model's replicas (engine/infer.c step_layers,
    -- memory_infer.c kv_seq); the MoE serving model's steps (engine/
    -- serve_step.c) price two kinds of layer, and engine/serve.c
    -- serve_check refuses it: said here of the option that chose it.
    local _, by = require("gpuplan.serve").wants(a)
    local model = model_of(a)
    if model and type(model.hybrid_pattern) == "string" then
      error(args.usage(string.format("infer: %s: a hybrid stack (hybrid_pattern) is priced on one "
        .. "model's replicas, not by the MoE serving model this option chooses; infer "
        .. "prices it without it", by)), 2)
    end
    -- vLLM V1's host work between steps (async_scheduling = false): the
    -- MoE serving model's decode steps carry it as one model's do
    -- (engine/serve_step.c serve_step_time, engine/infer.c engine_time).
    -- (tonumber: a numeric string, "2e-3", passed the declaration's check
    -- as the number it reads as, and was priced on the serving model)
    if tonumber(a.ray_step) ~= nil then
      error(args.usage(string.format("infer: %s: ray_step (vLLM's Ray executor's task a worker "
        .. "each step) is priced on one model's replicas, not by the MoE serving model "
        .. "this option chooses", by)), 2)
    end
    if tonumber(a.v0_step) ~= nil then
      error(args.usage(string.format("infer: %s: v0_step (vLLM 0.4's own host work a step) is "
        .. "priced on one model's replicas, not by the MoE serving model this option chooses",
        by)), 2)
    end
    -- (the value's type first, as every numeric option's: int_arg names it)
    if a.wo_split_k ~= nil and int_arg(a, "wo_split_k", 2) then
      error(args.usage(string.format("infer: %s: wo_split_k (the split-K sum after each "
        .. "weight-only linear) is priced on one model's replicas, not by the MoE serving model "
        .. "this option chooses", by)), 2)
    end
    -- The 80% ranges of the latencies, throughputs and cost (gpuplan.ranges).
    return require("gpuplan.ranges").apply("infer", a, require("gpuplan.serve").infer(a))
  end
  local model, d, c, info = M.setup(a)
  tp_within_node(a, info, c)
  local ok, r = pcall(core().infer, model, d, c)
  if not ok then error("infer: " .. tostring(r), 2) end
  -- a concurrency the replicas split unevenly (M.setup): the floor
  -- group's own run, the two combined (M.split_replicas)
  local split = info.split
  if split and r.fits and split.lo > 0 then
    local cl = {}
    for k, v in pairs(c) do cl[k] = v end
    cl.concurrency = split.lo * split.replicas
    local okl, rl = pcall(core().infer, model, d, cl)
    if not okl then error("infer: " .. tostring(rl), 2) end
    r = M.split_replicas(r, rl, split, c.gpus)
  elseif split and r.fits then
    r = M.split_replicas(r, nil, split, c.gpus)
  end
  qhead_note(info.defaults, r.kv_reads, r.mixed_kv_reads, info.gpu.arch)
  -- A concurrency past what the replicas' KV holds runs that many at once
  -- (run_batch caps the batch at the KV's); the rest wait.  It was capped
  -- without a word.
  -- Where max_batch, not the KV, holds the batch down (kv_seqs above it),
  -- the note names max_batch: max_batch 8 with concurrency 16 read "8 a
  -- replica, what its KV holds" of a KV that holds 205.
  local q = r.fits and c.concurrency and not split and M.queue_note(c.concurrency, r.batch,
                                                     r.replicas, r.kv_seqs, nil, c.requests)
  -- split: the streams that run at once against those given (a replica
  -- of either group held to what its KV or max_batch holds)
  if r.fits and split and r.running < split.concurrency then
    q = M.queue_note(split.concurrency, r.running / r.replicas, r.replicas, r.kv_seqs)
  end
  if q then info.defaults[#info.defaults + 1] = q end
  -- (kept where the offload is the refusal's: "offloading 40 of 80 layers
  -- needs 68.83 GB of host memory, has 32.00 GB" came with no word of the
  -- 32 GB being a default, the engine placing no layer in a job that did
  -- not fit)
  if info.offload_said and (r.offload_layers or 0) == 0
     and not (not r.fits and tostring(r.why or ""):find("host memory", 1, true)) then
    local kept = {}
    for _, e in ipairs(info.defaults) do
      if not info.offload_said[e] then kept[#kept + 1] = e end
    end
    info.defaults = kept
  end
  local out = {
    fits = r.fits, why = r.why, model = model.id or model.name or "model",
    gpu = d.id, gpus = c.gpus, tp = c.tp, pp = c.pp, weights = info.weights, kv = info.kv,
    compute = c.compute, input = c.input, output = c.output,
    -- prompt tokens a request finds in the prefix cache (prefix_hit)
    -- (a count: an integer where whole, as the result's other counts;
    -- prefix_hit 0.5 of 2048 gave 1024.0)
    cached_tokens = a.prefix_hit ~= nil and (math.tointeger(c.cached) or c.cached) or nil,
    batch = r.batch, batch_split = r.batch_split, replicas = r.replicas, max_batch_kv = r.max_batch_kv, kv_seqs = r.kv_seqs,
    weights_total = r.weights_total, weights_gpu = r.weights_gpu,
    kv_per_seq = r.kv_per_seq, kv_budget = r.kv_budget, workspace = r.workspace,
    offload_layers = r.offload_layers, offload_bytes = r.offload_bytes,
    ridge = core().roof_ridge(d, c.compute, true),
    defaults = info.defaults, currency = info.currency,
  }
  if r.fits then
    out.ttft_s, out.itl_s, out.itl_batch1_s = r.ttft, r.itl, r.itl_batch1
    -- a burst (requests sent at once, more than one a replica): ttft_s is
    -- the mean over its requests, each behind the prompts ahead of it;
    -- ttft_one_s one prompt's alone (engine/infer_run.c run_finite)
    out.ttft_one_s = r.ttft_one
    -- under a steady concurrency on a chunked-prefill engine ttft_s is the
    -- TTFT of a request joining the steady state (the step in flight, then
    -- its prompt's chunks in steps shared with the decodes:
    -- engine/infer_run.c loaded_ttft); ttft_one_s one prompt's alone
    out.ttft_loaded = r.ttft_loaded or nil
    -- its parts: the wait for the step in flight, the steps its prompt
    -- runs in and each one's time (ttft_s = wait + steps x step)
    out.ttft_wait_s, out.ttft_step_s = r.ttft_wait, r.ttft_step
    out.ttft_steps = r.ttft_steps and math.tointeger(r.ttft_steps) or r.ttft_steps
    -- and its requests' median and 99th percentile (numpy's, as vLLM's
    -- benchmark prints them)
    out.ttft_p50_s, out.ttft_p99_s = r.ttft_p50, r.ttft_p99
    -- The client's first token a number of decode steps past its prefill
    -- (first_token_lag, gpuplan.options' declaration with its sources):
    -- each adds the decode step at the run's batch (itl_s; one prompt
    -- alone, the step at batch 1).
    local lag = a.first_token_lag
    if lag ~= nil then
      if lag > 0 and c.output <= 1 then
        error(args.usage(string.format("infer: first_token_lag %d waits on decode steps, but "
          .. "output %s runs none (give an output of 2 or more)", lag, shown(c.output))), 2)
      end
      if lag > 0 then
        local step, one = r.itl * lag, r.itl_batch1 * lag
        out.ttft_s = out.ttft_s + step
        if out.ttft_one_s then out.ttft_one_s = out.ttft_one_s + one end
        if out.ttft_p50_s then out.ttft_p50_s = out.ttft_p50_s + step end
        if out.ttft_p99_s then out.ttft_p99_s = out.ttft_p99_s + step end
      end
    end
    out.itl_load_s = r.itl_load
    out.tokens_per_s, out.per_gpu = r.tokens_per_s, r.tokens_per_s_gpu
    out.stream_tokens_per_s = r.stream_tokens_per_s
    -- One output token is the prefill's own (the first token comes out of
    -- the prompt's forward): no decode step runs, so a decode step's
    -- latency and one user's decode rate have no value -- absent here,
    -- "-" in the command's text, null in its JSON -- not the figures of
    -- a step that never runs.
    if c.output <= 1 then
      out.itl_s, out.itl_batch1_s, out.stream_tokens_per_s = nil, nil, nil
      out.itl_load_s = nil
    end
    out.prefill_share_s = r.prefill_share
    out.eager_steps, out.eager_s = r.eager_steps, r.eager
    -- price 0 is a free card: cost 0 a token (tokens/s per price has
    -- no value there); no price (nil): neither
    out.cost_per_mtok = c.price and (r.cost_per_mtok or 0) or nil
    out.tokens_per_s_per_dollar_hour = c.price and c.price > 0 and r.tokens_per_s_per_price or nil
    out.ops, out.prefill_ops = M.op_rows(r.decode), M.op_rows(r.prefill)
    out.decode, out.prefill = r.decode, r.prefill
    require("gpuplan.ranges").apply("infer", { model = model, gpu = info.gpu,
      runtime = a.runtime }, out)
  end
  return out
end

-- A concurrency N that R replicas split unevenly (M.setup's rule: a
-- router balancing the requests in flight leaves ceil(N / R) on N mod R
-- replicas, floor(N / R) on the rest): hi, the engine's result with
-- every replica at the ceiling; lo, with every one at the floor (nil
-- where the floor is 0: those replicas idle).  The deployment's figures:
-- - throughput the replicas' sum, (m hi.tokens_per_s + k lo.tokens_per_s)
--   / R (the engine's tokens_per_s is R replicas' worth), per GPU and
--   per price alike; cost a token its inverse;
-- - TTFT, ITL and the per-user rate the means over the requests in
--   flight, m ceil(N / R) of them at hi's figures and k floor(N / R) at
--   lo's (the per-user rate the mean of each request's own, as a
--   benchmark averages 1 / ITL a request: AIPerf's "Output Token
--   Throughput Per User"); a loaded TTFT's parts (ttft_wait, ttft_steps,
--   ttft_step) stay the ceiling group's, so there ttft_s is not their
--   wait + steps x step but the mean over both groups' requests (the
--   floor group's may be one prompt's alone, at one a replica);
-- - a burst's P99 the ceiling group's (the slower replicas: the request
--   at the 99th percentile lands there while they hold 1% of them), its
--   median the group holding the middle request; one prompt alone and
--   one stream's ITL are the same on both;
-- - the phases, ops, batch and memory the ceiling's (the most loaded
--   replica: what its GPUs must hold), batch_split naming both groups.
-- (gpus: the deployment's, for the per-GPU rate.)
function M.split_replicas(hi, lo, split, gpus)
  local R, m, k = split.replicas, split.hi_replicas, split.lo_replicas
  local r = {}
  for key, v in pairs(hi) do r[key] = v end
  local lb = lo and lo.batch or 0
  r.batch_split = { hi = hi.batch, hi_replicas = m, lo = lb, lo_replicas = k }
  r.running = m * hi.batch + k * lb
  local tps = (m * hi.tokens_per_s + k * (lo and lo.tokens_per_s or 0)) / R
  local scale = tps / hi.tokens_per_s
  r.tokens_per_s, r.tokens_per_s_gpu = tps, tps / gpus
  if hi.tokens_per_s_per_price then r.tokens_per_s_per_price = hi.tokens_per_s_per_price * scale end
  if hi.cost_per_mtok then r.cost_per_mtok = hi.cost_per_mtok / scale end
  -- the requests in flight on each group: the weights of the means
  local wh, wl = m * hi.batch, lo and k * lb or 0
  local function mean(key)
    if hi[key] == nil then return nil end
    if wl == 0 or lo[key] == nil then return hi[key] end
    return (wh * hi[key] + wl * lo[key]) / (wh + wl)
  end
  for _, key in ipairs { "ttft", "itl", "itl_load", "stream_tokens_per_s", "prefill_share" } do
    r[key] = mean(key)
  end
  if hi.ttft_p50 and wl > 0 and lo.ttft_p50 and wl > wh then r.ttft_p50 = lo.ttft_p50 end
  return r
end

-- Throughput/latency curve: gp.infer at batch 1, 2, 4, ... up to the most
-- the KV budget holds (and that maximum itself).  Returns rows
-- {batch, itl_s, itl_load_s, tokens_per_s, per_gpu, stream_tokens_per_s,
-- ttft_s}.
-- A static batch is priced at the one batch it is given (batching), which
-- the batch sweep and the target search choose themselves: gp.infer's own
-- refusal would ask for the batch they drop (the CLI's --batching static
-- with --sweep-batch or --target), so they refuse it by name.  who: what
-- chooses the batch.  (The CLI's --target asks it before its first
-- probe of the layout, a gp.infer call.)
local function static_refused(a, who, level)
  if type(a.batching) == "string" and a.batching:lower() == "static" then
    error(args.usage("infer: batching static prices the one batch it is given; " .. who
      .. " chooses the batch itself: give one or the other"), level + 1)
  end
end

M.static_refused = static_refused

function M.sweep(a)
  check_args(a, 2)
  static_refused(a, "the batch sweep", 2)
  local base = {}
  for k, v in pairs(a) do base[k] = v end
  base.batch, base.concurrency = nil, nil
  local top = M.infer(base)
  if not top.fits then return {}, top end
  local rows, b = {}, 1
  -- the batch argument's most: a replica's for one model; the MoE
  -- serving model's batch argument is a GPU's (max_batch_kv_per_gpu)
  local most = top.max_batch_kv_per_gpu or top.max_batch_kv
  while true do
    local args = {}
    for k, v in pairs(base) do args[k] = v end
    args.batch = math.min(b, most)
    local r = M.infer(args)
    -- itl_load_s: the mean gap a user sees (the prompts between its
    -- tokens), whose inverse stream_tokens_per_s is
    rows[#rows + 1] = { batch = r.batch, itl_s = r.itl_s, itl_ms = r.itl_s and r.itl_s * 1e3,
                        itl_load_s = r.itl_load_s, itl_load_ms = r.itl_load_s and r.itl_load_s * 1e3,
                        tokens_per_s = r.tokens_per_s, per_gpu = r.per_gpu,
                        stream_tokens_per_s = r.stream_tokens_per_s, ttft_s = r.ttft_s }
    if args.batch >= most then break end
    b = b * 2
  end
  return rows, top
end

-- gp.infer{gpu = {"h100-sxm", "h200-sxm", ...}, ...}: the same deployment
-- on each card, side by side: {model, per_card = rows, winner = id or
-- nil}.  Each row is gp.infer's result on that card (fits, why, ttft_s,
-- itl_s, stream_tokens_per_s, per_gpu, cost_per_mtok, ...) with winner and
-- loses (what it loses to the winner, or why it is out).  Ranked: those
-- that fit first, the priced by cost per token, then the rest by tokens/s
-- per user; each id once, at most 64 (gpuplan.sweep.cards).
function M.cards(a)
  local ids = require("gpuplan.sweep").cards(a.gpu, "infer")
  local rows = {}
  for i, id in ipairs(ids) do
    local one = {}
    for k, v in pairs(a) do one[k] = v end
    one.gpu = id
    local ok, r = pcall(M.infer, one)
    if not ok then error(r, 0) end
    r.gpu_order = i
    rows[#rows + 1] = r
  end
  table.sort(rows, function(x, y)
    if x.fits ~= y.fits then return x.fits end
    local px, py = x.cost_per_mtok ~= nil, y.cost_per_mtok ~= nil
    if x.fits and px ~= py then return px end
    if x.fits and px and x.cost_per_mtok ~= y.cost_per_mtok then
      return x.cost_per_mtok < y.cost_per_mtok
    end
    if x.fits and x.stream_tokens_per_s and x.stream_tokens_per_s ~= y.stream_tokens_per_s then
      return x.stream_tokens_per_s > y.stream_tokens_per_s
    end
    return x.gpu_order < y.gpu_order
  end)
  local w = rows[1] and rows[1].fits and rows[1] or nil
  local rel = require("gpuplan.report").versus
  for _, r in ipairs(rows) do
    r.winner = r == w
    if r.winner then r.loses = "(the winner)"
    elseif not r.fits then r.loses = "does not fit"
    else
      local t = {}
      if r.cost_per_mtok and w.cost_per_mtok then
        t[#t + 1] = require("gpuplan.report").against(r.cost_per_mtok, w.cost_per_mtok,
          "more cost per token", "less cost per token", "the cost per token")
      elseif w.cost_per_mtok then t[#t + 1] = "no price in the buyer's market" end
      if w.stream_tokens_per_s then
        t[#t + 1] = rel(w.stream_tokens_per_s / r.stream_tokens_per_s, "slower per user",
                        "faster per user", "slower per user")
      end
      r.loses = table.concat(t, ", ")
    end
  end
  -- The list prices the same deployment on each card, the tp the caller
  -- gives (TP1 without one), so a row matches `infer --gpu ID` alone.  A
  -- card that the model fills at TP1 still read as the card's answer:
  -- Llama 3.1 70B FP8 on one h100-sxm, batch 1 at 15.7 USD/Mtok, "12.8x
  -- the cost" of h200-sxm, where its TP2 replica takes batch 105 at 0.95
  -- USD/Mtok; bf16 on both cards was "no card fits" with no word of TP.
  -- Without tp or pp given, each card is also priced at the sizes
  -- `infer --target` tries (M.target_tps, M.at_search_tp), and a size
  -- that fits where TP1 does not, or serves the token cheaper (tokens/s
  -- per GPU where no price), is the row's larger_tp: {tp, batch, per_gpu,
  -- cost_per_mtok, currency, fits_only_there, by: the figure compared}, the smallest such size at
  -- the best figure.  The ranking stays the list's, on the given layout.
  if a.tp == nil and a.pp == nil then
    for _, r in ipairs(rows) do
      if not r.layout and (r.tp or 1) == 1 then
        local one = {}
        for k, v in pairs(a) do one[k] = v end
        one.gpu = r.gpu
        local okt, tps = pcall(M.target_tps, one)
        local best
        -- a free card (--price 0) costs 0 at every size: tokens/s per GPU
        local function score(x)
          return (x.cost_per_mtok or 0) > 0 and -x.cost_per_mtok or x.per_gpu
        end
        for _, t in ipairs(okt and tps or {}) do
          if t > 1 then
            local ok, x = pcall(M.infer, M.at_search_tp(one, t))
            if ok and x.fits and score(x) and (not best or score(x) > score(best)) then best = x end
          end
        end
        if best and (not r.fits or (score(r) and score(best) > score(r))) then
          r.larger_tp = { tp = best.tp, batch = best.batch, per_gpu = best.per_gpu,
            cost_per_mtok = best.cost_per_mtok, currency = best.cost_per_mtok and best.currency,
            fits_only_there = not r.fits, by = (best.cost_per_mtok or 0) > 0 and "cost per token"
              or "tokens/s per GPU" }
        end
      end
    end
  end
  return { model = rows[1] and rows[1].model, per_card = rows, winner = w and w.gpu or nil }
end

-- GPUs for a target output tokens/s with every user's mean ITL (itl_load_s:
-- the decode step and the other sequences' prompts) within itl_limit
-- (s): returns {gpus, batch, tokens_per_s, itl_s, ttft_s, cost_per_mtok,
-- currency, defaults}; batch the largest within the limit, or the captured
-- CUDA-graph size below it where that serves more (engine/infer_run.c
-- infer_best_batch: the largest can pay a graph's padding); cost_per_mtok as the engine prices one deployment
-- (engine/common.h gp_cost_per_mtok, core.cost_per_mtok), nil without a price.
-- ttft_limit (s, or nil): the replica's TTFT (ttft_s: one prompt's
-- prefill, the part the prefix cache does not hold, on the replica's
-- tp x pp GPUs; no queueing) within it, else refused with what it
-- takes.  That TTFT does not depend on the batch (engine/infer_run.c
-- run_times: r->ttft is the prefill of one prompt, one step or, chunked,
-- its max_num_tokens chunks' steps), so the limit
-- takes or refuses the replica -- its TP in M.replicas_for -- and leaves
-- the batch the ITL limit picks.
function M.gpus_for(a, target, itl_limit, ttft_limit)
  static_refused(a, "the target search", 2)
  local model, d, c, info = M.setup(a)
  tp_within_node(a, info, c)
  local ok, g, b, tps, reads, mixed_reads = pcall(core().infer_gpus_for, model, d, c, target,
    itl_limit)
  if not ok then error("infer: " .. tostring(g), 2) end
  qhead_note(info.defaults, reads, mixed_reads, info.gpu.arch)
  -- the chosen batch's mean ITL (itl_load, the limit's measure) and its
  -- TTFT (one replica at that batch, as gp.infer_plan's ttft_s)
  local k = {}
  for key, v in pairs(a) do k[key] = v end
  k.gpus, k.batch, k.concurrency = c.tp * c.pp, b, nil
  local okr, r = pcall(M.infer, k)
  if okr and r.fits then r.ttft_s = M.plan_ttft(r) end
  if ttft_limit and okr and r.fits and r.ttft_s > ttft_limit then
    error(string.format("infer: no replica meets TTFT %.3g ms (%s: one prompt's prefill takes %.3g ms)",
      ttft_limit * 1e3, M.replica_layout(c.tp, c.pp), r.ttft_s * 1e3), 2)
  end
  return { gpus = g, batch = b, tokens_per_s = tps, currency = info.currency,
           tp = c.tp, pp = c.pp,
           itl_s = okr and r.fits and r.itl_load_s or nil,
           ttft_s = okr and r.fits and r.ttft_s or nil,
           cost_per_mtok = c.price and tps > 0 and core().cost_per_mtok(c.price, g, tps) or nil,
           defaults = info.defaults }
end

-- The TTFT a target's ttft_max bounds and its plan reports, of gp.infer's
-- result r: one prompt's prefill (what the replica's layout sets, whatever
-- the batch).  At a batch in flight gp.infer's ttft_s is the loaded TTFT
-- (engine/infer_run.c loaded_ttft), one prompt's kept as ttft_one_s.  The
-- one rule for M.gpus_for (`infer --target`) and gp.infer_plan's TP
-- replicas (serve.lua).
function M.plan_ttft(r)
  return r.ttft_loaded and r.ttft_one_s or r.ttft_s
end

-- A TP replica's name in a target's table: "TP4", "TP8 PP2" (the CLI's
-- and gp.infer_plan's layout alike).
function M.replica_layout(tp, pp)
  tp, pp = tp or 1, pp or 1
  return string.format("TP%d%s", tp, pp > 1 and string.format(" PP%d", pp) or "")
end

-- The TP sizes a target's replica search tries when the caller fixes
-- neither tp nor pp: every power of two from one GPU up to the node's
-- scale-up domain (tp_node; 8 when the card names none), and the domain
-- itself where it is no power of two.  Past it a replica needs pp
-- (M.tp_beyond_node), which the caller gives.
function M.target_tps(a)
  local _, _, _, info = M.setup(a)
  local _, per = tp_node(info.gpu, info.system)
  per = per or 8
  local tps, t = {}, 1
  while t <= per do tps[#tps + 1] = t; t = t * 2 end
  if tps[#tps] ~= per then tps[#tps + 1] = per end
  return tps
end

-- Job a at the target search's TP size t (M.replicas_for, and the CLI's
-- probe of the largest): a copy with tp = t.  cuda_graphs = true is the
-- caller's word for a one-GPU replica; at a size of the search's own
-- choosing past one GPU it is dropped, so the size is priced as the
-- engine prices a split, without the graph (engine/infer.c infer_step),
-- not refused by M.setup for a --tp the caller never gave ("--cuda-graphs
-- with --tp 8" answered `infer --target 500 --cuda-graphs`).
function M.at_search_tp(a, t)
  local x = {}
  for k, v in pairs(a) do x[k] = v end
  x.tp = t
  if t > 1 and x.cuda_graphs == true then x.cuda_graphs = nil end
  return x
end

-- The one search for a target served by plain TP replicas (a dense
-- model, or a MoE model as TP replicas), which `infer --target` and
-- gp.infer_plan both call: with tp or pp given, that replica's count
-- (M.gpus_for); without, each of M.target_tps's sizes, keeping the fewest
-- GPUs, then the most tokens/s (the MoE layout search's order,
-- engine/serve_plan.c serve_target).  A larger TP splits the weights
-- over more GPUs, leaving each more room for KV (a larger batch) and
-- a shorter step, at the price of its all-reduces: which wins is the
-- model's to say.  Llama 3 70B on h200-sxm at 20000 tok/s answered "does
-- not fit" at TP1, where TP2 replicas take 78 GPUs and TP4 72.  Returns
-- gpus_for's table (its tp and pp the replica's); when no size serves
-- the target, the largest size's refusal (the most memory and the
-- shortest step a replica of one node has).  ttft_limit (s, or nil):
-- each size's TTFT within it (M.gpus_for); where it refuses every size
-- that meets the rest, the refusal is the size whose prompt's prefill
-- is the quickest, with its TTFT.
function M.replicas_for(a, target, itl_limit, ttft_limit)
  static_refused(a, "the target search", 2)
  if a.tp ~= nil or a.pp ~= nil then return M.gpus_for(a, target, itl_limit, ttft_limit) end
  local best, err, terr, tbest
  for _, t in ipairs(M.target_tps(a)) do
    local x = M.at_search_tp(a, t)
    local ok, g = pcall(M.gpus_for, x, target, itl_limit, ttft_limit)
    local took = not ok and tonumber(tostring(g):match("no replica meets TTFT .- takes (%S+) ms%)$"))
    if took and (not tbest or took < tbest) then terr, tbest = g, took end
    if ok then
      if not best or g.gpus < best.gpus or
         (g.gpus == best.gpus and g.tokens_per_s > best.tokens_per_s) then
        best = g
      end
    else
      err = g
    end
  end
  if terr then
    terr = tostring(terr):gsub("%((TP%d+): one prompt", "(%1, the quickest of the sizes tried: one prompt", 1)
  end
  if not best then error(terr or err, 0) end
  return best
end

-- A misuse found anywhere inside names the caller's line (gpuplan.args).
return require("gpuplan.args").api_module(M)
