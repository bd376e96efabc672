-- gpuplan.train: how long one training step takes, where the time goes,
-- and what a run costs.
--
--   local gp = require "gpuplan"
--   local r = gp.train{ model = "llama3-70b", gpu = "h800-sxm", gpus = 64,
--                       tp = 4, pp = 2, zero = 1, seq = 8192, global_batch = 512,
--                       tokens = 1e12, price = "$2.00/h" }
--   print(r.fits, r.step_s, r.mfu, r.tokens_per_s, r.days, r.cost)
--   for _, p in ipairs(r.parts) do print(p.name, p.seconds, p.hidden) end
--
-- The training options of gp.memory (the job: model, gpu, gpus, method,
-- precision, tp/pp/cp/ep/vpp, zero, sp, seq, batch = micro-batch,
-- recompute, LoRA ...; not its inference and RL ones) plus the following,
-- each declared in gpuplan.options:
--   global_batch  sequences per step (default: ~4M tokens for pretraining,
--                 128 sequences for fine-tuning, a multiple of dp x batch)
--   system        catalog system id (a node: GPUs, scale-up fabric, NICs);
--                 default the catalog's system of this GPU, else one node
--                 of the GPU's NVLink domain
--   nics, nic_fabric, gpus_per_node   override the node
--   order         rank order, innermost first (default tp-cp-ep-dp-pp)
--   overlap_grad_reduce, overlap_param_gather, tp_overlap, overlap_p2p,
--   ep_overlap    booleans; defaults by stack (see OVERLAPS)
--   causal_flops  count causal attention at half in model FLOPs (default
--                 false: Megatron's and PaLM's full s^2)
--   embed_flops   count the untied input embedding's weights in model FLOPs
--                 (default false: the lookup is no matmul)
--   no_router_flops  leave the MoE router's gate out of model FLOPs
--                 (default false: counted, 2 h E a token forward)
--   unfused_loss  the loss as Megatron-Core's unfused vocab-parallel
--                 cross-entropy (default false: a fused loss kernel)
--   mcore_loss    the loss is Megatron-Core's: without unfused_loss its
--                 native fused one, four compiled graphs (default false:
--                 one fused loss kernel)
--   eager_loss    the loss op by op outside the compiled layers (kernels
--                 fused; default false: compiled with them)
--   metric_losses no-grad cross-entropies over the logits after each
--                 micro-batch's backward (Composer's train metrics; default 0)
--   pp_microbatches micro-batches each pipeline schedule call runs
--                 (NeMo AutoModel's local_batch_size / pp_microbatch_size;
--                 default 0: the step's all in one call)
--   kv_repeat     K and V copied to every query head before the attention
--                 kernel (default false: the kernel reads the GQA heads)
--   sac_attn_recompute  recompute op's save list lacks the fused attention
--                 kernel that runs: its forward re-runs in the backward and
--                 its output is not kept (default false: kept; torchtitan's
--                 before b39377f9f with SDPA's cuDNN backend)
--   pad_mask      micro-batches padded to their longest sample, the mask
--                 handed to transformers' FlashAttention-2 path (kernels eager,
--                 flash): the varlen gathers and scatter of q, k, v and the
--                 output (default false: unpadded, flash_attn_func)
--   pad_share     the share of each micro-batch's tokens that are padding of
--                 one pad id, which a MoE router sends to the same top-k
--                 experts: the eager expert loop's stretches (train_layer.c
--                 hf_expert_stretches; default 0)
--   async_tp_allreduce  Megatron-LM's asynchronous TP all-reduce: the
--                 column-parallel linears' input-gradient collectives under
--                 their weight-gradient GEMMs, and under SP their inputs'
--                 second all-gathers under the input-gradient GEMMs
--                 (default: on with stack megatron and kernels fused --
--                 Megatron-Core's and Transformer Engine's linears -- off
--                 on Intel's Gaudi and on the other stacks; under sp the
--                 megatron stack's linears run this way regardless)
--   tp_input_per_linear  under SP, each column-parallel projection (q, k, v;
--                 gate, up) its own ColwiseParallel(input_layouts=Shard(1)):
--                 its own input all-gather (eager) and input-gradient
--                 reduce-scatter (default false: one a block)
--   split_proj    q, k, v and the gated MLP's gate and up as linears of
--                 their own, a GEMM each (default false: fused weights)
--   cp_rotate     how the CP ring moves K and V: p2p (Transformer Engine's
--                 ring, the default), allgather or alltoall (PyTorch's
--                 context_parallel with that rotater, on q-wide K and V)
--   master_copy   the optimizer copies its fp32 master to the 16-bit weights
--                 after Adam, the master read again (default on with stack
--                 megatron and kernels fused: Megatron's optimizers)
--   kernels       eager (Hugging Face modules, one kernel per tensor op) or
--                 fused (one per operator); default eager on the hf and
--                 deepspeed stacks (transformers' modules), fused on megatron
--   attn_kernel   fused attention kernel, one of gpuplan.roofline's
--                 attention_kernels (efficient: PyTorch SDPA's memory-efficient
--                 backend, the whole score square); default the arch's: what
--                 frameworks pick there
--   cudnn         the cuDNN release the run used ("9.11"): cuDNN's fused
--                 attention at the newest release the catalog times at or
--                 before it (default: the arch's reference release)
--   grad_reduce   dtype of the DP gradient reduction: fp32|bf16|fp16
--                 (default the recipe's gradient dtype)
--   tokens        tokens to train on (a number, or text: "2e12", "2B", "1.5T"): time
--                 and cost
--   price         per GPU-hour ("$2.49/h", a number, a catalog price id);
--                 default the cheapest catalog price of the GPU
--   market        the price regions the default price comes from: "cn"
--                 (a buyer in China), "us,global,overseas" ...; default any
--   scaling       true: also the scaling efficiency against one node
--
-- Result: plain table (seconds, FLOP, bytes): fits, step_s, parts {name,
-- seconds, hidden} in the engine's order, microbatches, bubble_frac, stage,
-- stage_layers, tokens_per_step, tokens_per_s, tokens_per_s_gpu, mfu, hfu,
-- model_tflops_gpu, hw_tflops_gpu, train_s, days, cost, currency, memory
-- (gp.memory's breakdown), warnings, groups, defaults; recompute is the
-- policy the step is of: with recompute = "auto" the one chosen, and then
-- recompute_auto = true.

local units = require "gpuplan.units"
local memory = require "gpuplan.memory"
local args = require "gpuplan.args"

local M = {}

-- Seconds per parameter of Megatron-Core's offloaded optimizer step
-- (HybridDeviceOptimizer at optimizer_offload_fraction 1 with
-- overlap_cpu_optimizer_d2h_h2d: the gradient down, a fused
-- torch.optim.AdamW on the host, the parameter up), as NeMo RL measured
-- it (github NVIDIA-NeMo/RL PR #3628, "The single-GPU Qwen3-0.6B
-- microbenchmark": mean step 0.752 s without offload, 1.678 s at "100%,
-- overlap"): 0.926 s over Qwen3-0.6B's 0.596 B parameters.  One rank
-- per GPU, each on its own thread (Ray's workers run with
-- OMP_NUM_THREADS=1 when no num_cpus is asked, as verl's and NeMo RL's
-- are), so the node's ranks step side by side.
M.MEGATRON_CPU_ADAM_S = 0.926 / 0.596e9

-- The host's side of DeepSpeed's offloaded step at stages 1-2 on one CPU
-- thread, per parameter.  deepspeed/runtime/zero/stage_1_and_2.py step()
-- (v0.12.6) with cpu_offload runs three passes over the rank's fp32
-- partition on the CPU: unscale_and_clip_grads' grad.data.mul_ (read and
-- write the fp32 gradient, 8 B; it runs at every step, combined_scale 1
-- when nothing clips), DeepSpeedCPUAdam's step (read the fp32 parameter,
-- gradient and both moments, write the parameter and moments: 28 B), and
-- "bit16_partitions[partition_id].data.copy_(fp32_partition.data)", a
-- blocking copy to the GPU's bf16 partition, which PyTorch converts on the
-- CPU first (aten/src/ATen/native/cuda/Copy.cu copy_kernel_cuda: "For
-- blocking transfers conversions are performed on CPU"; read 4 B, write a
-- 2 B copy): 42 B.  One thread's rate is NeMo RL's measured single-thread
-- AdamW (M.MEGATRON_CPU_ADAM_S: a fused torch AdamW over the same 28 B of
-- fp32 state, one Ray worker thread a rank), scaled by the bytes: 42 / 28
-- of it.
M.DEEPSPEED_CPU_STEP_THREAD_S = 42 / 28 * M.MEGATRON_CPU_ADAM_S

local function core() return require "gpuplan.core" end
local function catalog(cat) return cat or require("gpuplan").catalog() end
local function fail(fmt, ...) error(string.format(fmt, ...), 3) end
-- A usage refusal (gpuplan.args usage): options that do not go together,
-- whatever the model and the card; the command line exits 2 on it.
local function usage(fmt, ...) error(args.usage(string.format(fmt, ...)), 3) end

-- The options, declared in gpuplan.options: gp.train takes those of
-- `gpuplan train`, gp.sweep those of `gpuplan plan`.  EXTRA and
-- SWEEP_EXTRA are what each takes that gp.memory does not.
local options = require "gpuplan.options"
local function minus(a, b)
  local s = {}
  for k in pairs(a) do if not b[k] then s[k] = true end end
  return s
end
M.OPTIONS = options.keys("train")
M.EXTRA = minus(M.OPTIONS, options.keys("fit"))

M.METHODS = { pretrain = true, full = true, lora = true, qlora = true }

-- What gp.sweep's job takes besides gp.memory's (the layout is swept).
M.SWEEP_EXTRA = minus(minus(options.keys("plan"), options.own("plan", "train")),
                      options.keys("fit"))

-- Which communication each software stack overlaps by default.
--   megatron   Megatron-Core with --overlap-grad-reduce and
--              --overlap-param-gather (the distributed optimizer's
--              bucketed reduce-scatter / all-gather under backward and
--              forward), overlapped p2p for the interleaved schedule;
--              TP overlap (Userbuffers) off unless asked (tp_overlap).
--   deepspeed  overlap_comm off at ZeRO 0-2 (the DeepSpeed config
--              default); ZeRO-3's gathers and reduce-scatters, issued
--              from module hooks, hide nothing in its published runs
--              (the validation predictor's deepspeed profile says why).
--   hf         PyTorch DDP overlaps bucketed all-reduce with backward;
--              FSDP prefetches the next layer's gather.
M.OVERLAPS = {
  megatron = { overlap_grad_reduce = true, overlap_param_gather = true, overlap_p2p = true },
  deepspeed = { overlap_grad_reduce = false, overlap_param_gather = false, overlap_p2p = false },
  hf = { overlap_grad_reduce = true, overlap_param_gather = true, overlap_p2p = false },
}

-- The overlaps a config sets (each a boolean, the stack's default when
-- not given), in the order the result lists them.
M.OVERLAP_KEYS = { "overlap_grad_reduce", "overlap_param_gather", "tp_overlap", "overlap_p2p",
                   "ep_overlap" }

-- GEMM precision by training precision.
local COMPUTE = { bf16 = "bf16", fp16 = "fp16", fp8 = "fp8", fp32 = "fp32", tf32 = "tf32" }

-- PCIe bandwidth per direction of a GPU's host link (gpuplan.comm.pcie_bw:
-- the same rule as gpuplan.infer's prefill offload).
function M.pcie_bw(g) return require("gpuplan.comm").pcie_bw(g) end

-- The catalog system a job of this GPU runs on when none is given, or
-- nil; the GPUs per node a job of this GPU gets by default (that system's,
-- else the GPU's scale-up domain, else 8); and a note for the defaults
-- line when the choice passed over a user system.
-- gpuplan fit's node warnings use the same rule.
--
-- A card of the base catalog (the search path's first directory: the
-- shipped one) takes a system of the base catalog, the first by id; a
-- user system that holds it is used only when asked (system = ID): a
-- user's 3-card box without NICs became the default node of every job of
-- the card, ahead of the shipped pcie-8x, only because its id sorted
-- first.  A card of a user catalog takes its catalog's systems (the
-- earliest layer first, then by id).
function M.default_node(gpu, cat)
  local home = cat.gpus[gpu.id] == gpu and gpu._home or nil
  local best, others = nil, {}
  for _, id in ipairs(cat:ids("systems")) do
    local s = cat.systems[id]
    if s.gpu == gpu.id then
      if home == 1 and s._home ~= 1 then
        others[#others + 1] = id
      elseif not best or (s._home or 1) < (best._home or 1) then
        best = s
      end
    end
  end
  -- The passed-over user systems, named: one is used only when asked.
  local asked = #others > 0 and string.format("user system%s %s only when asked",
    #others > 1 and "s" or "", table.concat(others, ", ")) or nil
  if not best then return nil, gpu.scaleup and gpu.scaleup.domain or 8, asked end
  return best, best.gpus, asked and "the shipped node; " .. asked or nil
end

-- A system option: an id, or a script's own system table checked as a
-- catalog system{...} is -- as gp.infer and gp.comm take one; gp.train,
-- gp.rl and gp.sweep refused it ("system must be an id, a string (got a
-- table)"), so a node of one's own needed a catalog file for training.
function M.system_of(v, cat)
  if type(v) == "table" then return require("gpuplan.catalog").entry("system", v) end
  return cat:get("systems", v)
end

-- The placement of `gpus` GPUs whose count the node (topo.gpus_per_node,
-- the system's or --gpus-per-node) does not divide, said on the defaults
-- line; nil where the nodes are whole or the job is within one node.
-- Such a job is priced, not refused: a launcher places rank r on node
-- floor(r / gpus_per_node), the last node holding the rest (torchrun's
-- --nproc-per-node, Slurm's --ntasks-per-node; engine/layout.h
-- layout_fill_of), and each collective on the poorest node it spans
-- (engine/comm.h: NCCL runs every rank on the poorest rank's graph),
-- as gpuplan comm prices and names "3 nodes x 8 GPUs, 4 on the last".
-- A node that is an NVLink domain of several hosts (host_gpus) is
-- filled by the scheduler, host by host: no last node to name.
function M.partial_node(gpus, topo)
  local G = topo.gpus_per_node
  if not gpus or not G or gpus <= G or gpus % G == 0 then return nil end
  if topo.host_gpus and topo.host_gpus < G then return nil end
  local nodes = -(-gpus // G)
  local last = gpus - (nodes - 1) * G
  return string.format("nodes=%d (%d GPUs fill %d node%s of %d and %d GPU%s on the last, as a "
    .. "launcher places ranks in order; the groups that reach it are priced there)", nodes, gpus,
    nodes - 1, nodes - 1 == 1 and "" or "s", G, last, last == 1 and "" or "s")
end

-- The node the job runs on: a catalog system, or one built from the GPU.
local function topology(o, gpu, cat, default, gpus)
  local comm = require "gpuplan.comm"
  local sys
  if o.system ~= nil then
    -- neither an id nor a system table: said as gpu = 5 is ("system must
    -- be an id, a string (got 7)" came without the function's name, and
    -- left out the table it also takes)
    if type(o.system) ~= "string" and type(o.system) ~= "table" then
      fail("train: system must be an id or a table (got %s)", args.shown(o.system))
    end
    sys = M.system_of(o.system, cat)
    if gpu and sys.gpu ~= gpu.id then
      fail("train: system '%s' holds %s, not %s", tostring(sys.id), tostring(sys.gpu), gpu.id)
    end
  elseif gpu then
    local note
    sys, _, note = M.default_node(gpu, cat)
    if sys or note then
      default((sys and "system=" .. sys.id or "no system") .. (note and " (" .. note .. ")" or ""))
    end
  end
  local spec = comm.node_spec(sys, gpu, default, "train", o, gpus)
  -- A job (or a sweep's largest count) that cannot span the nodes is
  -- refused here.
  local bad = gpus and comm.no_nics(spec, gpus, "train", cat)
  if bad then fail("%s", bad) end
  local t = comm.from_fabrics(spec, cat)
  t.nic_path_bw = M.pcie_bw(gpu) or nil
  return t, sys, spec.name
end

-- Price per GPU-hour: the caller's, else the cheapest catalog offer of
-- the GPU in the buyer's markets (gpuplan.prices.per_hour; the buyer:
-- --currency/--market, GPUPLAN_CURRENCY/GPUPLAN_MARKET, the catalog's
-- settings).  No offer there: no price, and the defaults say where the
-- card is offered.
local function price_of(o, gpu, cat, buyer, default)
  local ok, v = pcall(require("gpuplan.prices").per_hour, cat, o.price, gpu.id, buyer, default)
  if not ok then fail("train: %s", v) end
  return v
end

local function tokens_of(v)
  if v == nil then return nil end
  -- a number, or text as the command line gives it ("2e12", "2B"):
  -- options.total, the one reader of a run's count of tokens
  local n = options.total(v)
  -- the engine's bound on an amount (GP_AMOUNT_MAX), checked here so that
  -- a sweep refuses it once, before any layout
  if not n or n ~= n or n <= 0 or n > require("gpuplan.schema").AMOUNT_MAX then
    -- the text typed ("2e20", "-5B"), as --itl-max names its own
    fail("train: tokens must be a positive number up to 1e+15 (got %s)",
      type(v) == "string" and n and v or args.shown(v))
  end
  return n
end

-- The run's tokens (cfg.tokens): tokens as given, or the dataset's --
-- samples x sample_tokens (the sequence, seq, unless given) x epochs (1
-- unless given) -- a fine-tuning recipe's dataset and num_train_epochs --
-- said on the defaults line; nil where neither is given.  Both ways at
-- once is refused, and so are epochs or sample_tokens without samples.
function M.tokens_total(o, seq, default)
  -- each value's kind first, as every numeric option's (epochs = true).
  -- samples and sample_tokens were checked against their declared ranges
  -- (gpuplan.options resolve) before this; train's epochs is a variant
  -- of rl's whole count with a type of its own, which that step leaves
  -- to its reader, so its range is checked here.  (0, 1e6]: more than a
  -- fraction of a pass, and a bound on what is typed, not a property of
  -- any run -- a million passes over even one 16-token sample is past
  -- no real recipe; the product's own bound is tokens_of's 1e15.)
  local ep = o.epochs
  if ep ~= nil and (type(ep) ~= "number" or ep ~= ep or ep <= 0 or ep > 1e6) then
    fail("train: epochs must be a number in (0, 1e6] (got %s)", args.shown(ep))
  end
  local st = o.sample_tokens
  if o.samples == nil then
    for _, k in ipairs { "epochs", "sample_tokens" } do
      if o[k] ~= nil then
        usage("train: %s %s counts over the dataset's samples: give samples = N with it (the "
          .. "run's tokens are samples x sample_tokens x epochs)", k, args.shown(o[k]))
      end
    end
    return tokens_of(o.tokens)
  end
  -- samples as the text typed ("50k", "5e4"), as tokens are shown: its
  -- number read by options.total, the reader of --tokens' suffixes
  local typed = type(o.samples) == "string" and o.samples or args.shown(o.samples)
  if o.tokens ~= nil then
    usage("train: tokens %s and samples %s both set the run's tokens (samples x "
      .. "sample_tokens x epochs): give one", type(o.tokens) == "string" and o.tokens
      or args.shown(o.tokens), typed)
  end
  local n = options.total(o.samples)
  if math.type(n) == nil or n ~= math.floor(n) or n < 1 or n > 1e15 then
    fail("train: samples must be a whole number 1..1e15, or one with a suffix K, M, B (or G) "
      .. "or T (50k) "
      .. "(got %s)", typed)
  end
  n = math.tointeger(n) or n
  ep = ep or 1
  local L = st or seq
  -- a sample past the sequence is cut to it: not a mean the run trains on
  if seq and L > seq then
    fail("train: sample_tokens %s is more than seq %d: a sample is at most one sequence "
      .. "(give seq = N of the longest, or the mean of the samples as cut)", args.shown(L), seq)
  end
  -- the product past the bound names the three it multiplies: "tokens
  -- must be ... up to 1e+15" named --tokens, which was not given
  if n * L * ep > require("gpuplan.schema").AMOUNT_MAX then
    fail("train: samples %s x %s tokens a sample x epochs %g is %.4g tokens, past 1e+15",
      typed, string.format("%g", L), ep, n * L * ep)
  end
  local tokens = tokens_of(n * L * ep)
  default(string.format("tokens=%.4g (samples %s x %s%s x epochs %g)", tokens,
    string.format("%.0f", n), string.format("%g", L), o.sample_tokens and " tokens a sample"
    or " (seq: each sample a whole sequence)", ep))
  return tokens
end

-- The global batch of a training step (p: memory.prepare's, cfg its
-- config): the option, else what a run of this kind uses, rounded up to
-- whole micro-batches on every data-parallel rank (a sweep's layouts
-- each check that they divide it); its default said through default.
local function global_batch(o, p, cfg, sweep, default)
  local per = cfg.dp * (cfg.micro_batch or 1)
  local gb = o.global_batch
  -- microbatches, the step's micro-batches a pipeline: the global batch is
  -- that many dp x batch (the engine's step counts them from the global
  -- batch, its memory from microbatches: the two must agree).  gp.sweep
  -- does not take it (each layout has its own dp).  0 is the engine's
  -- "from the global batch", as if not given.
  local mbs = o.microbatches ~= 0 and o.microbatches or nil
  if mbs ~= nil and gb ~= nil and gb ~= mbs * per then
    usage("train: microbatches %d and global_batch %d disagree: the global batch is the "
      .. "micro-batches x dp x batch = %d x %d x %d = %d", mbs, gb, mbs, cfg.dp,
      cfg.micro_batch or 1, mbs * per)
  elseif mbs ~= nil then
    gb = mbs * per
  end
  if gb == nil then
    local text
    gb, text = options.default("global_batch",
      { method = p.method, seq = cfg.seq, per = not sweep and per or nil })
    default(text)
  end
  -- At most 2^24 sequences, the engine's count bound: the largest
  -- published steps are ~16,000 sequences (4M tokens of 256), and 2^40
  -- gave a 1e11 s step.
  local gb_max = require("gpuplan.memory").COUNT_MAX
  if type(gb) ~= "number" or gb ~= math.floor(gb) or gb < 1 or gb > gb_max then
    fail("train: global_batch must be a whole number of sequences, 1..%d (got %s)", gb_max,
      args.shown(gb))
  end
  if not sweep and (gb < per or gb % per ~= 0) then
    usage("train: global_batch %d is not a multiple of dp x batch = %d x %d", gb, cfg.dp,
      cfg.micro_batch or 1)
  end
  -- a count, an integer (global_batch = 64.0, as JSON and a division
  -- give it, came back in the result as 64.0 where 64 gives 64)
  return math.tointeger(gb)
end

-- The rule of the options that hold under one sharding only (DeepSpeed's
-- zero_reduce allreduce, zero3_gather per_param and the stage3_* buckets
-- prefetch_bucket_size, max_live_parameters, max_reuse_distance, FSDP's
-- ckpt_outside_fsdp), as cfg (a setup's) states them: a function
-- (zero, fsdp, recompute, sweep) -> why a layout at ZeRO stage zero, with
-- the FSDP rule fsdp (the engine reads it at zero 2 and 3 only: cfg.fsdp),
-- under recompute, is refused, or nil.  gp.train's setup asks it of its
-- own layout (sweep: a plan's, where only the stated zero and fsdp are
-- checked: each layout it searches takes an option where it can), and a
-- job's step (gp.train_job, gp.rl_job: engine lgp_job_refusal) of each
-- layout it prices.  given_fsdp: the user's fsdp, for the message;
-- stage3: the stage3_* bucket given (memory.stage3_key), or nil.
--
-- Two rules hold for the job's whole layout, asked of a job's step with
-- its tp and pp (gp.train's own layout is refused where it is read:
-- memory.ulysses, and the muon rule here):
-- * Muon on the megatron stack needs zero 0 (memory.muon_refusal: its
--   source and words).
-- * A Ulysses job's step at pp or tp > 1 where its stack's Ulysses has no
--   such axis (memory.ulysses_refusal, the words gp.train says).
local function sharding_rule(cfg, given_fsdp, stage3, stated_rs)
  local allreduce, per_param, ckpt = cfg.zero_allreduce, cfg.zero3_per_param,
    cfg.ckpt_outside_fsdp
  local early = cfg.ckpt_early_stop
  local sac_attn = cfg.sac_attn_recompute
  local stack = tostring(cfg.stack)
  local mem = require "gpuplan.memory"
  local opt = cfg.optimizer
  local ulysses = cfg.cp_ulysses and cfg.cp
  return function(zero, fsdp, recompute, sweep, tp, pp)
    local muon = not sweep and mem.muon_refusal(opt, stack, zero)
    if muon then return muon end
    if ulysses and (tp or pp) then
      local why = mem.ulysses_refusal(ulysses, stack, pp, tp)
      if why then return why end
    end
    fsdp = (zero or 0) >= 2 and fsdp
    if allreduce and (fsdp or (not sweep and zero ~= 1 and zero ~= 2)) then
      return "zero_reduce allreduce is DeepSpeed's stage 1 and 2: it needs zero 1 or 2 "
        .. "without fsdp"
    end
    -- DeepSpeed's stage 1 has no reduce-scatter path: it all-reduces its
    -- gradients in every version (engine/train.c step_allreduce, with the
    -- source), and the step is priced so.  A stated reduce_scatter there
    -- would be priced as what DeepSpeed does, not as said: refused.  (A
    -- plan's zero 1 layouts on the stack take the all-reduce, as
    -- zero_reduce's help says.)
    if stated_rs and stack == "deepspeed" and not sweep and zero == 1 then
      return "zero_reduce reduce_scatter: DeepSpeed's ZeRO stage 1 reduces gradients by an "
        .. "all-reduce in every version (it has no reduce-scatter path): state zero 2, "
        .. "zero_reduce allreduce, or another stack"
    end
    -- Without ZeRO (zero 0: DDP, or DeepSpeed and Megatron with no
    -- sharded state) every rank keeps whole gradients and all-reduces
    -- them; no stack reduce-scatters there.  A stated reduce_scatter
    -- would be priced as the all-reduce in silence: refused, as
    -- allreduce is at zero 3.
    if stated_rs and not sweep and (zero or 0) == 0 then
      return "zero_reduce reduce_scatter is ZeRO's (stages 1 to 3) or FSDP's: at zero 0 every "
        .. "rank keeps whole gradients and all-reduces them; state zero 1, 2 or 3"
    end
    if per_param and (fsdp or (not sweep and zero ~= 3)) then
      return "zero3_gather per_param is DeepSpeed's stage 3: it needs zero 3 without fsdp"
    end
    if stage3 and not sweep and zero ~= 3 then
      return string.format("%s is DeepSpeed's stage 3 (stage3_%s): it needs zero 3 "
        .. "(got zero %s)", stage3, stage3, tostring(math.tointeger(zero) or zero))
    end
    if ckpt and not sweep and (not fsdp or zero ~= 3 or recompute ~= "full") then
      -- zero 3 without FSDP is DeepSpeed's stage 3 (the deepspeed and
      -- megatron stacks without sharding): say so, or "got zero 3" reads
      -- as what was asked for.
      return string.format("ckpt_outside_fsdp is a checkpoint around each FSDP unit: it "
        .. "needs fsdp = full_shard (zero 3) and recompute = full (got zero %s%s, "
        .. "recompute = %s)", tostring(math.tointeger(zero) or zero), (zero ~= 3 or fsdp) and ""
          or string.format(" without fsdp on the %s stack", stack), tostring(recompute))
    end
    -- The early stop is full recompute's (engine/train_layer.c
    -- early_stop_tail): under any other policy it would change nothing.
    -- A plan searches the recompute and prices it where a layout takes full.
    if early and not sweep and recompute ~= "full" and recompute ~= "auto" then
      return string.format("ckpt_early_stop is how PyTorch's non-reentrant checkpoint "
        .. "re-runs a block: it needs recompute = full (got recompute = %s)",
        tostring(recompute))
    end
    -- The attention a save list leaves out is recompute op's (engine/
    -- memory_act.c act_op_saved; auto never picks op): under another
    -- policy the flag would change nothing.  A plan's list is checked
    -- where the sweep reads it (gpuplan.sweep).
    if sac_attn and not sweep and recompute ~= "op" then
      return string.format("sac_attn_recompute prices the attention missing from recompute "
        .. "op's save list: it needs recompute = op (got recompute = %s)", tostring(recompute))
    end
    -- A plan searches the recompute, but only a stated FSDP full_shard
    -- makes its layouts FSDP's (cfg.fsdp): without it no layout would
    -- take the third gather, and the flag would change nothing.
    if ckpt and sweep and (not fsdp or zero ~= 3) then
      return "ckpt_outside_fsdp is a checkpoint around each FSDP unit: a plan prices it "
        .. "only with fsdp = full_shard given (got "
        .. (given_fsdp ~= nil and "fsdp = " .. tostring(given_fsdp) or "no fsdp") .. ")"
    end
  end
end

local fsdp_version = memory.fsdp_version

-- The step's choices into cfg: the schedule, the overlaps (the stack's
-- defaults, each overridable), the MoE dispatcher, ZeRO-3's gather, fp8
-- scaling, FSDP semantics and the kernels (eager or fused).  Returns the
-- gradient accumulation fusion without FSDP and with it, { without, with },
-- and the sharding options' rule (sharding_rule) a job's step asks.
-- What a setting of Transformer Engine's Userbuffers (tp_overlap_fp8_rs,
-- tp_overlap_aggregate: engine/train_layer.c) lacks to mean anything:
-- TE's modules, the TP overlap and sequence parallelism (TE's ub_overlap
-- flags all need sequence_parallel); without them the setting would price
-- as nothing, in silence.  The refusal's text, or nil.  (A sweep's
-- layouts state sp and tp_overlap themselves; a list of tp_overlap values
-- searches both.)  name is the option, what what it is, sp_what what it
-- does to SP's collectives.
local function userbuffers_needs(cfg, o, sweep, kernels, name, what, sp_what)
  if not cfg.te_modules or cfg.eager then
    return string.format("train: %s is %s: it needs stack = megatron with kernels = fused "
      .. "(got stack = %s, kernels = %s)", name, what, tostring(cfg.stack), tostring(kernels))
  elseif cfg.tp_overlap == false then
    return string.format("train: %s is a setting of the TP overlap's Userbuffers: it needs "
      .. "tp_overlap", name)
  elseif o.sp ~= true and not sweep then
    return string.format("train: %s %s: it needs sp = true", name, sp_what)
  elseif not sweep and type(o.tp) ~= "table" and (tonumber(o.tp) or 1) <= 1 then
    -- One TP rank has no ring to exchange over, and Megatron turns SP off
    -- there ("Disabling sequence parallelism because tensor model
    -- parallelism is disabled", megatron/training/arguments.py), which its
    -- tp_comm_overlap then asserts ("can happen only when sequence
    -- parallelism is enabled")
    return string.format("train: %s is %s over the TP group's ranks: it needs tp > 1 (got tp %s)",
      name, what, tostring(o.tp or 1))
  end
end

local function step_choices(o, p, cfg, sweep, default)
  if cfg.vpp and cfg.vpp > 1 then cfg.schedule = "interleaved" end
  -- Overlaps: the stack's defaults, each overridable.
  local ov = M.OVERLAPS[cfg.stack] or M.OVERLAPS.hf
  local flags = { "causal_flops", "embed_flops", "no_router_flops", "unfused_loss", "mcore_loss", "eager_loss", "emb_matmul", "lora_merged", "kv_repeat", "fsdp_root_gathered", "pad_mask", "async_tp_allreduce",
    "tp_input_per_linear",
    "unfused_permute", "legacy_permute", "unfused_act", "zero_gather_copies", "unfused_rope", "rope_seq_loop", "fused_grouped_mlp",
    "fp8_attention", "mlp_down_bf16", "tp_overlap_fp8_rs", "tp_overlap_aggregate",
    "ckpt_outside_fsdp", "ckpt_early_stop", "checkpoint_offload_streams", "split_proj",
    "scaling", "attn_scale_q", "attn_where", "addmm_bias",
    table.unpack(M.OVERLAP_KEYS) }
  for _, k in ipairs(flags) do
    if o[k] ~= nil and type(o[k]) ~= "boolean" then
      fail("train: %s must be a boolean (got %s)", k, args.shown(o[k]))
    end
  end
  -- DualPipe overlaps each chunk's all-to-all and pipeline sends with
  -- the paired chunk's compute (DeepSeek-V3 report sec. 3.2.1: "both
  -- all-to-all and PP communication can be fully hidden").
  local dual = cfg.schedule == "dualpipe"
  -- A job (not a plan's sweep) on Megatron's non-interleaved 1F1B, whose
  -- pipeline sends no flag overlaps (below).
  local megatron_1f1b = cfg.stack == "megatron" and not dual and not sweep
    and cfg.schedule ~= "interleaved" and (cfg.pp or 1) > 1
  for _, k in ipairs(M.OVERLAP_KEYS) do
    local v = o[k]
    -- Megatron-Core's 1F1B refuses the flag (below)
    if k == "overlap_p2p" and v == true and megatron_1f1b then
      fail("train: overlap_p2p with pp %d and no vpp on the megatron stack: Megatron-Core's "
        .. "non-interleaved schedule refuses it (\"Non-interleaved pipeline parallelism does "
        .. "not support overlapping p2p communication\"); give vpp > 1", cfg.pp)
    end
    if v == nil then
      v = ov[k] or false
      -- Megatron runs its pipeline sends under compute only in the
      -- interleaved schedule: without virtual stages it turns the flag
      -- off ("# Overlap P2P communication is disabled if not using the
      -- interleaved schedule. args.overlap_p2p_comm = False", Megatron-LM
      -- megatron/training/arguments.py), and Megatron-Core's 1F1B refuses
      -- it ("Non-interleaved pipeline parallelism does not support
      -- overlapping p2p communication", pipeline_parallel/schedules.py
      -- forward_backward_pipelining_without_interleaving): its
      -- send_forward_recv_backward waits on the batched exchange.  A plan
      -- keeps the stack's default and the engine exposes the sends of its
      -- 1F1B layouts (engine/train_stage.c).
      if k == "overlap_p2p" and v and megatron_1f1b then
        v = false
        default("overlap_p2p=false (Megatron: the non-interleaved schedule overlaps no p2p)")
      end
      if dual and (k == "ep_overlap" or k == "overlap_p2p") and not v then
        v = true
        -- said where it runs: at ep 1 there is no all-to-all, and the
        -- result's overlaps read ep_overlap off (M.train), which the
        -- note contradicted
        if k ~= "ep_overlap" or sweep or (cfg.ep or 1) > 1 then
          default(k .. "=true (dualpipe overlaps it)")
        end
      end
    end
    cfg[k] = v
  end
  cfg.causal_flops = o.causal_flops == true
  cfg.embed_flops = o.embed_flops == true
  cfg.no_router_flops = o.no_router_flops == true
  -- Packed samples attend within themselves (varlen attention over
  -- cu_seqlens): the engine's attention and model FLOPs run over
  -- packed_len keys a token (token-weighted, E[L^2] / E[L]), not seq.
  if o.packed_len ~= nil and o.packed_len > 0 then
    -- a sample holds at least one token (0 is the default: not packed)
    if o.packed_len < 1 then
      fail("train: packed_len is the length of the samples packed into each sequence: "
        .. "at least 1 token, or 0 for none (got packed_len %s)", args.shown(o.packed_len))
    end
    if cfg.seq and o.packed_len > cfg.seq then
      usage("train: packed_len is the length of the samples packed into each sequence: "
        .. "at most seq (got packed_len %s, seq %s)", args.shown(o.packed_len),
        tostring(cfg.seq))
    end
    cfg.packed_len = o.packed_len
  end
  cfg.unfused_loss = o.unfused_loss == true
  cfg.mcore_loss = o.mcore_loss == true
  cfg.eager_loss = o.eager_loss == true
  cfg.emb_matmul = o.emb_matmul == true
  cfg.metric_losses = o.metric_losses
  -- the micro-batches of one pipeline schedule call (engine/train.c
  -- step_sum: a bubble a call); without a pipeline there is none to fill
  cfg.pp_microbatches = o.pp_microbatches
  -- Adapters merged into the weight exist only where there are adapters
  -- on a 16-bit base (Praxis' LoRA layers): said of another method it
  -- would price nothing, in silence.
  if o.lora_merged and p.method ~= "lora" then
    usage("train: lora_merged prices LoRA's adapters added into the weight: it needs method = "
      .. "lora (got method = %s)", tostring(p.method))
  end
  cfg.lora_merged = o.lora_merged == true
  cfg.kv_repeat = o.kv_repeat == true
  cfg.fsdp_root_gathered = o.fsdp_root_gathered == true
  cfg.pad_mask = o.pad_mask == true
  -- (its type and range 0 to 1 checked where options.lua declares it).
  -- It prices the pads' one set of top-k experts in the Hugging Face
  -- expert loop (engine/train_layer.c): on a dense model it would change
  -- nothing, in silence.
  if (o.pad_share or 0) > 0 and not (p.model.moe and (p.model.moe.experts or 0) > 0) then
    fail("train: pad_share is the padding a MoE router sends to the same experts; %s has no "
      .. "experts", tostring(p.model.id or p.model.name))
  end
  cfg.pad_share = o.pad_share
  -- ColwiseParallel(input_layouts=Shard(1)) gathers a sequence-sharded
  -- input: without sp there is none to gather, and the engine
  -- (train_layer.c layer_comm) would price nothing for the option, in
  -- silence.  (A sweep's layouts state sp themselves.)
  if o.tp_input_per_linear and o.sp ~= true and not sweep then
    usage("train: tp_input_per_linear is each projection's ColwiseParallel(input_layouts="
      .. "Shard(1)), which gathers a sequence-sharded input: it needs sp = true (give it, or "
      .. "leave tp_input_per_linear out)")
  end
  cfg.tp_input_per_linear = o.tp_input_per_linear == true
  cfg.unfused_permute = o.unfused_permute == true
  cfg.unfused_act = o.unfused_act == true
  cfg.zero_gather_copies = o.zero_gather_copies == true
  cfg.unfused_rope = o.unfused_rope == true
  cfg.rope_seq_loop = o.rope_seq_loop == true
  cfg.fused_grouped_mlp = o.fused_grouped_mlp == true
  cfg.fp8_attention = o.fp8_attention == true
  cfg.mlp_down_bf16 = o.mlp_down_bf16 == true
  cfg.tp_overlap_fp8_rs = o.tp_overlap_fp8_rs == true
  cfg.tp_overlap_aggregate = o.tp_overlap_aggregate == true
  -- the router's dtype in bytes (the declared values checked it)
  cfg.router_bytes = ({ fp32 = 4, fp64 = 8 })[o.moe_router_dtype] or 0
  -- the CP ring's rotater: one of the declared values (the resolve step
  -- checked it), p2p neither flag; left out, the declared default, which a
  -- job with a CP ring (cp > 1) says on its defaults line
  local rotate = o.cp_rotate
  if rotate == nil then
    local text
    rotate, text = options.default("cp_rotate")
    if not sweep and math.type(o.cp) == "integer" and o.cp > 1 then default(text) end
  end
  cfg.cp_allgather = rotate == "allgather"
  cfg.cp_alltoall = rotate == "alltoall"
  cfg.ckpt_outside_fsdp = o.ckpt_outside_fsdp == true
  cfg.ckpt_early_stop = o.ckpt_early_stop == true
  -- The checkpoints' copies on a side stream (engine/train.c
  -- ckpt_offload_stream_time): a way of running checkpoint_offload's, so
  -- without it there is nothing to run that way.
  if o.checkpoint_offload_streams and not o.checkpoint_offload then
    usage("train: checkpoint_offload_streams runs the copies of checkpoint_offload on a side "
      .. "stream: it needs checkpoint_offload = true")
  end
  cfg.ckpt_offload_streams = o.checkpoint_offload_streams == true
  -- the projections kept apart, the engine's mask (GP_SPLIT_QKV 1,
  -- GP_SPLIT_MLP 2): the option both or neither, else the model's own
  -- modules' (its declaration, the stack permitting)
  if o.split_proj ~= nil then
    cfg.split_proj = o.split_proj and 3 or 0
  else
    local sp, text = options.default("split_proj", { stack = cfg.stack, model = p.model })
    cfg.split_proj = ({ qkv = 1, mlp = 2, both = 3 })[sp] or 0
    if sp and cfg.split_proj == 0 then
      fail("train: model.split_proj must be one of %s (got %s)",
        table.concat(require("gpuplan.schema").SPLIT_PROJ, ", "), args.shown(sp))
    end
    if text then default(text) end
  end
  cfg.attn_scale_q = o.attn_scale_q == true
  cfg.attn_where = o.attn_where == true
  -- the copies' form, one of the declared values (the resolve step checked
  -- it): the engine's 1 (torch.matmul's) or 2 (the model's .contiguous())
  cfg.attn_head_copies = ({ matmul = 1, contiguous = 2 })[o.attn_head_copies] or 0
  cfg.addmm_bias = o.addmm_bias == true
  -- the dispatcher: one of its declared values (the resolve step checked
  -- it).  It moves tokens to experts: on a dense model it would change
  -- nothing, in silence, as moe_flex_sms's refusal below says of the
  -- flex dispatcher's SMs, and moe_balance's of a router.
  if o.moe_dispatcher ~= nil and not (p.model.moe and (p.model.moe.experts or 0) > 0) then
    fail("train: moe_dispatcher %s is how MoE tokens reach their experts; %s has no experts",
      tostring(o.moe_dispatcher), tostring(p.model.id or p.model.name))
  end
  cfg.moe_allgather = o.moe_dispatcher == "allgather"
  cfg.moe_flex = o.moe_dispatcher == "flex"
  cfg.moe_einsum = o.moe_dispatcher == "einsum"
  -- capacity_factor left out: the declared default, dropless (or the einsum
  -- dispatcher's capacity 1.0), said on the defaults line where experts span
  -- EP ranks -- the busiest rank's wait rests on it (engine/train_prep.c
  -- train_ep_skew), as a cp ring's rotater is said above
  if o.capacity_factor == nil and not sweep and (cfg.ep or 1) > 1
     and p.model.moe and (p.model.moe.experts or 0) > 0 then
    local _, text = options.default("capacity_factor", { moe_dispatcher = o.moe_dispatcher })
    default(text)
  end
  -- the flex dispatcher's backend: a backend given beside another
  -- dispatcher would change nothing, in silence (its default stays quiet)
  cfg.moe_hybridep = cfg.moe_flex and o.moe_flex_backend == "hybridep"
  -- CUDA_DEVICE_MAX_CONNECTIONS (the resolve step checked its range; the
  -- engine caps ep_overlap's hiding at 1)
  cfg.cuda_device_max_connections = o.cuda_device_max_connections
  -- multi-token prediction modules on the last stage (the resolve step
  -- checked the range; the engine takes 0, none, when left out)
  cfg.mtp_layers = o.mtp_layers
  -- the flex dispatcher's SMs (the engine takes the backend's default when
  -- none is given); given beside another dispatcher they would change
  -- nothing, in silence
  if o.moe_flex_sms ~= nil and not cfg.moe_flex then
    usage("train: moe_flex_sms is the flex dispatcher's SMs; give moe_dispatcher = flex "
      .. "(got %s)", tostring(o.moe_dispatcher or "alltoall"))
  end
  cfg.moe_flex_sms = o.moe_flex_sms
  -- the router's launches (engine/train_layer.c router_extra_ops): only a
  -- MoE model has a router, and only the expert-parallel layer's host
  -- count takes them -- elsewhere they would change nothing, in silence
  if o.moe_router_ops ~= nil then
    local moe = p.model.moe and (p.model.moe.experts or 0) > 0
    if not moe then
      fail("train: moe_router_ops is the MoE router's kernels; %s has no experts",
        tostring(p.model.id or p.model.name))
    elseif not sweep and (cfg.ep or 1) <= 1 then
      usage("train: moe_router_ops is priced on the expert-parallel MoE layer's host "
        .. "launches; give ep > 1 (got %s)", tostring(cfg.ep or 1))
    end
  end
  cfg.moe_router_ops = o.moe_router_ops
  if o.moe_flex_backend == "hybridep" and not cfg.moe_flex then
    usage("train: moe_flex_backend hybridep is the flex dispatcher's backend; give "
      .. "moe_dispatcher = flex (got %s)", tostring(o.moe_dispatcher or "alltoall"))
  end
  -- ep_overlap is Megatron-Core's overlap_moe_expert_parallel_comm (its
  -- combined 1F1B; DualPipe, DeepSeek's own schedule, overlaps by itself).
  -- Of TransformerConfig.__post_init__'s asserts on it (transformer_
  -- config.py at Megatron-LM d98e8a6), the job's are checked here, once:
  --   expert_model_parallel_size > 1, "overlap_moe_expert_parallel_comm
  --     is only supported with expert model parallelism" (a dense model
  --     has none to give)
  --   moe_token_dispatcher_type in ['alltoall', 'flex'], "... is
  --     supported with alltoall/flex token dispatcher"
  --   self.bf16 or self.fp16, "... is only supported with bf16 or fp16
  --     model" (fp8 training keeps a bf16 model)
  -- The layout's (ep > 1, vpp at pp > 1, no full recompute) are the
  -- engine's (engine/train_prep.c check_ep_overlap), which the sweep
  -- skips.  The rest have no gpuplan option to break them: no shared-
  -- expert overlap, no MTP layers in a training step (mtp_num_layers
  -- at most 1), no "moe" recompute module, no CUDA graph scope moe or
  -- mlp (cuda_graph_scope's are attn, moe_router, moe_preprocess).
  if cfg.ep_overlap and not dual then
    local id = tostring(p.model.id or p.model.name)
    if not (p.model.moe and (p.model.moe.experts or 0) > 0) then
      fail("train: ep_overlap overlaps the expert all-to-all; %s has no experts", id)
    elseif o.moe_dispatcher == "allgather" or o.moe_dispatcher == "einsum" then
      usage("train: moe_dispatcher %s with ep_overlap: Megatron-Core overlaps the "
        .. "alltoall and flex dispatchers only (\"supported with alltoall/flex token "
        .. "dispatcher\")", o.moe_dispatcher)
    elseif cfg.compute == "fp32" or cfg.compute == "tf32" then
      usage("train: precision %s with ep_overlap: Megatron-Core's overlap \"is only "
        .. "supported with bf16 or fp16 model\" (fp8 runs on one)", tostring(cfg.compute))
    end
  end
  -- The unfused permutation is the alltoall dispatcher's PyTorch
  -- fallbacks, or the all-gather dispatcher's element-wise gathers and
  -- scatters of Megatron-Core before its fused permute (core_v0.6.0's
  -- MoEAllGatherTokenDispatcher; engine/train_layer.c
  -- moe_allgather_unfused_costs); the flex one permutes inside its own
  -- kernels: anywhere else it would change nothing, in silence.
  if cfg.unfused_permute then
    local id = tostring(p.model.id or p.model.name)
    if not (p.model.moe and (p.model.moe.experts or 0) > 0) then
      fail("train: unfused_permute is the MoE dispatcher's token permutation; %s has no "
        .. "experts", id)
    elseif o.moe_dispatcher == "flex" or o.moe_dispatcher == "einsum" then
      usage("train: unfused_permute is the alltoall or allgather dispatcher's permutation "
        .. "(Megatron-Core's moe_permute_fusion off); moe_dispatcher %s permutes otherwise: "
        .. "give moe_dispatcher = alltoall or allgather", o.moe_dispatcher)
    end
  end
  -- the router's balance: one of its declared values
  cfg.moe_unbalanced = o.moe_balance == "none"
  -- a router to leave unbalanced needs experts (else it would change
  -- nothing, in silence)
  if cfg.moe_unbalanced and not (p.model.moe and (p.model.moe.experts or 0) > 0) then
    fail("train: moe_balance none is how a MoE router spreads tokens; %s has no experts",
      tostring(p.model.id or p.model.name))
  end
  -- AutoModel's FakeBalancedGate in place of a learned router (engine/
  -- train_layer.c gate_reach): it needs experts, and it leaves no
  -- router to leave unbalanced
  cfg.moe_fake_gate = o.moe_gate == "fake_balanced"
  if cfg.moe_fake_gate then
    if not (p.model.moe and (p.model.moe.experts or 0) > 0) then
      fail("train: moe_gate fake_balanced is how a MoE layer picks its experts; %s has no "
        .. "experts", tostring(p.model.id or p.model.name))
    elseif cfg.moe_unbalanced then
      usage("train: moe_gate fake_balanced with moe_balance none: the fake gate sends "
        .. "every expert the same tokens, no router is left to unbalance")
    end
  end
  -- fp64 also runs the router's own GEMMs in float64 (engine/
  -- train_layer.c router_fp64_costs); an fp32 router keeps Transformer
  -- Engine's GEMM on the 16-bit operands
  cfg.router_fp64 = o.moe_router_dtype == "fp64"
  -- Transformer Engine's CUDA graph scopes: a list, or names joined by
  -- commas; the MoE ones need experts.
  local gs = o.cuda_graph_scope
  -- An empty list captures nothing (Megatron-Bridge's presets write
  -- cuda_graph_scope=[] for no graphs): as none given.
  if type(gs) == "table" and next(gs) == nil then gs = nil end
  if gs ~= nil then
    local e
    gs, e = args.name_list(gs, "cuda_graph_scope", "scope name")
    if not gs then fail("train: %s", e) end
    local scope = { attn = "graph_attn", moe_router = "graph_router",
                    moe_preprocess = "graph_prep", full_iteration = "graph_full",
                    mamba = "graph_mamba" }
    -- full_iteration is the whole step's graph (Megatron-Core's
    -- cuda_graph_config.py: "cuda_graph_modules='full_iteration' cannot be
    -- combined with" the per-layer graphs' implementation): alone.
    if gs:find("full_iteration", 1, true) and gs ~= "full_iteration" then
      fail("train: cuda_graph_scope: full_iteration captures the whole forward-backward step, "
        .. "every layer's scopes with it: give it alone (got %s)", gs)
    end
    for name in (gs .. ","):gmatch("([^,]*),") do
      if not scope[name] then
        usage("train: cuda_graph_scope: unknown scope '%s' (expected attn, moe_router, "
          .. "moe_preprocess, mamba or full_iteration)", name)
      elseif name == "mamba" and not (p.model.hybrid_pattern or ""):find("M", 1, true) then
        fail("train: cuda_graph_scope: mamba needs a hybrid stack with Mamba layers; %s has none",
          tostring(p.model.id or p.model.name))
      elseif name ~= "attn" and name ~= "mamba" and name ~= "full_iteration" and not (p.model.moe and (p.model.moe.experts or 0) > 0) then
        fail("train: cuda_graph_scope: %s needs a MoE model; %s has no experts", name,
          tostring(p.model.id or p.model.name))
      end
      cfg[scope[name]] = true
    end
  end
  -- one of zero3_gather's declared values: the resolve step checked it
  cfg.zero3_per_param = o.zero3_gather == "per_param"
  cfg.zero_allreduce = o.zero_reduce == "allreduce"
  -- the once-a-step DP collectives one bucket at a time (the resolve step
  -- checked the range; 0 or absent: the whole stage in one message)
  cfg.dp_bucket = o.dp_bucket
  -- the distributed optimizer's gather of the fp8 linears' weights in one
  -- byte (engine/train.c phase_post); only an fp8 run holds fp8 weights
  -- (the run's precision as setup resolves it: an unstated one is the
  -- default's, not nil)
  local fp8pg_prec = o.precision or p.precision or options.default("precision")
  if o.fp8_param_gather and fp8pg_prec ~= "fp8" then
    usage("train: fp8_param_gather needs precision fp8 (got %s%s): only Transformer "
      .. "Engine's fp8 run holds fp8 parameter copies to gather", tostring(fp8pg_prec),
      o.precision == nil and ", the default" or "")
  end
  -- ZeRO 3 / FSDP gathers each layer's weights in the forward and the
  -- backward, which phase_post's once-a-step gather is not: the flag
  -- priced those gathers in 16 bits, in silence.
  if o.fp8_param_gather and not sweep and (cfg.zero or 0) >= 3 then
    usage("train: fp8_param_gather with zero %d: the per-layer weight gathers of a fully "
      .. "sharded run are priced in 16 bits; only the distributed optimizer's once-a-step "
      .. "gather (zero 1 or 2) moves the fp8 linears in 1 byte (leave fp8_param_gather out)",
      cfg.zero)
  end
  cfg.fp8_param_gather = o.fp8_param_gather and true or false
  -- fp8 scaling: current scaling's extra amax read (engine/train_layer.c);
  -- delayed and block cost one read.
  local fs = o.fp8_scaling
  if fs == nil and cfg.compute == "fp8" then
    -- An fp8 step's casts are scaled somehow: the declared default,
    -- said on the "defaults assumed" line.
    local text
    fs, text = options.default("fp8_scaling")
    default(text)
  elseif fs ~= nil then
    -- one of its declared values: the resolve step checked it
    if cfg.compute ~= "fp8" then
      usage("train: fp8_scaling %s is how fp8 casts are scaled: it needs precision = "
        .. "fp8 (got %s)", fs, tostring(cfg.compute))
    end
  end
  cfg.fp8_current = fs == "current"
  cfg.fp8_block = fs == "block"
  -- FSDP semantics at zero 2/3 (parameters gathered per micro-batch, no
  -- gather after the step): --fsdp, or the hf stack's sharding (FSDP).
  -- The stack's rule holds for every stage a sweep or a job's step tries,
  -- not only the job's own: the engine reads fsdp only at zero 2 or 3, so
  -- it is given the rule itself (below, after the checks), and a plan's
  -- ZeRO-2/3 layouts on the hf stack are FSDP's as gp.train's are.
  local fsdp_rule = p.sharding ~= nil or cfg.stack == "hf"
  local refusal = sharding_rule(cfg, o.fsdp, require("gpuplan.memory").stage3_key(o),
    o.zero_reduce == "reduce_scatter")
  local why = refusal(cfg.zero, fsdp_rule, cfg.recompute, sweep)
  if why then usage("train: %s", why) end
  cfg.fsdp = fsdp_rule
  -- PyTorch FSDP's version (engine/train_stage.c fsdp_copies): only the
  -- hf stack's sharding is PyTorch FSDP (Megatron-FSDP and DeepSpeed
  -- have their own buffers); stated where a ZeRO-2/3 step of this job
  -- will be FSDP's.
  local fv, bad, text = fsdp_version(o, cfg.stack, fsdp_rule,
    fsdp_rule and (sweep or (cfg.zero or 0) >= 2))
  if bad then usage("train: %s", bad) end
  if text then default(text) end
  cfg.fsdp_version = fv
  -- Kernels (engine/train.c prices both): the hf stack runs Hugging Face
  -- transformers' eager modules, the others fused kernels (Megatron-Core /
  -- Transformer Engine; Megatron-DeepSpeed runs Megatron's fused kernels);
  -- torch.compile or Liger make an hf run fused.  The hf stack's optimizer
  -- is torch.optim's foreach AdamW (HF Trainer's adamw_torch, accelerate,
  -- torchtitan), the others a fused multi-tensor Adam.
  local kernels = o.kernels
  if kernels == nil then
    local text
    kernels, text = options.default("kernels", { stack = cfg.stack })
    -- A hybrid stack is priced for fused kernels alone (engine/
    -- train_prep.c hybrid_refusal).  Its refusal of the eager default
    -- read "kernels eager: ... give kernels fused" to a user who gave no
    -- kernels: it says the value is the stack's default, and the stack
    -- that runs Megatron-Core's MambaMixer.
    if kernels ~= "fused" and p.model.hybrid_pattern then
      usage("train: kernels not given: stack %s%s runs %s kernels by default, but %s is a "
        .. "hybrid stack (its hybrid_pattern), priced for fused kernels (Megatron-Core's "
        .. "MambaMixer): give stack = megatron%s", tostring(cfg.stack),
        o.stack == nil and " (the default stack)" or "", kernels,
        tostring(p.model.id or p.model.name), o.stack == nil and "" or " or kernels = fused")
    end
    default(text)
  elseif kernels ~= "eager" and kernels ~= "fused" and kernels ~= "liger" then
    fail("train: kernels must be eager, fused or liger (got %s)", args.shown(kernels))
  end
  -- liger: the eager modules with Liger-Kernel's RMSNorm, RoPE and SwiGLU
  -- (engine/train_layer.c liger_elem); everything else as eager, the
  -- eager rate of memory-bound kernels (achievable.eager.hbm) too: the
  -- catalog's own source measures Triton's kernels (torch.compile's) at
  -- 0.813 of Hopper's share on Blackwell, below ATen's 0.873.
  cfg.eager = kernels ~= "fused"
  cfg.liger = kernels == "liger"
  -- eager_norm false under the eager modules: the RMSNorm as one Triton
  -- kernel each way (torchtitan's norm_type "fused_rmsnorm", its
  -- FusedRMSNorm; engine/train_layer.c fused_rms_norm), what memory.lua
  -- then keeps for it too (its input and the rows' rstd, no fp32 copy).
  cfg.fused_norm = cfg.eager and not cfg.liger and p.cfg.eager_norm == false
  -- The einsum dispatcher is DeepSpeed's own MOELayer (deepspeed/moe/
  -- sharded_moe.py), which Megatron-DeepSpeed's GPT builds: on another
  -- stack, or under the eager modules (a Hugging Face model's own MoE
  -- block, which the deepspeed stack trains as it is), it would price a
  -- layer the job does not run.
  if o.moe_dispatcher == "einsum" then
    if cfg.stack ~= "deepspeed" then
      usage("train: moe_dispatcher einsum is DeepSpeed's MOELayer (deepspeed/moe); "
        .. "stack %s does not run it: give stack = deepspeed", tostring(cfg.stack))
    elseif cfg.eager then
      usage("train: moe_dispatcher einsum is DeepSpeed's MOELayer (Megatron-DeepSpeed's "
        .. "fused modules); kernels %s runs the model's own MoE block: give kernels = fused",
        tostring(kernels))
    end
  end
  -- A capacity is Megatron-Core's (moe_expert_capacity_factor) or DeepSpeed
  -- MoE's (the einsum dispatcher); the Hugging Face MoE blocks that stack hf
  -- and the eager kernels run (deepspeed on the model's own modules too)
  -- route dropless, each expert taking whatever it received
  -- (modeling_mixtral.py MixtralSparseMoeBlock: "for expert_idx in
  -- range(self.num_experts)" over torch.where(expert_mask[expert_idx])),
  -- with no capacity to pad to: a factor there priced a padded buffer
  -- the stack never builds.
  if (tonumber(o.capacity_factor) or 0) > 0 and (cfg.eager or cfg.stack == "hf") and not cfg.moe_einsum then
    usage("train: capacity_factor %s pads the experts' buffers; stack = %s with kernels = %s runs "
      .. "the model's own Hugging Face MoE block, which routes dropless: give stack = megatron, "
      .. "or kernels = fused with moe_dispatcher = einsum (DeepSpeed MoE), or capacity_factor = 0",
      tostring(o.capacity_factor), tostring(cfg.stack), tostring(kernels))
  end
  -- The Adam step's implementation (optimizer_impl): the stack's own
  -- unless stated.  loop (engine/train_prep.c optim_loop_bytes) prices the
  -- bytes of transformers' AdamW over the flat fp32 tensors DeepSpeed hands
  -- its client optimizer at every stage, one a group (or a ZeRO 3
  -- sub-group); elsewhere it loops over every parameter tensor, seven
  -- launches each, which nothing here prices, and an offloaded step is
  -- DeepSpeedCPUAdam on the host (transformers' deepspeed_init refuses
  -- offload without a DeepSpeed optimizer): both refused.
  local impl = o.optimizer_impl
  if impl ~= nil and impl ~= "fused" and impl ~= "foreach" and impl ~= "loop" then
    usage("train: optimizer_impl must be fused, foreach or loop (got %s)", args.shown(impl))
  end
  if impl == "loop" and cfg.stack ~= "deepspeed" then
    usage("train: optimizer_impl loop is priced on stack deepspeed, whose flat fp32 "
      .. "partitions leave the loop one tensor a group; stack %s%s loops over every parameter "
      .. "tensor, seven launches each, which is not priced: give stack = deepspeed, or leave "
      .. "optimizer_impl out", tostring(cfg.stack), o.stack == nil and " (the default stack)" or "")
  end
  -- loop and foreach are AdamW's two moments stepped by the framework's
  -- own code (optim_loop_bytes and opt_bytes_of's foreach branch count m
  -- and v); another optimizer's step is not what they price
  local optim = cfg.optimizer
  if impl ~= nil and impl ~= "fused" and type(optim) == "table" and not optim.foreach_adamw then
    usage("train: optimizer_impl %s is AdamW's step (its m and v); optimizer %s is not "
      .. "priced that way: leave optimizer_impl out", impl, tostring(optim.id))
  end
  if impl == "loop" and o.offload ~= nil and o.offload ~= "none" then
    usage("train: optimizer_impl loop is the GPU's step; with offload %s DeepSpeed steps on "
      .. "the host (DeepSpeedCPUAdam): leave optimizer_impl out", tostring(o.offload))
  end
  if impl == nil then
    cfg.eager_optim = cfg.stack == "hf"
    -- the assumed implementation said where it is AdamW's foreach path
    -- (the only one the engine prices beyond the fused step by default)
    if type(optim) == "table" and optim.foreach_adamw then
      local _, text = options.default("optimizer_impl", { stack = cfg.stack })
      if text then default(text) end
    end
  else
    cfg.eager_optim = impl == "foreach"
  end
  cfg.optim_loop = impl == "loop"
  -- The deepspeed stack's ZeRO optimizer copies each micro-batch's
  -- gradients into its reduce bucket at stage 2 (engine/train_stage.c
  -- ds_bucket_time).
  cfg.ds_buckets = cfg.stack == "deepspeed"
  -- Megatron-Core's layers are Transformer Engine modules, whose
  -- backward is Python per module (engine/train_layer.c TE_BWD_HOST);
  -- the other stacks' torch modules run theirs in autograd's C++ engine.
  cfg.te_modules = cfg.stack == "megatron"
  -- tp_input_per_linear is PyTorch's ColwiseParallel plan (DTensor);
  -- Transformer Engine's linears, which the megatron stack's compiled
  -- layers are, gather their input once a module, and the engine
  -- (train_layer.c layer_comm) prices nothing for the option there, in
  -- silence.
  if cfg.tp_input_per_linear and cfg.te_modules and not cfg.eager then
    usage("train: tp_input_per_linear is PyTorch's ColwiseParallel on each projection; "
      .. "stack megatron runs Transformer Engine's linears, which gather their input once a "
      .. "module (give another stack or kernels = eager, or leave tp_input_per_linear out)")
  end
  -- The column-parallel input-gradient all-reduce beside the wgrad GEMM
  -- (engine/train_layer.c async_tp_bwd): Megatron's own linears since
  -- September 2021 and Transformer Engine's, the option's declared rule.
  local atp = o.async_tp_allreduce
  if atp == nil then
    local text
    atp, text = options.default("async_tp_allreduce", { stack = cfg.stack, eager = cfg.eager,
      vendor = p.gpu and p.gpu.vendor, tp = o.tp })
    if text then default(text) end
  end
  cfg.async_tp_allreduce = atp == true
  -- The wgrad GEMMs' accumulation into Megatron-Core's main grad
  -- (engine/train_prep.c train_wgrad_acc): the option as given, else its
  -- declared default from the stack, the kernels and FSDP (fsdp_rule: the
  -- engine's fsdp for every stage the job or a plan tries).  A boolean:
  -- the resolve step checked it.  A job's step may turn FSDP on or off
  -- (job:step{fsdp = ...}): it takes the rule's answer for that fsdp,
  -- by_fsdp = { without, with } (lgp_train.c lgp_tofusion).
  local fusion = o.gradient_accumulation_fusion
  local by_fsdp = { fusion, fusion }
  if fusion == nil then
    for i, f in ipairs { false, true } do
      local text
      by_fsdp[i], text = options.default("gradient_accumulation_fusion",
        { stack = cfg.stack, eager = cfg.eager, fsdp = f })
      if f == fsdp_rule then
        fusion = by_fsdp[i]
        if text then default(text) end
      end
    end
  elseif fusion and (not cfg.te_modules or cfg.eager) then
    usage("train: gradient_accumulation_fusion is Megatron-Core's wgrad GEMM accumulating into "
      .. "its main grad (Transformer Engine's fuse_wgrad_accumulation): it needs stack = "
      .. "megatron with kernels = fused (got stack = %s, kernels = %s)", tostring(cfg.stack),
      kernels)
  end
  cfg.gradient_accumulation_fusion = fusion
  -- The optimizer's master -> weights copy (engine/train_prep.c
  -- opt_bytes_of): the option as given, else its declared default from
  -- the stack and the kernels.
  local mcopy = o.master_copy
  if mcopy == nil then
    mcopy = options.default("master_copy", { stack = cfg.stack, eager = cfg.eager })
  elseif mcopy and (not cfg.te_modules or cfg.eager) then
    usage("train: master_copy is Megatron's optimizer copying its fp32 master to the 16-bit "
      .. "weights after Adam: it needs stack = megatron with kernels = fused (got stack = %s, "
      .. "kernels = %s)", tostring(cfg.stack), kernels)
  end
  cfg.master_copy = mcopy
  -- fp8 experts' row counts (engine/train_layer.c moe_fp8_pad_costs):
  -- Megatron-Core's grouped MLP copies them to aligned counts where the
  -- dispatcher hands them over unaligned -- alltoall and allgather
  -- without moe_router_padding_for_quantization, its default, and the
  -- flex dispatcher's DeepEP backend, whose local permute pads nothing
  -- (TEGroupedMLP.forward at 3c1b98e, Nov 2025: "if self.config.fp8 or
  -- self.config.fp4: ... self.quantization_padding(...)" whatever the
  -- dispatcher; at d98e8a6 skip_routed_expert_padding skips it for
  -- DeepEP only under moe_use_grouped_tensor, "DeepEP's fused
  -- permutation kernel"); HybridEP
  -- pads in its dispatch, and DualPipe is DeepSeek's own framework, not
  -- Megatron-Core's grouped MLP.  fused_grouped_mlp keeps the copy:
  -- Megatron-Core core_v0.18.0 experts.py _fused_forward runs the same
  -- quantization_padding (Fp8Padding with "align_size = 256 if
  -- self._with_fused_impl") before the fused ops, and TE v2.16's fused
  -- kernel takes the padded counts as its split points (the comment at
  -- moe_fp8_pad_costs quotes both).
  local has_moe = p.model.moe and (p.model.moe.experts or 0) > 0
  local grouped = has_moe and cfg.compute == "fp8" and cfg.te_modules and not cfg.eager
  local pad = o.moe_fp8_pad
  if pad ~= nil then
    -- one of its declared values: the resolve step checked it
    local id = tostring(p.model.id or p.model.name)
    if not has_moe then
      fail("train: moe_fp8_pad %s is how fp8 experts get their row counts; %s has no experts",
        pad, id)
    elseif cfg.compute ~= "fp8" then
      usage("train: moe_fp8_pad %s pads the experts' rows for fp8 GEMMs: it needs precision = "
        .. "fp8 (got %s)", pad, tostring(cfg.compute))
    elseif pad == "copy" and not grouped then
      usage("train: moe_fp8_pad copy is Megatron-Core's grouped MLP (Transformer Engine's "
        .. "Fp8Padding): it needs stack = megatron with kernels = fused (got stack = %s, "
        .. "kernels = %s)", tostring(cfg.stack), kernels)
    elseif pad == "copy" and cfg.moe_hybridep then
      usage("train: moe_fp8_pad copy with moe_flex_backend hybridep: HybridEP pads the experts' "
        .. "rows in its dispatch (pad_multiple), the grouped MLP copies nothing")
    elseif pad == "copy" and dual then
      usage("train: moe_fp8_pad copy with schedule = dualpipe: DualPipe is DeepSeek's own "
        .. "framework, not Megatron-Core's grouped MLP")
    end
    cfg.moe_fp8_copy = pad == "copy"
  else
    cfg.moe_fp8_copy = grouped and not cfg.moe_hybridep and not dual or false
    if cfg.moe_fp8_copy then
      default("moe_fp8_pad=copy (Megatron-Core's grouped MLP pads the experts' rows for fp8: "
        .. "moe_router_padding_for_quantization off)")
    end
  end
  -- An option that names a Transformer Engine MoE module under
  -- Megatron-Core (the three below) needs experts to act on and TE's
  -- modules to run: else it would price nothing, in silence.  Its
  -- errors are raised one level up (4), where fail and usage raise at 3,
  -- so that they are placed as theirs are.
  local function te_moe_needs(label, moe_what, te_what)
    if not has_moe then
      error(string.format("train: %s is %s; %s has no experts", label, moe_what,
        tostring(p.model.id or p.model.name)), 4)
    elseif not cfg.te_modules or cfg.eager then
      error(args.usage(string.format("train: %s is %s: it needs stack = megatron with kernels "
        .. "= fused (got stack = %s, kernels = %s)", label, te_what, tostring(cfg.stack),
        kernels)), 4)
    end
  end
  -- Transformer Engine's fused grouped MLP (engine/train_layer.c
  -- gemm_costs) is Megatron-Core's TEGroupedMLP under the op fuser, and
  -- TE v2.16 fuses it only for an MXFP8 recipe (ops/_common.py
  -- fuse_grouped_mlp_ops: "if recipe is None or not recipe.mxfp8():
  -- return ops") and a gated activation (ScaledSwiGLU or
  -- ScaledClampedQGeGLU between the two GroupedLinears); Megatron-Core
  -- asserts "Fused GroupedMLP is not supported for this configuration"
  -- with expert tensor parallelism ("if self.tp_group.size() > 1: return
  -- False", core_v0.18.0 experts.py _is_fused_impl_supported).  Anything
  -- else would price kernels that do not run, in silence.
  if cfg.fused_grouped_mlp then
    local id = tostring(p.model.id or p.model.name)
    te_moe_needs("fused_grouped_mlp", "the MoE experts' fused MLP",
      "Megatron-Core's TEGroupedMLP under Transformer Engine's op fuser")
    if cfg.compute ~= "fp8" or not cfg.fp8_block then
      usage("train: fused_grouped_mlp runs only with an MXFP8 recipe: it needs precision = "
        .. "fp8 with fp8_scaling = block (got precision %s%s)", tostring(cfg.compute),
        cfg.compute == "fp8" and ", fp8_scaling " .. tostring(fs or "delayed") or "")
    elseif not p.model.ffn_gated then
      fail("train: fused_grouped_mlp fuses a gated activation (SwiGLU or GPT-OSS's clamped "
        .. "GEGLU) between the experts' GEMMs; %s's experts are not gated", id)
    end
  end
  -- Transformer Engine's pre-#1927 fused permute (engine/train_layer.c
  -- te_loop_surplus) is the alltoall dispatcher's token permute;
  -- the flex dispatchers permute in their own kernels, the all-gather
  -- and einsum ones otherwise, the unfused one in PyTorch: anywhere else
  -- it would price nothing, in silence.
  cfg.legacy_permute = o.legacy_permute == true
  if cfg.legacy_permute then
    te_moe_needs("legacy_permute", "the MoE dispatcher's token permute",
      "Transformer Engine's fused permute under Megatron-Core")
    if o.moe_dispatcher ~= nil and o.moe_dispatcher ~= "alltoall" then
      usage("train: legacy_permute is the alltoall dispatcher's fused permute; moe_dispatcher "
        .. "%s permutes otherwise: give moe_dispatcher = alltoall", o.moe_dispatcher)
    elseif cfg.unfused_permute then
      usage("train: legacy_permute is Transformer Engine's fused permute kernel; "
        .. "unfused_permute runs Megatron-Core's PyTorch ops instead: give one of them")
    elseif not sweep and (cfg.ep or 1) <= 1 then
      -- the engine prices the alltoall dispatcher's permute on the
      -- expert-parallel layer alone (train_layer.c layer_compute:
      -- moe_permute_costs at ep > 1), as moe_router_ops' refusal says
      usage("train: legacy_permute is priced on the expert-parallel layer's permute "
        .. "(moe_permute); give ep > 1 (got %s)", tostring(cfg.ep or 1))
    end
  end
  -- Transformer Engine's older MXFP8 grouped linear (engine/train_layer.c
  -- mxfp8_grouped_legacy): the experts' grouped GEMMs under an MXFP8
  -- recipe on TE's modules; the fused grouped MLP is a later TE's own.
  local mg = o.te_mxfp8_grouped
  cfg.mxfp8_grouped = 0
  if mg ~= nil and mg ~= "fused" then
    te_moe_needs("te_mxfp8_grouped " .. tostring(mg), "the MoE experts' grouped linear",
      "Transformer Engine's GroupedLinear")
    if cfg.compute ~= "fp8" or not cfg.fp8_block then
      usage("train: te_mxfp8_grouped %s is the MXFP8 recipe's grouped linear: it needs "
        .. "precision = fp8 with fp8_scaling = block (got precision %s%s)", mg,
        tostring(cfg.compute),
        cfg.compute == "fp8" and ", fp8_scaling " .. tostring(fs or "delayed") or "")
    elseif cfg.fused_grouped_mlp then
      usage("train: te_mxfp8_grouped %s predates Transformer Engine's fused grouped MLP "
        .. "(fused_grouped_mlp): give one of them", mg)
    end
    cfg.mxfp8_grouped = mg == "bulk" and 1 or 2
  end
  -- FP8 attention (engine/train_layer.c attn_layers_time) is Transformer
  -- Engine's DotProductAttention under the run's fp8 recipe: the recipe's
  -- fp8_dpa (core_v0.18.0 fp8_utils.py "fp8_dpa=config.
  -- fp8_dot_product_attention"), cuDNN's fused FP8 kernel.  Without the
  -- fused modules, an fp8 recipe or the fused kernel nothing runs in FP8.
  if cfg.fp8_attention then
    if not cfg.te_modules or cfg.eager then
      usage("train: fp8_attention is Transformer Engine's fused attention in FP8: it needs "
        .. "stack = megatron with kernels = fused (got stack = %s, kernels = %s)",
        tostring(cfg.stack), kernels)
    elseif cfg.compute ~= "fp8" then
      usage("train: fp8_attention is part of the fp8 recipe (Transformer Engine's fp8_dpa): "
        .. "it needs precision = fp8 (got %s)", tostring(cfg.compute))
    elseif p.cfg.flash == false then
      usage("train: fp8_attention is cuDNN's fused FP8 attention; the run's attention is "
        .. "unfused (flash = false)")
    end
  end
  -- Userbuffers' fp8 reduce-scatter buffer (engine/train_layer.c
  -- layer_comm) holds the fp8 output of Transformer Engine's row-parallel
  -- GEMMs, reduce-scattered over the TP group by its TP overlap under
  -- sequence parallelism: without TE's modules, an fp8 recipe, tp_overlap
  -- or sp there is no such collective, and the engine would price the
  -- option as nothing, in silence.  (A sweep's layouts state sp and
  -- tp_overlap themselves; a list of tp_overlap values searches both.)
  if cfg.tp_overlap_fp8_rs then
    local why = userbuffers_needs(cfg, o, sweep, kernels, "tp_overlap_fp8_rs",
      "Transformer Engine's Userbuffers reduce-scatter in fp8",
      "is the reduce-scatter of sequence parallelism's forward")
    if why then
      usage("%s", why)
    elseif cfg.compute ~= "fp8" then
      usage("train: tp_overlap_fp8_rs reduce-scatters the fp8 GEMMs' output: it needs "
        .. "precision = fp8 (got %s)", tostring(cfg.compute))
    elseif (p.model.hybrid_pattern or "") ~= "" then
      fail("train: tp_overlap_fp8_rs prices the attention's and the MLP's reduce-scatters; "
        .. "%s is a hybrid stack, whose blocks it does not model",
        tostring(p.model.id or p.model.name))
    end
  end
  -- Userbuffers' aggregated ring exchange (engine/train_layer.c ub_chunks)
  -- is a setting of the TP overlap's split GEMMs: without TE's modules,
  -- tp_overlap or sp there are no such GEMMs, and the option would price
  -- as nothing, in silence.
  if cfg.tp_overlap_aggregate then
    local why = userbuffers_needs(cfg, o, sweep, kernels, "tp_overlap_aggregate",
      "Transformer Engine's Userbuffers ring exchange",
      "splits sequence parallelism's gathered GEMMs")
    if why then usage("%s", why) end
  end
  -- The MLP's down projection left in bf16 (engine/train_layer.c
  -- gemm_costs) is a part of an fp8 recipe that keeps it out: without
  -- precision fp8 every linear is already 16-bit.
  if cfg.mlp_down_bf16 and cfg.compute ~= "fp8" then
    usage("train: mlp_down_bf16 keeps the MLP's down projection out of an fp8 recipe: "
      .. "it needs precision = fp8 (got %s)", tostring(cfg.compute))
  end
  -- It is the dense MLP's fc2 (engine/model_ops.c: mlp_down only where a
  -- layer has a dense MLP, a hybrid pattern's - or a layer before or
  -- between the MoE layers): a stack whose every feed-forward is experts
  -- would be priced as without it, in silence.
  if cfg.mlp_down_bf16 then
    local m, pat = p.model, p.model.hybrid_pattern or ""
    local dense
    if pat ~= "" then
      dense = pat:find("-", 1, true) ~= nil
    else
      dense = require("gpuplan.schema").moe_layers(m) < m.layers
    end
    if not dense then
      fail("train: mlp_down_bf16 keeps the dense MLP's down projection in bf16; %s has no "
        .. "dense MLP layer (its every feed-forward is MoE experts)",
        tostring(m.id or m.name))
    end
  end
  -- A parallel-attention model (the model field parallel_attn: Falcon)
  -- halves a serving step's TP all-reduces (engine/infer.c step_comm);
  -- training prices its layer as a sequential one, its TP collectives
  -- twice a layer (no trainer priced here runs such a layer).  Said, not
  -- taken in silence.
  if p.model.parallel_attn and (type(o.tp) == "table" or (tonumber(o.tp) or 1) > 1) then
    default("parallel_attn: the layer priced as a sequential one under TP, the attention's "
      .. "and the MLP's collectives apart (the one all-reduce a layer is serving's)")
  end
  -- The graphs capture Transformer Engine's fused layer (the engine
  -- skips them for eager modules): asked for with eager kernels they
  -- would change nothing, in silence.
  if cfg.eager and (cfg.graph_attn or cfg.graph_router or cfg.graph_prep or cfg.graph_full) then
    usage("train: cuda_graph_scope captures Transformer Engine's fused kernels; with kernels = "
      .. "%s (stack = %s) there are none to capture: give kernels = fused", kernels,
      tostring(cfg.stack))
  end
  -- Eager modules already price their loss op by op (Hugging Face's
  -- log_softmax and nll_loss, engine/train_layer.c train_ends_costs), so
  -- Megatron-Core's unfused loss would change nothing, in silence.
  if cfg.eager and cfg.unfused_permute then
    usage("train: unfused_permute is Megatron-Core's dispatcher; with kernels = %s "
      .. "(stack = %s) the experts are Hugging Face's loop, op by op: give kernels = fused",
      kernels, tostring(cfg.stack))
  end
  if cfg.eager and cfg.moe_router_ops ~= nil then
    usage("train: moe_router_ops is Megatron-Core's router; with kernels = %s (stack = %s) "
      .. "the router is Hugging Face's, op by op: give kernels = fused", kernels,
      tostring(cfg.stack))
  end
  -- The eager attention's own chain (engine/train_price.c): unfused,
  -- eager kernels only.
  -- PyTorch's addmm of 2021 (engine/train_layer.c gemm_costs): the eager
  -- modules' linears only.
  if o.addmm_bias and not cfg.eager then
    usage("train: addmm_bias is the eager modules' torch.addmm; with kernels = fused "
      .. "(stack = %s) there is none: give kernels = eager", tostring(cfg.stack))
  end
  for _, k in ipairs { "attn_clamp", "attn_scale_q", "attn_where", "attn_head_copies" } do
    if o[k] and not cfg.eager then
      usage("train: %s is Hugging Face's eager attention; with kernels = fused (stack = %s) "
        .. "there is none: give kernels = eager", k, tostring(cfg.stack))
    end
    if o[k] and p.cfg.flash ~= false then
      usage("train: %s changes the eager attention's pass over the scores: it needs flash = "
        .. "false (a fused attention kernel holds no scores)", k)
    end
  end
  -- The unfused activation is Megatron-Core's MLP with
  -- bias_activation_fusion off (engine/train_layer.c act_unfused_costs):
  -- eager modules already run it op by op, and an MLP that is not gated
  -- runs its one activation kernel either way -- both would change
  -- nothing, in silence.  The router's dtype only costs there.
  if cfg.unfused_act then
    local id = tostring(p.model.id or p.model.name)
    if cfg.eager then
      usage("train: unfused_act is Megatron-Core's MLP without bias_activation_fusion; with "
        .. "kernels = %s (stack = %s) the activation is already Hugging Face's, op by op: "
        .. "give kernels = fused", kernels, tostring(cfg.stack))
    elseif not p.model.ffn_gated then
      fail("train: unfused_act prices a gated activation's two kernels; %s's MLP is not "
        .. "gated (one activation kernel either way)", id)
    end
  end
  -- nanotron's ZeRO-1 gather copies (engine/train.c gather_copy_host)
  -- count a dense decoder layer's parameter tensors: a model with more
  -- kinds of layer would be priced short, in silence.
  if cfg.zero_gather_copies then
    local mdl = p.model
    local kind = (mdl.moe and (mdl.moe.experts or 0) > 0) and "MoE layers"
      or mdl.mla and "MLA attention" or (mdl.encoder_layers or 0) > 0 and "encoder layers"
      or mdl.hybrid_pattern and "a hybrid pattern" or mdl.vision and "a vision tower"
    if kind then
      fail("train: zero_gather_copies counts the parameter tensors of nanotron's dense "
        .. "decoder layers (norms, attention, MLP); %s has %s", tostring(mdl.id or mdl.name
        or "the model"), kind)
    end
    -- nanotron has one ZeRO: helpers.py init_optimizer_and_grad_accumulator
    -- builds ZeroDistributedOptimizer for any "optimizer_args.zero_stage >
    -- 0", optimizer states sharded and nothing else (its README: "ZeRO-1
    -- optimizer", ZeRO-3 on the roadmap).  At zero 2 and 3 the gather is
    -- another framework's (DeepSpeed's, FSDP's), not _all_gather_params:
    -- the copies would be added to it in silence.  A sweep's ZeRO-2/3
    -- layouts run without them (engine/train.c post_of prices them at
    -- zero 1 alone).
    if not sweep and (cfg.zero or 0) >= 2 then
      usage("train: zero_gather_copies with zero %d: nanotron's ZeRO is stage 1 alone "
        .. "(ZeroDistributedOptimizer: optimizer states sharded, parameters gathered once a "
        .. "step); give zero = 1, or leave zero_gather_copies out", cfg.zero)
    end
    -- At zero 0 nanotron builds no ZeroDistributedOptimizer (the same
    -- "zero_stage > 0" test): the replicated optimizer updates every
    -- parameter in place and nothing is gathered, so engine/train.c
    -- prices the copies at zero 1 alone and the flag changed nothing, in
    -- silence (train's default zero is 0).
    if not sweep and (cfg.zero or 0) == 0 then
      usage("train: zero_gather_copies with zero 0%s: nanotron gathers the parameters only "
        .. "under its ZeRO-1 optimizer (optimizer_args.zero_stage > 0); at zero 0 each rank "
        .. "updates its whole replica and there is nothing to copy back; give zero = 1, or "
        .. "leave zero_gather_copies out", o.zero == nil and " (the default)" or "")
    end
  end
  -- The unfused RoPE is Megatron-Core's with apply_rope_fusion off
  -- (engine/train_layer.c rope_thd_costs), or Megatron-DeepSpeed's
  -- apply_rotary_pos_emb, PyTorch ops with no fused path (stack deepspeed
  -- with kernels fused; train_layer.c mds_rope_costs): eager modules
  -- already run Hugging Face's rotary op by op, the hf stack's fused
  -- kernels (torch.compile) fuse it, and a model without rotary positions
  -- has none to run -- each would change nothing, in silence.
  if cfg.unfused_rope then
    local id = tostring(p.model.id or p.model.name)
    if cfg.eager then
      usage("train: unfused_rope is Megatron-Core's RoPE without apply_rope_fusion; with "
        .. "kernels = %s (stack = %s) the rotary embedding is already Hugging Face's, op "
        .. "by op: give kernels = fused", kernels, tostring(cfg.stack))
    elseif not cfg.te_modules and cfg.stack ~= "deepspeed" then
      usage("train: unfused_rope is Megatron-Core's RoPE without apply_rope_fusion (stack "
        .. "megatron) or Megatron-DeepSpeed's (stack deepspeed, kernels fused): it needs "
        .. "one of them (got stack = %s)", tostring(cfg.stack))
    else
      local pos = p.model.positions or ((p.model.pos_embeddings or 0) > 0 and "learned"
        or "rope")
      if pos ~= "rope" then
        fail("train: unfused_rope prices Megatron-Core's rotary embedding; %s has %s "
          .. "positions", id, pos)
      end
    end
  end
  -- The loop is the unfused thd path's: alone it would change nothing.
  if cfg.rope_seq_loop and not cfg.unfused_rope then
    usage("train: rope_seq_loop is a form of the unfused RoPE's packed path: it needs "
      .. "unfused_rope")
  end
  -- Megatron-DeepSpeed's rotary embedding has no packed (thd) path.
  if cfg.rope_seq_loop and not cfg.te_modules then
    usage("train: rope_seq_loop is Megatron-Core's packed RoPE path: it needs stack = "
      .. "megatron (got stack = %s)", tostring(cfg.stack))
  end
  if o.moe_router_dtype ~= nil then
    local id = tostring(p.model.id or p.model.name)
    if not (p.model.moe and (p.model.moe.experts or 0) > 0) then
      fail("train: moe_router_dtype is a MoE router's; %s has no experts", id)
    elseif o.moe_router_dtype ~= "fp64" and (not cfg.unfused_act or
        not p.cfg.moe_probs_in_act) then
      -- fp64 prices the router's own GEMMs too (router_fp64); fp32
      -- keeps Transformer Engine's 16-bit GEMM and costs only there
      usage("train: moe_router_dtype fp32 prices the probabilities' product in the experts' "
        .. "unfused activation: it needs unfused_act and moe_probs = activation (the fused "
        .. "kernel casts in registers; the router's GEMM stays Transformer Engine's)")
    end
  end
  -- The padding mask's gathers are transformers' FlashAttention-2 path
  -- (engine/train_layer.c layer_extras): fused modules pack or mask
  -- inside their kernel, and without flash the mask is added to the
  -- eager scores -- either would change nothing, in silence.
  if o.pad_mask and not cfg.eager then
    usage("train: pad_mask is transformers' FlashAttention-2 path under a padding mask; with "
      .. "kernels = fused (stack = %s) there is none: give kernels = eager", tostring(cfg.stack))
  end
  -- Unfused attention is recomputed under op whatever the list holds.
  if o.sac_attn_recompute and p.cfg.flash == false then
    usage("train: sac_attn_recompute is a fused attention kernel missing from recompute op's "
      .. "save list; the run's attention is unfused (flash = false), which op recomputes anyway: "
      .. "give one or the other")
  end
  -- The fused kernel's measured fractions price the attention only
  -- where it is fused: unfused, the scores are GEMMs and a softmax
  -- (engine/train_price.c), so a named kernel would change nothing, in
  -- silence.
  if o.attn_kernel ~= nil and p.cfg.flash == false then
    usage("train: attn_kernel %s is a fused attention kernel; the run's attention is unfused "
      .. "(flash = false): give one or the other", tostring(o.attn_kernel))
  end
  if o.pad_mask and p.cfg.flash == false then
    usage("train: pad_mask prices transformers' FlashAttention-2 gathers of a padded "
      .. "micro-batch: it needs flash (without it the mask is added to the eager scores)")
  end
  if cfg.eager and cfg.unfused_loss then
    usage("train: unfused_loss is Megatron-Core's vocab-parallel cross-entropy; with kernels = "
      .. "%s (stack = %s) the loss is already Hugging Face's, op by op: give kernels = fused",
      kernels, tostring(cfg.stack))
  end
  if cfg.eager and cfg.eager_loss then
    usage("train: eager_loss is a loss left out of the compiled layers; with kernels = %s "
      .. "(stack = %s) every operator already runs op by op: give kernels = fused",
      kernels, tostring(cfg.stack))
  end
  -- mcore_loss is Megatron-Core's vocab-parallel loss in compiled graphs
  -- (train_ends_costs): under eager kernels, beside eager_loss or Liger's
  -- head the engine prices the other loss and took the flag in silence.
  if cfg.eager and cfg.mcore_loss then
    usage("train: mcore_loss is Megatron-Core's vocab-parallel cross-entropy; with kernels = "
      .. "%s (stack = %s) the loss is already Hugging Face's, op by op: give kernels = fused",
      kernels, tostring(cfg.stack))
  end
  if cfg.mcore_loss and (cfg.eager_loss or p.cfg.fused_linear_ce) then
    usage("train: mcore_loss (Megatron-Core's vocab-parallel cross-entropy) and %s are two "
      .. "different losses: give one", cfg.eager_loss and "eager_loss (torch's cross_entropy "
      .. "outside torch.compile)" or "fused_linear_ce (Liger-Kernel's head and loss in one)")
  end
  if cfg.unfused_loss and cfg.eager_loss then
    usage("train: unfused_loss (Megatron-Core's vocab-parallel cross-entropy) and eager_loss "
      .. "(torch's cross_entropy outside torch.compile) are two different losses: give one")
  end
  -- Liger-Kernel's fused linear cross-entropy takes the place of a
  -- transformers model's head and loss (monkey_patch.py
  -- apply_liger_kernel_to_llama swaps LlamaForCausalLM's forward for one
  -- calling LigerForCausalLMLoss): with another loss named the engine
  -- priced Liger's alone (train_ends_costs), the other taken in silence.
  -- (Megatron-Core's GPTModel, its own output layer and vocab-parallel
  -- loss, which no Liger patch reaches, is refused by memory.prepare,
  -- for fit too.)
  if p.cfg.fused_linear_ce and (cfg.unfused_loss or cfg.eager_loss) then
    usage("train: fused_linear_ce (Liger-Kernel's head and loss in one) and %s are two "
      .. "different losses: give one", cfg.unfused_loss and "unfused_loss (Megatron-Core's "
      .. "vocab-parallel cross-entropy)" or "eager_loss (torch's cross_entropy outside "
      .. "torch.compile)")
  end
  return by_fsdp, refusal
end

-- M.setup(o [, sweep]): gp.train's options checked and resolved once: {p
-- (memory.prepare's), model, gpu, cfg (the engine's train config), topo,
-- device, defaults, currency, precision, global_batch}.  For a sweep (the
-- options of `gpuplan plan`) the layout comes from the enumeration: the
-- global batch is checked for being a whole number only (each layout must
-- divide it); sweep may be the largest GPU count it tries, then checked
-- against the node's NICs.  gpuplan.rl prices its training phases with it.
function M.setup(o, sweep)
  -- Not a table: said as memory.prepare says it, before o.method is read
  -- (gp.train(nil) said "attempt to index a nil value (local 'o')").
  if type(o) ~= "table" then
    fail("%s{...}: expected a table of options", sweep and "sweep" or "train")
  end
  -- A method no command knows, refused with the training steps this
  -- takes: memory.prepare's list (grpo, ppo, infer too) named methods
  -- that train and plan then refuse.
  -- (in either case: the resolve step folds it, declared fold)
  local mth = type(o.method) == "string" and o.method:lower()
  if mth and not M.METHODS[mth] and not memory.METHODS[mth] then
    usage("%s: unknown method '%s' (expected pretrain|full|lora|qlora)",
      sweep and "sweep" or "train", o.method)
  end
  local p = memory.prepare(o, sweep and "plan" or "train", sweep and "sweep" or "train")
  local model, gpu, cfg, defaults = p.model, p.gpu, p.cfg, p.defaults
  local function default(s) defaults[#defaults + 1] = s end
  if not M.METHODS[p.method] then
    fail("train: method '%s' is not a training step (pretrain|full|lora|qlora; an RL step: gpuplan rl, gp.rl)",
      p.method)
  end
  if not gpu then
    usage("train: gpu is required%s", o.capacity ~= nil
      and " (capacity sets the memory per GPU, not the card the step is timed on)" or "")
  end
  local cat = catalog(o.cat)
  -- memory.prepare's: the declared default, or fp16 on a card without
  -- bf16 tensor cores (prepare_recipe)
  local precision = o.precision or p.precision or options.default("precision")
  cfg.compute = COMPUTE[precision]
  if not cfg.compute then usage("train: unknown precision '%s'", tostring(precision)) end
  local gb = global_batch(o, p, cfg, sweep, default)
  cfg.global_batch = gb
  local fusion, refusal = step_choices(o, p, cfg, sweep, default)
  -- The fused grouped MLP's kernels are cuDNN's SM100 ones: TE v2.16
  -- ForwardGroupedMLP_CuTeGEMMSwiGLU_MXFP8.is_supported "if
  -- get_device_compute_capability()[0] != 10: return False" (the catalog
  -- carries the arch, not the compute capability: a consumer Blackwell,
  -- 12.0, is not told apart); and the experts unsplit (above).
  -- MXFP8 is Blackwell's recipe: Hopper's block-scaled fp8 (1x128) has
  -- no scales to swizzle and another allocator (Float8BlockQuantizer).
  if (cfg.mxfp8_grouped or 0) > 0 and gpu.arch ~= "blackwell" then
    fail("train: te_mxfp8_grouped %s is Transformer Engine's MXFP8 grouped linear (Blackwell); "
      .. "%s is %s", tostring(o.te_mxfp8_grouped), tostring(gpu.id), tostring(gpu.arch))
  end
  if cfg.fused_grouped_mlp then
    if gpu.arch ~= "blackwell" then
      fail("train: fused_grouped_mlp runs cuDNN's SM100 kernels (compute capability 10, "
        .. "Blackwell); %s is %s", tostring(gpu.id), tostring(gpu.arch))
    end
    if (o.etp or o.tp or 1) > 1 then
      usage("train: fused_grouped_mlp needs the experts unsplit: Megatron-Core refuses it "
        .. "with expert tensor parallelism (got etp %s)", tostring(o.etp or o.tp))
    end
  end
  -- FP8 attention is priced from cuDNN's FP8 kernels: Blackwell's as the
  -- 16-bit kernel (the cudnn-frontend GB200 and GB300 results,
  -- train_layer.c attn_layers_time), Hopper's at their own measured
  -- times (the H200 results, engine/train_price.c train_attn_fp8_sm90).
  -- On Hopper, Transformer Engine v2.16 runs FP8 attention without a
  -- learnable softmax or a sliding window only ("Disabling FusedAttention
  -- for softmax_type = %s in FP8 on sm < 100 with cuDNN version < 9.21"),
  -- and cuDNN's Hopper FP8 backward takes head dim 128 only (the H200
  -- results: "hidden_dim shoud be equal to 128"; their GPT-OSS head dim
  -- 64 and DeepSeek-V3 192 FP8 rows all failed).  Other GPUs: no FP8
  -- fused attention measured.
  if cfg.fp8_attention and gpu.arch == "hopper" then
    local hd = model.head_dim or model.hidden / model.heads
    if model.mla or hd ~= 128 then
      fail("train: fp8_attention on %s (hopper) is cuDNN's FP8 kernel, whose backward takes "
        .. "head dim 128 only; %s's is %s", tostring(gpu.id), tostring(model.id or model.name),
        model.mla and "MLA's" or tostring(hd))
    elseif model.sliding_window then
      fail("train: fp8_attention on %s (hopper): Transformer Engine runs FP8 attention with a "
        .. "sliding window on Blackwell only; %s has sliding-window layers", tostring(gpu.id),
        tostring(model.id or model.name))
    end
    cfg.fp8_attention_sm90 = true
  elseif cfg.fp8_attention and gpu.arch ~= "blackwell" then
    fail("train: fp8_attention is priced from cuDNN's FP8 attention kernels on Hopper and "
      .. "Blackwell; %s is %s", tostring(gpu.id), tostring(gpu.arch))
  end
  if o.order ~= nil then cfg.order = o.order end
  -- A sweep passes its largest GPU count (a number): past one node
  -- without NICs it is refused as one job would be, naming what to give.
  local topo, sys, node_name = topology(o, gpu, cat, default,
    math.type(sweep) == "integer" and sweep or not sweep and p.gpus or nil)
  if not sweep then
    local placed = M.partial_node(p.gpus, topo)
    if placed then default(placed) end
  end
  -- Hybrid sharding shards within the job's node.
  if cfg.hsdp and o.zero_group == nil then cfg.hsdp = topo.gpus_per_node end
  -- The host's launch time per op is an x86 server's; the system's
  -- host_op_scale stretches it on a slower host core (catalog/FORMAT.md).
  local host_scale = sys and sys.host_op_scale or 1
  -- numa_bind: each rank bound to its GPU's NUMA node, where the catalog
  -- has a factor for that (host_op_scale_bound, catalog/FORMAT.md).
  -- Its type was checked with the other declared flags (options.lua).
  if o.numa_bind and sys and sys.host_op_scale_bound then host_scale = sys.host_op_scale_bound end
  -- Where binding changes the price (a Grace rack), an unstated one is
  -- an assumption the defaults line says.
  if o.numa_bind == nil and sys and sys.host_op_scale_bound then
    default(string.format("numa_bind=false (ranks not bound to their NUMA node: host ops x%g, "
      .. "x%g bound)", sys.host_op_scale or 1, sys.host_op_scale_bound))
  end
  if host_scale ~= 1 then cfg.host_op_time = core().DEFAULTS.host_op_time * host_scale end
  -- The offloaded optimizer steps on the host at its DRAM bandwidth.
  local offloaded = o.offload ~= nil and o.offload ~= "none"
  -- ema cpu's host thread updates the average in host DRAM each step
  -- (engine/train.c step_sum), at the same share of it.
  local ema_host = o.ema == "cpu"
  if o.host_bw ~= nil and not offloaded and not ema_host then
    usage("train: host_bw is what the offloaded optimizer steps at (or ema cpu's host "
      .. "update); give offload = optimizer or params+optimizer, or ema = cpu, too")
  end
  local threads = o.host_threads
  -- (a whole number >= 1: the options' resolver checked it)
  if threads ~= nil and not offloaded then
    usage("train: host_threads are what the offloaded optimizer steps on; give offload = "
      .. "optimizer or params+optimizer too")
  end
  if ema_host and not offloaded then
    local okh, bw = pcall(require("gpuplan.comm").host_bw, o.host_bw, sys, default, "train",
      "ema cpu updates the average in host memory")
    if not okh then fail("%s", bw) end
    topo.host_mem_bw = bw
  end
  if offloaded then
    local okh, bw = pcall(require("gpuplan.comm").host_bw, o.host_bw, sys, default, "train",
      "the offloaded optimizer steps on the CPU")
    if not okh then fail("%s", bw) end
    topo.host_mem_bw = bw
    -- The offload is held against the node's host DRAM (comm.node_spec:
    -- the system's host_memory); where none is known nothing checks it.
    if not topo.host_memory then
      default(string.format("host memory not checked (%s gives no host_memory)",
        sys and ("system '" .. sys.id .. "'") or "a node built from the GPU"))
    end
    -- Megatron-Core steps an offloaded optimizer in its
    -- HybridDeviceOptimizer: a fused torch.optim.AdamW per parameter on
    -- the rank's own process, not DeepSpeed's AVX CPUAdam
    -- (engine/train.c offload_step).
    if cfg.stack == "megatron" then
      cfg.cpu_adam_s = M.MEGATRON_CPU_ADAM_S / (threads or 1)
      default(string.format("offload=optimizer steps in Megatron-Core's HybridDeviceOptimizer "
        .. "(a fused torch AdamW per parameter, %.2f ns each)", cfg.cpu_adam_s * 1e9))
    elseif threads then
      -- DeepSpeed's host side on the rank's own threads: at least
      -- M.DEEPSPEED_CPU_STEP_THREAD_S / threads a parameter (offload_step
      -- keeps the node's DRAM bound too).
      cfg.cpu_step_s = M.DEEPSPEED_CPU_STEP_THREAD_S / threads
    end
  end
  -- Activation offload (engine/train.c act_offload_time): the saved
  -- activations cross the GPU's own host link, GB200's NVLink-C2C where
  -- the catalog gives it, else its PCIe link.
  -- The checkpoint offload (train.c ckpt_offload_time) crosses it too.
  if cfg.activation_offload_layers or cfg.checkpoint_offload then
    local hb = require("gpuplan.comm").host_link_bw(gpu)
    if hb then
      cfg.act_offload_bw = hb
      default(string.format("%s offload over the host link at %.1f GB/s a direction (%s)",
        cfg.checkpoint_offload and "checkpoint" or "activation", hb / 1e9,
        gpu.host_link and "catalog host_link" or "the GPU's PCIe link"))
    end
  end
  -- Where the checkpoints' copies run, said where the job did not say
  -- (engine/train.c ckpt_offload_time against ckpt_offload_stream_time).
  if cfg.checkpoint_offload and o.checkpoint_offload_streams == nil then
    default("checkpoint_offload_streams=false (the copies on the compute stream, "
      .. "save_on_cpu's and DeepSpeed's)")
  end
  if o.delayed_update ~= nil and type(o.delayed_update) ~= "boolean" then
    fail("train: delayed_update must be a boolean (got %s)", type(o.delayed_update))
  end
  cfg.delayed_update = o.delayed_update or false
  cfg.capacity = p.capacity
  local okb, buyer = pcall(require("gpuplan.prices").buyer, cat, o, "train")
  if not okb then fail("%s", buyer) end
  local currency = buyer.currency
  cfg.tokens = M.tokens_total(o, cfg.seq, default)
  cfg.price = price_of(o, gpu, cat, buyer, default)
  if o.attn_kernel ~= nil and type(o.attn_kernel) ~= "string" then
    fail("train: attn_kernel must be a kernel name (got %s)", type(o.attn_kernel))
  end
  -- power_limit: a number of W or a power with its unit, read (and
  -- refused) by roofline.clock_at under roofline.device below
  local roofline = require("gpuplan.roofline")
  if o.cudnn ~= nil and not require("gpuplan.version").plain(o.cudnn) then
    fail("train: cudnn must be a release, X.Y or X.Y.Z (got %s)",
      type(o.cudnn) == "string" and ("'" .. o.cudnn .. "'") or type(o.cudnn))
  end
  local okd, device, clock, limit = pcall(roofline.device, gpu, cat, o.attn_kernel,
    o.power_limit, o.sm_clock, o.cudnn)
  -- roofline.device is a public function: its error already names the
  -- caller's line, which fail names again.
  if not okd then fail("train: %s", (tostring(device):gsub("^[^%s:]+:%d+: ", "", 1))) end
  -- The step's GEMMs run at the catalog's measured fraction of the
  -- precision's peak (achievable.gemm); without one the engine refused
  -- "fp32 training needs fp32 tensor cores; this device has none" -- on
  -- every card, fp32 having no tensor cores and no arch a measured fp32
  -- GEMM, a sentence naming neither the card nor what to give.
  local cp = cfg.compute
  if cp and not (device.peak[cp] and device.gemm[cp]) then
    fail("train: %s training is not priced on %s: the catalog has no %s%s%s (give --precision %s)",
      cp, tostring(gpu.id), device.peak[cp] and "measured GEMM rate for " or "peak in ", cp,
      device.peak[cp] and string.format(" on arch %s", tostring(gpu.arch)) or "",
      device.gemm.tf32 and cp == "fp32" and "tf32: fp32 weights, tensor-core matmuls"
        or device.gemm.bf16 and "bf16" or "fp16")
  end
  local attn_note = ""
  if device.attn_kernel == "cudnn" and o.attn_kernel == nil and cfg.eager and cfg.flash ~= false then
    -- The arch's kernel is cuDNN's (what Transformer Engine and the
    -- Megatron / NeMo stacks run on Hopper and Blackwell), but eager
    -- kernels are transformers' modules, which reach a fused kernel only
    -- through attn_implementation: "flash_attention_2" (Dao's
    -- FlashAttention-2) or "sdpa" (their default from v4.36), whose
    -- backends PyTorch tries flash (FlashAttention-2's code), efficient,
    -- math, then cuDNN: pytorch PR #138522, cherry-picked onto 2.5, "puts
    -- the CuDNN backend as the lowest precedence in the backend list"
    -- (2.5.0 alone had tried it first on H100).  So FlashAttention-2's
    -- measured fractions, where the arch has them; a source that names
    -- cuDNN states attn_kernel (NeMo Automodel's SDPA with
    -- CUDNN_ATTENTION first does).
    -- On Blackwell SDPA's flash backend runs the same FlashAttention-2
    -- code as the b200 and gb200 fa2 fractions (the gb200 entry's
    -- cross-check: SDPA's flash backend 414 / 338 TFLOP/s on GB200), but
    -- which backend SDPA picks there moves with the release: PyTorch puts
    -- cuDNN first on sm90 and sm100 once its cuDNN is new enough
    -- (aten/src/ATen/native/transformers/cuda/sdp_utils.cpp
    -- check_prefer_cudnn_attention, "return (major == 9 || major == 10)
    -- && !dprops->minor"; pytorch PR #162073 "Enable cuDNN SDPA by default
    -- for SM 9.0, SM 10.0", for 2.9; later gated on cuDNN above 9.15,
    -- transformers PR #48163: "on recent torch the default is already
    -- cuDNN").  The eager path keeps the arch's cuDNN on Blackwell, as
    -- before the fa2 fractions came; a run on a release whose SDPA takes
    -- its flash backend there states attn_kernel = fa2.
    local okf, fa2 = pcall(roofline.device, gpu, cat, "fa2", o.power_limit, o.sm_clock)
    if okf and gpu.arch == "blackwell" then
      attn_note = " (the arch's: PyTorch's SDPA takes cuDNN first on sm100 once its cuDNN is "
        .. "new enough; attn_kernel=fa2 prices its flash backend, FlashAttention-2)"
    elseif okf then
      device = fa2
      attn_note = " (transformers' modules: SDPA's flash backend or FlashAttention-2; "
        .. "PyTorch tries cuDNN's last)"
    else
      -- No FlashAttention-2 fractions on this part (Blackwell's arch has
      -- fa4 and cudnn only): the arch's kernel stays, and the line says why.
      attn_note = " (the arch's: no FlashAttention-2 measurement on " .. gpu.arch .. ")"
    end
  end
  -- A board limit below the TDP (the card's default or the job's):
  -- the line says the clock it leaves the tensor work.
  if o.power_limit == nil and o.sm_clock == nil and okd and clock < 1 then
    default(string.format("power_limit=%gW (%s's default limit, TDP %gW: tensor clock %.3f "
      .. "of the TDP's)", limit, tostring(gpu.id), gpu.tdp, clock))
  end
  if device.attn_kernel and o.attn_kernel == nil and cfg.flash ~= false then
    default("attn_kernel=" .. device.attn_kernel .. attn_note)
  elseif not device.attn_kernel and cfg.flash ~= false then
    -- A card whose entry and arch measure no fused attention kernel (a
    -- user's new arch): engine/train_price.c train_attn_time prices the
    -- attention core as the GEMMs of its shape, which nothing said.
    default(string.format("attn_kernel=none (no fused attention kernel measured on %s or its "
      .. "arch %s: the attention core priced as GEMMs of its shape; achievable.attention "
      .. "gives one)", tostring(gpu.id), tostring(gpu.arch)))
  end
  -- Transformer Engine runs FlashAttention-2 and -3 on bshd tensors and
  -- copies Megatron-Core's sbhd q, k, v and output to and from them;
  -- cuDNN's kernel takes sbhd as it is (engine/train_layer.c
  -- fa_layout_costs).
  cfg.fa_layout = cfg.te_modules and not cfg.eager and cfg.flash ~= false
    and (device.attn_kernel == "fa2" or device.attn_kernel == "fa3") or false
  -- The flex dispatcher's kernels hold SMs of the card: no more than it
  -- has (the catalog's sms, else its arch's).
  if o.moe_flex_sms ~= nil and (device.sms or 0) > 0 and o.moe_flex_sms > device.sms then
    fail("train: moe_flex_sms %d is more SMs than %s has (%d)", o.moe_flex_sms,
      tostring(device.id), device.sms)
  end
  -- An fp64 router runs at the card's FP64 rate: one the catalog states.
  if cfg.router_fp64 and not device.fp64 then
    fail("train: moe_router_dtype fp64 runs the router's GEMMs at the card's FP64 rate; the "
      .. "catalog gives %s no fp64 or fp64_tensor peak", tostring(device.id))
  end
  memory.grad_reduce(o, cfg, "train")
  -- A job's step that gives fsdp (job:step{fsdp = ...}: gp.train_job,
  -- gp.rl_job; engine lgp_job_sharding): what gp.train takes from that
  -- fsdp with this job's other options, by the same rules (memory.sharding
  -- as prepare_layout asks it, fsdp_version as step_choices does): (zero,
  -- hsdp, grads_whole, fsdp, fsdp_version) for the engine -- zero nil:
  -- the step's own (no FSDP), hsdp the node's GPUs under hybrid_shard as
  -- above, fsdp the engine's rule as step_choices sets it (the hf stack's
  -- ZeRO is FSDP's) -- or why it is refused, in gp.train's words after
  -- its "train: ".  given: the step's zero (nil: none); zero: the stage
  -- the step has without fsdp (given, else the job's).  A step that gives
  -- zero but not fsdp (fsdp nil) is asked too: gp.train with the job's
  -- fsdp and that zero -- a strategy refuses a zero not its own (a hybrid
  -- ZeRO-2 or ZeRO-1, a full_shard at zero 2), as gp.train does; a job
  -- without a strategy keeps the step's zero and gets what gp.train
  -- without fsdp at that zero gets: on the hf stack (whose ZeRO-2/3 is
  -- PyTorch FSDP's) the fsdp_version of that stage, so a job made at zero
  -- 0 or 1 (version 0) priced at zero 3 is FSDP1's as gp.train's zero 3
  -- is.  The engine asks only a job with its FSDP rule (lgp_job_sharding).
  local grad_sync, stack = o.grad_sync, cfg.stack
  -- fsdp_version's answer by (rule, at_zero): the same for every step of
  -- this job, so a loop over stages asks options.default once each.
  local versions = {}
  local function sharding_of(fsdp, given, zero)
    -- A job's zero_group keeps its shard groups at the step's sharding
    -- (as a job without the FSDP rule keeps them: the engine's hsdp
    -- stays); hybrid_shard sets groups of its own, and zero 0 has no
    -- states to shard: both refused, as gp.train refuses them.
    if o.zero_group ~= nil and (fsdp == "hybrid_shard" or given == 0) then
      return string.format("zero_group %s is the job's: a step cannot take %s",
        tostring(o.zero_group), fsdp == "hybrid_shard" and "fsdp hybrid_shard" or "zero 0")
    end
    if fsdp == nil then fsdp = o.fsdp end
    local ok, st, z, whole = pcall(memory.sharding, fsdp, grad_sync, given)
    if not ok then
      -- memory's refusal, without the positions it was raised at
      return (tostring(st):gsub("^[^\n]-:%d+: ", "", 1):gsub("^%a+: ", "", 1))
    end
    local rule = st ~= nil or stack == "hf"
    z = st and z or zero
    local key = (rule and 2 or 0) + ((rule and z >= 2) and 1 or 0)
    local memo = versions[key]
    if not memo then
      local fv, bad = fsdp_version(o, stack, rule, rule and z >= 2)
      memo = { fv = fv, bad = bad }
      versions[key] = memo
    end
    local fv, bad = memo.fv, memo.bad
    if bad then return bad end
    return st and z or nil, st == "hybrid_shard" and topo.gpus_per_node or
      o.zero_group ~= nil and cfg.hsdp or 0, whole == true,
      rule, fv
  end
  -- Its answer by (fsdp, given, zero): the same for every step of this job
  -- that asks it, and a sweep's memoised job asks it at every step (a
  -- pcall and memory.sharding each time cost gp.rl_job a fifth of its
  -- rate).  Only plain keys are kept: a strategy given as a table is asked
  -- anew.
  local answers = {}
  local function step_sharding(fsdp, given, zero)
    local f = fsdp == nil and "\0nil" or fsdp
    local tf, tg = type(f), type(given)
    if (tf ~= "string" and tf ~= "boolean") or (tg ~= "number" and tg ~= "nil")
        or type(zero) ~= "number" or given ~= given or zero ~= zero then
      return sharding_of(fsdp, given, zero)
    end
    local by_f = answers[f]
    if not by_f then by_f = {}; answers[f] = by_f end
    local g = given == nil and -1 or given
    local by_g = by_f[g]
    if not by_g then by_g = {}; by_f[g] = by_g end
    local a = by_g[zero]
    if not a then
      a = table.pack(sharding_of(fsdp, given, zero))
      by_g[zero] = a
    end
    return table.unpack(a, 1, a.n)
  end
  return { p = p, model = model, gpu = gpu, cfg = cfg, topo = topo, node_name = node_name, device = device,
           defaults = defaults, currency = currency, precision = precision, cat = cat,
           global_batch = gb, host_op_scale = host_scale,
           -- the gradient accumulation fusion of a step without FSDP
           -- and with it (a job's step may turn it on or off)
           fusion = fusion,
           -- the sharding options' rule, which a job's step asks of
           -- each layout it prices (sharding_rule)
           refusal = refusal,
           -- the sharding of a job's step that gives fsdp
           sharding = step_sharding,
           -- a job's step's stage_layers read by gp.train's rule
           -- (memory.stage_list: the job's stack; the step's pp the
           -- engine checks)
           stage_list = function(v)
             return require("gpuplan.memory").stage_list(v, tostring(cfg.stack))
           end,
           -- GPUs one host (OS) runs: the node's, fewer where the
           -- system's NVLink domain spans hosts (catalog host_gpus)
           host_gpus = math.min(topo.gpus_per_node,
             sys and sys.host_gpus or topo.gpus_per_node),
           -- the catalog system of the node (nil: built from the GPU)
           system = sys and sys.id or nil }
end

-- An error raised inside gpuplan's own Lua, without the position Lua
-- gave it there (the caller's position is added when it is re-raised).
local internal = args.unplaced

-- gp.train{...}: see the header.
-- A sequence past the model's stated context (its catalog max_seq, the
-- checkpoint config's max_position_embeddings): priced as asked -- a
-- context extension (YaRN, a longer RoPE base) trains a model there, and
-- the cost of a step does not depend on what the positions mean -- but
-- said, since a plain run there trains positions the model never saw.
-- nil where the model states no context or seq is within it.
function M.context_note(model, seq)
  if type(model) ~= "table" or not model.max_seq or type(seq) ~= "number" then return nil end
  if seq <= model.max_seq then return nil end
  return string.format("seq %d is past %s's stated context of %d tokens (max_seq): priced as "
    .. "asked, as a context extension trains it", seq, tostring(model.id or model.name),
    model.max_seq)
end

function M.train(o)
  local oks, s = pcall(M.setup, o)
  if not oks then error(type(s) == "string" and internal(s) or s, 2) end
  local p, model, gpu, cfg, defaults = s.p, s.model, s.gpu, s.cfg, s.defaults
  local topo, device, currency, precision = s.topo, s.device, s.currency, s.precision
  local gb = cfg.global_batch
  -- A step that shards nothing (zero 0 or 1 on stack hf: DDP, no
  -- FullyShardedDataParallel or fully_shard) has no FSDP for the version
  -- to choose: the engine prices it only where a step shards (train_stage.c
  -- fsdp_copies: "if (!c->fsdp || ... shard <= 1) return"), so a given
  -- fsdp_version there was accepted and changed nothing.  (gp.train_job
  -- keeps it: its steps may move to zero 2 or 3, where it applies; a
  -- given fsdp strategy is FSDP at any zero, e.g. shard_grad_op under
  -- pipeline parallelism, which the engine runs at zero 1.)
  if o.fsdp_root_gathered and cfg.stack ~= "hf" then
    error(args.usage(string.format("train: fsdp_root_gathered is PyTorch FSDP's root unit: it "
      .. "needs stack = hf (got stack %s)", tostring(cfg.stack))), 2)
  end
  if o.fsdp_version ~= nil and not o.fsdp and (cfg.zero or 0) < 2 then
    error(args.usage(string.format("train: fsdp_version chooses PyTorch FSDP's implementation, "
      .. "and this step has no FSDP (zero %d on stack hf): turn it on with fsdp = full_shard "
      .. "or shard_grad_op (or zero = 3 or 2), or leave fsdp_version out", cfg.zero or 0)), 2)
  end

  local auto = cfg.recompute == "auto"
  local function run(c)
    if c.recompute == "auto" then
      memory.auto_recompute(model, c, defaults)
    end
    local ok, r = pcall(core().train, model, device, topo, c)
    if not ok then error("train: " .. require("gpuplan.cli").clean(r), 0) end
    return r
  end
  local r = run(cfg)
  -- Without tokens a step prices no run: no days, no cost, nothing the
  -- buyer's market or a GPU-hour's price moves.  The defaults line said
  -- "market=us,global,overseas (a USD buyer), price=1.80 USD/GPU-h (...)"
  -- all the same, an assumption the answer did not rest on.  Said where
  -- tokens are given, or a price, currency or market (the command's
  -- "cost: ... an hour, ... a step" line, gpuplan.cmd.train, prints the
  -- price then); gp.rl and gp.sweep read setup's defaults, where a step's
  -- cost or a policy's score uses them.
  if not cfg.tokens and o.price == nil and o.currency == nil and o.market == nil then
    require("gpuplan.prices").unsaid(defaults)
  end
  local out = {
    model = model.id or model.name, gpu = gpu.id, gpus = p.gpus, method = p.method,
    tp = cfg.tp, pp = cfg.pp, dp = cfg.dp, ep = cfg.ep, vpp = cfg.vpp or 1,
    -- Ulysses' group is the engine's CP group (gpuplan.memory ulysses)
    cp = cfg.cp_ulysses and 1 or cfg.cp, ulysses = cfg.cp_ulysses and cfg.cp or 1,
    etp = cfg.etp or cfg.tp,
    -- sequence parallelism splits over the TP group: at tp 1 there is
    -- none, and Megatron turns it off ("if args.tensor_model_parallel_size
    -- == 1: args.sequence_parallel = False", megatron/training/arguments.py
    -- validate_args); the step priced none, but the result said "sp"
    -- where plan names the same layout without it
    zero = cfg.zero, hsdp = cfg.hsdp or 0, sp = cfg.sp == true and cfg.tp > 1,
    micro_batch = cfg.micro_batch or 1, global_batch = gb, seq = cfg.seq, recompute = cfg.recompute, precision = precision,
    recipe = cfg.recipe.id, stack = cfg.stack,
    fits = r.fits, step_s = r.step_s, microbatches = r.microbatches,
    bubble_frac = r.bubble_frac, stage = r.stage, stage_layers = r.stage_layers,
    stage_time_s = r.stage_time_s, tokens_per_step = r.tokens_per_step,
    tokens_per_s = r.tokens_per_s, tokens_per_s_gpu = r.tokens_per_s_gpu,
    model_flops = r.model_flops, hw_flops = r.hw_flops, mfu = r.mfu, hfu = r.hfu,
    model_tflops_gpu = r.model_tflops_gpu, hw_tflops_gpu = r.hw_tflops_gpu, peak = r.peak,
    vision_s = r.vision_s, vision_patches = r.vision_patches, media = p.media,
    memory = r.memory, warnings = r.warnings, groups = r.groups, currency = currency, ops = r.ops,
    price = cfg.price, defaults = defaults, overlaps = {},
    recompute_auto = auto or nil,
    context_note = M.context_note(model, cfg.seq),
  }
  for _, k in ipairs(M.OVERLAP_KEYS) do out.overlaps[k] = cfg[k] end
  -- What ran under compute, as sp above: an overlap of a group of one
  -- rank has nothing to hide (the step prices no TP collective at tp 1,
  -- no pipeline send at pp 1, no expert all-to-all at ep 1), so it is
  -- off here whatever the stack's default or the caller said (it read
  -- overlap_p2p true at pp 1; Megatron v0.7 turns overlap_p2p_comm off
  -- without the interleaved schedule, and refuses tp_comm_overlap
  -- without sequence_parallel, which is off at tp 1).
  out.overlaps.tp_overlap = out.overlaps.tp_overlap and cfg.tp > 1
  out.overlaps.overlap_p2p = out.overlaps.overlap_p2p and cfg.pp > 1
  out.overlaps.ep_overlap = out.overlaps.ep_overlap and (cfg.ep or 1) > 1
  -- whose host_memory the offload was held against (gpuplan.memory.host_line)
  if out.memory then out.memory.host_system = s.system end
  if not r.fits then
    -- what the verdict line says (gpuplan.memory.verdict, without "fits: no");
    -- a GPU that holds the job on a host that cannot: the host alone
    local host = memory.host_short(out.memory)
    if host and out.memory.short_by <= 0 then
      out.why = host
    else
      out.why = string.format("memory: needs %.1f GiB per GPU, %s", r.memory.total / 2 ^ 30,
        (memory.verdict(r.memory):gsub("^fits: no %((.*)%)$", "%1")))
    end
  end
  out.parts = {}
  for _, name in ipairs(M.PARTS) do
    out.parts[#out.parts + 1] = { name = name, seconds = r.parts[name], hidden = r.hidden[name],
                                  share = r.parts[name] / r.step_s }
  end
  if cfg.tokens then
    out.tokens = cfg.tokens
    out.train_s = r.train_s
    out.days = r.train_s / 86400
    if cfg.price then out.cost = r.cost end
  end
  if o.scaling or o.scaling_base ~= nil then
    -- Tokens/s per GPU here against the job's fastest layout on the base
    -- count: scaling_base, else the smallest count that fits (1 GPU when
    -- it fits; gpuplan.sweep.scaling_base).  No smaller count fits: the
    -- job is its own base.
    local job = {}
    for k, v in pairs(o) do job[k] = v end
    job.method, job.seq, job.global_batch = p.method, cfg.seq, gb
    local okb, b = pcall(require("gpuplan.sweep").scaling_base, job, gpu.id, p.gpus,
                         o.scaling_base)
    -- (gpuplan.sweep's public function names the script's line: not here)
    if not okb then error("train: " .. tostring(b):gsub("^[^\n]-:%d+: ", ""), 2) end
    if b then
      out.scaling = { gpus = b.gpus, layout = b.layout, tokens_per_s_gpu = b.tokens_per_s_gpu,
                      efficiency = r.tokens_per_s_gpu / b.tokens_per_s_gpu,
                      base = b.given and "scaling_base" or "the smallest count that fits" }
    else
      out.scaling = { gpus = p.gpus, tokens_per_s_gpu = r.tokens_per_s_gpu, efficiency = 1,
                      base = "no smaller count fits" }
    end
  end
  -- The 80% ranges of the step, throughput, days and cost (gpuplan.ranges).
  return require("gpuplan.ranges").apply("train", { model = model, gpu = gpu,
    gpus_per_node = topo.gpus_per_node, fsdp = cfg.fsdp and (cfg.zero or 0) >= 2 }, out)
end

-- gp.train_job{...}: the job of gp.train resolved once -- the model, the
-- card, the node and every default -- for a loop that prices layouts:
--   local job = gp.train_job{ model = "llama3-70b", gpu = "h100-sxm", gpus = 64,
--                             method = "pretrain", seq = 8192 }
--   local r = job:step{ tp = 8, pp = 2, zero = 1, batch = 1, recompute = "selective" }
--   if r.fits then print(r.step_s, r.mfu, r.tokens_per_s) end
-- job:step takes gp.train's layout names (tp, pp, cp, ep, etp, vpp, zero, sp,
-- batch, recompute, recompute_layers, global_batch, fsdp, stage_layers and
-- the overlaps); what it does not give is the job's.  dp follows from gpus.
-- stage_layers is read by gp.train's rule (memory.stage_list: a table or
-- its text, the megatron stack only, "" refused as empty).
-- fsdp is gp.train's (full_shard, shard_grad_op, hybrid_shard, true:
-- full_shard, false: none) and brings what gp.train takes from it -- the
-- strategy's ZeRO stage (a zero given with it must be that stage),
-- hybrid sharding's node, the job's grad_sync -- by the same rule.  A
-- zero without fsdp is gp.train's with the job's fsdp and that zero: a
-- job's strategy refuses a zero not its own, as gp.train does.  A step
-- refuses what gp.train refuses of the job's stack (sharding_rule): a
-- Ulysses job's pp or tp where its stack's Ulysses has no such axis,
-- Muon at a ZeRO stage on megatron.
-- job:step(layout, r) fills r, a result of an earlier step, instead of
-- making a new one (a loop then allocates nothing).
-- The result has step_s, fits, tokens_per_s, tokens_per_s_gpu, mfu, hfu,
-- microbatches, bubble_frac, train_s, cost, model_tflops_gpu,
-- stage_time_s and mem_bytes as fields (the names of gp.train's result), and r:table() gives everything
-- core.train returns.  An unknown name is an error naming it.  The job
-- keeps the memo a sweep keeps: each layout is priced by the same
-- train_step as gp.train, the layer costs shared between them.
function M.train_job(o)
  local oks, s = pcall(M.setup, o)
  if not oks then error(type(s) == "string" and internal(s) or s, 2) end
  local c = {}
  for k, v in pairs(s.cfg) do c[k] = v end
  if c.recompute == "auto" then c.recompute = "none" end
  c.gpus = s.p.gpus
  local h = core()
  -- the zero_group itself, not its GPUs: a step's groups are n of its
  -- own dp x cp ranks, n x its tp GPUs (engine lgp_job_zero_group)
  local ok, job = pcall(h.train_job, h.model(s.model), h.device(s.device), h.topology(s.topo), c,
    s.fusion, s.refusal, s.sharding, o.zero_group, s.stage_list)
  if not ok then error("train_job: " .. require("gpuplan.cli").clean(job), 2) end
  return job
end

-- The parts of a step, in the engine's order (engine/train.h train_part).
M.PARTS = core().TRAIN_PARTS

return require("gpuplan.args").api_module(M)
