-- gpuplan.serve: serving a mixture-of-experts model across many GPUs --
-- expert parallelism, data-parallel attention, two-batch overlap,
-- prefill/decode disaggregation and MTP speculative decoding (engine/serve.h).
-- gp.infer{...} comes here when an argument below asks for it; the names are
-- gp.infer's and the CLI's (`--ep 16 --dp-attention ...`).
--
--   local gp = require "gpuplan"
--   local r = gp.infer{ model = "deepseek-v3", gpu = "h20", gpus = 16, ep = 16,
--                       dp_attention = true, weights = "fp8", input = 4096,
--                       output = 1536, mtp = 1, itl_max = "50ms" }
--   print(r.batch, r.itl_s, r.per_gpu, r.memory.experts / 1e9, r.dispatch_ms)
--   local p = gp.infer_plan{ model = "deepseek-v3", gpu = "h800-sxm", target = 1e5,
--                            itl_max = "50ms", weights = "fp8", input = 4096,
--                            output = 1536, price = "$2/h" }
--   print(p.gpus, p.layout, p.prefill_layout, p.cost_per_mtok)
--
-- Arguments (besides gp.infer's model, gpu, gpus, weights, kv, kv_policy,
-- batch, input, output, runtime, memory, system, price, max_batch; its
-- chunked_prefill and max_num_tokens are refused: prefill_tokens chunks
-- the prompts here):
--   tp          GPUs of one instance (default: ep, else all GPUs)
--   ep          experts split over the instance (= tp), 1 (experts sliced by
--               TP, the default), or a divisor of tp with TP attention: ep
--               groups of tp / ep GPUs, each group's experts sliced over its
--               GPUs (TensorRT-LLM's --tp 8 --ep 4: the experts' TP 2)
--   dp_attention  attention, dense layers, shared experts and embeddings whole
--               on every GPU, each with its own requests' KV (default false:
--               tensor parallel over the instance)
--   two_batch_overlap  two micro-batches hide the all-to-all (default with
--               ep > 1: on, as DeepSeek's and SGLang's large-EP deployments,
--               unless one micro-batch delivers more tokens/s per GPU; with
--               disagg each pool's own)
--   redundant_experts  extra expert slots (EPLB replicas; default: the runtimes'
--               none -- SGLang's --ep-num-redundant-experts 0, vLLM's
--               num_redundant_experts 0, TensorRT-LLM without a load balancer --
--               or, where ep does not divide the experts, the fewest that give
--               every GPU whole slots, as SGLang needs to start; DeepSeek's 32
--               are its own deployment's, given here)
--   eplb        an EPLB placement (default false, as SGLang, vLLM and
--               TensorRT-LLM ship: experts in order)
--   imbalance   hottest GPU's routed tokens / the mean (default with ep > 1:
--               modelled per step from the placement's spread and the step's
--               chance, hottest of N: with eplb 1 + z_N sqrt(0.04236^2 + 1 /
--               (tokens x top_k)), 1.11 at 128 tokens a GPU over EP36;
--               without, model_ep_skew_at, 2.56 at EP32 of 8 experts and
--               1024 picks a GPU, as TensorRT-LLM tech blog 4 measures them;
--               runtime = sglang with eplb: 1 + sqrt(e_N^2 + z_N^2 / (tokens x
--               top_k)), e_N the LMSYS large-scale EP blog's balancedness
--               figure for SGLang's placement, 0.25 at EP32, 0.11 at EP16)
--   a2a         deepep (low-latency decode, normal prefill kernels; default) |
--               nccl | none (no exchange: TP attention, the MoE output
--               all-reduced; runtime sglang's default with TP attention)
--   expert_weights  the routed experts' weight format (default weights: one
--               format for every linear); fp4 experts dispatch in NVFP4
--   single_batch_overlap  decode without two-batch overlap: the combine on its
--               own SMs beside the shared experts and the down GEMM (default false)
--   swap_ab     the decode's routed-expert fp8 GEMM on 32-row token blocks (default false
--               on Hopper: DeepGEMM's 64-row M tiles up to 64 tokens)
--   disagg      separate prefill and decode pools (default false)
--   prefill_gpus, prefill_tp, prefill_ep, prefill_dp_attention   the prefill
--               pool (default: the balancing split; the decode pool's layout)
--   prefill_tokens  prompt tokens per attention group per prefill step (the
--               runtime's step budget, gpuplan.infer M.step_budget: vLLM's
--               max_num_batched_tokens, SGLang's chunked_prefill_size by
--               the card; else 16384)
--   mtp         MTP draft tokens per step (the model's mtp_layers module);
--               with SGLang's engine (or none named) and no batch,
--               concurrency or max_batch given, at most M.SPEC_RUNNING
--               requests an instance (SGLang's max_running_requests under
--               speculation); the result's no_mtp prices the same server
--               without drafts
--   acceptance  probability a draft is accepted, every draft alike (default:
--               the first 0.85, DeepSeek-V3 sec. 5.4.3, 85-90% for the second
--               token; each deeper one at M.ACCEPT_DECAY of the rate before)
--   itl_max     with no batch: the largest batch per GPU within it (s or "50ms")
--   nics, nic_fabric  override the node's NICs (count, fabric id)
-- batch is per GPU here (SGLang's and Ant Group's "batch size per GPU").
--
-- Result: gp.infer's fields where they apply (fits, why, batch -- per replica:
-- a decode instance of tp GPUs, batch_per_gpu x tp --, ttft_s, itl_s,
-- tokens_per_s, per_gpu, stream_tokens_per_s, cost_per_mtok, weights_gpu,
-- kv_per_seq, kv_budget, max_batch_kv -- per replica too, the most batch can
-- be --, ops, prefill_ops, defaults) and moe = true, batch_per_gpu (the batch
-- argument's meaning), max_batch_kv_per_gpu (its most), tp, ep, dp_attention,
-- two_batch_overlap, disagg, instances, memory
-- {attention, dense, shared, experts, embed, other, mtp, weights, a2a_buffer,
-- workspace, reserve (the fixed reserve: CUDA context, library workspaces,
-- NCCL buffers; engine/serve.c fixed_reserve), expert_slots, kv_budget}, tpot_s, accept, dispatch_ms / combine_ms (one MoE
-- layer, one micro-batch), a2a_ms / a2a_exposed_ms / tp_comm_ms / compute_ms /
-- step_ms (a decode step), decode_gpus, prefill_gpus, decode_per_gpu (output
-- tok/s per decode GPU), prefill_per_gpu (prompt tok/s per prefill GPU),
-- pool_ratio, kv_transfer_s, input_tokens_per_s, coloc {fits, per_gpu, itl_s,
-- batch, batch_per_gpu} (disagg: the same GPUs colocated), no_mtp {fits,
-- tokens_per_s, per_gpu, itl_s, batch_per_gpu} (mtp: the same server
-- without speculation).

local units = require "gpuplan.units"
local args = require "gpuplan.args"
local shown = args.shown

local M = {}

local function core() return require "gpuplan.core" end
local function catalog(cat) return cat or require("gpuplan").catalog() end
local function fail(fmt, ...) error(string.format(fmt, ...), 4) end
-- A usage refusal (gpuplan.args usage): options that do not go together,
-- whatever the model and the card; the command line exits 2 on it.
local function usage(fmt, ...) error(args.usage(string.format(fmt, ...)), 4) end

-- A latency bound (itl_max, ttft_max) read as seconds: a time with its
-- unit ("50ms"), or a bare number of seconds under 1.  A bare number of 1
-- or more is refused, not read: the command line's --itl-max and
-- --ttft-max take bare milliseconds, so the 50 of `--itl-max 50` copied
-- into a script read 50 s and planned a deployment at 75 ms ITL where
-- 50 ms was meant, with no word said.  An infinite one is no number of
-- either unit (it offered "infms"): the range check below refuses it.
-- Second result: the message.
local function limit_s(k, v)
  if type(v) == "number" and v >= 1 and v < math.huge then
    return nil, string.format("%s = %s: a bare number is seconds here, where the command "
      .. "line's --%s reads milliseconds; from a second up write the unit: \"%sms\" or "
      .. "\"%ss\"", k, shown(v), k:gsub("_", "-"), shown(v), shown(v))
  end
  return require("gpuplan.options").quantity(k, v)
end

-- The arguments that only the MoE serving model reads; any of them sends
-- gp.infer here.
-- gp.infer arguments, declared (serve = true) in gpuplan.options.
-- SGLang's host work per speculative decode step, serial with the GPU.
-- SGLang runs its scheduler one batch ahead of the GPU (v0.4 "zero-
-- overhead batch scheduler": "we can overlap the CPU scheduling with the
-- GPU computation"), but not while it speculates: server_args.py sets
-- disable_overlap_schedule = True for EAGLE, NEXTN (DeepSeek's MTP,
-- "NEXTN shares the same implementation of EAGLE") and EAGLE3, warning
-- "Overlap scheduler is disabled because of using eagle speculative
-- decoding" (v0.4-v0.5.2; later releases keep it unless
-- SGLANG_ENABLE_SPEC_V2 is set).  Each step the EAGLE worker then waits
-- for the GPU (eagle_worker.py _draft_preprocess_decode: seq_lens_sum =
-- torch.sum(batch.seq_lens).item(); the verify's accepted tokens read
-- back) before it schedules, allocates the drafts' KV slots, builds the
-- tree and the forward batches of the draft, verify and draft-extend
-- passes (each one CUDA-graph replay: the draft steps run inside one
-- graph, so this part does not grow with the drafts).  What overlapping
-- it saves, measured at batch 1 (sgl-project/sglang PR 11398, Llama-3.1-8B
-- with EAGLE, 5 steps, topk 1, 6 draft tokens, send_one): 246.80 tok/s at
-- an accept length of 2.99 without the overlap, 273.43 at 3.01 with it:
-- 2.99 / 246.80 - 3.01 / 273.43 = 1.107 ms a step.  A lower bound for a
-- DP-attention deployment, whose scheduler also gathers every rank's
-- batch each step; a part per request is not in this measurement.
M.SPEC_HOST = 2.99 / 246.80 - 3.01 / 273.43
-- The same serial host work in a DP-attention deployment, measured there:
-- each step every rank's scheduler also syncs its batch with the other
-- ranks of the group (scheduler.py prepare_mlp_sync_batch, a gather over
-- the DP ranks) before the step can launch.  Eigen AI's A/B on SGLang
-- v0.4 (LMSYS blog 2025-07-17, "Accelerating SGLang with Multiple Token
-- Prediction", Case Study 1: DeepSeek-V3 decode on 16 H200 over two
-- nodes, 2 requests a rank, 64K in / 4K out): "no MTP and no overlap
-- scheduling ... 51 tokens/sec per rank", "overlap scheduling alone ...
-- 60.4 tokens/sec per rank", the same GPU work either way: 2 / 51.0 -
-- 2 / 60.4 = 6.10 ms a step the overlap hides.  A speculative step, which
-- runs without the overlap, pays at least that.
M.SPEC_HOST_DP = 2 / 51.0 - 2 / 60.4

-- SGLang's running requests while it speculates.  server_args.py
-- (_handle_speculative_decoding; v0.4 to v0.5.x) sets, for EAGLE, EAGLE3
-- and NEXTN (DeepSeek's MTP, run as EAGLE) alike: "if
-- self.max_running_requests is None: self.max_running_requests = 48",
-- warning "Max running requests is reset to 48 for speculative decoding.
-- You can override this by explicitly setting --max-running-requests."
-- The scheduler then admits at most that many (scheduler.py:
-- "server_args.max_running_requests // (server_args.dp_size if
-- server_args.enable_dp_attention else 1)" a DP rank), and captures its
-- CUDA graphs no larger (cuda_graph_runner.py get_batch_sizes_to_capture:
-- "bs <= server_args.max_running_requests // server_args.dp_size").
-- Without speculation the same server runs as many as its KV holds
-- (max_total_num_tokens // 2).  So a burst or a throughput run that
-- would decode hundreds of sequences at once decodes 48 an instance
-- with MTP on: gpustack's DeepSeek-R1 on 8 H200 (SGLang v0.5.3, 1000
-- ShareGPT prompts at once, no --max-running-requests) gave 3253 tok/s
-- without and 1060 with one MTP draft.  A batch, concurrency or max_batch
-- the user gives is the user's --max-running-requests.
M.SPEC_RUNNING = 48

-- Drafts past the first, by default: DeepSeek-V3/R1 ship one MTP module,
-- and the engines draft deeper by applying it again to its own output
-- (TensorRT-LLM's "MTP Eagle", its default for DeepSeek: it "reuses the
-- same MTP module and repeats multiple times to predict draft tokens",
-- tech blog 2; SGLang's NEXTN is its EAGLE worker), a depth the module
-- was not trained for, so each deeper draft is kept less often than the
-- one before.  TensorRT-LLM measured the tokens a step yields on
-- DeepSeek-R1 (8 B200, ISL 1K / OSL 2K, strict top-1; tech blog 1,
-- "Autoregressive MTP Layers"): 1.92, 2.58, 2.82, 2.99, 3.01 for 1 to 5
-- drafts -- 1.85, 2.57, 3.19, 3.71, 4.15 if every draft were kept at one
-- rate a.  A first draft kept at a and draft k, given the ones before,
-- at a r^(k-1) (serve_accept_length) fits all five within 1.5% at
-- a = 0.925, r = 0.73.  The default keeps DeepSeek's a = 0.85 for the
-- first draft (datasets differ) and takes r from that fit.  SGLang's
-- gains agree: Eigen AI's 64K runs (LMSYS blog 2025-07-17) gain 2.44 /
-- 2.18 = 1.12x from a third draft, 1.11x here, 1.24x at one rate.  An
-- acceptance given applies to every draft alike (r = 1).
M.ACCEPT_DECAY = 0.73

-- The archs where vLLM runs MXFP4 routed experts as W4A16 (serve.lua
-- setup_experts): Hopper, where its MXFP4 oracle picks triton_kernels'
-- matmul_ogs (Marlin after it), both 16-bit multiplies.  Blackwell takes
-- FlashInfer's TRT-LLM MXFP4 kernel first, Ampere Marlin (already 16-bit:
-- no FP8 there).  CDNA3 (MI300X/MI325X, gfx942: FP8 but no FP4 units) as
-- Hopper: vLLM's get_mxfp4_backend on ROCm is "elif
-- current_platform.is_rocm() and has_triton_kernels(): ... return
-- Mxfp4Backend.TRITON" (vllm-project/vllm
-- model_executor/layers/quantization/mxfp4.py), OAITritonExperts, whose
-- quant config is mxfp4_w4a16; the later oracle (fused_moe/oracle/
-- mxfp4.py) puts AITER's CK experts before TRITON, and
-- make_mxfp4_moe_quant_config gives CK mxfp4_w4a16 as well (AITER's
-- "a16w4" kernels, shuffle_weight_a16w4).  Either multiplies in bf16,
-- where the engine priced the card's FP8 (W4A8, infer_compute_dtype).
M.VLLM_MXFP4_W4A16 = { hopper = true, cdna3 = true }

-- The M tile (rows of an expert a block covers) of vLLM's Triton MXFP4
-- experts where it is not the roofline's 16-row edge (engine
-- serve_cfg.moe_m_tile): triton_kernels' AMD opt flags,
-- make_default_opt_flags_amd (triton-lang/triton python/triton_kernels/
-- triton_kernels/matmul_ogs_details/opt_flags.py), "block_m =
-- max(32, min(triton.next_power_of_2(tokens_per_expt), 64))" below 512
-- tokens an expert (128 from there with n >= 2048, the CDNA4 tuned
-- configs apart): every touched expert pays at least 32 rows.  NVIDIA's
-- opt flags start at "max(16, ...)", the roofline's edge already.  The
-- roofline runs an op's own tile under 64 rows as 32 x 256 blocks over
-- the whole K in waves over the device's CUs (roofline.c deepgemm_eff),
-- which is matmul_ogs' CDNA3 shape at a serving grid: opt_flags_amd.py
-- compute_block_nk "block_n = max(32, min(256, triton.next_power_of_2(
-- grid_m * n * num_xcds // n_cu)))", 256 once the touched experts' blocks
-- fill the 304 CUs, and "split_k = max(1, n_cu // grid_size)", 1 there.
-- Below a full grid (a few experts, batch 1) matmul_ogs splits K, which
-- this does not price.
M.VLLM_MXFP4_M_TILE = { cdna3 = 32 }

-- The vector work matmul_ogs spends widening each MXFP4 weight to bf16
-- where the card has no FP4 MFMA (serve_cfg.moe_upcast, roof_op.dequant:
-- FLOP at the fp32 vector peak per weight, again in each M block of an
-- expert).  triton_kernels calls "tl.dot_scaled(x, x_scales, x_format,
-- w, w_scales, mx_format, acc=acc, fast_math=True)" in its mainloop
-- (matmul_ogs_details/_matmul_ogs.py), which Triton's AMD backend
-- lowers on gfx942 as an upcast in the dot operand's registers
-- (third_party/amd/lib/TritonAMDGPUToLLVM/UpcastMXFPToLLVM.cpp, each
-- program its own tile): upcast8xMxfp4 turns 8 packed E2M1 values into
-- 8 bf16 with 20 32-bit ops (the index and sign masks and shifts, 6;
-- per half the two llvm.amdgcn.perm lookups, the sign or and the two
-- perms that pair the bytes, 5 + 5; the four reordering perms, 4): 2.5
-- an element; then mxfpScaleBf16ViaF32 ("In gfx9 architectures, we
-- don't have bf16 VALU ops. So instead this function handles v * scale
-- multiplication using fp32 VALU ops"): the bf16 shifted into an fp32
-- (1), the fp32 multiply by the scale (1), the result's high half
-- taken back and paired with its neighbour (1 a pair): 2.5 an element,
-- fast_math dropping the NaN select.  5 lane ops an element, none a
-- packed or fused one, where the catalog's fp32 vector peak (MI300X
-- 163.4 TFLOPS = 304 CUs x 2.1 GHz x 256) counts 4 FLOP a lane a clock
-- (the FMA's 2, packed fp32's 2 lanes): 5 x 4 = 20.  Beside the MFMAs
-- as any dequantising GEMM's (roofline.c: fmax), not added to them.
M.VLLM_MXFP4_UPCAST = { cdna3 = 20 }

-- vLLM pads the MXFP4 experts' widths on ROCm (serve_cfg.moe_pad): its
-- Mxfp4MoEMethod.create_weights, "elif current_platform.is_rocm():
-- pad_align = get_padding_alignment(); intermediate_size_per_partition_
-- after_pad = round_up(intermediate_size_per_partition, pad_align);
-- hidden_size = round_up(hidden_size, pad_align)", and mxfp4_utils
-- "def get_padding_alignment(): return (256 if triton.runtime.driver.
-- active.get_current_target().arch in ("gfx950",) else 128)"
-- (vllm-project/vllm model_executor/layers/quantization/mxfp4.py and
-- quantization/utils/mxfp4_utils.py; the later fused_moe/oracle/mxfp4.py
-- mxfp4_round_up_hidden_size_and_intermediate_size keeps the same branch,
-- 256 for every ROCm card at 001eda31).  gfx942: 128, so gpt-oss's 2880
-- becomes 2944 in both widths, the experts' matrices 4.5% larger.
M.VLLM_MXFP4_PAD = { cdna3 = 128 }

-- SGLang's MXFP4 experts on Blackwell: its server runs gpt-oss's MoE on
-- FlashInfer's TRT-LLM MXFP4 kernel there ("if is_blackwell_supported()
-- and is_mxfp4_quant_format: self.moe_runner_backend =
-- "flashinfer_mxfp4"", python/sglang/srt/server_args.py, the
-- GptOssForCausalLM branch; "if is_sm100_supported() and
-- is_mxfp4_quant_format" in an earlier copy), and Mxfp4MoEMethod's
-- create_weights pads the widths for it: "if _is_sm100_supported: if
-- self.use_flashinfer: intermediate_size_per_partition_after_pad =
-- round_up(intermediate_size_per_partition, 256); hidden_size =
-- round_up(hidden_size, 256)" (python/sglang/srt/layers/quantization/
-- mxfp4.py).  The intermediate is padded after the TP split: gpt-oss's
-- 2880 over TP 8 is 360 a GPU, 512 padded (42% more expert weight read
-- and multiplied), over TP 4 720 -> 768; the hidden 2880 -> 3072 (6.7%).
-- serve_cfg.moe_pad, which pads the GPU's slice (serve_step.c
-- moe_routed), as for vLLM's ROCm padding above.  Keyed on the arch: the
-- catalog carries no compute capability, so a consumer Blackwell (the
-- RTX 5090, sm120, where _is_sm100_supported is false) is not told apart
-- and takes the padding too (as train.lua's fused_grouped_mlp check).
M.SGLANG_MXFP4_PAD = { blackwell = 256 }

-- The small kernels vLLM's Triton MXFP4 experts launch a layer to turn
-- the top-k into triton_kernels' routing data, beyond the top-k itself
-- (engine serve_cfg.moe_route_kernels), counted in its
-- gpt_oss_triton_kernels_moe.py make_routing_data (vllm-project/vllm
-- 9b243f93 and the later monolithic path that calls it): "topk_ids =
-- topk_ids.to(torch.int16)" (1), "bitmatrix = torch.zeros(...)" (1),
-- "pack_bitmatrix[grid](...)" (1), "topk_weights = torch.where(topk_ids
-- == -1, -1.0, topk_weights)" (the comparison and the select: 2); its
-- SparseMatrix's bitmatrix metadata in triton_kernels
-- (tensor_details/bitmatrix_details/sum_bitmatrix_rows.py: "out =
-- torch.zeros(...)" and "_sum_bitmatrix_rows[(grid_m, grid_n)]": 2; the
-- metadata's "_bitmatrix_metadata_compute_stage1" and its second stage:
-- 2); "make_ragged_tensor_metadata" (tensor_details/ragged_tensor.py:
-- "_ragged_tensor_metadata_memset" and "_ragged_tensor_metadata_compute":
-- 2); "gate_scal = sparse_logits.vals.flatten()[combine_indx]" (1).
-- Twelve; each priced as a row op over the tokens' k ids and weights,
-- as the top-k is.  The SwiGLU is matmul_ogs' FusedActivation
-- ("FnSpecs("swiglu", triton_kernels.swiglu.swiglu_fn, ...)" on the
-- first matmul_ogs): no activation kernel of its own.
M.VLLM_MXFP4_ROUTE_KERNELS = 12

-- The MoE serving model prices a grouped-top-k router (DeepSeek's) as one
-- kernel (serve_step.c moe_topk), SGLang's moe_fused_gate from 0.4.6
-- (sglang PR #5371: "Only one kernel now. 36us->8us."; gpuplan.infer
-- M.fused_grouped_topk).  Before it, SGLang ran the torch.compile'd
-- biased_grouped_topk_impl, the native path's 9 kernels a MoE layer
-- (engine/infer.c MOE_GROUPED_TOPK_KERNELS): with fused_grouped_topk =
-- false the 8 beyond moe_topk are priced as routing-metadata rows
-- (serve_cfg.moe_route_kernels), each a launch and a row op's memory
-- floor over the tokens' k ids and weights.
M.NATIVE_GROUPED_TOPK_EXTRA = 8

M.ARGS = table.concat(require("gpuplan.options").serve_keys(), " ")
local ONLY = args.set(M.ARGS)

-- Does gp.infer{a} ask for the MoE serving model?  Any of its arguments,
-- other than a plain ep = 1 / false flag: true and the first such
-- argument (by name, so a refusal names the same one every run), or false.
function M.wants(a)
  local keys = {}
  for k in pairs(ONLY) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local v = a[k]
    -- two_batch_overlap = false is a choice too (--no-two-batch-overlap),
    -- which the serving model checks.
    if v ~= nil and (v ~= false or k == "two_batch_overlap") and not (k == "ep" and v == 1) then
      return true, k
    end
  end
  return false
end

-- A whole-number argument (a tail call: errors keep the caller's level).
local function int_of(a, k, lo) return args.int_field(a, k, lo, "infer") end

local function bool_of(a, k)
  if a[k] ~= nil and type(a[k]) ~= "boolean" then
    fail("infer: %s must be a boolean (got %s)", k, type(a[k]))
  end
  return a[k]
end

-- What the defaults line says of the experts' placement with expert
-- parallelism: EPLB off unless given, as the runtimes ship it (SGLang's
-- enable_eplb False with init_expert_location "trivial", vLLM's
-- enable_eplb False, TensorRT-LLM's moe_config.load_balancer None), and
-- the imbalance modelled from that placement (gp.infer and gp.infer_plan's
-- search alike).
local function say_placement(default, eplb, runtime)
  if eplb == nil then
    default("eplb=false (the runtimes' default: SGLang's and vLLM's enable_eplb False, "
      .. "TensorRT-LLM without a load_balancer)")
  end
  -- said in words: --imbalance takes a number (the hottest GPU's share
  -- over the mean), and "imbalance=auto" named a value it refuses
  -- ("option '--imbalance' expects a number, got 'auto'")
  default("imbalance: per step (" .. (eplb and (runtime == "sglang"
      and "SGLang's EPLB placement spread at the EP width, the LMSYS large-scale EP blog's"
      or "EPLB's placement spread, TensorRT-LLM's measurement")
    or "the spread of experts in order, TensorRT-LLM's no-EPLB measurement")
    .. " and the step's chance)")
end

local function num_of(a, k, lo, hi)
  local v = a[k]
  if v == nil then return nil end
  if type(v) ~= "number" or v ~= v or v < lo or v > hi then
    fail("infer: %s must be a number in [%g, %g] (got %s)", k, lo, hi, shown(v))
  end
  return v
end

-- The node the instances run on: the catalog system (given, or
-- gpuplan.train.default_node's), its NICs overridable.  A flat topology table.
local function node_of(a, g, cat, default, span)
  local comm = require "gpuplan.comm"
  local sys
  if a.system ~= nil then
    sys = type(a.system) == "table" and a.system or cat:get("systems", a.system)
  else
    -- gpuplan.train.default_node's rule: a shipped card's shipped system.
    local note
    sys, _, note = require("gpuplan.train").default_node(g, cat)
    if sys or note then
      default((sys and "system=" .. sys.id or "no system") .. (note and " (" .. note .. ")" or ""))
    end
  end
  if a.nic_fabric ~= nil and type(a.nic_fabric) ~= "string" then
    fail("infer: nic_fabric must be a fabric id (got %s)", shown(a.nic_fabric))
  end
  local spec = comm.node_spec(sys, g, default, "infer",
                              { nics = int_of(a, "nics", 0), nic_fabric = a.nic_fabric })
  -- An instance (span: its largest pool's TP, which its EP group fills)
  -- past one node of a node without NICs is refused here, naming the node
  -- and what to give, as train's is; the engine's own refusal ("decode tp
  -- 16 spans 2 nodes, but the system has no NICs") named neither.
  local bad = span and comm.no_nics(spec, span, "infer", cat)
  if bad then fail("%s", bad) end
  -- Disaggregation's KV moves between pools over the NICs (engine/serve.c
  -- refuses a node without: "the system has none", naming neither it nor
  -- what to give).
  if a.disagg and (spec.nics or 0) <= 0 then
    local fabs = {}
    for _, id in ipairs(cat:ids("fabrics")) do
      if cat.fabrics[id].scope == "scaleout" then fabs[#fabs + 1] = id end
    end
    fail("infer: disaggregation moves the KV cache between pools over the NICs, but %s has no "
      .. "NICs: give nics = N and nic_fabric = ID (scale-out fabrics: %s), or a system with NICs",
      spec.name, table.concat(fabs, ", "))
  end
  local t = comm.from_fabrics(spec, cat)
  t.nic_path_bw = require("gpuplan.train").pcie_bw(g) or nil
  return t
end

-- "EP16, DP attention, two-batch overlap" / "TP8"; sbo: the decode's
-- single-batch overlap, which applies where two-batch overlap does not.
function M.layout_name(p, sbo)
  if not p or not p.tp then return "-" end
  local s
  if p.ep and p.ep > 1 and p.ep < p.tp and not p.dp_attention then
    s = string.format("TP%d, experts EP%d x TP%d", p.tp, p.ep, p.tp // p.ep)
  elseif p.ep and p.ep > 1 then
    s = string.format("EP%d, %s attention", p.ep,
                      p.dp_attention and "DP" or ("TP" .. p.tp))
    if p.tbo then
      s = s .. ", two-batch overlap"
    elseif sbo then
      s = s .. ", single-batch overlap"
    end
  else
    s = string.format("TP%d%s", p.tp, p.dp_attention and ", DP attention" or "")
  end
  return s
end

-- What the defaults line says of the FA3 attention the MoE serving model
-- prices on Hopper, by runtime: the kernel each runs (SGLang: its FA3
-- backend, above; vLLM: "fa_version = 3 if (device_capability.major == 9
-- and is_fa_version_supported(3)) else 2", vllm/attention/utils/
-- fa_utils.py get_flash_attn_version, and FlashMLA for an MLA decode,
-- within 1% of FA3's rate as above; TensorRT-LLM: its own kernels, which
-- are priced at FA3's measured rate).  The line said "SGLang's default
-- backend" under every runtime.
M.FA3_SAID = {
  sglang = "SGLang's default backend on Hopper",
  vllm = "vLLM's FlashAttention 3 on Hopper, and FlashMLA at its rate for an MLA decode",
  trtllm = "TensorRT-LLM's own attention kernels on Hopper, at FA3's measured rate",
}

-- The end of M.setup (tail-called in turn): EPLB's imbalance and slots,
-- the ITL limit, and the engine's serve config from L (what M.setup and
-- setup_kernels resolved).
local function setup_config(a, model, d, c, info, cat, default, L)
  local ep, dp, disagg, tp, tbo, tbo_auto, tbo_at = L.ep, L.dp, L.disagg, L.tp, L.tbo,
    L.tbo_auto, L.tbo_at
  local ptp, pep, pdp, pg, gpus, a2a, mtp, acc = L.ptp, L.pep, L.pdp, L.pg, L.gpus, L.a2a,
    L.mtp, L.acc
  -- tp follows ep (the experts over the whole instance): the engine's
  -- refusals of that tp (serve.c) named a tp the caller never gave
  -- ("--tp 3 does not divide the 128 attention heads" for ep 3), so
  -- they are said here of ep.
  if L.tp_of_ep and model.moe and (model.moe.experts or 0) > 0 then
    local n = not disagg and int_of(a, "gpus", 1)
    if n and n % ep ~= 0 then
      usage("infer: gpus %d is not a multiple of ep %d, the instance's GPUs (without tp, "
        .. "the experts' split sets the instance)", n, ep)
    end
    -- the engine's rule (engine/layout.h layout_heads_tp_ok), worded here
    local h, kv = model.heads, model.kv_heads or model.heads
    if not dp and h and not core().heads_tp_ok(h, kv, ep) then
      fail("infer: ep %d without tp runs attention TP over the instance's %d GPUs, and %d "
        .. "must divide the %d attention heads%s: give dp_attention, or tp with ep dividing "
        .. "it", ep, ep, ep, h, h % ep == 0 and string.format(" and divide or be a multiple "
        .. "of the %d kv heads", kv) or "")
    end
  end
  local m_tile, m_tile_grouped, ew = L.m_tile, L.m_tile_grouped, L.ew
  local expert_bits, expert_compute, dispatch_bytes = L.expert_bits, L.expert_compute,
    L.dispatch_bytes
  local sbo, bw, sbo_down = L.sbo, L.bw, L.sbo_down
  -- the Triton fused MoE's fp8 cap, or TensorRT-LLM's CUTLASS NVFP4
  -- fused MoE's fp4 one, which the engine applies where EP does not shard
  -- the experts (serve_step.c: ep 1), said as gp.infer's (it prices both
  -- on the same expert GEMMs at any layout: infer.c)
  local inf = require "gpuplan.infer"
  local moe_fp8_x = inf.moe_fp8_bf16_x_of(a.runtime, info.gpu.arch, info.weights, d)
  local moe_fp4_x = not moe_fp8_x and inf.moe_fp4_bf16_x_of(a.runtime, info.gpu.arch,
    info.weights) or nil
  if ep == 1 or (disagg and pep == 1) then
    local said = moe_fp4_x and inf.moe_fp4_said(moe_fp4_x, model) or
      inf.moe_fp8_said(a.runtime, moe_fp8_x, d, model)
    if said then default(said) end
  end
  local imb = num_of(a, "imbalance", 1, 64)
  local eplb = bool_of(a, "eplb")
  if imb == nil then
    -- 0: the engine models it per step (SERVE_IMBALANCE_AUTO) wherever
    -- the experts are split whole (without EP it prices none), so that
    -- gp.infer_plan's search prices its EP layouts with it too
    imb = (model.moe and model.moe.experts or 0) > 0 and 0 or 1
    if ep > 1 or (disagg and pep > 1) then say_placement(default, eplb, a.runtime) end
  end
  local red = int_of(a, "redundant_experts", 0)
  if red == nil and (ep > 1 or (disagg and pep > 1)) then
    -- the engine's serve_redundant (SERVE_REDUNDANT_AUTO), said with its
    -- count: none, as SGLang, vLLM and TensorRT-LLM ship, or where ep does
    -- not divide the experts the fewest slots that fill every GPU alike
    -- (SGLang asserts (experts + redundant) % ep == 0)
    local E = model.moe and model.moe.experts or 0
    local function slots(e, t)
      if not (e and t) then return 0 end
      return core().serve_redundant(E, e, t)
    end
    local n, pn = slots(ep, tp), disagg and slots(pep, ptp) or nil
    local said = (pn and pn ~= n) and string.format("%d decode, %d prefill", n, pn)
      or string.format("%d", n)
    default("redundant_experts=" .. said .. " (the runtimes' default: SGLang's, vLLM's, "
      .. "TensorRT-LLM's 0; where ep does not divide the experts, the fewest for whole "
      .. "slots per GPU)")
  end
  -- a duration with its unit ("50ms") as seconds; a number as it is
  local itl, msg = limit_s("itl_max", a.itl_max)
  if msg then fail("infer: %s", msg) end
  if itl ~= nil and (type(itl) ~= "number" or itl ~= itl or itl <= 0 or itl > 3600) then
    fail("infer: itl_max must be a positive time, at most an hour (got %s)", shown(a.itl_max))
  end
  -- the TTFT bound alike (engine/serve.h ttft_max: a layout whose TTFT
  -- is over it does not fit); unlike itl_max it goes with a batch given,
  -- which it does not pick
  local ttft, tmsg = limit_s("ttft_max", a.ttft_max)
  if tmsg then fail("infer: %s", tmsg) end
  if ttft ~= nil and (type(ttft) ~= "number" or ttft ~= ttft or ttft <= 0 or ttft > 3600) then
    fail("infer: ttft_max must be a positive time, at most an hour (got %s)", shown(a.ttft_max))
  end
  local pt = num_of(a, "prefill_tokens", 1, 2 ^ 24)
  -- Not given: the runtime's own step budget, the rule gp.infer's
  -- replicas take for max_num_tokens (gpuplan.infer M.step_budget: vLLM's
  -- API server's max_num_batched_tokens, SGLang's chunked_prefill_size by
  -- the card); another runtime, or none named, the engine's 16384
  -- (engine/serve.c).  It priced every runtime's chunk at 16384: gpt-oss-20b
  -- under vLLM on an H100, whose V1 scheduler takes 8192 a step, ran a
  -- 20000-token prompt in 2 chunks where vLLM runs 3.
  if pt == nil then
    local whose
    pt, whose = require("gpuplan.infer").step_budget(a.runtime, info.gpu)
    if pt then
      default(string.format("prefill_tokens=%d (%s: a prompt's tokens a step)", pt, whose))
    end
  end
  -- Colocated, a runtime that mixes (gpuplan.infer's M.mixes, the one
  -- table with its sources: TensorRT-LLM's in-flight batching, vLLM V1)
  -- runs a prompt chunk in the decodes' step: one weight pass for both
  -- (engine/serve_plan.c prompt_share).  SGLang, this model's default,
  -- prefills a chunk in a step of its own unless --enable-mixed-chunk
  -- ("Enabling mixing prefill and decode in a batch when using chunked
  -- prefill.", server_args.py, default False).
  local mixes = require("gpuplan.infer").mixes[a.runtime or ""]
  local mixed = mixes ~= nil and not disagg
  if mixed then
    default("mixed steps (" .. mixes .. ")")
  end
  local topo = node_of(a, info.gpu, cat, default, math.max(tp, ptp or tp))
  -- SGLang's all-reduce + RMSNorm fusion for gpt-oss on Blackwell (infer.lua
  -- M.sglang_ar_norm_fusion, its source there): the runtime turns it on for
  -- the model on the card, and each pool's server -- one colocated, the
  -- prefill's and the decode's when disaggregated, each launched with its
  -- own --tp-size, --enable-dp-attention and --nnodes -- takes it or not
  -- from its own layout (engine serve.h serve_ar_norm_on: TP attention
  -- over more than one GPU of one node, no experts' exchange).  The
  -- defaults line names the pools that run it (M.result, from the
  -- engine's pools: a layout search's chosen ones too).
  local dep = L.groups > 1 and L.groups or ep
  local ar_fused = require("gpuplan.infer").sglang_ar_norm_fusion(a.runtime, model, info.gpu)
  info.ar_norm_fusion = ar_fused
  local s = {
    weight_bits = c.weight_bits, embed_bits = c.embed_bits, kv_bytes = c.kv_bytes,
    -- a prompt chunk's attention over an FP8 cache at the 16-bit rate
    -- (infer.lua M.kv_fp8_prompt_x: vLLM's FA3 with two-level
    -- accumulation on Hopper; serve_row.c sx_attn_row)
    kv_fp8_prompt_x = c.kv_fp8_prompt_x,
    compute = c.compute, input = c.input, output = c.output, flash = c.flash,
    -- prompt tokens found in the prefix cache (infer.setup's, from
    -- prefix_hit): the engine prefills the rest (infer_new_prompt)
    cached = c.cached,
    -- a burst of this many requests sent at once (infer.setup's, from
    -- requests): colocated, priced by serve_plan.c burst through
    -- infer_burst, the mechanism gp.infer's runs take
    requests = c.requests,
    -- the client's requests in flight (concurrency, resolved to the batch
    -- above): below a burst, it sends the next as one ends, so the
    -- burst's walk is not its TTFT (serve_plan.c burst)
    concurrency = L.conc,
    -- their outputs' spread (infer.setup's, from output_dist): the
    -- longest of a burst's outputs (infer_output_quantiles)
    output_max = c.output_max, output_uniform = c.output_uniform,
    runtime = c.runtime, capacity = c.capacity, kv_reserve_max = c.kv_reserve_max,
    -- an eager runtime's host dispatch (enforce_eager, runtime trtllm:
    -- infer.lua M.eager_host_ops), a floor under each step
    -- (serve_step.c eager_floor)
    host_op_time = c.host_op_time, host_ops_per_layer = c.host_ops_per_layer,
    -- a graph runtime's prompt pass run op by op (SGLang's extend:
    -- infer.lua M.extend_host_ops), a floor under each prefill step
    -- (serve_step.c extend_floor)
    extend_host_ops = c.extend_host_ops,
    -- the margin by gpuplan.infer's rule for the runtime (setup_memory,
    -- M.runtime_memory), priced in serve.c kv_margin by the dense path's
    -- memory.h mem_kv_margin
    margin = c.margin, kv_free_fraction = c.kv_free_fraction,
    max_batch = c.max_batch, price = c.price,
    topo = topo, ar_norm_fused = ar_fused ~= nil,
    decode = { tp = tp, ep = dep, dp_attention = dp, tbo = tbo },
    prefill = { tp = ptp, ep = pep, dp_attention = pdp, tbo = tbo },
    disagg = disagg, gpus = gpus, prefill_gpus = pg, batch_per_gpu = L.batch,
    -- a concurrency's share (L.conc): past what the KV and max_batch hold,
    -- that many run and the rest wait (engine infer_queue_batch, the rule
    -- gp.infer's run_batch takes), not refused; a batch asked is run or
    -- refused
    queue = L.conc ~= nil,
    itl_max = itl, ttft_max = ttft, prefill_tokens = pt, mixed = mixed, redundant = red, imbalance = imb,
    eplb = eplb == true,
    -- whose spread an EPLB placement leaves (serve_step.c sx_imbalance):
    -- SGLang's from the LMSYS large-scale EP blog's balancedness figure,
    -- the other runtimes' TensorRT-LLM's measured one
    eplb_src = a.runtime == "sglang" and "sglang" or "trtllm",
    mtp = mtp, mtp_layers = model.mtp_layers or 0, acceptance = acc, a2a = a2a,
    accept_decay = (mtp > 1 and acc == nil) and M.ACCEPT_DECAY or 1.0,
    spec_host = L.spec_host, spec_host_dp = L.spec_host_dp, spec_running = L.spec_running,
    m_tile = m_tile, m_tile_grouped = m_tile_grouped,
    -- vLLM's and SGLang's Triton fused MoE, or TensorRT-LLM's NVFP4
    -- one, where EP does not shard the experts (infer.lua
    -- M.moe_fp8_bf16_x, M.moe_fp4_bf16_x; the engine applies it at ep 1)
    moe_fp8_bf16_x = moe_fp8_x or moe_fp4_x,
    -- SGLang's dense block-fp8 linears on its Triton GEMM before
    -- DeepGEMM (block_fp8_triton: the fused MoE's multiple, infer.lua
    -- M.block_fp8_triton), at any layout
    linear_fp8_bf16_x = a.block_fp8_triton and inf.block_fp8_triton[a.runtime or ""] and moe_fp8_x
      or nil,
    -- vLLM's Triton MXFP4 experts on Hopper (M.VLLM_MXFP4_ROUTE_KERNELS):
    -- the routing metadata's kernels, the SwiGLU in the up GEMM
    -- and, with fused_grouped_topk false (SGLang before 0.4.6: validate's
    -- rule, predict/infer.lua), the native grouped top-k's kernels beyond
    -- the one moe_topk row (M.NATIVE_GROUPED_TOPK_EXTRA)
    moe_route_kernels = (L.triton_mxfp4 and M.VLLM_MXFP4_ROUTE_KERNELS or 0) +
      ((a.fused_grouped_topk == false and type(model.mla) == "table")
        and M.NATIVE_GROUPED_TOPK_EXTRA or 0),
    moe_act_fused = L.triton_mxfp4 or false,
    -- and its M tile where the kernel's own floor is above the
    -- roofline's 16 rows (M.VLLM_MXFP4_M_TILE: AMD's 32)
    moe_m_tile = L.triton_mxfp4 and M.VLLM_MXFP4_M_TILE[info.gpu.arch or ""] or 0,
    -- and its in-loop upcast where the card has no FP4 MFMA
    -- (M.VLLM_MXFP4_UPCAST: CDNA3's)
    moe_upcast = L.triton_mxfp4 and M.VLLM_MXFP4_UPCAST[info.gpu.arch or ""] or 0,
    -- at the widths it pads them to on ROCm (M.VLLM_MXFP4_PAD)
    -- and SGLang's FlashInfer MXFP4 experts on Blackwell alike
    -- (M.SGLANG_MXFP4_PAD: gpt-oss's auto backend there)
    moe_pad = L.triton_mxfp4 and M.VLLM_MXFP4_PAD[info.gpu.arch or ""] or
      L.sglang_fi_mxfp4 and M.SGLANG_MXFP4_PAD[info.gpu.arch or ""] or 0,
    -- the runtime's weight-only kernel below the 16-bit rate (infer.setup's,
    -- infer.lua M.wo_bf16_x: vLLM's Marlin on the A100), its linears and
    -- experts alike (serve_step.c sx_wo_x)
    wo_bf16_x = c.wo_bf16_x,
    -- and its streaming fraction at decode (infer.setup's, infer.lua
    -- M.wo_stream_of: gpt-fast's kernels, vLLM's int4 Marlin), the one
    -- gp.infer reads: the linears and experts in the weights' format, and
    -- expert_wo_stream for experts in a format of their own (setup_kernels),
    -- at the fraction of the streaming copy (serve_row.c sx_wo_stream)
    wo_stream = c.wo_stream, expert_wo_stream = L.expert_wo_stream,
    -- vLLM V1's host work between two steps (infer.setup's, from
    -- async_scheduling = false: infer.lua M.engine_host), added to each
    -- decode step (serve_step.c serve_step_time)
    engine_host_step = c.engine_host_step, engine_host_seq = c.engine_host_seq,
    expert_bits = expert_bits, expert_compute = expert_compute,
    dispatch_bytes = dispatch_bytes,
    sbo = sbo or false, sbo_sms = bw and 32 or 3, sbo_down = sbo_down,
    sbo_shared_dispatch = not bw,
    -- the tokens the down GEMM signals the combine at once: a whole local
    -- expert on Blackwell (its combine_signal "num_local_experts" long), a
    -- block of 64 elsewhere ("MIN_BLOCK_M = 64", one signal per block of a
    -- local expert's tokens), single_batch_overlap.py compute_overlap_args
    sbo_block = bw and 0 or 64,
    _tbo_auto = tbo_auto, _tbo_at = tbo_at,  -- this file's, not the engine's
    _conc = L.conc,  -- the concurrency asked (M.infer's queue note)
  }
  info.expert_weights = ew
  return model, d, s, info
end

-- The rest of M.setup (which tail-calls it, so that its errors are
-- raised at the same level): the kernels' tiles, the routed experts'
-- format and single-batch overlap, into L (the layout and pools M.setup
-- resolved), then setup_config.
local function setup_kernels(a, model, d, c, info, cat, default, L)
  local infer = require "gpuplan.infer"
  local ep = L.ep
  -- The fp8 GEMMs' M tile on Hopper: DeepGEMM (SGLang's and DeepSeek's
  -- kernels for block-scaled fp8 checkpoints) runs 64-row tiles up to 64
  -- tokens, 128 above (deep_gemm/jit_kernels/config.py get_best_configs:
  -- "block_ms = (64 if m <= 64 else 128, )").  swap_ab is Ant Group's H20
  -- build (DeepGEMM PR 192, "support swapAB for m_grouped_fp8_gemm_nt_masked",
  -- in SGLang's DeepGEMM as sgl-project/DeepGEMM PR 11): the masked grouped
  -- GEMM of the low-latency decode puts the tokens on WGMMA's N side in
  -- 32-row blocks ("Significantly improve the performance for BLOCK_M = 32";
  -- the Ant Group blog: "This enables smaller BLOCK_M (32) tiling"); the
  -- dense linears stay on the 64-row tiles.  Other formats and archs: the
  -- library's tiles.
  local swap = bool_of(a, "swap_ab")
  if swap ~= nil and (model.moe and model.moe.experts or 0) == 0 then
    fail("infer: swap_ab is the routed experts' grouped GEMM: model '%s' has no routed experts",
      tostring(model.id or model.name))
  end
  -- The dense tile is the one rule gp.infer prices SGLang's linears with
  -- (infer.lua M.m_tile: SGLang's block-fp8 linears on Hopper).
  local m_tile, m_tile_grouped = 0, 0
  local dense_tile = infer.m_tile_of("sglang", info.gpu.arch, info.weights)
  if dense_tile then
    m_tile = dense_tile
    m_tile_grouped = swap and 32 or dense_tile
    if swap == nil then
      default("swap_ab=false (DeepGEMM's fp8 GEMMs on Hopper: 64-row tiles up to 64 tokens)")
    end
  elseif swap then
    -- swapAB is a DeepGEMM fp8 kernel's (the masked grouped GEMM, Hopper
    -- WGMMA): other weights or another arch run no DeepGEMM tile here,
    -- and the flag changed nothing, in silence
    usage("infer: swap_ab is DeepGEMM's fp8 masked grouped GEMM on Hopper (its 32-row token "
      .. "blocks); weights %s on %s (%s) run no DeepGEMM tiles: give weights fp8 on a Hopper "
      .. "card, or leave swap_ab out", tostring(info.weights), tostring(info.gpu.id),
      tostring(info.gpu.arch))
  end
  -- The routed experts in a format of their own (expert_weights), the rest
  -- at weights: NVIDIA's NVFP4 DeepSeek checkpoints (nvidia/DeepSeek-R1-
  -- 0528-FP4-v2) quantise the routed experts and keep attention in higher
  -- precision, and SGLang's GB200 Part II runs "NVFP4 for MoE" beside "FP8
  -- for attention" (lmsys.org/blog/2025-09-25-gb200-part-2).  Priced in
  -- memory (bits per expert weight) and in the experts' grouped GEMMs (the
  -- format's tensor cores, infer_compute_dtype's rule).  An fp4 expert
  -- GEMM takes fp4 tokens, which DeepEP quantises as it dispatches (Part
  -- II: "NVFP4 quantization is fused into it alongside the original FP8,
  -- halving the required network traffic"): 4 bits and one fp8 scale per
  -- 16 elements ("NVFP4 chooses a small block size (16) and uses FP8 as the
  -- scaling factor data type"), 0.5 + 1/16 bytes per element.
  local ew = a.expert_weights
  -- A checkpoint released with its routed experts alone quantized (the
  -- catalog model's expert_dtype: gpt-oss's MXFP4 experts, the rest bf16)
  -- is served so unless weights or expert_weights say otherwise.
  if ew == nil and a.weights == nil and type(model.expert_dtype) == "string" then
    ew = model.expert_dtype
    default(string.format("expert_weights=%s (%s's checkpoint as released: the catalog "
      .. "model's expert_dtype)", ew, tostring(model.id or model.name)))
  end
  local expert_bits, expert_compute, dispatch_bytes, triton_mxfp4
  if ew ~= nil then
    if type(ew) ~= "string" or tonumber(ew) then
      fail("infer: expert_weights must be a format name: bf16, fp8, fp4, mxfp4 ... (got %s)",
           shown(ew))
    end
    local okw, wf = pcall(require("gpuplan.memory").weight_format, ew)
    if not okw then
      -- an unknown format name stays the usage error weight_format marks
      ;(args.is_usage(wf) and usage or fail)("infer: expert_weights: %s",
           (require("gpuplan.cli").clean(wf):gsub(" or bits per weight", "")))
    end
    local eb = infer.weight_base(ew)
    if eb == "fp32" then
      fail("infer: expert_weights 'fp32': serving multiplies in bf16/fp16 or lower; use bf16")
    end
    if (model.moe and model.moe.experts or 0) == 0 then
      fail("infer: expert_weights: model '%s' has no routed experts", tostring(model.id or model.name))
    end
    -- FP8 experts where the card (or the runtime) runs no FP8: the rule
    -- and words of gp.infer's weights (gpuplan.infer fp8_weights_on):
    -- weight-only on compute capability 8.0 up (vLLM's and SGLang's FP8
    -- Marlin), none below it (Volta, Turing) nor under TensorRT-LLM
    -- without FP8 tensor cores.  expert_weights = fp8 on a V100 was
    -- priced as weight-only FP8 GEMMs that no runtime has there.
    if eb == "fp8" and not infer.fp8_weights_on(info.gpu, a.runtime) then
      local native_only = infer.fp8_weights_on(info.gpu) and infer.FP8_NATIVE_ONLY[a.runtime or ""]
      fail("infer: expert_weights fp8 on %s%s: %s; give expert_weights = %s%s",
        tostring(info.gpu.id), native_only and (" with runtime = " .. tostring(a.runtime)) or "",
        native_only or infer.FP8_WEIGHTS_FLOOR,
        ((info.gpu.peak or {}).bf16 or 0) > 0 and "bf16" or "fp16",
        native_only and ", or runtime = vllm or runtime = sglang (FP8 Marlin, weight-only)" or "")
    end
    expert_bits = require("gpuplan.memory").weight_bits(wf)
    expert_compute = core().infer_compute_dtype(d, eb)
    -- vLLM's MXFP4 experts on Hopper (and CDNA3: M.VLLM_MXFP4_W4A16)
    -- multiply in 16 bits (W4A16), not as
    -- W4A8: its MXFP4 oracle (fused_moe/oracle/mxfp4.py) takes TRITON
    -- (OpenAI's triton_kernels matmul_ogs) where triton_kernels is
    -- installed and "(9, 0) <= current_platform.get_device_capability()
    -- < (11, 0)", MARLIN after it; its MXFP8-activation backends are
    -- FlashInfer's, opt-in by environment and on SM100.  The Triton
    -- experts take "mxfp4_w4a16" alone (gpt_oss_triton_kernels_moe.py
    -- OAITritonExperts: "Supports only mxfp4_w4a16"), Marlin is W4A16:
    -- the weights are read at 4.25 bits and widened to bf16 in the GEMM.
    if M.VLLM_MXFP4_W4A16[info.gpu.arch or ""] and a.runtime == "vllm" and ew == "mxfp4"
        and (c.compute == "bf16" or c.compute == "fp16") then
      expert_compute = c.compute
      triton_mxfp4 = true
      local mt = M.VLLM_MXFP4_M_TILE[info.gpu.arch or ""]
      default(string.format("expert_weights=mxfp4 under vLLM on %s: W4A16 (vLLM's MXFP4 MoE "
        .. "backend there, triton_kernels' matmul_ogs or Marlin, widens the weights to %s)%s",
        tostring(info.gpu.id), c.compute, mt and string.format("; matmul_ogs' AMD M tile "
        .. "at least %d rows an expert (triton_kernels opt_flags: block_m = max(32, ...))", mt)
        or ""))
    end
    -- A format whose own tensor cores the card lacks computes otherwise
    -- (engine/infer.c infer_compute_dtype): fp4 experts on Hopper or Ada
    -- multiply as FP8 GEMMs (W4A8), fp8 or fp4 ones without FP8 tensor
    -- cores as 16-bit GEMMs (weight-only); either way the weights are read
    -- at their own bits, and the serving model (serve_step.c) prices no
    -- conversion pass.  Said, where the header said only "(fp4 experts)".
    if (eb == "fp4" or eb == "fp8") and expert_compute ~= eb then
      local half = expert_compute == "bf16" or expert_compute == "fp16"
      default(string.format("expert_weights=%s on %s (no %s tensor cores): the experts multiply "
        .. "as %s GEMMs (%s), their weights read at %g bits a weight, converted in the GEMM "
        .. "at no cost of its own", ew, tostring(info.gpu.id), eb:upper(),
        expert_compute:upper(), half and "weight-only" or "W4A8", expert_bits))
    end
  end
  if (expert_compute or c.compute) == "fp4" then dispatch_bytes = 0.5 + 1 / 16 end
  -- Routed experts in an integer format of their own, multiplied in 16
  -- bits (AWQ/GPTQ-style int4 experts): the runtime's weight-only kernel
  -- reads them at its streaming fraction, gp.infer's rule for its linears
  -- (infer.lua M.wo_stream_of, whose floating-point block formats -- MXFP4,
  -- NVFP4, FP8 -- run kernels of their own and keep the device's rate).
  -- Experts in the weights' format take infer.setup's c.wo_stream with the
  -- linears (setup_config's wo_stream; engine serve_row.c sx_wo_stream).
  local expert_wo_stream
  if ew ~= nil and (expert_compute == "bf16" or expert_compute == "fp16") then
    expert_wo_stream = infer.wo_stream_of(a.runtime, expert_bits, ew, info.gpu.arch)
    if expert_wo_stream and ew ~= info.weights then
      default(infer.wo_stream_said(a.runtime, "routed experts", ew, expert_bits,
        expert_wo_stream))
    end
  end
  -- Single-batch overlap (SGLang single_batch_overlap.py SboFlags and
  -- compute_overlap_args): the combine's send kernel on 32 SMs on Blackwell,
  -- 3 elsewhere ("communicate_num_sms = 32 if is_blackwell() else 3"); the
  -- down GEMM signals it per expert with FlashInfer's CuTe DSL kernel (the
  -- NVFP4 experts on Blackwell) or DeepGEMM off Blackwell
  -- (enable_combine_down_gemm_two_stream_overlap); the shared experts run
  -- beside the combine on Blackwell and beside the dispatch elsewhere
  -- (enable_dispatch_shared_overlap: "not is_blackwell()").
  local sbo = bool_of(a, "single_batch_overlap")
  if sbo and ep == 1 then
    usage("infer: single_batch_overlap applies with expert parallelism (ep > 1): it hides "
      .. "the experts' combine")
  end
  if sbo and bool_of(a, "two_batch_overlap") then
    usage("infer: single_batch_overlap is the overlap of a step without two_batch_overlap; "
      .. "give one of them")
  end
  local bw = info.gpu.arch == "blackwell"
  local sbo_down = (bw and (expert_compute or c.compute) == "fp4") or
    (not bw and (expert_compute or c.compute) == "fp8")
  L.m_tile, L.m_tile_grouped, L.ew = m_tile, m_tile_grouped, ew
  L.expert_bits, L.expert_compute, L.dispatch_bytes = expert_bits, expert_compute, dispatch_bytes
  L.sbo, L.bw, L.sbo_down = sbo, bw, sbo_down
  L.triton_mxfp4, L.expert_wo_stream = triton_mxfp4, expert_wo_stream
  -- SGLang's gpt-oss MXFP4 experts on FlashInfer's TRT-LLM kernel
  -- (M.SGLANG_MXFP4_PAD), padded to its widths
  L.sglang_fi_mxfp4 = a.runtime == "sglang" and ew == "mxfp4" and
    M.SGLANG_MXFP4_PAD[info.gpu.arch or ""] ~= nil and
    require("gpuplan.infer").gpt_oss_shape(model) or nil
  if L.sglang_fi_mxfp4 then
    default(string.format("expert_weights=mxfp4 under SGLang on %s: FlashInfer's TRT-LLM "
      .. "MXFP4 MoE (moe_runner_backend flashinfer_mxfp4, gpt-oss's default there), the "
      .. "experts' widths a GPU padded to a multiple of %d", tostring(info.gpu.id),
      M.SGLANG_MXFP4_PAD[info.gpu.arch]))
  end
  return setup_config(a, model, d, c, info, cat, default, L)
end

-- (model, device, serve cfg, info) for the engine from gp.infer arguments.
-- Runtimes without expert parallelism -> how each splits a model over
-- its GPUs (the sources are at M.setup's refusal, which reads this list).
M.NO_EXPERT_PARALLEL = {
  ["llama.cpp"] = "its --split-mode splits layers or rows over the GPUs",
  exllamav2 = "it splits whole modules over the GPUs, gpu_split",
  ["gpt-fast"] = "its tp.py shards each expert's weights over the GPUs, tensor parallelism",
  litgpt = "it splits layers over the GPUs or shards them: generate sequentially, generate tp",
  ["eager-pytorch"] = "Hugging Face generate places whole layers on each GPU, device_map auto",
  autoawq = "from_quantized places whole layers on each GPU, Accelerate's infer_auto_device_map",
}

function M.setup(a)
  local infer = require "gpuplan.infer"
  -- concurrency: the requests in flight over the system's instances, each
  -- request decoded by its instance's attention group -- one GPU with DP
  -- attention, the whole instance with TP attention, where one stream on
  -- TP8 is 1/8 of a sequence per GPU (TensorRT-LLM's min-latency runs:
  -- "--concurrency 1 --max_batch_size 1 --tp 8").  Resolved to a batch per
  -- GPU below, once the layout is known.
  local conc
  if a.concurrency ~= nil then
    conc = int_of(a, "concurrency", 1)
    if a.batch ~= nil then usage("%s", infer.BATCH_AND_CONCURRENCY) end
    if a.itl_max ~= nil then
      usage("infer: concurrency fixes the batch; itl_max searches it: give one of them")
    end
    local b = {}
    for k, v in pairs(a) do b[k] = v end
    b.concurrency = nil
    a = b
  end
  -- a batch given is the batch run: itl_max, which picks the batch, was
  -- dropped in silence (--ep 8 --batch 100 --itl-max 20 printed an ITL
  -- of 55.6 ms and no word of the limit), as concurrency's is refused
  if a.batch ~= nil and a.itl_max ~= nil then
    usage("infer: batch fixes the batch; itl_max searches it: give one of them")
  end
  -- chunked_prefill is the one-model engine's mixed step (engine/
  -- infer_run.c mixed_steps: B decodes and the prompts' tokens in one step
  -- of max_num_tokens, one weight pass).  This model chunks its colocated
  -- prompts by prefill_tokens itself (engine/serve_plan.c chunk_steps)
  -- and prices them apart: the flag would change nothing, in silence.
  if a.chunked_prefill ~= nil and a.chunked_prefill ~= false then
    usage("infer: chunked_prefill is priced for one model on its replicas; the MoE serving "
      .. "model always chunks its prompts itself, "
      .. "prefill_tokens a step (default: the runtime's step budget, else 16384): give "
      .. "prefill_tokens instead")
  end
  local model, d, c, info = infer.setup(a)
  -- max_num_tokens is the one-model engine's step budget (engine/
  -- infer_run.c: the prompts of a prefill step, the mixed step's tokens);
  -- nothing in engine/serve*.c reads it: this model's prompt chunks are
  -- prefill_tokens a step and its decode batch is the itl_max search's or
  -- the batch given.  Taken, it would change nothing, in silence.  After
  -- infer.setup, which refuses a value of the wrong kind in its words.
  -- kv_tokens is the one-model engine's pool (engine/infer_run.c
  -- run_kv); engine/serve*.c size their own.  Taken, it would change
  -- nothing, in silence.
  if a.kv_tokens ~= nil then
    usage("infer: kv_tokens is the KV pool of one model on its replicas; the MoE serving "
      .. "model sizes its pool by the margin or kv_free_fraction")
  end
  -- first_token_lag is added by gp.infer's one-model result (gpuplan.infer
  -- M.infer: the decode step at the run's batch a lagged step); this
  -- model's result never read it, so 3 lagged steps read the same TTFT
  -- as none.  Refused, as kv_tokens is, rather than taken in silence.
  if a.first_token_lag ~= nil and a.first_token_lag ~= 0 then
    usage(string.format("infer: first_token_lag %s is priced for one model on its replicas "
      .. "(vLLM V0's in-process AsyncLLMEngine); the MoE serving model does not take it",
      require("gpuplan.args").shown(a.first_token_lag)))
  end
  if a.max_num_tokens ~= nil then
    usage("infer: max_num_tokens is the step budget of one model on its replicas; the MoE "
      .. "serving model does not read it: its prompts go prefill_tokens a step (default: the "
      .. "runtime's step budget, else 16384): give prefill_tokens instead")
  end
  -- pp and flash = false are one model's on its replicas: nothing in
  -- engine/serve*.c reads a pipeline (its layouts are ep x tp) and its
  -- attention is the runtimes' fused kernel (serve_step.c sets flash).
  -- pp = 4, or even 3 on 16 GPUs, priced the same EP16 step in silence.
  -- (the serving option that asked for this model named with its value,
  -- which the command line writes as its flag)
  local function asked()
    local _, k = M.wants(a)
    return k and (k .. " " .. tostring(a[k])) or "a serving option"
  end
  if a.pp ~= nil and a.pp ~= 1 then
    usage("infer: pp %s: the MoE serving model (%s) runs no pipeline stages, its "
      .. "layouts are expert and tensor parallel; pipeline stages are priced for one model "
      .. "on its replicas (without the serving options)", args.shown(a.pp), asked())
  end
  if a.flash == false then
    usage("infer: flash = false: the MoE serving model (%s) prices the runtimes' fused "
      .. "attention kernels; unfused attention is priced for one model on its replicas "
      .. "(without the serving options)", asked())
  end
  local cat = catalog(a.cat or a.catalog)
  local defaults = info.defaults
  local function default(s) defaults[#defaults + 1] = s end
  -- The attention kernel the serving engines run: SGLang picks its FA3
  -- backend on Hopper, for MLA models in prefill and decode alike and for
  -- the MHA MoE models it lists (model_runner.py
  -- model_specific_adjustment: "Models with MLA Architecture ... We will
  -- use FA3 backend on hopper"; Ant Group's H20 deployment passes
  -- --attention-backend fa3).  DeepSeek's own FlashMLA,
  -- 580 TFLOPS compute-bound on H800 (README) = 0.586 of the bf16 peak,
  -- is within 1% of FA3's measured fraction at the sustained clock
  -- (0.713 x 0.82 = 0.585, catalog/archs.lua hopper).  Where the catalog
  -- has no FA3 measurement the arch's default kernel stays.
  if d.attn_kernel ~= "fa3" then
    local ok, fa3 = pcall(require("gpuplan.roofline").device, info.gpu, cat, "fa3")
    if ok and fa3.attn_fwd then
      d.attn_kernel, d.attn_fwd, d.attn_bwd = "fa3", fa3.attn_fwd, fa3.attn_bwd
      default("attn_kernel=fa3 (" .. (M.FA3_SAID[a.runtime or ""] or M.FA3_SAID.sglang) .. ")")
    end
  end
  local ep = int_of(a, "ep", 1) or 1
  local dp = bool_of(a, "dp_attention") or false
  local disagg = bool_of(a, "disagg") or false
  local tp, tp_of_ep = int_of(a, "tp", 1), false
  if not tp then
    tp = ep > 1 and ep or (not disagg and int_of(a, "gpus", 1)) or 1
    tp_of_ep = ep > 1
  end
  -- ep dividing tp (TP attention): ep groups of experts, each sliced
  -- over tp / ep GPUs (TensorRT-LLM's moe_tensor_parallel_size = tp / ep);
  -- no all-to-all -- every GPU holds every token, as with slices -- so the
  -- rest of the setup sees ep 1 and the engine's layout gets the groups.
  local groups = 1
  if ep > 1 and ep ~= tp then
    if ep > tp or tp % ep ~= 0 or dp then
      usage("infer: ep %d: the experts are split over the whole instance (ep = tp = %d), "
           .. "sliced by TP (ep 1), or, with TP attention, into ep groups sliced over "
           .. "tp / ep GPUs (ep dividing tp)", ep, tp)
    end
    groups, ep = ep, 1
  end
  -- Two-batch overlap left open with EP: M.infer runs both and keeps the
  -- faster (tbo_auto).  It is an opt-in in SGLang (--enable-two-batch-
  -- overlap) that pays off at large batches; at small ones each micro-batch
  -- reads the experts' weights again, and SGLang leaves it to the user
  -- (two_batch_overlap.py: "may smartly disable TBO when batch size is too
  -- small b/c it will slow down").
  -- SGLang's expert parallelism without DeepEP, its default
  -- (--moe-a2a-backend none; DeepEP is an opt-in): with TP attention every
  -- GPU of the EP group already holds the step's tokens after the
  -- attention's all-reduce, so its StandardDispatcher exchanges none
  -- ("dispatch ... return StandardDispatchOutput(hidden_states=
  -- hidden_states, topk_output=topk_output)"), each GPU runs its own
  -- experts' share of them and the MoE output is all-reduced over the
  -- group ("if self.reduce_results and (self.moe_tp_size > 1 or
  -- self.moe_ep_size > 1): final_hidden_states =
  -- tensor_model_parallel_all_reduce(final_hidden_states)",
  -- sglang@73dce5a python/sglang/srt/layers/moe/token_dispatcher/
  -- standard.py, sglang@008d7d0 fused_moe_triton/layer.py): a2a "none"
  -- (engine SERVE_A2A_NONE).  The same exchange is what vLLM and
  -- TensorRT-LLM run with EP under TP attention, so a2a = "none" given
  -- under runtime vllm or trtllm is their own path, not SGLang's alone:
  -- vLLM "def use_all2all_kernels(self): return self.use_ep and
  -- (self.dp_size > 1 or self.pcp_size > 1 or self.is_sequence_parallel)"
  -- (vllm@002d607 vllm/model_executor/layers/fused_moe/config.py
  -- FusedMoEParallelConfig), TensorRT-LLM "if not
  -- mapping.enable_attention_dp: return AlltoallMethodType.NotEnabled"
  -- (TensorRT-LLM@01303b3 tensorrt_llm/_torch/modules/fused_moe/
  -- fused_moe_wide_ep.py select_alltoall_method_type); their default here
  -- stays deepep, as the cases priced so far assumed (not re-priced).
  -- Not keyed on the release: the non-DeepEP EP
  -- of 0.4.x (EPMoE, --enable-ep-moe) was not read.  Not
  -- under DP attention (each GPU then holds only its own sequences) nor
  -- disaggregated pools (their runs state DeepEP).
  local a2a_runtime
  if a.a2a == nil and a.runtime == "sglang" and ep > 1 and not dp and not disagg then
    a2a_runtime = "none"
    default("a2a=none (SGLang's default --moe-a2a-backend none: with TP attention every GPU "
      .. "holds the step's tokens and runs its own experts over them, the MoE output "
      .. "all-reduced over the group; no all-to-all, no two-batch overlap)")
  end
  local no_a2a = (a.a2a or a2a_runtime) == "none"
  local tbo = bool_of(a, "two_batch_overlap")
  local tbo_auto = tbo == nil and ep > 1 and not no_a2a
  if tbo == nil then tbo = ep > 1 and not no_a2a end
  local tbo_at = tbo_auto and #defaults + 1 or nil  -- its "assumed" slot
  local ptp = int_of(a, "prefill_tp", 1) or tp
  local pep = int_of(a, "prefill_ep", 1) or (ptp == tp and ep) or (ep > 1 and ptp) or 1
  local pdp = bool_of(a, "prefill_dp_attention")
  if pdp == nil then pdp = dp end
  for _, k in ipairs { "prefill_gpus", "prefill_tp", "prefill_ep", "prefill_dp_attention" } do
    if a[k] ~= nil and not disagg then usage("infer: %s needs disagg = true", k) end
  end
  local pg = int_of(a, "prefill_gpus", 1) or 0
  -- Options that change nothing where they were given are errors, not
  -- silence: two pools need their GPUs stated, the overlap hides the
  -- experts' all-to-all (none without EP), DP attention splits an
  -- instance of several GPUs.
  if disagg and a.gpus == nil and a.prefill_gpus == nil then
    usage("infer: disagg needs gpus = N: the prefill and decode pools together (at least %d)",
      ptp + tp)
  end
  -- An expert-parallel option where no all-to-all runs: refused, and
  -- where ep was given inside tp (the groups above) the error says that
  -- split has none, since the user did give an ep above 1.
  local function no_ep(k, why)
    if groups > 1 then
      usage("infer: %s applies with the experts split over the whole instance (ep equal to tp): "
        .. "ep %d inside tp %d slices them in groups with no all-to-all; %s", k, groups, tp,
        why)
    end
    usage("infer: %s applies with expert parallelism (ep > 1): %s", k, why)
  end
  if a.two_batch_overlap ~= nil and ep == 1 and not (disagg and pep > 1) then
    no_ep("two_batch_overlap", "it hides the experts' all-to-all")
  end
  -- The expert-parallel options priced nothing without expert
  -- parallelism (a dense model's step was the same with any of them).
  for _, k in ipairs { "a2a", "imbalance", "eplb", "redundant_experts" } do
    if a[k] ~= nil and ep == 1 and not (disagg and pep > 1) then
      no_ep(k, ({
        a2a = "it picks the experts' all-to-all kernel",
        imbalance = "it is the hottest expert-parallel GPU's share of the routed tokens",
        eplb = "it places the experts over the expert-parallel GPUs",
        redundant_experts = "EPLB's extra expert slots spread over the expert-parallel GPUs",
      })[k])
    end
  end
  if dp and tp == 1 and ep == 1 then
    usage("infer: dp_attention needs an instance of more than one GPU (tp > 1 or ep > 1); on one "
      .. "GPU attention is whole already")
  end
  local gpus = int_of(a, "gpus", 1) or (disagg and (pg > 0 and pg or ptp) + tp) or tp
  -- The runtimes that run no expert parallelism, each with how it splits a
  -- model over its GPUs instead (one list: every such runtime is refused
  -- by the one rule below).  llama.cpp splits by layers or rows
  -- (common/arg.cpp --split-mode: "layer (default): split layers and KV
  -- across GPUs", "row: split rows across GPUs"); ExLlamaV2 places whole
  -- modules on each GPU (model.load's gpu_split, load_autosplit:
  -- set_device_map); gpt-fast shards every expert's weights over the GPUs
  -- as tensor parallelism (mixtral-moe/tp.py _apply_tp_moe_ffn: w1, w3,
  -- w2 sharded on their hidden dimension, no all-to-all); LitGPT splits
  -- layers over the GPUs (generate/sequentially.py) or shards them
  -- (generate/tp.py); eager PyTorch, Hugging Face generate, places whole
  -- layers on each GPU (device_map="auto", accelerate).  None has the
  -- all-to-all, DP attention, two-batch overlap or disaggregated pools
  -- this model prices (SGLang's, vLLM's, TensorRT-LLM's engines), so an
  -- MoE layout on several GPUs under them was priced as one of those
  -- (llama.cpp's EP16 DeepSeek-V3 above SGLang's, at margin 0).  Refused,
  -- naming the runtime; their own split is priced by the one-model path
  -- (tp, without the serving options).  One GPU runs the experts whole
  -- under any engine.
  local no_ep = M.NO_EXPERT_PARALLEL[a.runtime]
  if no_ep and (ep > 1 or gpus > 1) then
    usage("infer: runtime %s runs no expert parallelism (%s): the MoE serving model (%s) "
      .. "prices SGLang's, vLLM's and TensorRT-LLM's engines: give runtime = sglang, vllm or "
      .. "trtllm, or price %s's own split with tp = N and none of the serving options", a.runtime,
      no_ep, asked(), a.runtime)
  end
  local batch = c.batch
  -- a burst is priced colocated (serve_plan.c burst); two pools' split
  -- of it is not known, as concurrency's is not
  if c.requests and disagg then
    usage("infer: requests with disagg: a burst is priced colocated; the pools' split of it is "
      .. "not known")
  end
  -- ttft_max bounds one prompt's prefill steps (serve_plan.c decode_side),
  -- where a burst's TTFT is its requests' mean from the walk (burst): a
  -- burst of 64 on 16 H800s passed ttft_max 5000 ms with a TTFT of 8852 ms
  -- shown, "every request's TTFT within" the bound said of neither
  if c.requests and a.ttft_max ~= nil then
    usage("infer: ttft_max with requests: the bound is one prompt's prefill steps, a burst's "
      .. "TTFT its requests' mean behind the prompts ahead of them (ttft_s); give one or the "
      .. "other")
  end
  if conc then
    if disagg then
      usage("infer: concurrency with disagg: the pools' split is not known; give batch = N "
           .. "(sequences per decode GPU)")
    end
    -- each instance (tp GPUs) runs whole requests; each GPU whole ones with DP attention
    local group, groups = dp and 1 or tp, dp and gpus or gpus // tp
    if groups < 1 or conc % groups ~= 0 then
      usage("infer: concurrency %d over %d %s: each runs whole requests (give a multiple of %d)",
           conc, groups, dp and "GPUs with DP attention" or
           string.format("instance%s of TP%d", groups == 1 and "" or "s", tp), groups)
    end
    batch = conc / groups / group
  end
  local a2a = a.a2a or a2a_runtime or "deepep"
  -- The exchange is said where assumed, as SGLang's none above is.
  if a.a2a == nil and a2a == "deepep" and (ep > 1 or pep > 1) then
    default("a2a=deepep (DeepEP's all-to-all: low-latency kernels in decode, normal ones in "
      .. "prefill, as DeepSeek's and SGLang's large-EP runs)")
  end
  if a2a ~= "deepep" and a2a ~= "nccl" and a2a ~= "none" then
    fail("infer: a2a must be 'deepep', 'nccl' or 'none' (got %s)", shown(a.a2a))
  end
  if a2a == "none" and (dp or disagg) then
    usage("infer: a2a none exchanges no tokens, which needs every GPU of the EP group to hold "
      .. "the step's tokens: TP attention in one pool (not dp_attention, not disagg)")
  end
  -- SGLang refuses the pair itself: "When enabling two batch overlap,
  -- moe_a2a_backend cannot be 'none'." (sglang python/sglang/srt/
  -- server_args.py).  Where none is the runtime's default, not the
  -- user's, the refusal says so rather than name an a2a not given.
  if a2a == "none" and tbo then
    if a.a2a == nil then
      usage("infer: two_batch_overlap under runtime sglang with TP attention: its default a2a "
        .. "none (SGLang's --moe-a2a-backend none) exchanges no tokens, so there is no "
        .. "all-to-all to hide (SGLang refuses two-batch overlap without an all-to-all too); "
        .. "give a2a = deepep")
    end
    usage("infer: a2a none with two_batch_overlap: there is no all-to-all to hide")
  end
  local mtp = int_of(a, "mtp", 1) or 0
  local acc = num_of(a, "acceptance", 0, 1)
  if acc ~= nil and mtp == 0 then
    usage("infer: acceptance is the MTP drafts' acceptance: it needs mtp = N (draft tokens per step)")
  end
  if mtp > 0 and acc == nil then
    default(mtp > 1 and string.format("acceptance=0.85 for the first draft (DeepSeek-V3: "
      .. "85-90%%), x%.2f a draft deeper (one MTP module applied again)", M.ACCEPT_DECAY)
      or "acceptance=0.85 (DeepSeek-V3: 85-90%)")
  end
  -- A model table that does not state mtp_layers (nil, not 0) takes the MTP
  -- module of the catalog model of its architecture, as a validation case's
  -- inline model does (gpuplan.predict.case.architecture_mtp: DeepSeek-R1's
  -- and V3-0324's config.json ship V3's one layer); the copy leaves the
  -- caller's table as it was.
  if mtp > 0 and model.mtp_layers == nil then
    local n, id = require("gpuplan.predict.case").architecture_mtp(model, cat)
    if n then
      local m = setmetatable({}, getmetatable(model))
      for k, v in pairs(model) do m[k] = v end
      m.mtp_layers = n
      model = m
      default(string.format("mtp=%d, drafted by the MTP module of %s's architecture (%d "
        .. "layer%s: the model gives no mtp_layers)", mtp, id, n, n == 1 and "" or "s"))
    end
  end
  if mtp > 0 and (model.mtp_layers or 0) == 0 then
    fail("infer: mtp %d: model '%s' has no MTP module (mtp_layers)", mtp,
         tostring(model.id or model.name))
  end
  -- The host's part of each speculative step, serial with the GPU where
  -- the engine is SGLang's (this model's default) or unnamed.
  local rt = a.runtime
  -- The layout search prices each layout with its own (spec_host_dp for
  -- DP attention).
  local spec_host, spec_host_dp = 0, 0
  if mtp > 0 and (rt == nil or rt == "sglang" or rt == "graphs") then
    spec_host, spec_host_dp = M.SPEC_HOST, math.max(M.SPEC_HOST, M.SPEC_HOST_DP)
    default(string.format("host work %.2f ms a speculative step, %.2f with DP attention "
      .. "(SGLang turns its overlap scheduler off while it speculates; DP ranks also sync "
      .. "their batches each step)", spec_host * 1e3, spec_host_dp * 1e3))
  end
  -- SGLang's cap on running requests while it speculates (M.SPEC_RUNNING),
  -- where the engine is SGLang's or unnamed and the user sets no batch,
  -- concurrency or max_batch of its own
  local spec_running = 0
  if mtp > 0 and (rt == nil or rt == "sglang" or rt == "graphs") and a.max_batch == nil
      and batch == nil and conc == nil then
    spec_running = M.SPEC_RUNNING
    default(string.format("max running requests %d an instance while it speculates, "
      .. "split over its DP attention ranks (SGLang's max_running_requests with speculative "
      .. "decoding, unless set: give max_batch or batch)", spec_running))
  end
  return setup_kernels(a, model, d, c, info, cat, default, {
    ep = ep, groups = groups, dp = dp, disagg = disagg, tp = tp, tbo = tbo,
    tbo_auto = tbo_auto, tp_of_ep = tp_of_ep,
    tbo_at = tbo_at, ptp = ptp, pep = pep, pdp = pdp, pg = pg, gpus = gpus, a2a = a2a,
    mtp = mtp, acc = acc, spec_host = spec_host, spec_host_dp = spec_host_dp,
    spec_running = spec_running, batch = batch, conc = conc })
end

-- The result table of a core.serve result r for config s.
local function shown_n(x)
  local i = math.tointeger(x) or (x == math.floor(x) and math.tointeger(math.floor(x)))
  return i and tostring(i) or string.format("%.1f", x)
end

function M.result(r, model, d, s, info)
  local dec, pre, st = r.decode, r.prefill, r.decode.step
  local mem = dec.memory
  local out = {
    moe = true, fits = r.fits, why = r.why,
    model = model.id or model.name or "model", gpu = d.id, gpus = s.gpus,
    tp = s.decode.tp, ep = s.decode.ep, dp_attention = s.decode.dp_attention,
    two_batch_overlap = s.decode.tbo, disagg = r.disagg,
    weights = info.weights, expert_weights = info.expert_weights, kv = info.kv,
    compute = s.compute, input = s.input,
    -- prompt tokens a request finds in the prefix cache (prefix_hit)
    cached_tokens = s.cached,
    output = s.output, mtp = s.mtp,
    layout = M.layout_name(s.decode, s.sbo),
    prefill_layout = r.disagg and M.layout_name(s.prefill) or nil,
    memory = {
      attention = mem.attention, dense = mem.dense, shared = mem.shared,
      experts = mem.experts, embed = mem.embed, other = mem.other, mtp = mem.mtp,
      weights = mem.weights, a2a_buffer = mem.a2a_buffer, workspace = mem.workspace,
      reserve = mem.reserve, expert_slots = mem.expert_slots, kv_budget = mem.kv_budget,
    },
    weights_gpu = mem.weights, kv_per_seq = mem.kv_per_seq, kv_budget = mem.kv_budget,
    -- per replica, as results.lua declares it and as batch is (below): the
    -- engine's mem.max_batch is the batch per GPU the budget holds
    -- (serve.h), and a decode instance of tp GPUs decodes that x tp
    -- sequences (an attention group of a GPUs holds B x a; tp / a groups).
    -- It was the GPU's, so an EP8 default run said batch 1416 beside
    -- max_batch_kv 177 (qwen3-30b-a3b, 8 x H100).  The GPU's is kept
    -- beside it: the batch argument's unit (batch_per_gpu).
    -- The KV's, at most the engine's max_batch over the attention group
    -- (serve.h batch_cap: max_batch 8 on TP16 attention is 0.5 a GPU, 8
    -- an instance), as the dense path's max_batch_kv is at most
    -- max_batch; kv_seqs is the KV's before it (results.lua).
    max_batch_kv = math.floor(math.min(mem.max_batch, mem.batch_cap) * s.decode.tp + 0.5),
    max_batch_kv_per_gpu = math.tointeger(math.min(mem.max_batch, mem.batch_cap))
      or math.min(mem.max_batch, mem.batch_cap),
    kv_seqs = mem.max_batch * s.decode.tp,
    ridge = core().roof_ridge(d, s.compute, true),
    defaults = info.defaults, currency = info.currency,
  }
  -- the fusion, said for the pools whose server runs it (setup_config)
  if info.ar_norm_fusion and not info.ar_norm_said then
    local d_on, p_on = dec.ar_norm_fused, r.disagg and pre.ar_norm_fused
    if d_on or p_on then
      info.ar_norm_said = true
      out.defaults[#out.defaults + 1] = info.ar_norm_fusion ..
        (not r.disagg and "" or d_on and p_on and " in both pools" or
         d_on and " in the decode pool (the prefill pool's layout does not take it)" or
         " in the prefill pool (the decode pool's layout does not take it)")
    end
  end
  if not r.fits then return out end
  -- The decodes fill the step's budget (engine/serve_plan.c colocated,
  -- infer_loaded_ttft's full): a joining prompt gets no room until a
  -- running sequence ends (vLLM V1 admits prompts "while self.waiting
  -- and token_budget > 0"), which is not priced, so ttft_s is one
  -- prompt's.  It was kept without a word: one sequence more a GPU read
  -- 11.8 s under load at 1016 decodes against a 1024 budget, and 0.03 s
  -- at 1024 (qwen3-30b-a3b EP8 TP8 on 8 H100s, vLLM, prefill_tokens 1024).
  if r.ttft_full then
    local note = string.format("TTFT under load not priced: the attention group's %s decode "
      .. "tokens a step fill its step budget of %s tokens, so a joining prompt waits for "
      .. "a running sequence to end; the TTFT is one prompt's (give a batch whose decodes "
      .. "leave room, or a larger prefill_tokens)", shown_n(r.ttft_full), shown_n(r.prefill_tokens))
    local said = false
    for _, e in ipairs(out.defaults) do if e == note then said = true end end
    if not said then out.defaults[#out.defaults + 1] = note end
  end
  -- batch per replica, as results.lua declares it for infer and
  -- infer_plan alike: the serving model's batch (the input batch, SGLang's
  -- "batch size per GPU") is a GPU's, and one decode instance is tp GPUs
  -- (instances = decode_gpus // tp; serve_step.c's block: an attention
  -- group of a GPUs decodes B x a sequences, Tinst = B x q x N tokens an
  -- instance), so the instance decodes batch_per_gpu x tp sequences
  -- together.  Here it was a GPU's while gp.infer_plan's was a replica's.
  out.batch_per_gpu = math.tointeger(st.batch) or st.batch
  local per_inst = out.batch_per_gpu * s.decode.tp
  out.batch = math.tointeger(per_inst) or per_inst
  out.decode_gpus = dec.gpus
  out.prefill_gpus = r.disagg and pre.gpus or 0
  out.instances = dec.gpus // s.decode.tp
  out.ttft_s, out.itl_s, out.tpot_s = r.ttft, r.itl, r.tpot
  -- a colocated burst (requests sent at once): ttft_s the mean over its
  -- requests, each behind the prompts ahead of it; ttft_one_s one prompt's
  out.ttft_one_s = r.ttft_one
  -- One prompt's TTFT (engine/serve_plan.c prompt_steps): the prompt's
  -- new tokens in chunks of prefill_tokens, each chunk a prefill step of
  -- prefill_tokens tokens an attention group -- a full step, other
  -- prompts' tokens filling what one prompt leaves -- and no queueing.
  -- Colocated under a steady load (more than one sequence an instance, no
  -- burst) ttft_s is the TTFT of a request joining it, gp.infer's rule for
  -- a chunked-prefill engine (engine/infer_run.c infer_loaded_ttft, the
  -- same function: serve_plan.c coloc_loaded): the wait for the step in
  -- flight, then ttft_steps steps of ttft_step_s; ttft_one_s one prompt's
  -- steps, ttft_one_steps of them.  It read one prompt's at every load (a
  -- user read the same "TTFT" at 32 and 256 requests).
  -- Both as the engine priced them (its prompt_steps, and prefill_tokens
  -- after serve_defaults), not a second copy of the rule here.
  out.prefill_tokens = math.tointeger(r.prefill_tokens) or r.prefill_tokens
  out.ttft_steps = math.tointeger(r.ttft_steps) or r.ttft_steps
  out.ttft_loaded = r.ttft_loaded or nil
  out.ttft_wait_s, out.ttft_step_s = r.ttft_wait, r.ttft_step
  out.ttft_one_steps = r.ttft_one_steps and math.tointeger(r.ttft_one_steps) or r.ttft_one_steps
  -- the GPUs of the attention group a step's prefill_tokens go to: one
  -- under DP attention, else the layout's TP (the prefill pool's where
  -- disaggregated)
  local pl = r.disagg and s.prefill or s.decode
  out.ttft_group = pl.dp_attention and 1 or (pl.tp or s.decode.tp)
  out.accept = r.accept
  out.tokens_per_s, out.per_gpu = r.tokens_per_s, r.tokens_per_s_gpu
  out.stream_tokens_per_s = 1 / r.itl
  -- the mean gap between a user's tokens, as gp.infer's dense result
  -- names it: here the ITL itself, which holds the prefill stalls (the
  -- side-by-side tables' "mean ITL ms" read "-" on a MoE row)
  out.itl_load_s = r.itl
  -- One output token is the prefill's own (the first token comes out of
  -- the prompt's forward): no decode step runs, so a decode step's
  -- latency and one user's decode rate have no value -- absent, as
  -- gpuplan.infer leaves them out for one model -- not the figures of a
  -- step that never runs.
  if s.output <= 1 then
    out.itl_s, out.tpot_s, out.stream_tokens_per_s, out.itl_load_s = nil, nil, nil, nil
  end
  out.input_tokens_per_s = r.input_tokens_per_s
  out.decode_per_gpu = dec.tokens_per_s_gpu
  out.prefill_per_gpu = pre.tokens_per_s_gpu
  out.pool_ratio = r.disagg and r.pool_ratio or nil
  out.kv_transfer_s = r.disagg and r.kv_transfer or nil
  out.prefill_share_s = r.prefill_share
  out.prefill_experts_s = not r.disagg and r.prefill_experts or nil
  out.prefill_stall = not r.disagg and r.prefill_stall or nil
  out.eager_steps = not r.disagg and r.eager_steps or nil
  out.eager_s = not r.disagg and r.eager or nil
  -- price 0 is a free card: cost 0 (gpuplan.infer); nil: no price
  out.cost_per_mtok = s.price and r.cost_per_mtok or nil
  if s.price and s.price > 0 then
    out.tokens_per_s_per_dollar_hour = r.tokens_per_s / (s.price * s.gpus)
  end
  out.dispatch_ms, out.combine_ms = st.dispatch * 1e3, st.combine * 1e3
  out.a2a_ms, out.a2a_exposed_ms = st.a2a * 1e3, st.a2a_exposed * 1e3
  out.tp_comm_ms, out.compute_ms = st.tp_comm * 1e3, st.compute * 1e3
  out.draft_ms, out.step_ms = st.draft * 1e3, st.time * 1e3
  out.spec_host_ms = st.host * 1e3
  out.dispatch_bytes, out.combine_bytes = st.dispatch_bytes, st.combine_bytes
  out.remote_bytes = st.remote_bytes
  if r.disagg then
    out.coloc = { fits = r.coloc_fits, per_gpu = r.coloc_tokens_per_s_gpu,
                  itl_s = s.output > 1 and r.coloc_itl or nil,
                  -- per replica as out.batch (the same decode layout, colocated)
                  batch = r.coloc_batch * s.decode.tp, batch_per_gpu = r.coloc_batch }
  end
  local op_rows = require("gpuplan.infer").op_rows
  out.ops, out.prefill_ops = op_rows(st), op_rows(pre.step)
  out.decode, out.prefill = st, pre.step
  return out
end

-- The config s with the overlap dec in the decode pool and pre in the
-- prefill pool.
local function with_tbo(s, dec, pre)
  local one = {}
  for k, v in pairs(s) do one[k] = v end
  one.decode = { tp = s.decode.tp, ep = s.decode.ep,
                 dp_attention = s.decode.dp_attention, tbo = dec }
  one.prefill = { tp = s.prefill.tp, ep = s.prefill.ep,
                  dp_attention = s.prefill.dp_attention, tbo = pre }
  return one
end

-- The config s with one micro-batch (two-batch overlap off) in both pools.
local function one_batch(s) return with_tbo(s, false, false) end

-- The overlap that a search left open chose, among the assumptions.
local function say_tbo(info, s, on, pre)
  local why = on and "(DeepSeek's and SGLang's large-EP runs)"
    or "(faster here: each of two micro-batches reads every weight)"
  if pre ~= nil and pre ~= on then
    why = string.format("in decode, %s in prefill (each pool the faster)", tostring(pre))
  end
  table.insert(info.defaults, s._tbo_at, "two_batch_overlap=" .. tostring(on) .. " " .. why)
end

-- gp.infer{...} with the MoE serving options (see the header).
function M.infer(a)
  local model, d, s, info = M.setup(a)
  local ok, r = pcall(core().serve, model, d, s)
  if not ok then error("infer: " .. tostring(r), 3) end
  if s._tbo_auto then
    -- Both ways; overlap stays unless one micro-batch fits where two do
    -- not, or delivers more tokens/s per GPU (at the same batch: a shorter
    -- step; under itl_max: the larger batch the shorter step allows).
    -- Two pools are two servers, each launched with its own flags (SGLang's
    -- GB200 runs turn it off in decode alone, Part I: "This allows two-batch
    -- overlap to be disabled"): each way in each pool.
    local function run(c)
      local ok1, r1 = pcall(core().serve, model, d, c)
      if not ok1 then error("infer: " .. tostring(r1), 3) end
      return r1
    end
    local one = one_batch(s)
    local r1 = run(one)
    local function faster(pool)   -- one micro-batch, in this pool?
      return r1.fits and (not r.fits or
        r1[pool].tokens_per_s_gpu > r[pool].tokens_per_s_gpu)
    end
    if not s.disagg then
      local better = r1.fits and (not r.fits or r1.tokens_per_s_gpu > r.tokens_per_s_gpu)
      if better then s, r = one, r1 end
      say_tbo(info, s, not better)
    else
      local dec, pre = not faster("decode"), not faster("prefill")
      if not dec and not pre then
        s, r = one, r1
      elseif not dec or not pre then
        local mix = with_tbo(s, dec, pre)
        s, r = mix, run(mix)
      end
      say_tbo(info, s, dec, pre)
    end
  end
  local out = M.result(r, model, d, s, info)
  -- A concurrency past what the KV (or max_batch) holds: the engine ran
  -- what they hold (serve_cfg.queue); said as gp.infer says it, per
  -- replica (a decode instance) and per GPU
  local q = r.fits and s._conc and require("gpuplan.infer").queue_note(s._conc, out.batch, out.instances,
    out.kv_seqs, out.batch_per_gpu, s.requests)
  if q then out.defaults[#out.defaults + 1] = q end
  -- With drafts, the same server without them, for comparison (both
  -- reported; the caller chooses): speculation pays where the decode step
  -- is bound by reading the weights, as at small batches, and not where
  -- the verify's (1 + mtp) tokens a sequence cost their full compute, or
  -- where the runtime's speculative path runs fewer requests at once
  -- (spec_running: SGLang's 48) and without its overlap scheduler
  -- (spec_host).  Without them the engine neither loads the MTP module
  -- (serve.c weights) nor holds its KV.
  if s.mtp > 0 and r.fits then
    local c = {}
    for k, v in pairs(s) do c[k] = v end
    c.mtp, c.spec_host, c.spec_host_dp, c.spec_running, c.accept_decay = 0, 0, 0, 0, 1.0
    c.acceptance = nil
    local ok0, r0 = pcall(core().serve, model, d, c)
    if not ok0 then error("infer: " .. tostring(r0), 2) end
    out.no_mtp = { fits = r0.fits, tokens_per_s = r0.fits and r0.tokens_per_s or nil,
                   per_gpu = r0.fits and r0.tokens_per_s_gpu or nil,
                   itl_s = r0.fits and s.output > 1 and r0.itl or nil,
                   batch_per_gpu = r0.fits and r0.decode.step.batch or nil }
  end
  return out
end

-- Does the caller fix the layout (any layout argument given)?
local LAYOUT = args.set [[tp ep dp_attention two_batch_overlap prefill_tp prefill_ep
  prefill_dp_attention]]

-- The fewest TP replicas of gpuplan.infer's model for the target within
-- itl (gp.infer.replicas_for: b.tp, b.pp when given, else the TP sizes up
-- to a node, the search `infer --target` runs too), as gp.infer_plan's
-- table: the deployment plain gp.infer{gpus, tp, pp, batch} prices, with
-- that model.
local function replicas(b, model, target, itl, ttft)
  local g = require("gpuplan.infer").replicas_for(b, target, itl, ttft)
  -- the TP size the search chose, as it priced it (infer.at_search_tp)
  local x = require("gpuplan.infer").at_search_tp(b, g.tp)
  x.gpus, x.batch, x.pp = g.gpus, g.batch, g.pp
  local r = require("gpuplan.infer").infer(x)
  -- The 80% ranges: the chosen deployment's own (gpuplan.ranges).
  return require("gpuplan.ranges").apply("infer", { model = model, gpu = b.gpu, tp = r.tp,
    pp = r.pp, gpus = g.gpus, runtime = b.runtime },
    { gpus = g.gpus, decode_gpus = g.gpus, prefill_gpus = 0, disagg = false,
      layout = require("gpuplan.infer").replica_layout(r.tp, r.pp), batch = g.batch,
      -- the mean ITL the limit bounds (itl_load_s), as the MoE plan's
      tokens_per_s = r.tokens_per_s, per_gpu = r.per_gpu, itl_s = r.itl_load_s,
      -- and the TTFT the limit bounds, one prompt's prefill (infer.lua
      -- M.plan_ttft, which `infer --target` prints): gp.infer's loaded
      -- TTFT at the batch read 84 ms here for Llama 3 8B on an H100 at
      -- batch 335 where the limit passed and the CLI's table printed 28 ms
      ttft_s = require("gpuplan.infer").plan_ttft(r),
      cost_per_mtok = r.cost_per_mtok, currency = r.currency,
      target = target, itl_max = itl, ttft_max = ttft, result = r })
end

-- gp.infer_plan{target = tok/s, itl_max = s or "50ms", <gp.infer arguments>}:
-- the fewest GPUs delivering target output tokens/s with every user within
-- itl_max (default 50 ms).  A MoE model searches EP and TP instances,
-- colocated or disaggregated (what the arguments fix stays fixed); a dense
-- model takes TP replicas (gp.infer.gpus_for).  Returns {gpus, decode_gpus,
-- prefill_gpus, disagg, layout, prefill_layout, batch (a decode replica's:
-- a layout's instance of tp GPUs), tokens_per_s, per_gpu, itl_s, ttft_s,
-- cost_per_mtok, currency, target, itl_max, ttft_max, result (gp.infer's
-- table)}.  ttft_max (s or "500ms", none by default): the plan's TTFT
-- within it too -- a replica's or a colocated instance's prefill step, a
-- prefill pool's step and KV transfer -- which picks among the layouts
-- (no batch changes the model's TTFT).
local function plan_one(a)
  if type(a) ~= "table" then error("infer_plan: expected a table of arguments", 2) end
  -- A misspelt key is named before the target is checked (target_tokens_per_s
  -- would otherwise read as a missing target).
  local options = require "gpuplan.options"
  local bad = options.unknown(a, "infer", function(k) return k == "target" end)
  if bad ~= nil then
    error(options.unknown_message("infer", bad, "infer_plan", { "target" }), 2)
  end
  -- gp.infer's gpus is what this search finds: given, it was dropped and
  -- the plan's own count returned (gpus = 8 answered 32), in silence; a
  -- list of cards (which gp.infer compares) was read as one card's
  -- table ("gpu: keys must be field names, found a number key").
  if a.gpus ~= nil then
    error(args.usage("infer_plan: gpus does not go with target, as the CLI's --gpus and --target "
          .. "(the search finds the fewest GPUs; got gpus " .. shown(a.gpus) .. "): gp.infer prices a given count"), 2)
  end
  -- What the CLI's --target refuses beside it (cmd/infer.lua): the
  -- search picks the batch and the pools, and prices the steady state.
  -- Given here, batch was overwritten and requests and prefill_gpus were
  -- dropped in silence, and a dense model's concurrency read "give batch
  -- = N or concurrency = N, not both" with no batch given.
  for _, k in ipairs { "batch", "concurrency", "prefill_gpus", "requests" } do
    if a[k] ~= nil then
      error(args.usage("infer_plan: " .. k .. " does not go with target, as the CLI's --"
        .. k:gsub("_", "-") .. " and --target (the plan picks the batch and the GPUs; got "
        .. k .. " " .. shown(a[k]) .. ")"), 2)
    end
  end
  if type(a.gpu) == "table" and a.gpu[1] ~= nil then
    error("infer_plan: gpu must be one card, an id or a gpu table (got a list): "
          .. "plan each card, or compare them with gp.infer", 2)
  end
  local target = a.target
  if type(target) ~= "number" or target ~= target or target <= 0 or target == math.huge then
    error("infer_plan: target must be a positive number of output tokens/s (got "
          .. shown(target) .. ")", 2)
  end
  -- The engine's bound on an amount (docs/output.md "Value bounds"),
  -- named here: past it the engine's check named "the ITL limit" too.
  if target > 1e15 then
    error("infer_plan: target must be at most 1e15 output tokens/s (got " .. shown(target) .. ")", 2)
  end
  local itl, msg = limit_s("itl_max", a.itl_max or 0.050)
  if msg then fail("infer: %s", msg) end
  if type(itl) ~= "number" or itl ~= itl or itl <= 0 or itl > 3600 then
    error("infer_plan: itl_max must be a positive time, at most an hour (got "
          .. shown(a.itl_max) .. ")", 2)
  end
  -- ttft_max: none unless given (gp.infer's TTFT bound, M.setup's check)
  local ttft, tmsg = limit_s("ttft_max", a.ttft_max)
  if tmsg then fail("infer: %s", tmsg) end
  if ttft ~= nil and (type(ttft) ~= "number" or ttft ~= ttft or ttft <= 0 or ttft > 3600) then
    error("infer_plan: ttft_max must be a positive time, at most an hour (got "
          .. shown(a.ttft_max) .. ")", 2)
  end
  local b = {}
  for k, v in pairs(a) do b[k] = v end
  b.target, b.itl_max, b.ttft_max = nil, nil, nil
  -- the catalog is read here, before gp.infer's resolve step checks it:
  -- cat = true or {} raised "serve.lua:1502: attempt to index a boolean
  -- value (local 'cat')"; said as every planner says it
  if b.cat ~= nil or b.catalog ~= nil then
    local _, cmsg = require("gpuplan.options").check(b.cat ~= nil and "cat" or "catalog",
      b.cat or b.catalog, "infer")
    if cmsg then error("infer_plan: " .. cmsg, 2) end
  end
  local cat = catalog(b.cat or b.catalog)
  local model = type(b.model) == "table" and b.model or cat:get("models", b.model)
  -- A dense model, or a MoE model as plain TP replicas (tp or pp given,
  -- no MoE serving argument): gp.infer prices such a deployment with
  -- gpuplan.infer's model, so the target counts its replicas with that
  -- same model, and gp.infer at the plan's gpus and batch answers its
  -- ITL and tokens/s exactly (serve_target priced them with this file's
  -- steps: 2330 tokens/s at 49.1 ms where gp.infer said 2187 at 52.8,
  -- qwen3-30b-a3b awq on 4 rtx-4090 as TP2 replicas of 58).
  -- A runtime without expert parallelism (M.NO_EXPERT_PARALLEL, M.setup's
  -- refusal of a MoE layout of several GPUs under it) serves a MoE model
  -- by its own split, TP replicas, the search above; the serving search
  -- below planned EP and DP-attention pools under it (qwen3-235b-a22b on
  -- H100 under llama.cpp: "32 x EP16, DP attention"), which gp.infer of
  -- that plan refuses.  A serving option beside it is refused as there.
  local no_ep = model.moe and (model.moe.experts or 0) > 0 and M.NO_EXPERT_PARALLEL[b.runtime]
  local wants, asked = M.wants(b)
  if no_ep and wants then
    error(args.usage(string.format("infer_plan: runtime %s runs no expert parallelism (%s): the "
      .. "MoE serving model (%s %s) prices SGLang's, vLLM's and TensorRT-LLM's engines: give "
      .. "runtime = sglang, vllm or trtllm, or plan %s's own split, TP replicas, with none of "
      .. "the serving options", b.runtime, no_ep, asked, tostring(b[asked]), b.runtime)), 2)
  end
  if (not model.moe or no_ep or b.tp ~= nil or b.pp ~= nil) and not wants then
    return replicas(b, model, target, itl, ttft)
  end
  b.batch = nil
  if b.concurrency ~= nil then
    error(args.usage("infer_plan: concurrency does not go with target: the plan picks the batch"), 2)
  end
  local fix_layout = false
  for k in pairs(LAYOUT) do if b[k] ~= nil then fix_layout = true end end
  -- eplb places the experts of whatever EP layout the search picks, and
  -- imbalance is that layout's hottest GPU: both kept aside so that
  -- M.setup (ep 1 until the search) does not refuse them -- imbalance was
  -- refused ("applies with expert parallelism") where eplb was taken.
  -- The engine prices imbalance only in an EP layout's all-to-all and
  -- routed experts (serve_step.c sx_imbalance), as it prices eplb.
  -- Set aside, they are checked by no one for a dense model, whose
  -- search has no EP layout to place or skew: refused, as gp.infer
  -- refuses them without expert parallelism (an --eplb target for
  -- llama2-13b was answered as if it had not been given).
  if not (model.moe and (model.moe.experts or 0) > 0) then
    for _, k in ipairs { "eplb", "imbalance" } do
      if b[k] ~= nil then
        fail("infer: %s applies to a MoE model's experts: model '%s' has no routed experts",
          k, tostring(model.id or model.name))
      end
    end
  end
  local eplb = bool_of(b, "eplb")
  local imb = not fix_layout and num_of(b, "imbalance", 1, 64) or nil
  if not fix_layout then b.eplb, b.imbalance = nil, nil end
  -- The search's colocated TP instances (TP1 up to two nodes, ep 1)
  -- are plain TP replicas when no serving option is given: gp.infer{gpus,
  -- tp} prices that deployment with gpuplan.infer's model, so the search
  -- prices them with it too (replicas, above) and the engine's search the
  -- rest.  The serving model's own TP8 steps gave qwen3-30b-a3b on 8
  -- h100-sxm 12898 tokens/s at 80 a GPU where gp.infer of that plan said
  -- 10450 at a mean ITL of 61 ms, past the 50 ms the plan promised.  With
  -- a serving option (mtp, disagg ...) gp.infer prices TP with the serving
  -- model too, as the search then does.
  local plain_tp = not fix_layout and not M.wants(b)
  local m, d, s, info = M.setup(b)
  s.ttft_max = ttft
  if not fix_layout then
    s.eplb = eplb == true
    if imb then s.imbalance = imb end
  end
  local ok, r, p = pcall(core().serve_target, m, d, s, target, itl, fix_layout, b.disagg ~= nil,
                         plain_tp)
  if plain_tp then
    -- the fewest GPUs, then the most tokens/s (serve_target's order); a
    -- TP plain inference refuses (past a node) or that cannot meet the
    -- target is no candidate
    -- Every TP size up to a node (gp.infer.target_tps), the dense
    -- model's search: a MoE model that fits one GPU is served by TP1
    -- replicas as a dense one is; with only TP of one and two nodes,
    -- qwen3-30b-a3b at 20000 tok/s on h200-sxm took 16 GPUs where --tp 1
    -- found 6.  (TP past a node is refused by plain inference.)
    local okb, best = pcall(replicas, b, model, target, itl, ttft)
    -- Both refused by the TTFT bound: the refusal of the quicker first
    -- token is what the best layout gets (a TP8 replica's prefill of one
    -- prompt can be quicker than any serving instance's chunk step).
    local function took(e)
      return tonumber(tostring(e):match("TTFT .- takes (%d[%d.e+-]*) ms"))
    end
    if not okb and not ok and took(best) and (not took(r) or took(best) < took(r)) then
      ok, r = false, (require("gpuplan.cli").clean(best):gsub("^[^%s:]+:%d+: ", ""):gsub("^infer: ", ""))
    end
    if not okb then best = nil end
    if best and (not ok or best.gpus < p.gpus or
                 (best.gpus == p.gpus and best.tokens_per_s > r.tokens_per_s)) then
      return best
    end
  end
  if s._tbo_auto and fix_layout then
    -- The layout is fixed but the overlap open: both ways, the fewer GPUs
    -- (then the more tokens/s) kept, as gp.infer keeps the faster.
    local one = one_batch(s)
    local ok1, r1, p1 = pcall(core().serve_target, m, d, one, target, itl, true,
                              b.disagg ~= nil)
    local better = ok1 and (not ok or p1.gpus < p.gpus or
                            (p1.gpus == p.gpus and r1.tokens_per_s > r.tokens_per_s))
    if better then ok, r, p, s = ok1, r1, p1, one end
    if ok then say_tbo(info, s, not better) end
  end
  if not ok then error("infer_plan: " .. require("gpuplan.cli").clean(r), 2) end
  s.gpus, s.prefill_gpus, s.disagg = p.gpus, p.prefill_gpus, p.disagg
  s.decode = { tp = r.decode.tp, ep = r.decode.ep, dp_attention = r.decode.dp_attention,
               tbo = r.decode.tbo }
  if p.disagg then
    s.prefill = { tp = r.prefill.tp, ep = r.prefill.ep,
                  dp_attention = r.prefill.dp_attention, tbo = r.prefill.tbo }
  end
  if not fix_layout and s.imbalance == 0 and (r.decode.ep > 1 or
      (p.disagg and r.prefill.ep > 1)) then
    say_placement(function(t) info.defaults[#info.defaults + 1] = t end, eplb, b.runtime)
  end
  local out = M.result(r, m, d, s, info)
  -- The plan's TTFT is what its ttft_max bounds, one prompt's prefill
  -- steps (engine/serve_plan.c decode_side), as gp.infer_plan's dense
  -- route keeps one prompt's (gpuplan.infer gpus_for); its result keeps
  -- the TTFT under the plan's load (ttft_loaded, serve_plan.c
  -- coloc_loaded).  The same rule as the TP route's (infer.lua
  -- M.plan_ttft), not a copy of it.
  local plan_ttft = require("gpuplan.infer").plan_ttft(out)
  return require("gpuplan.ranges").apply("infer", { model = m, gpu = d.id, tp = out.tp,
    ep = out.ep, gpus = p.gpus, runtime = b.runtime },
    { gpus = p.gpus, decode_gpus = out.decode_gpus, prefill_gpus = out.prefill_gpus,
      disagg = p.disagg, layout = out.layout, prefill_layout = out.prefill_layout,
      -- per replica, as results.lua declares batch and as the TP-replica
      -- route (replicas, above) returns it: M.result's (a GPU's is
      -- out.batch_per_gpu).  EP8 at 72 a GPU returned 72 where the TP
      -- route's 421 was a replica's.
      batch = out.batch, tokens_per_s = out.tokens_per_s, per_gpu = out.per_gpu,
      itl_s = out.itl_s, ttft_s = plan_ttft, cost_per_mtok = out.cost_per_mtok,
      currency = out.currency, target = target, itl_max = itl, ttft_max = ttft, result = out })
end

-- The plan; with mtp, the same search without drafts beside it (no_mtp:
-- the plan's gpus, layout, prefill_layout, batch, tokens_per_s, itl_s,
-- cost_per_mtok, or fits = false and why), as gp.infer reports the same
-- server without them: MTP's drafts gain where the decode step reads the
-- weights anyway and lose where SGLang's speculative path runs fewer
-- requests at once (M.SPEC_RUNNING) than the ITL bound would allow.
function M.plan(a)
  local p = plan_one(a)
  if type(a) == "table" and a.mtp ~= nil then
    local b = {}
    for k, v in pairs(a) do b[k] = v end
    b.mtp, b.acceptance = nil, nil
    local ok0, p0 = pcall(plan_one, b)
    p.no_mtp = ok0 and { fits = true, gpus = p0.gpus, layout = p0.layout,
                         prefill_layout = p0.prefill_layout, batch = p0.batch,
                         tokens_per_s = p0.tokens_per_s, itl_s = p0.itl_s,
                         cost_per_mtok = p0.cost_per_mtok }
      or { fits = false, why = require("gpuplan.args").unplaced(p0) }
  end
  return p
end
-- gp.infer_plan: a misuse names the script's line (gpuplan.args).
-- gp.infer's refusals of the options they share (input, kv, price ...)
-- read "infer: ..." from inside the plan, naming a function the script
-- did not call: they are infer_plan's here, as the CLI's `infer --target`
-- keeps them its own (cmd/infer.lua rewrites the other way).
local plan_api = require("gpuplan.args").api(M.plan)
function M.infer_plan(...)
  local r = table.pack(pcall(plan_api, ...))
  if r[1] then return table.unpack(r, 2, r.n) end
  local e = r[2]
  if type(e) == "string" then
    e = e:gsub("^infer: ", "infer_plan: ", 1):gsub("^([^%s:]+:%d+: )infer: ", "%1infer_plan: ", 1)
  end
  error(e, 0)
end

return M
