-- gpuplan.options: every option of fit, train, plan, rl, infer and comm,
-- declared once (after sysbench's option tables, taken all the way).
--
-- From these declarations come each command's CLI spec (cli.parse's
-- option table), the option lines of its --help, the key set each Lua
-- function accepts (gp.memory <-> fit, gp.train <-> train, gp.sweep <->
-- plan, gp.rl <-> rl, gp.infer <-> infer, gp.comm <-> comm) and the
-- unknown-key error with its did-you-mean.  The CLI flag is the name with "_" -> "-"; the Lua key
-- is the name.
--
-- A declaration:
--   name      the Lua key (lowercase, "_" between words)
--   type      the CLI type: int, number, string, flag, format, format_html
--             (Lua-only options: the Lua value's kind, for the reader)
--   metavar   the value's placeholder in --help (N, ID, LIST ...)
--   help      what the --help line says; one text for every command (a
--             flag that defaults to on is shown as --no-NAME, and its help
--             says what turning it off does)
--   default   as --help shows it: a string, or a table {base, cmd = ...}
--             where one command's default differs
--   commands  the commands that take it, on the command line and in Lua
--   lua       more commands whose Lua function takes it (no CLI flag)
--   cli       more commands whose command line takes it (no Lua key)
--   lua_only  true: no command line takes it (commands are Lua's)
--   cli_only  true: no Lua function takes it (commands are the CLI's)
--   in_lua    with cli_only: what a script does instead, said when a Lua
--             function is given the key ("gp.infer_plan{target = ...}")
--   variants  { cmd = {type, metavar, help, default, own, group} }: where a
--             command takes a different kind of value (plan's lists to
--             search) or it means another thing there (comm's --gpu: the
--             node built from it); own = true: that command reads it
--             itself, it is not the job's; group: its --help heading there
--   methods   the fit --method values it applies to (gpuplan fit refuses
--             it with any other, naming the option)
--   serve     true: gp.infer takes the MoE serving model when it is given
--   form      "no": shown as --no-NAME; "both": --[no-]NAME
--   suggest   names users write for it (sequence_parallel for sp): never
--             accepted, only suggested by the unknown-key error
--   notes     { cmd = "..." }: one command's addition to the help
--   fold      true: a name read in either case (lower-cased by the
--             resolve step, as a kind dtype's is): --runtime VLLM is vllm
--   kind      what the value is (M.KINDS): count, tokens, number,
--             fraction, bytes, bandwidth, duration, dtype, enum, name,
--             flag ...; when left out, the one its type implies
--   counts    kind total: what the count is of, for its message
--             (default tokens)
--   forms     kind total: the forms its message shows (default tokens':
--             "a number (2e12) or one with a suffix K, M, B or T (500M,
--             2B, 1.5T)")
--   range     { lo, hi } of a number: what the resolve step accepts
--             (open = true: hi itself refused, [lo, hi); gt = true: lo
--             itself refused, (lo, hi])
--   values    { "a", "b", ... } of an enum: the names the resolve step
--             accepts (an enum without them is checked by its reader)
--   value     the default the engine takes when the option is left out:
--             a value, or function(job) -> value[, the "defaults assumed"
--             text] where it follows from the job (gpuplan.memory's job:
--             method, model, stack, dp, seq ...); the text false: nothing to
--             say (the framework's own setting, or an option that does not
--             apply to the job).  A literal value is
--             also what --help shows, unless default says it in words

local args = require "gpuplan.args"

local M = {}

M.COMMANDS = { "fit", "train", "plan", "rl", "infer", "comm" }
-- The Lua function of each command.
M.FUNCTION = { fit = "gp.memory", train = "gp.train", plan = "gp.sweep", rl = "gp.rl",
               infer = "gp.infer", comm = "gp.comm" }

-- Groups, in --help order, with their headings.
M.GROUPS = {
  { "job", "the job" },
  { "layout", "the parallel layout" },
  { "memory", "activations, states and offload" },
  { "lora", "LoRA / QLoRA" },
  { "vision", "vision-language models" },
  { "inference", "inference and serving" },
  { "moe", "serving a MoE model across many GPUs (any of these)" },
  { "rl", "RL (GRPO / PPO)" },
  { "collective", "the collective" },
  { "node", "the node and its communication" },
  { "search", "the search" },
  { "cost", "time and cost" },
  { "output", "output" },
}

-- Methods a fit option may be limited to.  A training step's option
-- (a saved activation's bytes, the pipeline's stage layers, the eager
-- kernels' saves ...) given to gp.memory with method infer was taken and
-- read by nothing, whatever its value (stage_layers = true, NaN): each is
-- declared for TRAINING, which method infer refuses by the option's name.
local TRAINING = "pretrain full lora qlora grpo ppo"
local RL = "grpo ppo"
-- A LoRA adapter's options: the adapter methods', and an RL step's (whose
-- actor a given lora_rank makes an adapter's).
local ADAPTER = "lora qlora grpo ppo"

local TRAIN4 = "fit train plan rl"
local ALL = "fit train plan rl infer"

local D = {}
local group
local function section(g) group = g end
local function opt(t)
  t.group = group
  D[#D + 1] = t
end

---------------------------------------------------------------------------
section "job"

opt { name = "model", type = "string|table", lua_only = true, commands = ALL,
  argument = "MODEL",  -- every command of ALL takes it so: M.hint
  help = "catalog model id or a catalog-shaped model table (the MODEL argument "
    .. "on the command line)" }
opt { name = "gpu", type = "string", metavar = "ID", commands = ALL .. " comm",
  default = "the card of --system where given (Lua: system); else required",
  help = "catalog GPU, e.g. h100-sxm, h200-sxm, a100-sxm-80gb",
  suggest = { "device", "gpu_type", "card" },
  notes = { infer = "A,B,...: the same deployment on each card, side by side (Lua: a list)" },
  variants = { plan = { metavar = "A,B,...", own = true,
    help = "the cards to compare (Lua: one id or a list)" },
    comm = { group = "node", default = "none: the node of --system",
      help = "instead of --system: the node built from the GPU alone, its NVLink domain on "
        .. "its scale-up fabric (h100-pcie: a bridged pair) or 8 cards on its PCIe "
        .. "generation, no NICs" } } }
opt { name = "gpus", type = "int", metavar = "N", commands = ALL .. " comm",
  default = { "1", infer = "tp x pp" },
  help = "GPUs in the job: dp = gpus / (tp*pp*cp); infer: replicas = gpus / (tp*pp); "
    .. "rl: the rollout and training GPUs together",
  suggest = { "num_gpus", "n_gpus", "ngpus", "world_size", "gpu_count" },
  variants = { plan = { type = "string", metavar = "COUNTS", default = "8", own = true,
    help = "GPU counts to try: 64..1024 (64, 128, ... doubling), or 8,16,32" },
    comm = { group = "node", default = "all GPUs of the nodes",
      help = "ranks, at least 2 (a collective over one GPU moves nothing: refused); with "
        .. "--nodes they are spread evenly, --nodes 8 --gpus 8 is one GPU in each of 8 nodes "
        .. "(it drives only its own NICs and PCIe link)" } } }
opt { name = "method", type = "string", metavar = "M", commands = TRAIN4, kind = "enum",
  fold = true,  -- QLoRA, GRPO as the papers write them
  default = { plan = "pretrain" }, value = "full",
  help = "pretrain|full|lora|qlora (rl: the actor's); fit also grpo|ppo (an RL step's "
    .. "memory) and infer (serving)",
  suggest = { "mode", "training_method", "finetuning_type" } }
opt { name = "seq", type = "int", metavar = "N", commands = "fit train plan", kind = "tokens",
  default = "2048; pretrain: the model's context, at most 8192",
  value = function(j)
    -- RL trains the actor on whole rollouts: prompt + response tokens.
    if j.kind == "rl" then
      local pl, rl = j.prompt_len or 512, j.response_len or 1024
      -- in words: an RL step refuses seq ("seq: an RL step trains on
      -- prompt_len + response_len tokens"), so "seq=1536" named a value
      -- that cannot be given
      return pl + rl, string.format("seq: %d (prompt %d + response %d)", pl + rl, pl, rl)
    end
    -- Pre-training runs at the model's context, up to 8192 (GPT-3 2048,
    -- Llama 2 4096, Llama 3 8192; longer contexts come in a later stage).
    local ms = j.model.max_seq or 0
    if j.method == "pretrain" and ms > 2048 then
      local s = math.min(ms, 8192)
      return s, string.format("seq=%d (the model's context, at most 8192)", s)
    end
    return 2048
  end,
  help = "tokens per sequence; for an encoder-decoder (t5-3b, flan-t5-xxl) the decoder's",
  suggest = { "seq_len", "seq_length", "sequence_length", "max_seq_len", "seqlen" } }
-- fit's only (gp.memory's): the training step of an encoder-decoder model
-- is not modelled (train, plan and rl refuse every one), and an RL step's
-- memory is its training step's, so there it set nothing any of them run.
opt { name = "enc_seq", type = "int", metavar = "N", commands = "fit", default = "--seq",
  kind = "tokens", value = function(j) return j.seq end,
  methods = "pretrain full lora qlora",
  help = "encoder-decoder: encoder tokens per sequence",
  suggest = { "encoder_seq", "enc_seq_len" } }
opt { name = "batch", type = "int", metavar = "N", commands = "fit train rl infer",
  default = { infer = "as many as fit, at most the engine's max_batch: TensorRT-LLM's 2048; "
    .. "--runtime vllm: vLLM's max_num_seqs for the card" }, kind = "number",
  range = { 1, 1 << 24 },
  value = 1,
  help = "micro-batch (training), or sequences decoded together (fit --method infer: "
    .. "concurrent sequences; infer: a fixed decode batch per replica)",
  suggest = { "micro_batch", "micro_batch_size", "mbs", "batch_size",
              "per_device_train_batch_size" } }
opt { name = "global_batch", type = "int", metavar = "N", commands = "train plan rl",
  default = { "about 4M tokens for pretraining, 128 sequences for fine-tuning",
              rl = "all of the step's samples" },
  -- What a run of this kind uses, rounded up to whole micro-batches on
  -- every data-parallel rank (j.per: dp x batch; a sweep leaves it out).
  value = function(j)
    local pre = j.method == "pretrain"
    local want = pre and math.ceil(4 * 1024 * 1024 / j.seq) or 128
    local gb = j.per and j.per * math.max(1, math.ceil(want / j.per)) or want
    -- Rounded up, the count is not the run's kind's: say by how much
    -- ("global_batch=16777216 (128 sequences per step)" read as a
    -- contradiction at dp 16777216).
    return gb, string.format("global_batch=%d (%s%s)", gb,
      pre and "about 4M tokens per step" or "128 sequences per step",
      gb ~= want and string.format(", rounded up to a multiple of dp x batch = %d", j.per)
        or "")
  end,
  help = "sequences per optimizer step (rl: samples)",
  suggest = { "global_batch_size", "gbs" } }
-- Not plan's: each layout it tries has its own dp, over which it splits
-- the global batch.
opt { name = "microbatches", type = "int", metavar = "N", commands = "fit train",
  methods = TRAINING, range = { 0, 1 << 24 },
  help = "micro-batches per step (fit: caps those in flight; train: the global batch is "
    .. "this x dp x --batch; 0: as if not given)",
  suggest = { "num_microbatches", "micro_batches", "gradient_accumulation_steps" } }
opt { name = "precision", type = "string", metavar = "P", commands = TRAIN4, value = "bf16",
  kind = "dtype", default = "bf16; fp16 on a card without bf16 tensor cores",
  methods = TRAINING,
  help = "bf16|fp16|fp8|fp32|tf32; --recipe overrides",
  suggest = { "dtype", "mixed_precision", "compute_dtype" } }
opt { name = "recipe", type = "string", metavar = "R", commands = TRAIN4,
  default = "from --stack and --precision", methods = TRAINING,
  value = function(j) return require("gpuplan.memory").stack_recipe(j.stack, j.precision) end,
  help = "model-state bytes: mixed-16|megatron-18|deepspeed-bf16|fp32|bf16|fp8 or a "
    .. "catalog recipe" }
opt { name = "stack", type = "string", metavar = "S", commands = TRAIN4, kind = "enum",
  default = "megatron for pretrain, else hf", methods = TRAINING,
  value = function(j) return j.method == "pretrain" and "megatron" or "hf" end,
  help = "who owns the optimizer: megatron (18 B/param in bf16), deepspeed (20), hf (16)",
  suggest = { "framework" } }
opt { name = "optimizer", type = "string", metavar = "O", commands = TRAIN4, value = "adamw",
  methods = TRAINING,
  help = "adamw|adam8bit|sgd|muon or a catalog optimizer",
  suggest = { "optim" } }
opt { name = "weights", type = "string", metavar = "W", commands = ALL, kind = "dtype",
  default = { "bf16; qlora: nf4-dq", infer = "the catalog model's dtype where it is quantized (deepseek-v3: fp8, as released; fp8 is weight-only on a card without FP8 tensor cores, and 16-bit where the card cannot run it, below compute capability 8.0 or under runtime trtllm without FP8 tensor cores), else bf16; fp16 on a card without bf16" },
  value = function(j) return j.method == "qlora" and "nf4-dq" or "bf16" end,
  help = "weight format: bf16|fp16|fp32|fp8|int8|w8a8|int4|gptq|awq|nf4|nf4-dq|fp4|mxfp4|"
    .. "fp6 or bits per weight (GGUF-style, e.g. 4.85); infer and fit --method infer: a llama.cpp GGUF type "
    .. "(Q4_0, Q4_K_S, Q4_K_M, Q5_K_S, Q5_K_M, Q6_K, Q8_0; dense models), each tensor at "
    .. "the type llama.cpp's quantize gives it (output Q6_K); group size and scale dtype: "
    .. "gptq-g64, awq-g32-fp32 (default g128, fp16); qlora's base is nf4-dq (4.127 bits; "
    .. "nf4 is 4.5); lora's fp8 base under --precision fp8 on the megatron stack is "
    .. "Transformer Engine's fp8 parameters (NeMo's fp8_params), read by the fp8 GEMMs as "
    .. "they are",
  suggest = { "quant", "quantization", "weight_format", "weight_dtype" } }
-- methods: a training step holds no KV cache; fit --method full --kv fp8
-- was taken and ignored (the RL methods' rollout engines hold one).
opt { name = "kv", type = "string", metavar = "K", commands = "fit rl infer", value = "bf16",
  kind = "dtype", default = { infer = "bf16; fp16 on a card without bf16" },
  methods = "infer grpo ppo",
  help = "KV-cache dtype: bf16|fp16|fp8|int8|fp4|int4|fp32 (rl: the rollout engine's); fp4 is NVFP4, "
    .. "0.5625 B an element with its scales, attended by Blackwell kernels only: elsewhere "
    .. "infer takes it only with --runtime sglang, which dequantises its whole pool every step; "
    .. "fp8 needs compute capability 8.0 (no V100 or T4), and FP8 tensor cores under --runtime trtllm",
  suggest = { "kv_dtype", "kv_cache_dtype" } }
-- vLLM keeps a hybrid stack's SSM state at mamba_ssm_cache_dtype (vllm/
-- config/cache.py: MambaDType = Literal["auto", "float32", "float16",
-- "bfloat16"], "The data type to use for the Mamba cache (ssm state only,
-- conv state will still be controlled by mamba_cache_dtype)"); "auto" is
-- float32 for Nemotron-H (NemotronHForCausalLMConfig: "Only `float32` is
-- known to have no accuracy issues by default"), engine/model.h
-- GP_MAMBA_SSM_STATE_BYTES.  A 16-bit state halves it per sequence.
opt { name = "mamba_ssm_cache_dtype", type = "string", metavar = "D", commands = "fit infer",
  methods = "infer", kind = "enum", values = { "fp32", "bf16", "fp16" },
  default = "fp32 (vLLM's for Nemotron-H)",
  help = "a hybrid stack's SSM state dtype per sequence: fp32|bf16|fp16 (vLLM's "
    .. "--mamba-ssm-cache-dtype float32, bfloat16, float16); the conv state stays 16-bit",
  suggest = { "ssm_cache_dtype", "mamba_cache_dtype", "ssm_dtype", "ssm_state_dtype" } }
opt { name = "margin", type = "number", metavar = "F", commands = ALL,
  -- the catalog's settings.safety_margin (catalog.lua: 0.10 unless a
  -- user catalog's settings set it; memory.lua and infer.lua read it)
  -- (the runtimes' own rules are infer's alone: fit, train, plan and rl
  -- take no runtime)
  default = { "the catalog settings' safety_margin, 0.1 built in",
    infer = "the catalog settings' safety_margin, 0.1 built in; --runtime exllamav2 or "
      .. "llama.cpp: 0, --runtime trtllm: 0.1 of the memory free after the model "
      .. "(kv_free_fraction 0.9)" },
  -- A margin of the whole capacity leaves no budget: each command
  -- refused 1 its own way (fit and infer "must be in [0, 1)" as a usage
  -- error, train "must be below 1", plan naming a layout), and -0.5 as
  -- "in [0, 1]".
  kind = "fraction", range = { 0, 1, open = true },
  help = "safety margin, fraction of capacity",
  suggest = { "safety_margin" } }
opt { name = "capacity", type = "number|string", lua_only = true, commands = TRAIN4,
  kind = "bytes",
  -- an amount: above 0, at most the engine's bound (GP_AMOUNT_MAX,
  -- docs/output.md "Value bounds"), said in this key's words (1e30 was
  -- refused by the engine's reader with no function named)
  range = { 0, 1e15, gt = true },
  -- gp.train, gp.sweep and gp.rl price the card's step time too: they
  -- said "gpu is required" where this promised it could be left out
  help = "bytes per GPU (a number or '80GiB') instead of the GPU's; gp.memory may then "
    .. "leave gpu out (train, sweep and rl still time the card's step)" }
opt { name = "cat", type = "table", lua_only = true, commands = ALL .. " comm",
  help = "the catalog (gp.catalog{dirs = ...}) instead of the search path's" }
opt { name = "catalog", type = "table", lua_only = true, commands = "infer comm",
  help = "as cat (the name gp.roofline takes too)" }
opt { name = "schedule", type = "string", metavar = "S", commands = "fit train plan",
  kind = "enum", values = { "1f1b", "interleaved", "dualpipe" },
  methods = TRAINING, default = "1f1b; interleaved with --vpp",
  help = "pipeline schedule: 1f1b, interleaved (--vpp > 1 sets it) or dualpipe "
    .. "(DeepSeek-V3: each rank holds stage r and pp-1-r, micro-batches from both ends, "
    .. "pp+1 in flight, the all-to-all under the paired chunk's compute; even --pp, an "
    .. "even count of at least 2 x pp micro-batches a step)",
  suggest = { "pipeline_schedule", "pp_schedule", "dual_pipe" },
  variants = { plan = { metavar = "LIST", default = "1f1b", own = true,
    help = "pipeline schedules to try, e.g. 1f1b,dualpipe (1f1b: interleaved too where "
      .. "--vpp-max allows it; interleaved: only those; dualpipe: the layouts DualPipe "
      .. "runs, DualPipe in the layout; Lua: a list)" } } }

---------------------------------------------------------------------------
section "layout"

opt { name = "tp", type = "int", metavar = "N", commands = "fit train rl infer", value = 1,
  help = "tensor-parallel size (infer: per replica)",
  suggest = { "tensor_parallel", "tp_size", "tensor_parallel_size",
              "tensor_model_parallel_size" } }
opt { name = "pp", type = "int", metavar = "N", commands = "fit train rl infer", value = 1,
  help = "pipeline-parallel stages (infer: per replica)",
  suggest = { "pipeline_parallel", "pp_size", "pipeline_parallel_size",
              "pipeline_model_parallel_size" } }
opt { name = "cp", type = "int", metavar = "N", commands = "fit train rl", value = 1,
  methods = TRAINING,
  help = "context-parallel size: each sequence split over N GPUs",
  suggest = { "context_parallel", "cp_size", "context_parallel_size" } }
opt { name = "ulysses", type = "int", metavar = "N", commands = "fit train rl", value = 1,
  kind = "count", range = { 1, 1 << 24 },  -- 1..COUNT_MAX, the engine's bound on a count
  methods = TRAINING,
  -- verl's FSDP/FSDP2 workers (actor, ref, critic):
  -- ulysses_sequence_parallel_size, its monkey patch of the HF attention
  -- (verl/models/transformers/monkey_patch.py, verl/utils/ulysses.py);
  -- train_layer.c ulysses_comm prices the exchanges.
  help = "DeepSpeed-Ulysses sequence parallelism (verl's ulysses_sequence_parallel_size "
    .. "on its FSDP workers): each sequence split over N GPUs outside attention, its "
    .. "q, k, v all-to-all'd to whole sequences of heads / N before attention and the "
    .. "output back (and both again in the backward); N must divide the attention heads "
    .. "(and the kv heads, or be a multiple of them: they are repeated); dp = gpus / "
    .. "(tp*pp*N); not with --cp, nor on --stack hf with --no-flash (verl patches the "
    .. "flash-attention forward alone) or with --pp or --tp (verl's FSDP workers' mesh is "
    .. "dp x ulysses alone), nor with --pp on --stack deepspeed (its pipeline grid has no "
    .. "sequence axis), nor on --stack megatron (Megatron-Core's Ulysses is Transformer Engine's a2a context "
    .. "parallelism, not priced: give --cp)",
  suggest = { "ulysses_sequence_parallel_size", "ulysses_sp_size", "sp_size",
              "sequence_parallel_size" } }
opt { name = "ep", type = "int", metavar = "N", commands = "fit train rl infer", serve = true,
  default = { infer = "1: experts sliced by TP" }, value = 1, methods = TRAINING,
  help = "expert-parallel size (MoE); infer: experts split over an instance of N GPUs "
    .. "(= --tp), or with TP attention a divisor of --tp: N groups of experts, each sliced "
    .. "over tp / N GPUs (TensorRT-LLM's --tp 8 --ep 4)",
  suggest = { "expert_parallel", "ep_size", "expert_model_parallel_size" } }
opt { name = "etp", type = "int", metavar = "N", commands = "fit train rl plan", methods = TRAINING,
  default = "--tp (Megatron-Core's default)",
  help = "expert-tensor-parallel size (MoE): the expert layers fold an etp x ep x edp grid "
    .. "over the tp*cp*dp GPUs of a stage (Megatron-Core MoE parallel folding; etp != tp "
    .. "needs --sp when tp > 1)",
  suggest = { "expert_tensor_parallel", "expert_tensor_parallel_size", "etp_size" },
  variants = { plan = { type = "string", metavar = "LIST", default = "tp", own = true,
    help = "experts' TP to try: tp (as --tp) and/or 1 (folded), e.g. tp,1" } } }
opt { name = "vpp", type = "int", metavar = "N", commands = "fit train rl", methods = TRAINING,
  help = "interleaved 1F1B with N model chunks per stage",
  suggest = { "virtual_pipeline", "virtual_pipeline_model_parallel_size", "interleave" } }
-- An RL step's default follows the RL framework that trains on its stack,
-- each framework's own default, where a data-parallel group has anything
-- to shard (dp x cp > 1):
-- * hf: verl's FSDP workers (actor_rollout_ref.actor.strategy: fsdp, its
--   default; verl b178a3cd verl/trainer/config/_generated_ppo_trainer.yaml
--   "fsdp_config: ... reshard_after_forward: true", and
--   verl/workers/fsdp_workers.py: "fsdp_enable_zero3 =
--   fsdp_config.reshard_after_forward" -> ShardingStrategy.FULL_SHARD
--   on a 1-D mesh): full_shard, ZeRO 3;
-- * deepspeed: OpenRLHF (OpenRLHF 3c3be623 openrlhf/cli/train_ppo_ray.py:
--   'parser.add_argument("--ds.zero_stage", type=int, default=2')): 2;
-- * megatron: verl's and NeMo RL's Megatron workers
--   (use_distributed_optimizer: true, gpuplan.predict.rl's profiles): 1.
-- Training (train, fit's other methods) keeps 0: DDP, as Hugging Face's
-- Trainer and Megatron-LM run without a ZeRO setting.
opt { name = "zero", type = "int", metavar = "N", commands = TRAIN4, range = { 0, 3 },
  methods = TRAINING,
  default = { "0; --method grpo|ppo: the stack's RL framework's, 3 on hf (verl's "
      .. "FSDP full_shard), 2 on deepspeed (OpenRLHF's --ds.zero_stage), 1 on megatron (verl's "
      .. "and NeMo RL's distributed optimizer); 0 at dp x cp 1", train = "0",
    rl = "the stack's RL framework's: 3 on hf (verl's FSDP workers, full_shard), 2 on "
      .. "deepspeed (OpenRLHF's --ds.zero_stage default) and with --rollout-engine hf "
      .. "(OpenRLHF without vLLM), 1 on megatron (verl's and NeMo RL's distributed optimizer); "
      .. "0 at dp x cp 1" },
  value = function(j)
    if j.kind ~= "rl" then return 0 end
    if (j.dp or 1) <= 1 then
      return 0, "zero=0 (one data-parallel rank: nothing to shard)"
    end
    local stack = j.stack or "hf"
    if stack == "megatron" then
      return 1, "zero=1 (stack megatron: verl's and NeMo RL's Megatron workers, "
        .. "use_distributed_optimizer true)"
    elseif stack == "deepspeed" then
      return 2, "zero=2 (stack deepspeed: OpenRLHF's --ds.zero_stage default)"
    end
    return 3, "zero=3 (stack hf: verl's FSDP workers, full_shard, its default)"
  end,
  help = "ZeRO stage 0-3 over data parallel (--fsdp full_shard = 3)",
  suggest = { "zero_stage", "zero_optimization" },
  variants = { plan = { type = "string", metavar = "LIST", default = "1", own = true,
    help = "ZeRO stages to try, e.g. 0,1,2,3" } } }
opt { name = "fsdp", type = "string", metavar = "S", commands = TRAIN4, methods = TRAINING,
  kind = "enum",
  help = "PyTorch FSDP's sharding strategy: full_shard (= --zero 3: layers gathered for "
    .. "forward and again for backward) or shard_grad_op (= --zero 2: gathered once, kept "
    .. "to the backward) or hybrid_shard (full_shard within a node, replicated across "
    .. "nodes: the reduced gradient shard all-reduced between them); Lua also true "
    .. "(full_shard)",
  suggest = { "full_shard", "sharding_strategy", "shard_grad_op", "reshard_after_forward",
    "hybrid_shard", "hsdp" },
  variants = { plan = { metavar = "LIST",
    help = "FSDP strategies to search, e.g. full_shard,shard_grad_op,hybrid_shard, each "
      .. "layout labelled by its strategy's name (their ZeRO stages: 3 for full_shard, 2 "
      .. "for shard_grad_op (1 under --grad-sync step), 3 in a node for hybrid_shard; each "
      .. "strategy its own layouts, no hybrid ZeRO-2; Lua: a list)" } } }
opt { name = "zero_group", type = "int", metavar = "N", commands = "fit train plan rl",
  kind = "count", range = { 1, 1 << 24 },  -- 1..COUNT_MAX, the engine's bound on a count
  methods = TRAINING, default = "dp x cp (one group over all data parallel)",
  help = "ZeRO states shard within groups of N data-parallel ranks, replicated across "
    .. "the dp x cp / N groups (InternEvo's zero1, DeepSpeed MiCS's mics_shard_size, "
    .. "FSDP2 HSDP's shard dimension): memory 1/N; gradients reduce-scattered in the "
    .. "group and each shard all-reduced across groups (--zero-reduce allreduce: one "
    .. "all-reduce over all data parallel), parameters gathered in the group; N must "
    .. "divide dp x cp, and on a MoE model N x tp GPUs hold whole expert groups (a multiple "
    .. "of etp x ep: the experts shard over N x tp / (etp x ep) ranks, Megatron-Core's "
    .. "expert data-parallel split)",
  suggest = { "zero1", "mics_shard_size", "zero_hpz_partition_size", "shard_size", "hsdp" },
  variants = { plan = {
    help = "ZeRO states shard within groups of N data-parallel ranks in every searched "
      .. "layout, as train --zero-group N prices it (not searched: one N for all); layouts "
      .. "whose dp x cp N does not divide are skipped, counted on the searched: line; not "
      .. "with --fsdp hybrid_shard or a zero list holding 0" },
    rl = {
      help = "the actor's training step shards its ZeRO states within groups of N "
        .. "data-parallel ranks, as train --zero-group N (the same step); N must divide "
        .. "the training pool's dp x cp" } } }
opt { name = "grad_sync", type = "string", metavar = "W", commands = TRAIN4,
  value = "micro_batch", kind = "enum", methods = TRAINING,
  help = "with --fsdp: when gradients are reduce-scattered, micro_batch or step (no_sync "
    .. "over the accumulation: whole gradients, one reduce-scatter; shard_grad_op then "
    .. "sends and holds what --zero 1 does)",
  suggest = { "no_sync", "requires_gradient_sync", "gradient_sync" } }
opt { name = "sp", type = "flag", commands = TRAIN4, methods = TRAINING,
  help = "sequence parallelism: the activations outside attention and the MLP split "
    .. "over the TP group (Megatron)",
  suggest = { "sequence_parallel", "sequence_parallelism" },
  variants = { plan = { default = true, own = true,
    help = "search without sequence parallelism (Lua: a list, {false, true} searches "
      .. "both)" } } }
opt { name = "order", type = "string", metavar = "O", commands = "train rl", lua = "plan",
  default = "tp-cp-ep-dp-pp",
  help = "rank order, innermost first",
  suggest = { "rank_order" } }
opt { name = "partition", type = "string", metavar = "P", commands = TRAIN4,
  default = "auto: uniform on megatron, parameters on deepspeed", methods = TRAINING,
  kind = "enum",
  -- engine/memory.h gp_partition's names
  values = { "auto", "uniform", "parameters", "type:transformer", "type:transformer|embedding" },
  value = function(j) return j.stack == "deepspeed" and "parameters" or "uniform" end,
  help = "layers per pipeline stage: auto|uniform|parameters|type:transformer|"
    .. "type:transformer|embedding",
  suggest = { "partition_method" } }

---------------------------------------------------------------------------
section "memory"

opt { name = "recompute", type = "string", metavar = "R", commands = TRAIN4,
  fold = true,
  value = "none", kind = "enum", methods = TRAINING,
  help = "none|selective|full|op|auto (selective: the core attention, or with "
    .. "--recompute-modules exactly the listed modules, as in Megatron-Core; auto: the "
    .. "least that fits the budget; op: torchtitan's per-op selective checkpointing, which "
    .. "keeps the attention output and every other 16-bit matmul output and re-runs the "
    .. "rest, fp8 matmuls included)",
  suggest = { "activation_checkpointing", "gradient_checkpointing", "checkpointing",
              "recompute_granularity" },
  variants = { plan = { metavar = "LIST", default = "none,selective,full", own = true,
    help = "recompute policies to try (with recompute_modules, none is not tried: Megatron-"
      .. "Core reads the list under selective only; none alone with a list is refused)" } } }
opt { name = "recompute_layers", type = "int", metavar = "N", commands = "train rl",
  methods = TRAINING,
  lua = "fit plan",
  help = "with --recompute full: only the first N layers of each stage, of each model "
    .. "chunk with --vpp (Megatron's block method)",
  suggest = { "recompute_num_layers" } }
opt { name = "activation_offload_layers", type = "int", metavar = "N", commands = "train plan",
  methods = TRAINING,
  lua = "fit", kind = "count", range = { 1, 100000 },
  notes = { plan = "the job's: the search keeps pp 1 and recompute none" },
  help = "Megatron-Core's CPU activation offloading (cpu_offloading_num_layers, Transformer "
    .. "Engine's offload context): the saved activations of the first N layers go to host "
    .. "memory over the GPU's host link in the forward and come back in the backward, each "
    .. "copy under (layers / N) layers' compute, what it outlasts added; N - 1 layers' "
    .. "activations leave the GPU; pp 1, recompute none without recompute_modules, fewer "
    .. "than the model's layers",
  suggest = { "cpu_offloading_num_layers", "cpu_offloading", "activation_offload" } }
-- The micro-batches before the first optimizer step (engine/memory_train.c
-- stage_states): torch.optim's Adam/AdamW create their states in their
-- first step() (adamw.py _init_group, "if len(state) == 0"), and DeepSpeed's
-- ZeRO optimizers stopped stepping at construction in v0.13.2 (PR #5104,
-- "Remove optimizer step on initialization").
opt { name = "before_step", type = "flag", commands = "fit", methods = TRAINING,
  help = "size the micro-batches before the first optimizer step, as a reading taken then "
    .. "(torch.cuda.max_memory_allocated in the first iterations) sees them: the "
    .. "optimizer's moments are not allocated yet (torch.optim's Adam and AdamW, and "
    .. "DeepSpeed's ZeRO optimizers from v0.13.2, create them in the first step()) and no "
    .. "step has run, so the step's own tensors (DeepSpeed's flattened fp32 gradient, a "
    .. "foreach step's temporaries) are not counted either; the fp32 master, built at "
    .. "construction, is; default off: the steady state of every later step",
  suggest = { "first_step", "before_first_step", "lazy_optimizer_states" } }
opt { name = "checkpoint_offload", type = "flag", commands = "fit train", methods = TRAINING,
  help = "with --recompute full: each layer's checkpoint (its input) goes to pinned host "
    .. "memory in the forward and comes back for its re-run, PyTorch's checkpoint_wrapper("
    .. "offload_to_cpu=True) (save_on_cpu) or DeepSpeed's cpu_checkpointing: the GPU keeps "
    .. "one layer's, the host every layer's; both copies on the compute stream over the GPU's "
    .. "host link, 2 x layers x checkpoint / link each micro-batch, nothing hidden; default "
    .. "off, the checkpoints on the GPU",
  suggest = { "offload_to_cpu", "cpu_checkpointing", "save_on_cpu", "checkpoint_in_cpu" } }
opt { name = "checkpoint_offload_streams", type = "flag", commands = "train",
  help = "with --checkpoint-offload: the checkpoints' copies run on a side CUDA stream beside "
    .. "the compute, torchtune's OffloadActivations (use_streams=True, pinned memory): each "
    .. "layer's copy out hides under a layer's forward and its copy back under a layer's "
    .. "backward, only what it outlasts added; default off, the copies on the compute stream",
  suggest = { "offload_streams", "use_streams", "activation_offload_streams" } }
opt { name = "first_stage_layers", type = "int", metavar = "N", commands = "train rl plan",
  methods = TRAINING,
  lua = "fit",
  help = "layers on the first pipeline stage, the other stages the rest evenly "
    .. "(Megatron-Core's num_layers_in_first_pipeline_stage; with --vpp, a rank's total over "
    .. "its chunks, as a pipeline_model_parallel_layout sums them; plan: the job's, the search "
    .. "keeps the pp it fits, without interleaving)",
  suggest = { "num_layers_in_first_pipeline_stage" } }
opt { name = "last_stage_layers", type = "int", metavar = "N", commands = "train rl plan",
  methods = TRAINING,
  lua = "fit",
  help = "layers on the last pipeline stage, the other stages the rest evenly "
    .. "(Megatron-Core's num_layers_in_last_pipeline_stage; with --vpp, a rank's total over "
    .. "its chunks, as a pipeline_model_parallel_layout sums them; plan: the job's, the search "
    .. "keeps the pp it fits, without interleaving)",
  suggest = { "num_layers_in_last_pipeline_stage" } }
opt { name = "stage_layers", type = "string", metavar = "LIST", commands = "train rl", lua = "fit",
  methods = TRAINING,
  help = "the layers each pipeline stage holds, first to last, e.g. 9,9,8,6 (Lua also a "
    .. "list {9, 9, 8, 6}): pp entries, each 1 at least, summing to the model's layers; the "
    .. "slowest stage sets the steady state and every stage's time the bubble, each stage's "
    .. "memory its own layers (nanotron's build_model split by block compute cost; "
    .. "Megatron-Core's pipeline_model_parallel_layout, a rank's decoder layers; with --vpp, "
    .. "a rank's total over its chunks, as first_stage_layers); in place of "
    .. "first_stage_layers and last_stage_layers and of a partition rule; default the "
    .. "partition's split",
  suggest = { "pipeline_model_parallel_layout", "stage_layer_counts", "layers_per_stage",
              "pp_layers" } }
opt { name = "split_ends", type = "flag", commands = "train rl plan", lua = "fit",
  methods = TRAINING,
  notes = { plan = "the job's: the search keeps the pp that divide the layers + 2, "
    .. "without DualPipe" },
  help = "the embedding and the loss each take a layer's place in the pipeline split: "
    .. "the first and last stages hold one layer fewer, and pp x vpp may reach the layers "
    .. "+ 2 (Megatron-Core's account_for_embedding_in_pipeline_split and "
    .. "account_for_loss_in_pipeline_split; Llama 3 405B's pipeline)",
  suggest = { "account_for_embedding_in_pipeline_split",
              "account_for_loss_in_pipeline_split" } }
opt { name = "recompute_modules", type = "string", metavar = "LIST", commands = TRAIN4,
  methods = TRAINING, kind = "enum",
  help = "outputs dropped after the forward and rebuilt in the backward (Megatron-Core's "
    .. "recompute_modules; DeepSeek-V3 sec. 3.2.3): layernorm (every RMSNorm's output), "
    .. "mla_up_proj (MLA's q, k, v from the latents), moe_act (the experts' SwiGLU "
    .. "output), core_attn (the attention core), moe (the whole MoE block kept as its "
    .. "input: router, dispatch, experts and combine re-run, all-to-alls included), "
    .. "mlpwi (the dense MLP's gate and up projections and activation, re-run from its "
    .. "input; MaxText's save_dot_except_mlpwi and save_dot_except_mlp policies), "
    .. "mlp_act (the dense MLP's activation output alone, re-run from the kept fc1 output: "
    .. "what JAX's checkpoint_dots and checkpoint_dots_with_no_batch_dims leave of a plain "
    .. "MLP, Paxml's SAVE_DOT_ONLY and SAVE_DOT_WITH_NO_BATCH_DIM), "
    .. "e.g. layernorm,mla_up_proj,moe_act (Lua "
    .. "also a list); as in Megatron-Core, a list replaces --recompute selective's default "
    .. "core_attn and is read under selective only: selective with a list rebuilds exactly "
    .. "the listed modules, a list without --recompute is selective's, and --recompute none "
    .. "with a list is refused (Megatron-Core re-runs nothing there)",
  suggest = { "recompute_module", "recompute_submodules" } }
opt { name = "fp8_activations", type = "flag", commands = TRAIN4, methods = TRAINING,
  help = "with --precision fp8: the linears' inputs kept for backward in fp8 (1 B and an "
    .. "fp32 scale per 128), the attention output in E5M6, the MoE SwiGLU inputs in fp8 "
    .. "(DeepSeek-V3 sec. 3.3.3); norms, router and attention keep 16 bits",
  suggest = { "fp8_activation", "fp8_act_cache", "low_precision_activations",
              "activation_fp8" } }
opt { name = "moe_probs", type = "string", metavar = "W", commands = TRAIN4,
  methods = TRAINING, kind = "enum", default = "activation with stack megatron, else combine",
  value = function(j) return j.stack == "megatron" and "activation" or "combine" end,
  help = "where MoE router weights multiply: combine (the experts' outputs at the "
    .. "combine, each copy's output kept for the weights' gradient: GShard, Hugging "
    .. "Face) or activation (the expert's activation output before the down-projection, "
    .. "Megatron-Core's GroupedMLP: nothing hidden-wide kept)",
  suggest = { "moe_router_probs", "probs_in_activation" } }
opt { name = "flash", type = "flag", commands = TRAIN4 .. " infer", default = true,
  methods = TRAINING,
  value = function(j)
    -- T5's attention adds a relative-position bias to the scores;
    -- transformers runs it eager (modeling_t5.py T5Attention: matmul,
    -- + position_bias, softmax, dropout, matmul), no fused kernel.
    if (j.model.rel_buckets or 0) > 0 then
      return false, "flash=false (T5 position-bias attention runs unfused)"
    end
    -- ALiBi on the Hugging Face modules (the eager kernels): transformers'
    -- BloomAttention ("alibi.baddbmm(...)", softmax, bmm) and MptAttention
    -- ("attn_weights + position_bias", softmax, matmul) have no SDPA or
    -- FlashAttention path, and Baichuan's remote modeling_baichuan.py takes
    -- SDPA only "if xops is not None and self.training" (xformers
    -- importable); a fused ALiBi kernel (FlashAttention's
    -- alibi_slopes, llm-foundry's Triton) is the fused kernels' stack.
    if j.model.positions == "alibi" and j.eager then
      return false, "flash=false (ALiBi on the Hugging Face modules: BloomAttention, "
        .. "MptAttention and Baichuan's code without xformers run unfused)"
    end
    return true
  end,
  help = "unfused attention: the s^2 score tensors are saved (infer: written and read "
    .. "each step; llama.cpp's flash_attn off, its default in 2024 builds; only "
    .. "runtimes with an unfused path: graphs, kernels, eager, eager-pytorch, llama.cpp, "
    .. "exllamav2 at tp 1)",
  suggest = { "flash_attention", "flash_attn", "use_flash_attention" } }
opt { name = "dropout", type = "flag", commands = TRAIN4, methods = TRAINING,
  help = "dropout after attention and MLP (masks are saved)" }
opt { name = "offload", type = "string", metavar = "X", commands = TRAIN4 .. " infer",
  help = "training (DeepSpeed ZeRO-Offload, needs --zero 1-3): optimizer (fp32 master, "
    .. "grads, states on the host) or params+optimizer (--zero 3: the parameter "
    .. "partitions too); the GPU keeps the gradient bucket and the gathered layers; "
    .. "prints the host memory.  fit --method infer: layers",
  suggest = { "cpu_offload", "offload_optimizer" },
  variants = { infer = { type = "flag",
    help = "read layers that do not fit from host memory" } } }
opt { name = "host_threads", type = "int", metavar = "N", commands = "train plan rl",
  default = "the node's cores, shared by its ranks (the step bound by the host's DRAM)",
  help = "with --offload: CPU threads each rank's process steps the offloaded optimizer on "
    .. "(a Ray worker's OMP_NUM_THREADS, its num_cpus: 1 for OpenRLHF's ranks)",
  suggest = { "omp_num_threads", "num_cpus", "cpu_threads" } }
opt { name = "ema", type = "string", metavar = "WHERE", commands = "fit train plan rl",
  methods = "pretrain full", kind = "enum", values = { "none", "gpu", "cpu" },
  default = "none",
  help = "none|gpu|cpu: an fp32 exponential moving average of the trained parameters, each "
    .. "rank's over the parameters it holds (NeMo's EMAOptimizer; sharded only where ZeRO 3 / "
    .. "FSDP shard the parameters): gpu keeps it in GPU memory and updates it after each "
    .. "optimizer step (NeMo's two foreach passes, a mul of the average and an add of the "
    .. "parameters to it: 4 + 4 + 4 + 2 + 4 B a bf16 parameter); cpu keeps it in host memory (DeepSeek-V3's "
    .. "'EMA in CPU'), each step's parameters copied to the host asynchronously, under the "
    .. "next step (exposed only where the copy outlasts it)",
  suggest = { "enable_ema", "moving_average", "ema_decay" },
  variants = { rl = { type = "flag", group = "rl", default = false,
    help = "with --rollout-engine hybrid: the actor's exponential moving average "
    .. "(DeepSpeed-Chat's --enable_ema), a 16-bit copy of the actor on each of its GPUs, "
    .. "updated after each training micro-batch by a loop over its parameter tensors "
    .. "(torch.lerp and copy_ each)" } } }
opt { name = "delayed_update", type = "flag", commands = "train plan",
  help = "with --offload: ZeRO-Offload's one-step delayed parameter update (DPU) -- the CPU "
    .. "step and its PCIe copies run beside the next step's forward and backward",
  suggest = { "dpu", "delay_update", "offload_overlap" } }
-- The stacks' own defaults: Megatron-Core's TransformerConfig
-- "moe_expert_capacity_factor: Optional[float] = None" ("None means no token
-- will be dropped"), and the Hugging Face MoE blocks' loop over whatever
-- each expert received, are dropless; DeepSpeed's MoE layer
-- (deepspeed/moe/layer.py "capacity_factor: float = 1.0", "drop_tokens:
-- bool = True"), the einsum dispatcher, is capacity-bound at 1.0
-- (engine/train_layer.c moe_einsum_costs, train_prep.c train_ep_skew).
opt { name = "capacity_factor", type = "number", metavar = "F", commands = TRAIN4,
  -- the defaults line says which one a job with EP > 1 rests on (gpuplan.train)
  value = function(j)
    if j.moe_dispatcher == "einsum" then
      return 1.0, "capacity_factor=1.0 (moe_dispatcher einsum: DeepSpeed's MoE capacity_factor: "
        .. "every rank runs its experts' full buffers)"
    end
    return 0, "capacity_factor=0 (dropless: each MoE layer waits for the busiest EP rank)"
  end,
  range = { 0, 64 }, methods = TRAINING,
  default = "0, dropless (Megatron-Core's moe_expert_capacity_factor None; the Hugging "
    .. "Face MoE blocks); 1.0 with moe_dispatcher einsum (DeepSpeed's MoE capacity_factor)",
  help = "MoE expert capacity over the even share: F > 0 pads each expert's buffer to "
    .. "F x its even share and drops what is beyond (Megatron-Core's "
    .. "moe_expert_capacity_factor with moe_pad_expert_input_to_capacity): every "
    .. "rank's experts run that buffer; 0 is dropless: each rank runs the rows it "
    .. "received and every MoE layer waits for the busiest rank, the expected "
    .. "maximum of the routing's multinomial spread over the EP ranks",
  suggest = { "moe_expert_capacity_factor", "expert_capacity", "drop_tokens" } }
opt { name = "paged_optimizer", type = "boolean", lua_only = true, commands = TRAIN4,
  methods = TRAINING,
  help = "optimizer states paged outside PyTorch's allocator (bitsandbytes Paged*); gp.train "
    .. "prices their paging over the host link each step where they do not fit beside the rest" }
opt { name = "grads_in_bwd", type = "boolean", lua_only = true, commands = TRAIN4,
  methods = TRAINING,
  help = "the optimizer step fused into backward (torchtune optimizer_in_bwd)" }
opt { name = "logits_freed", type = "boolean", lua_only = true, commands = TRAIN4,
  methods = TRAINING,
  help = "the training loop drops its logits before backward (torchtune's \"del logits\"): "
    .. "under a frozen output layer (LoRA, QLoRA, a frozen language model) the loss's and "
    .. "the head's backward free them before the layers' backward, so the peak holds the "
    .. "larger of the logits and the layer re-run, not both" }
opt { name = "fused_qkv_view", type = "boolean", lua_only = true, commands = TRAIN4,
  methods = TRAINING,
  help = "LitGPT's fused-QKV views" }
opt { name = "lora_zero_pad", type = "boolean", lua_only = true, commands = TRAIN4,
  methods = TRAINING,
  help = "LitGPT's index_copy zero padding of a partial QKV adapter" }
opt { name = "quant_head", type = "boolean", lua_only = true, commands = TRAIN4,
  methods = TRAINING,
  help = "the output layer quantised with the base" }
opt { name = "logit_bytes", type = "number", lua_only = true, commands = TRAIN4,
  methods = TRAINING,
  help = "bytes kept per vocabulary entry per token for the loss (default 6 with "
    .. "kernels eager, the hf stack's default; else 4)" }
opt { name = "fused_linear_ce", type = "flag", commands = "fit train plan", methods = TRAINING,
  help = "the output layer and the loss as one chunked op, Liger-Kernel's fused linear "
    .. "cross-entropy (LigerFusedLinearCrossEntropyLoss, v0.8.0): never all the logits, one "
    .. "chunk of next_power_of_2(ceil(tokens / ceil(V / h))) tokens at a time, their gradients "
    .. "and the head's weight gradient computed in the forward (no recompute); default off, "
    .. "the stack's own loss over the whole logits",
  suggest = { "liger", "fused_ce", "fused_cross_entropy", "flce", "chunked_loss" } }
opt { name = "replicated_logits", type = "flag", commands = "fit train plan", methods = TRAINING,
  help = "under tensor parallelism the output head gathers its vocab-parallel logits to every "
    .. "TP rank, PyTorch's ColwiseParallel(output_layouts=Replicate()) before a plain "
    .. "cross-entropy (KempnerForge; torchtitan without loss_parallel): each rank keeps all V "
    .. "logits of its tokens, and the loss's backward four T x V tensors of their 16-bit type "
    .. "at once (the logits, log_softmax's output, nll_loss's and log_softmax's gradients) "
    .. "where logit_bytes is not given; the step prices the gather, its copy and the loss "
    .. "over all V; default off, the logits vocab-parallel as Megatron-Core keeps them",
  suggest = { "loss_parallel", "replicate_logits", "gather_logits", "head_replicate" } }
opt { name = "act_bytes", type = "number", lua_only = true, commands = TRAIN4,
  methods = TRAINING,
  help = "bytes per saved activation element (default 4 for the fp32 recipe, else 2)" }
opt { name = "eager_swiglu", type = "boolean", lua_only = true, commands = TRAIN4,
  methods = TRAINING,
  help = "gated MLP (SwiGLU, T5's gelu_new) and GPT-2's gelu_new saved as eager PyTorch saves them (default with "
    .. "kernels eager, the hf stack's default)" }
opt { name = "eager_norm", type = "boolean", lua_only = true, commands = TRAIN4,
  methods = TRAINING,
  help = "RMSNorm saved as Hugging Face's eager LlamaRMSNorm saves it: the fp32 upcast of "
    .. "its input (default with kernels eager, the hf stack's default); false under kernels "
    .. "eager: every RMSNorm one Triton kernel each way, run and saved as torchtitan's "
    .. "norm_type fused_rmsnorm runs and saves it (its input and the rows' rstd), the rest "
    .. "eager" }
opt { name = "attn_clamp", type = "boolean", lua_only = true, commands = TRAIN4,
  methods = TRAINING,
  help = "unfused eager attention (flash false) clamps the masked scores, "
    .. "torch.max(scores, finfo.min), as transformers' OPT and Llama did in 2023: keeps "
    .. "the scores and adds its five backward kernels" }
opt { name = "attn_scale_q", type = "boolean", lua_only = true, commands = "train plan rl",
  help = "unfused eager attention (flash false) scales q before QK^T, as OPT's "
    .. "q_proj(x) * scaling does, not the scores" }
opt { name = "addmm_bias", type = "boolean", lua_only = true, commands = "train plan rl",
  help = "eager biased linears (model linear_bias, qkv_bias) as PyTorch's addmm ran them "
    .. "before its cuBLASLt bias epilogue (PyTorch PR #72148, 2022): the bias copied into "
    .. "the output and read back by the GEMM, its gradient summed by a kernel of its own "
    .. "(transformers' GPT-2 Conv1D of 2021)" }
opt { name = "optimizer_impl", type = "string", metavar = "I", lua_only = true,
  commands = TRAIN4, kind = "enum", values = { "fused", "foreach", "loop" },
  -- said where it is not the fused step: the hf stack's AdamW
  -- (train.lua step_choices, engine/train_prep.c opt_bytes_of)
  value = function(j)
    if j.stack == "hf" then
      return "foreach", "optimizer_impl=foreach (stack hf: torch.optim.AdamW's foreach "
        .. "path, 96 B a parameter's step where a fused kernel's is 32)"
    end
    return "fused", false
  end,
  help = "fused|foreach|loop: how the Adam step runs (default: foreach on the hf stack, "
    .. "torch.optim.AdamW's; fused elsewhere, a multi-tensor Adam kernel): loop, the Python "
    .. "loop of seven kernels a tensor of transformers' AdamW (v4.12, the Hugging Face "
    .. "Trainer's of 2021), 72 B an fp32 element against the fused 28; stack deepspeed only "
    .. "(not offloaded), which hands it one flat fp32 tensor a group; gp.memory reads it "
    .. "stated only: foreach adds the step's copy of the second moment "
    .. "(_multi_tensor_adamw's torch._foreach_sqrt), the peak where the activations are smaller",
  suggest = { "optim_impl", "adam_impl" } }
opt { name = "autocast", type = "boolean", lua_only = true, commands = TRAIN4,
  methods = TRAINING,
  help = "fp32 weights trained under torch.autocast (bf16 or fp16), as nanoVLM's loop and a "
    .. "Trainer's amp over a model loaded in fp32 run them: gp.memory keeps the residual "
    .. "stream and the norms' tensors in fp32 and one 16-bit cast of its input per linear "
    .. "(three for separate q, k, v, two for separate gate and up: the model's split_proj); "
    .. "stated only, default off (a stack's bf16 does not say the weights are fp32); full "
    .. "training only",
  suggest = { "amp", "torch_autocast", "fp32_weights" } }
opt { name = "attn_where", type = "boolean", lua_only = true, commands = "train plan rl",
  help = "unfused eager attention (flash false) applies its causal mask with "
    .. "torch.where(causal_mask, scores, masked_bias) before adding the padding mask, as "
    .. "transformers' GPT-2 did (v4.12): one more pass over the scores each way" }
opt { name = "attn_head_copies", type = "string", metavar = "F", lua_only = true,
  commands = "train plan rl", kind = "enum", values = { "matmul", "contiguous" },
  help = "matmul|contiguous: unfused eager attention (flash false) copies q, k and v from "
    .. "the projections' layout to the heads': matmul, torch.matmul on permuted views of one "
    .. "fused projection (transformers' GPT-2 of v4.12: c_attn split, _split_heads), a copy "
    .. "each above one sequence a micro-batch; contiguous, the model's own .contiguous() "
    .. "(OPT's _shape), a copy each always; each gradient copied back either way" }
opt { name = "eager_softmax", type = "boolean", lua_only = true, commands = TRAIN4,
  methods = TRAINING,
  help = "unfused attention (flash false) saved as Hugging Face's eager attention saves it: "
    .. "the fp32 softmax output and its 16-bit copy (default with kernels eager, the hf "
    .. "stack's default); false with kernels eager: softmax(scores, dim=-1) in the 16-bit "
    .. "type (Baichuan's remote code), one kernel each way, its output alone kept; true with "
    .. "kernels fused: the compiled program upcasts the scores and keeps the fp32 softmax "
    .. "output for the backward (Praxis' attention under XLA), 4 B a score written forward and "
    .. "read backward beside the fused softmax's 16-bit traffic, and XLA's softmax kernels "
    .. "(max, sum of exp, division; the gradient's sum and its elementwise pass) read the "
    .. "scores twice more forward (2 x 16-bit) and y and its gradient once more backward" }

---------------------------------------------------------------------------
section "lora"

opt { name = "lora_rank", type = "int", metavar = "N", commands = TRAIN4, value = 8,
  methods = ADAPTER,
  help = "LoRA rank",
  suggest = { "rank", "lora_r" } }
opt { name = "lora_targets", type = "string", metavar = "LIST", commands = TRAIN4,
  value = "q,v", methods = ADAPTER,
  help = "the adapted projections, e.g. q,k,v,o",
  suggest = { "target_modules", "lora_target_modules" } }
opt { name = "lora_dropout", type = "number", metavar = "P", commands = TRAIN4,
  value = 0.05, kind = "fraction", range = { 0, 1, open = true }, methods = ADAPTER, switch = true,
  help = "adapter dropout (0 keeps no dropout output or mask, as PEFT's default)" }
opt { name = "lora_merged", type = "flag", commands = "train plan",
  help = "LoRA's adapters added into the weight each step, W + A B^T, and the layer's own "
    .. "GEMM run on the sum (Praxis' LoRA layers, LoraTheta: \"new_var += var\", which "
    .. "Paxml's LoRA configs use without Transformer Engine): the backward computes the whole "
    .. "weight gradient dW of each adapted matrix, as full training does, then dA = dW B and "
    .. "dB = dW^T A; a merge GEMM of 2 w r FLOPs per adapted weight of w elements forward, "
    .. "two back, each pass reading the weight or dW once; no adapter side path or dropout. "
    .. "The base still takes no optimizer step and reduces no gradient; memory is priced "
    .. "as the side-path adapters'. Off: the adapters beside the frozen GEMM (PEFT's, "
    .. "Megatron's, Transformer Engine's), no base wgrad",
  suggest = { "merged_lora", "lora_merge", "merge_adapters", "lorafy" } }

---------------------------------------------------------------------------
section "vision"

opt { name = "images", type = "int", metavar = "N", commands = "fit train plan",
  methods = TRAINING, range = { 0, 1 << 24 },
  default = "1 for a vision-language model without --video-frames",
  value = function(j) return j.model and j.model.vision and 1 or 0 end,
  help = "images per sequence (vision-language models; --seq counts their tokens): "
    .. "the ViT tower's and projector's time and saved activations",
  suggest = { "num_images", "images_per_sequence" } }
opt { name = "train_vision", type = "flag", commands = "fit train plan", methods = TRAINING,
  default = "frozen in fine-tuning, trained in pretrain",
  value = function(j) return j.method == "pretrain" end,
  help = "train the vision tower",
  suggest = { "freeze_vision_tower", "freeze_vit" } }
opt { name = "train_llm", type = "flag", commands = "fit train plan", methods = TRAINING,
  form = "both", value = true,
  help = "train the language model; --no-train-llm: only the projector (and the tower "
    .. "with --train-vision) trains, the LLM frozen but carrying the gradient back to the "
    .. "image tokens (a vision-language model's alignment stage: LLaVA's stage 1, "
    .. "tune_mm_mlp_adapter)",
  suggest = { "freeze_llm", "tune_mm_mlp_adapter" } }
opt { name = "video_frames", type = "int", metavar = "N", commands = "fit train plan",
  methods = TRAINING,
  help = "video frames per sequence (encoded temporal_patch at a time: 2 for Qwen2-VL)",
  suggest = { "frames", "num_frames" } }
opt { name = "image_size", type = "int", metavar = "PX", commands = "fit train plan",
  methods = TRAINING,
  help = "square images at their own resolution (Qwen2-VL family; rounded to multiples "
    .. "of 28)",
  suggest = { "image_resolution", "resolution" } }
opt { name = "frame_size", type = "int", metavar = "PX", commands = "fit train plan",
  methods = TRAINING,
  help = "square video frames at their own resolution (as --image-size)",
  suggest = { "video_resolution", "frame_resolution" } }

---------------------------------------------------------------------------
section "inference"

opt { name = "ctx", type = "int", metavar = "N", commands = "fit", default = "the model's max",
  kind = "tokens", value = function(j) return j.model.max_seq or 4096 end,
  methods = "infer",
  help = "context per sequence (fit --method infer)",
  suggest = { "context", "max_model_len", "context_len" } }
opt { name = "block", type = "int", metavar = "N", commands = "fit", default = "unpaged",
  methods = "infer",
  help = "paged KV block in tokens",
  suggest = { "block_size", "page_size" } }
opt { name = "concurrency", type = "int", metavar = "C", commands = "infer", lua = "fit",
  default = { infer = "as many as fit, at most the engine's max_batch a replica, as "
    .. "--batch" }, value = 1,
  -- gp.memory's sequences of a serving replica (a training step took it
  -- and dropped it)
  methods = "infer",
  help = "requests in flight over the system (gp.memory: concurrent sequences, as batch)",
  -- "users" is how a buyer says it ("32 users"; the guide's E row: "32
  -- users, 2048 in / 512 out"): 'infer --users 32' had no hint
  suggest = { "max_concurrency", "users", "num_users", "concurrent_users",
    "concurrent_requests" } }
opt { name = "requests", type = "int", metavar = "N", commands = "infer",
  default = "the steady state",
  help = "the run is this many requests issued at once: tokens/s over the run from the "
    .. "first request's start to the last one's end, the batch's fill and drain included "
    .. "(trtllm-bench's Total Output Throughput, its --num_requests), and TTFT the mean "
    .. "over the requests of each's time to its first token, behind the prompts ahead of "
    .. "it (without --concurrency, or one that holds them all); with the MoE "
    .. "serving options colocated only (not --disagg); not with --sweep-batch or --target",
  suggest = { "num_requests", "num_prompts" } }
-- How a burst's outputs spread around their mean (--output).  A benchmark
-- client that draws its prompts from a dataset asks each request for the
-- dataset's own answer length (vLLM's `vllm bench serve --dataset-name
-- sharegpt`: the reference completion's token count as the request's
-- max tokens; SGLang's bench_serving likewise), so a burst of them lasts
-- until its longest outputs end, the batch thinning out over its last
-- steps (engine/infer_run.c infer_burst).  exp: exponential around the
-- mean (ServeGen, Xiang et al., arXiv 2505.09999, characterizing a
-- production cloud's LLM serving: output lengths fit "Exponential
-- distributions"), none longer than the model's context less the prompt.
-- sharegpt: the same, none longer than the ShareGPT samplers keep: vLLM's
-- benchmark datasets drop a request whose "(prompt_len + output_len) >
-- max_total_len" (2048) or "prompt_len > max_prompt_len" (1024)
-- (vllm/benchmarks/datasets.py is_valid_sequence, "copied from the
-- original `sample_hf_requests` and `sample_sharegpt_requests` functions
-- in benchmark_serving.py"), SGLang's bench_serving the same 1024 / 2048.
-- uniform: a random-dataset client that draws each request's prompt and
-- output length uniformly from 1 to the length it is given: SGLang's
-- bench_serving ("input_lens = np.random.randint(max(int(input_len *
-- range_ratio), 1), input_len + 1, size=num_prompts)", output_lens the
-- same, sgl-project/sglang python/sglang/bench_serving.py
-- sample_random_requests) at its default "--random-range-ratio ...
-- default=0.0": lengths 1 .. L, mean (L + 1) / 2, so twice --output less
-- one is the longest.  vLLM's clients at their defaults send every
-- request at its length (the old benchmark_serving.py's
-- "randint(int(input_len * range_ratio), input_len + 1)" with "default=1.0";
-- vllm bench serve's "[X * (1 - b), X * (1 + b)]" with 0.0): mean.
opt { name = "output_dist", type = "string", metavar = "D", commands = "infer",
  kind = "enum", values = { "mean", "exp", "sharegpt", "uniform" },
  default = "mean: every request of a burst at --output tokens",
  help = "how a burst's (--requests) output lengths spread around --output, their mean: "
    .. "mean (all alike), exp (exponential, none past the model's context), sharegpt "
    .. "(exponential, none past 2048 tokens with the prompt: vLLM's and SGLang's ShareGPT "
    .. "sampling) or uniform (prompts and outputs each uniform from 1 to twice their mean "
    .. "less one: SGLang bench_serving's random dataset at its default range ratio "
    .. "0); the burst lasts until its longest outputs end",
  suggest = { "output_distribution", "output_len_dist", "dataset_name" } }
-- The requests' own limit on their answers: the max_tokens each carries
-- (vLLM's SamplingParams(max_tokens=...), the OpenAI API's max_tokens).  An
-- answer that reaches it ends there whatever the model would have written,
-- so a burst whose answers otherwise stop at their EOS (output_dist exp)
-- has none longer, and the share of the exponential's tail past it lands
-- on it (engine/infer_run.c infer_output_quantiles, "clip 0"), the mean
-- kept at --output.  AccelMark's vLLM runner sends every prompt with
-- "SamplingParams(max_tokens=max_tokens, temperature=0.0)", max_tokens
-- Suite A's "output_tokens_max": 512 (FreedomIntelligence/AccelMark
-- runners/nvidia_vllm_47f5d58e/runner.py, suites/suite_A/suite.json).
opt { name = "output_max", type = "int", metavar = "N", commands = "infer",
  default = "the model's context less the prompt (exp) or ShareGPT's 2048 with it (sharegpt)",
  help = "the requests' max_tokens: a spread burst's (--output-dist exp or sharegpt) longest "
    .. "output, the tail past it ending there (the mean stays --output)",
  suggest = { "max_tokens", "max_new_tokens", "output_cap", "output_limit" } }
-- A share, not a token count: the engines report it so (vLLM's logged
-- "Prefix cache hit rate", its prefix_cache_hits over prefix_cache_queries,
-- both in prompt tokens, vllm/v1/metrics/loggers.py; SGLang's "cache hit
-- rate"), and one share holds for every prompt length a --target search or
-- a sweep prices (a shared system prompt of S tokens in prompts of P is S / P).
opt { name = "prefix_hit", type = "number", metavar = "F", commands = "infer",
  kind = "fraction", range = { 0, 1 },
  default = "0: every prompt token computed",
  help = "share of the prompt tokens found in the prefix cache (vLLM's prefix cache hit "
    .. "rate, SGLang's RadixAttention, TensorRT-LLM's KV cache reuse): their prefill is "
    .. "skipped (at least the last token is computed, for its logits), their KV is still "
    .. "held by each request and read by every decode step (one model's replicas and the "
    .. "MoE serving model alike)",
  suggest = { "prefix_cache_hit_rate", "cache_hit_rate", "prefix_cache_hit", "hit_rate",
              "enable_prefix_caching", "prefix_caching", "cached_tokens", "cached_fraction" } }
opt { name = "chunk_tokens", type = "number", lua_only = true, commands = "fit",
  methods = "infer",
  help = "tokens per forward (prefill chunk) for the activation workspace" }
-- (a serving pool's rule: gp.memory of a training step took it and
-- dropped it; its range opens at 0, the engine's "0 (off)", which the
-- key given never means: 0 read "[0, 1]" and then was refused as "(0, 1]")
-- infer's on the command line too (a dense serving run's engine states it:
-- MLPerf's kvcache_free_gpu_mem_frac; validation/SCHEMA.md
-- workload.kv_free_fraction); fit --method infer's as well, whose
-- gp.memory takes the key: the KV pool's rule is the same question there
-- (how many sequences a TensorRT-LLM engine holds), and gpuplan fit
-- refused the flag as "an option of gpuplan infer".
opt { name = "kv_free_fraction", type = "number", metavar = "F", commands = "infer fit",
  kind = "fraction", range = { 0, 1, gt = true }, methods = "infer",
  -- the runtime's own rule where neither this nor margin is given
  -- (gpuplan.infer M.runtime_memory: TensorRT-LLM's llmapi/llm_args.py
  -- KvCacheConfig "free_gpu_memory_fraction: ... default=0.9")
  default = { "off: what the margin leaves of the whole",
    infer = "--runtime trtllm: 0.9 (TensorRT-LLM's KvCacheConfig free_gpu_memory_fraction "
      .. "default); else off: what the margin leaves of the whole" },
  help = "the KV pool is this fraction of the memory free once the model is loaded "
    .. "(TensorRT-LLM kv_cache_free_gpu_mem_fraction), instead of what the margin leaves "
    .. "of the whole (not with margin)",
  suggest = { "kv_cache_free_gpu_mem_fraction", "free_gpu_memory_fraction",
              "kvcache_free_gpu_mem_frac" } }
-- The KV pool as the engine reports it, where a run states it: vLLM
-- prints "GPU KV cache size: N tokens" and exports it as
-- vllm:cache_config_info kv_cache_size_tokens (num_gpu_blocks x
-- block_size), sized by its profile run (gpu_worker.py
-- determine_available_memory: gpu_memory_utilization x total less the
-- weights, the profiled activation peak, non-torch memory and the CUDA
-- graph estimate), which gp.infer's memory rule approximates.  One model
-- on its replicas (engine/infer_run.c run_kv); the MoE serving model
-- refuses it (gpuplan.serve).
opt { name = "kv_tokens", type = "int", metavar = "N", commands = "infer", kind = "tokens",
  default = { infer = "off: the pool the memory rule leaves (margin or kv_free_fraction)" },
  help = "the KV pool in tokens as the engine reports it (vLLM's kv_cache_size_tokens, "
    .. "num_gpu_blocks x block_size), in place of the pool the memory rule leaves",
  notes = { infer = "the sequences held are this over each one's tokens (input + output / 2, "
    .. "or the whole length where the scheduler reserves it); one model on its replicas: "
    .. "the MoE serving model (--ep, --dp-attention, --disagg ...) refuses it" },
  suggest = { "kv_cache_size_tokens", "kv_cache_tokens" } }
opt { name = "input", type = "int", metavar = "N", commands = "infer", value = 2048,
  default = { infer = "2048, or the model's context less --output where that is shorter" },
  kind = "tokens",
  help = "prompt tokens per request",
  suggest = { "in", "input_len", "input_tokens", "input_length", "isl", "prompt_tokens" } }
opt { name = "output", type = "int", metavar = "N", commands = "infer", value = 256,
  kind = "tokens",
  help = "generated tokens per request",
  suggest = { "out", "output_len", "output_tokens", "output_length", "osl", "max_tokens" } }
opt { name = "runtime", type = "string", metavar = "R", commands = "infer",
  default = "graphs; llama.cpp where --weights is a GGUF type (Q4_K_M, Q8_0 ...)",
  fold = true,
  help = "graphs (CUDA graphs) | kernels | eager (plain PyTorch), or trtllm, vllm, sglang, "
    .. "nim-http, eager-pytorch, litgpt, autoawq, llama.cpp, gpt-fast, exllamav2",
  suggest = { "engine", "backend", "framework" } }
opt { name = "memory", type = "string", metavar = "SIZE", commands = "infer", kind = "bytes",
  -- capacity's bounds (the engine's GP_AMOUNT_MAX), in this key's words:
  -- 1e300 read "capacity must be a positive number of bytes up to 1e+15"
  range = { 0, 1e15, gt = true },
  default = "the GPU's usable memory",
  help = "memory per GPU the runtime may use, e.g. 6GB, at most the card's; CUDA context, "
    .. "buffers and the margin come off it as in 'gpuplan fit --method infer'",
  suggest = { "gpu_memory", "mem" } }
opt { name = "host_bw", type = "string", metavar = "BW", commands = "train plan infer",
  kind = "bandwidth",
  default = "0.8 x the system's host_mem_bw, else 60GB/s",
  help = "a node's host-memory bandwidth, which its GPUs streaming at once share: the "
    .. "offloaded optimizer's step (train --offload), ema cpu's update of the average in host "
    .. "memory (train --ema cpu), offloaded layers (infer --runtime llama.cpp)" }
opt { name = "host_memory", type = "string", metavar = "SIZE", commands = "infer",
  kind = "bytes",
  default = "32GB or the system's",
  help = "host memory for offloaded layers (a rack's: each tray of GPUs has its share)",
  suggest = { "host_mem", "cpu_memory" } }
-- A weight-only format dequantised by a kernel of its own (gpuplan.infer's
-- unfused_dequant, engine infer_cfg.wo_unfused): DeepSpeed's
-- quantized_initialization wraps F.linear to dequantise each weight into a
-- new fp16 tensor before multiplying it (inference/quantization/utils.py
-- wrap_quantized_functional).
opt { name = "unfused_dequant", type = "flag", commands = "infer",
  default = "off: dequantised in the GEMM's mainloop (Marlin, TensorRT-LLM, llama.cpp)",
  help = "the weight-only linears dequantise their weights to 16 bits in a kernel of their "
    .. "own each step (reading them at --weights bits, writing 16-bit copies) and multiply "
    .. "the copies in a 16-bit GEMM (DeepSpeed's quantized_initialization, ZeRO-Inference)",
  suggest = { "dequant_unfused", "unfused_weights" } }
-- A weight-only GEMM that splits K and sums the slices in a kernel of its
-- own (gpuplan.infer's wo_split_k, engine infer_cfg.wo_split_k and
-- infer.c splitk_sum): vLLM's awq_gemm before awq_marlin (v0.5.3) runs
-- split_k_iters 8 and returns "_out_feats.sum(0)".
opt { name = "wo_split_k", type = "int", metavar = "N", commands = "infer",
  range = { 2, 64 },
  default = "off: the weight-only GEMM writes its output itself; validate: 8 for a vLLM case "
    .. "of AWQ weights (workload.quant_method) before 0.5.3",
  help = "the weight-only linears split K into N slices whose partial outputs a kernel of its "
    .. "own sums after each linear (vLLM's awq_gemm before awq_marlin, v0.5.3: split_k_iters 8 "
    .. "and _out_feats.sum(0)); --weights below 16 bits only",
  suggest = { "split_k", "awq_split_k", "splitk" } }
-- Where offloaded layers sit in host memory: pinned, the DMA reads them
-- at the PCIe link's rate; pageable, the driver stages each copy through
-- a pinned buffer in host DRAM first (gpuplan.infer, M.offload_pageable).
-- DeepSpeed ZeRO-3 states it (offload_param's "pin_memory"; ZeRO-Inference's
-- run_model.py --pin-memory), and so can a case (workload.pin_memory).
opt { name = "pin_memory", type = "flag", commands = "infer", form = "both",
  default = "the runtime's: pinned for vllm, pageable for eager, eager-pytorch and litgpt "
    .. "(HF accelerate's CPU state dict)",
  help = "with --offload: the host-resident layers sit in pinned memory, copied over PCIe at "
    .. "pcie_bw; --no-pin-memory: pageable, each copy staged through host DRAM (host_bw)",
  suggest = { "pinned", "offload_pinned", "pin_mem" } }
opt { name = "offload_layers", type = "int", metavar = "N", commands = "infer",
  default = "as many as do not fit",
  help = "with --offload: N layers of each GPU's stage in host memory, as the run placed "
    .. "them (llama.cpp: the layers less -ngl, divided over the stages when it splits "
    .. "layers over GPUs; accelerate's device_map)",
  suggest = { "cpu_layers", "n_cpu_layers" } }
-- One static batch (gpuplan.infer's static pricing, engine/infer_run.c
-- run_times): what TensorRT-LLM's gptSessionBenchmark ran, the runtime of
-- its performance pages up to 0.9.0 ("As of TensorRT-LLM v0.10, these
-- performance benchmarks have changed methodology to utilize in-flight
-- batching and no longer utilize static benchmarking", the 0.10 page), and
-- of its 2023 blogs.
opt { name = "batching", type = "string", metavar = "B", commands = "infer",
  kind = "enum", values = { "continuous", "static" },
  default = "continuous: the runtime's in-flight (continuous) batching",
  help = "static: one batch of --batch requests run to completion, as TensorRT-LLM's "
    .. "gptSessionBenchmark ran it (its performance pages to 0.9.0): every prompt in one "
    .. "context pass, then the batch decodes in lockstep until each request has --output "
    .. "tokens, tokens/s the batch's output over that whole time; needs --batch (not --sweep-batch or "
    .. "--target, which choose it), one model on its replicas, no pipeline stages",
  suggest = { "static_batching", "inflight_batching", "batch_mode", "batching_type" } }
opt { name = "chunked_prefill", type = "flag", commands = "infer",
  default = "on for runtime vllm; runtime trtllm mixes whole prompts only; else prefill "
    .. "steps of their own",
  help = "prompts ride in the decode steps in chunks, max_num_tokens a step in all, the "
    .. "decodes first (vLLM's --enable-chunked-prefill, TensorRT-LLM's chunked context "
    .. "--enable_chunked_prefill, SGLang's enable_mixed_chunk); one model on its replicas: "
    .. "the MoE serving model (--ep, --dp-attention, --disagg ...) refuses it, it chunks by "
    .. "--prefill-tokens",
  suggest = { "enable_chunked_prefill", "chunked_prefill_enabled", "enable_chunked_context",
    "enable_mixed_chunk" } }
opt { name = "enforce_eager", type = "flag", commands = "infer",
  help = "the runtime dispatches every step's kernels from Python, no CUDA graphs (vLLM's "
    .. "--enforce-eager, and every vLLM before its graphs; TensorRT-LLM's PyTorch flow before "
    .. "mid-2025, use_cuda_graph False): --runtime vllm, or trtllm for a DeepSeek-V3-shaped model",
  suggest = { "eager_mode", "disable_cuda_graph", "no_cuda_graph" } }
opt { name = "graph_per_node", type = "flag", commands = "infer",
  help = "the runtime's captured graph is replayed node by node: the HIP runtime of ROCm "
    .. "6.1 and before (DEBUG_CLR_GRAPH_PACKET_CAPTURE off by default until ROCm 6.2.0) "
    .. "enqueues each kernel node of a hipGraphLaunch as an ordinary dispatch, so every "
    .. "kernel of a graphed step costs the card's stream launch, not its graph launch "
    .. "(upstream vLLM's Dockerfile.rocm through 0.6.1 builds on ROCm 6.1); not with "
    .. "--enforce-eager",
  suggest = { "hip_graph_per_node", "graph_packet_capture", "no_graph_packet_capture" } }
opt { name = "cuda_graphs", type = "flag", commands = "infer", default = true,
  help = "llama.cpp replays a one-token decode step on one NVIDIA GPU of Ampere or later as "
    .. "a CUDA graph (its builds since PR 6766, 2024-05-08; not with layers offloaded or an "
    .. "MoE model, and --cuda-graphs under --tp or --pp is refused): --no-cuda-graphs prices "
    .. "the step's kernels "
    .. "launched one by one, as an older build or GGML_CUDA_DISABLE_GRAPHS runs it; "
    .. "--runtime llama.cpp only",
  suggest = { "use_cuda_graphs", "ggml_cuda_use_graphs", "cuda_graph" } }
opt { name = "xqa", type = "flag", commands = "infer", default = true,
  help = "TensorRT-LLM without its XQA kernel: a GQA model decodes on the masked MHA "
    .. "kernel, one thread block per query head, each reading its KV head's whole cache "
    .. "(the cache read heads/kv_heads times a decode step, multiplied on the CUDA cores), "
    .. "as in every release before 0.6 (XQA came in 0.6-0.7 behind TRTLLM_ENABLE_XQA=1, on "
    .. "by default from 0.8), a GQA model of any group but 8 query heads a KV head or of a "
    .. "head size but 128 or 256 up to 0.10 (XQA's support test), and engines built with "
    .. "--disable_xqa; --runtime trtllm only",
  suggest = { "disable_xqa", "enable_xqa", "use_xqa", "trtllm_enable_xqa" } }
opt { name = "xqa_hopper", type = "flag", commands = "infer", default = true,
  help = "TensorRT-LLM's XQA on Hopper with an FP8 cache runs its TMA + GMMA kernel "
    .. "(mha_sm90), whose decode attention reads the cache at the streaming copy: "
    .. "--no-xqa-hopper prices the HMMA kernel (mha.cu, LDGSTS loads) at the fused "
    .. "kernels' GEMV rate, as every release before 0.10 ran it on Hopper (0.10: "
    .. "\"Integrated the new NVIDIA Hopper XQA kernels\"); --runtime trtllm only",
  suggest = { "hopper_xqa", "xqa_sm90", "xqa_qgmma", "xqa_gmma" } }
opt { name = "paged_decode", type = "flag", commands = "infer",
  help = "vLLM decodes on its own PagedAttention kernel (paged_attention_v1/v2): one thread "
    .. "block per query head, each reading its KV head's whole cache (the cache read "
    .. "heads/kv_heads times a decode step, multiplied on the CUDA cores), as every vLLM "
    .. "before 0.4.3 did (flash-attn's decode came on 2024-05-19) and upstream vLLM on ROCm "
    .. "before 0.6.2 (AMD's custom paged attention came with vllm PR #8310); --runtime vllm only",
  suggest = { "paged_attention", "paged_attention_decode", "vllm_paged_attention" } }
opt { name = "fused_grouped_topk", type = "flag", commands = "infer", form = "both",
  default = "on for --runtime sglang (SGLang's from 0.4.6); validate sets it off for a case of SGLang 0.4.5 or before",
  help = "the fused MoE routes a grouped-top-k router (DeepSeek's) in one kernel, SGLang's "
    .. "moe_fused_gate (sglang PR #5371: \"Only one kernel now. 36us->8us.\") or vLLM's "
    .. "fused_grouped_topk (vLLM PR #28124), not the native path's 9 kernels a layer; "
    .. "--no-fused-grouped-topk: the 9 (SGLang 0.4.5 and before), on one model's replicas "
    .. "and the MoE serving model alike; --runtime sglang or vllm",
  suggest = { "moe_fused_gate", "grouped_topk", "fused_gate" } }
opt { name = "block_fp8_triton", type = "flag", commands = "infer", form = "both",
  default = "off; validate sets it for a case of SGLang 0.4.5 or before with fp8 weights on Hopper",
  help = "SGLang multiplies a block-scaled fp8 checkpoint's dense linears (attention, shared "
    .. "expert, dense layers' MLP) with its Triton w8a8_block_fp8_matmul, as before DeepGEMM "
    .. "came on by default (sglang PR #5628, 2025-04-22, in 0.4.6): at no more than the "
    .. "Triton fused MoE's multiple of the card's bf16 rate (0.594 of an H100's bf16 peak per "
    .. "SM, vLLM PR #23280), not its fp8 rate; --runtime sglang with fp8 weights on Hopper, "
    .. "the MoE serving model only",
  suggest = { "triton_block_fp8", "block_fp8" } }
opt { name = "shared_expert_stream", type = "flag", commands = "infer", form = "both",
  default = "on for --runtime vllm (vLLM's from v0.11.1); validate sets it off for a case of vLLM 0.11.0 or before on a model with a shared expert",
  help = "vLLM runs an MoE's shared expert (DeepSeek's) on a second CUDA stream beside the "
    .. "routed experts in steps of at most 256 tokens (vLLM PR #26440 and #28406), priced "
    .. "there as one of the fused MoE's experts; larger steps, and every step with "
    .. "--no-shared-expert-stream (vLLM 0.11.0 and before), run it apart on the same stream: "
    .. "its two dense linears, activation and fp8 input quantisations as kernels of their "
    .. "own; --runtime vllm only, and refused on a model without a shared expert, where it "
    .. "would change nothing",
  suggest = { "shared_experts_stream", "shared_stream" } }
opt { name = "fa2_mixed", type = "flag", commands = "infer", form = "both",
  default = "on for --runtime vllm's mixing (V1's own, or --chunked-prefill) on ampere and ada cards with a 16-bit KV cache",
  help = "vLLM V1's mixed steps on FlashAttention-2: a step that carries prompt chunks runs "
    .. "its decodes' attention in one varlen call with them, whose kernel gives each query "
    .. "head of a sequence its own thread block, each reading its KV head's whole cache (the "
    .. "cache read heads/kv_heads times in such a step; a decode-only step folds the group "
    .. "and reads it once), and whose prompt tokens' attention runs its K loop whole (no "
    .. "split-KV outside an all-decode call: a prompt with few query heads a GPU idles the "
    .. "last wave of its thread blocks); --no-fa2-mixed: a backend that reads the cache once "
    .. "and splits the keys (FlashInfer, FlashAttention-3); --runtime vllm only, not with "
    .. "--no-chunked-prefill (no step mixes) "
    .. "or --paged-decode (its own kernel for every decode), --fa2-mixed not with --vllm-version "
    .. "(a V0 release), nor on a card below compute capability 8.0 (FlashAttention-2 does not "
    .. "run there)",
  suggest = { "flash_attn_2", "fa2", "mixed_decode_reads" } }
opt { name = "prefix_prefill", type = "flag", commands = "infer", form = "both",
  default = "off; validate sets it for a case of vLLM V0 on an AMD card with chunked prefill on",
  help = "vLLM V0's Triton prefix-prefill kernel (context_attention_fwd) runs the prompt "
    .. "chunks' attention, as V0's ROCm backend does once chunked prefill is on: one program "
    .. "per sequence, query head and 128-query block, each walking all the keys before its "
    .. "block, never split over the keys, so a chunk with few query heads a GPU leaves most "
    .. "compute units idle (Llama 3.1 405B at TP 8, a 512-token chunk: 64 programs on an "
    .. "MI300X's 304 CUs); --runtime vllm only, not with --no-chunked-prefill",
  suggest = { "triton_prefix_prefill", "context_attention_fwd", "prefix_prefill_kernel" } }
-- The sampler's settings (gpuplan.infer's M.v0_sampler_kernels counts the
-- kernels each adds to vLLM V0's sampler, from its sampler.py).
opt { name = "sampling", type = "string", metavar = "LIST", commands = "infer",
  kind = "enum", default = "greedy",
  help = "what the requests' sampling parameters switch on in vLLM V0's sampler, priced as the "
    .. "kernels it launches each step beyond greedy sampling's: random (temperature > 0), "
    .. "top_p (top_p < 1 or top_k: a sort of the vocabulary), penalties (repetition, presence "
    .. "or frequency penalty), e.g. random,top_p,penalties (Lua also a list); greedy: none; "
    .. "--runtime vllm with --vllm-version only",
  suggest = { "sampling_params", "sampler", "temperature", "top_p", "repetition_penalty" } }
-- gp.rl's: the rollout engine's release, read by gpuplan.rl's
-- M.v0_outputs (V0 before 0.8.0, its async output processor from 0.6.0).
opt { name = "vllm_version", type = "string", metavar = "X.Y.Z", commands = "infer rl",
  help = "the vLLM release whose V0 sampler runs --sampling: 0.4.2 to 0.6.3, the releases "
    .. "whose sampler.py was counted (vLLM V1's sampler is not)",
  variants = { rl = { group = "rl", metavar = "X.Y[.Z]",
    default = "none: a V1 release (0.8.0 or later), no output processing between decode steps",
    help = "the rollout engine's vLLM release, written plain (0.4.2): one before 0.8.0 runs "
      .. "vLLM's V0 engine, which processes each step's outputs between two decode steps "
      .. "(LLMEngine._process_model_outputs, 0.103 ms a sequence a step: vLLM RFC #6913) "
      .. "unless its async output processor (0.6.0 on, vLLM PR #7049) overlaps them with the "
      .. "next forward, which vLLM turns off under --rollout-eager: before 0.6.0, or with "
      .. "--rollout-eager, --frontend-host defaults to that figure; from 0.6.0 on without "
      .. "--rollout-eager refused (the overlap is not priced); the engine's other defaults do "
      .. "not follow it; --rollout-engine vllm only" } },
  suggest = { "vllm_release", "release" } }
-- vLLM V0's context limit on its CUDA graphs (engine infer_cfg.graph_max_ctx,
-- infer_run.c graph_step; gpuplan.infer M.v0_graph_max_context).
opt { name = "graph_max_context", type = "int", metavar = "N", commands = "infer",
  default = "none: a graph at every context; 8192 with --vllm-version (V0)",
  help = "a decode step whose context exceeds N tokens runs without its CUDA graph, every op "
    .. "dispatched from Python as under --enforce-eager (vLLM V0's max_seq_len_to_capture, "
    .. "max_context_len_to_capture before 0.5, default 8192; V1 has no such limit); "
    .. "--runtime vllm only",
  suggest = { "max_seq_len_to_capture", "max_context_len_to_capture" } }
opt { name = "graph_sizes", type = "string", metavar = "LIST", commands = "infer",
  default = "the runtime's: trtllm-bench's, vLLM's, SGLang's lists; none for runtime graphs",
  help = "the batch sizes the runtime captures CUDA graphs at, e.g. 1,2,4,8,16 (Lua also a "
    .. "list): a decode-only step runs the graph of the next size up, its empty slots "
    .. "computed too (attention at the real batch), and without a graph above the largest "
    .. "(TensorRT-LLM's cuda_graph_config batch_sizes with enable_padding, vLLM's "
    .. "cudagraph_capture_sizes, SGLang's --cuda-graph-bs)",
  suggest = { "cuda_graph_batch_sizes", "cuda_graph_bs", "cudagraph_capture_sizes",
              "capture_sizes" } }
opt { name = "kv_policy", type = "string", lua_only = true, commands = "infer",
  help = "mean (default: paged KV, each running sequence holds input + output/2) | "
    .. "max (input + output reserved per sequence, TensorRT-LLM GUARANTEED_NO_EVICT: runtime "
    .. "trtllm's default, the MoE serving model's too) | "
    .. "preempt (runtime vllm's default, V1: mean, and a burst of requests whose whole "
    .. "lengths overflow the cache preempts the last-admitted and recomputes it; refused where the "
    .. "steps do not mix prompt chunks, as SGLang's, TensorRT-LLM's whole prompts or "
    .. "chunked_prefill = false)" }
-- A static-shape runtime's bucketed decode KV (engine infer_cfg.kv_bucket,
-- infer_run.c infer_decode_ctx); its default by runtime and card is
-- gpuplan.infer's M.kv_bucket (Gaudi under the graphs runtime: 128).
opt { name = "kv_bucket", type = "int", metavar = "N", commands = "infer",
  kind = "tokens", range = { 0, 1 << 24 },
  default = "128 on Intel Gaudi under --runtime graphs, else 0",
  value = function(j)
    local g = j.gpu or {}
    local b = require("gpuplan.infer").kv_bucket_of(j.runtime or "graphs", g.arch)
    if not b then return 0, false end
    return b, string.format("kv_bucket=%d (%s, static shapes: a decode step attends its KV up "
      .. "to the next multiple of %d tokens, optimum-habana's --bucket_size %d "
      .. "--bucket_internal)", b, g.name or g.id or "the card", b, b)
  end,
  help = "a decode step attends its sequence's KV up to the next multiple of N tokens, at most "
    .. "input + output, the padding read too (a static-shape runtime's bucketed cache: "
    .. "optimum-habana's --bucket_size N --bucket_internal); 0: each step its own length. "
    .. "One model on its replicas only: the MoE serving model refuses it",
  suggest = { "bucket_size", "kv_bucket_size", "bucket_internal" } }
opt { name = "pcie_bw", type = "number|string", lua_only = true, commands = "infer",
  kind = "bandwidth",
  help = "host-link bandwidth over which offloaded layers are copied to the GPU (default the GPU's PCIe x 0.8)" }
opt { name = "host_op_time", type = "number|string", lua_only = true, commands = "infer",
  kind = "duration",
  help = "host time per launched op (default the runtime's)" }
opt { name = "host_ops_per_layer", type = "number", lua_only = true, commands = "infer",
  -- No decoder layer launches more than about 2,600 framework ops: the
  -- most an eager layer issues is an MoE block looped expert by expert
  -- (transformers' MixtralSparseMoeBlock.forward, "for expert_idx in
  -- range(self.num_experts)": torch.where, the gather, gate, up, act,
  -- mul, down, the routing-weight mul and index_add_, about 10 an
  -- expert) over the catalog's most experts (256) -- 10,000 leaves that
  -- a factor of 4; the engine's own counts are 10 to 60 (rl.lua's
  -- eager_ops_per_layer). Above it the ITL ran into hours (1e12: 1.5e9 s).
  range = { 0, 10000 },
  help = "host ops per layer, at most 10000 (default the runtime's)" }
opt { name = "ar_fusion_max", type = "string", metavar = "SIZE", commands = "infer",
  kind = "bytes",
  help = "the largest TP all-reduce into which the runtime fuses the residual add, RMSNorm and "
    .. "fp8/nvfp4 quantisation of the next linear's input; a larger one runs NCCL and a quantise "
    .. "kernel after it (default --runtime trtllm: 16 MB at tp 2, 8 MB above, TensorRT-LLM "
    .. "1.0's custom all-reduce workspace; 0B (Lua: 0): every size fused); runtime trtllm only, one "
    .. "model on its replicas (the MoE serving model refuses it)" }
opt { name = "max_batch", type = "int", metavar = "N", commands = "rl infer",
  default = { "vLLM's for the card", infer = "TensorRT-LLM's 2048; --runtime vllm: vLLM's max_num_seqs "
    .. "for the card (1024, or 256 under 70 GiB or on an A100) where batch and concurrency are not given; "
    .. "--runtime llama.cpp: llama-server's 4 slots (-np auto) where neither is given" },
  help = "the engine's sequences per step at most",
  suggest = { "max_num_seqs", "max_batch_size" } }
opt { name = "max_num_tokens", type = "int", metavar = "N", commands = "rl infer",
  kind = "tokens",
  default = { "vLLM's for the card", infer = "TensorRT-LLM's 8192; --runtime vllm: vLLM's API "
    .. "server's for the card (8192, or 2048 under 70 GiB or on an A100; without chunked prefill at "
    .. "least the model's context); --runtime sglang with --chunked-prefill: SGLang's "
    .. "chunked_prefill_size for the card (2048 under 35 GiB, 4096 under 60, 8192 under 160, "
    .. "else 16384)" },
  help = "the engine's tokens per step at most",
  notes = { infer = "the prompts batched into a prefill step, and with --chunked-prefill "
    .. "the decodes and prompt chunks of a step (vLLM's --max-num-batched-tokens); one "
    .. "model on its replicas: the MoE serving model (--ep, --dp-attention, --disagg ...) "
    .. "refuses it, it chunks by --prefill-tokens" },
  suggest = { "max_num_batched_tokens" } }

---------------------------------------------------------------------------
section "moe"

opt { name = "dp_attention", type = "flag", commands = "infer", serve = true,
  default = "TP over the instance",
  help = "attention, dense layers, shared experts whole on every GPU, each with its own "
    .. "requests' KV",
  suggest = { "enable_dp_attention" } }
opt { name = "two_batch_overlap", type = "flag", commands = "infer", serve = true, form = "both",
  default = "with --ep: whichever delivers more tokens/s per GPU (--disagg: in each pool)",
  help = "two micro-batches per step, one's all-to-all hidden under the other's compute",
  suggest = { "tbo", "enable_two_batch_overlap" } }
opt { name = "expert_weights", type = "string", metavar = "W", commands = "infer", serve = true,
  kind = "dtype",
  default = "--weights: one format for every linear; without --weights, the catalog model's expert_dtype (gpt-oss-120b: mxfp4, as released)",
  help = "the routed experts' weight format, the rest at --weights (an NVFP4 checkpoint: fp4 "
    .. "experts on FP4 tensor cores and an fp4 dispatch, fp8/bf16 attention)",
  suggest = { "moe_weights", "expert_dtype", "expert_weight_dtype", "moe_quant" } }
opt { name = "single_batch_overlap", type = "flag", commands = "infer", serve = true,
  default = "off, as in SGLang",
  help = "decode without two-batch overlap: the combine on its own SMs beside the shared "
    .. "experts and the down GEMM (SGLang's single-batch overlap, its GB200 runs)",
  suggest = { "sbo", "enable_single_batch_overlap" } }
opt { name = "swap_ab", type = "flag", commands = "infer", serve = true, form = "both",
  default = "off: DeepGEMM's 64-row tiles up to 64 tokens (fp8, Hopper)",
  help = "the decode's routed-expert fp8 GEMM with the tokens on 32-row N blocks "
    .. "(DeepGEMM's swapAB masked GEMM, Ant Group's H20 build); dense linears keep 64-row tiles; "
    .. "fp8 weights on Hopper only (refused elsewhere: no DeepGEMM tile to swap)",
  suggest = { "swapab", "swap_a_b" } }
opt { name = "a2a", type = "string", metavar = "K", commands = "infer", serve = true,
  default = "deepep: low-latency decode, normal prefill; none for --runtime sglang with TP attention (its --moe-a2a-backend none)",
  help = "deepep | nccl | none: who moves the tokens of the EP group; none exchanges none "
    .. "(TP attention: every GPU holds the step's tokens, runs its own experts over them, "
    .. "the MoE output all-reduced -- SGLang's StandardDispatcher, and what vLLM and "
    .. "TensorRT-LLM run with EP under TP attention: vLLM's all2all kernels need DP, "
    .. "TensorRT-LLM's need attention DP)",
  suggest = { "all_to_all", "a2a_backend" } }
opt { name = "redundant_experts", type = "int", metavar = "N", commands = "infer", serve = true,
  range = { 0, 1 << 24 },
  default = "the runtime's 0 (SGLang, vLLM, TensorRT-LLM); where --ep does not divide the "
    .. "experts, the fewest for whole slots per GPU",
  help = "EPLB slots (DeepSeek's deployment: 32)",
  suggest = { "ep_num_redundant_experts", "redundant" } }
opt { name = "eplb", type = "flag", commands = "infer", serve = true, form = "both",
  default = "off, as the runtimes ship (SGLang's and vLLM's enable_eplb False, TensorRT-LLM "
    .. "without a load_balancer)",
  help = "experts placed by an expert-parallel load balancer from the traffic's statistics "
    .. "(DeepSeek's EPLB; SGLang --enable-eplb or --init-expert-location, vLLM --enable-eplb, "
    .. "TensorRT-LLM moe_config.load_balancer); off: experts in order, as skewed as "
    .. "TensorRT-LLM measured without it",
  suggest = { "enable_eplb", "load_balancer", "expert_load_balancer" } }
opt { name = "imbalance", type = "number", metavar = "X", commands = "infer", serve = true,
  default = "with --ep per step: the placement's spread (--eplb or the runtimes' experts in "
    .. "order) and the step's chance",
  help = "hottest GPU's routed tokens / mean" }
opt { name = "disagg", type = "flag", commands = "infer", serve = true,
  help = "separate prefill and decode pools",
  suggest = { "disaggregated", "disaggregation", "pd" } }
opt { name = "prefill_gpus", type = "int", metavar = "N", commands = "infer", serve = true,
  default = "the split that balances them",
  help = "--disagg: GPUs of the prefill pool" }
opt { name = "prefill_tp", type = "int", metavar = "N", commands = "infer", serve = true,
  default = "the decode layout",
  help = "--disagg: the prefill pool's TP" }
opt { name = "prefill_ep", type = "int", metavar = "N", commands = "infer", serve = true,
  default = "the decode layout",
  help = "--disagg: the prefill pool's EP" }
opt { name = "prefill_dp_attention", type = "flag", commands = "infer", serve = true,
  default = "the decode layout",
  help = "--disagg: DP attention in the prefill pool" }
opt { name = "prefill_tokens", type = "int", metavar = "N", commands = "infer", serve = true,
  kind = "tokens",
  -- the runtime's own budget (gpuplan.infer M.step_budget), the rule
  -- --max-num-tokens takes for one model on its replicas
  default = "runtime vllm: vLLM's max_num_batched_tokens for the card (8192 on an H100); "
    .. "sglang: its chunked_prefill_size for the card (8192 on an H100 or H200, 16384 on a "
    .. "B200); else 16384",
  help = "prompt tokens per attention group per step",
  suggest = { "chunked_prefill_size" } }
opt { name = "mtp", type = "int", metavar = "N", commands = "infer", serve = true,
  -- the engine's bound (serve.c: mtp 0..16; 0 is leaving it out)
  range = { 1, 16 },
  help = "MTP draft tokens per step (models with an MTP module); SGLang then runs at most 48 "
    .. "requests an instance unless --batch or --max-batch is given; the result reports the "
    .. "same server without drafts beside it",
  suggest = { "speculative_tokens", "num_speculative_tokens", "draft_tokens" } }
opt { name = "acceptance", type = "number", metavar = "P", commands = "infer", serve = true, kind = "fraction",
  default = "the first draft 0.85, each deeper one x0.73",
  help = "each MTP draft accepted with probability P (given: every draft alike)",
  suggest = { "acceptance_rate", "accept_rate" } }

---------------------------------------------------------------------------
section "rl"

opt { name = "algo", type = "string", metavar = "A", commands = "rl comm", default = "grpo",
  fold = true,  -- PPO, GRPO; NCCL_ALGO=Ring as NCCL spells it
  help = "grpo | ppo (adds the critic)",
  suggest = { "algorithm", "adv_estimator" },
  variants = { comm = { group = "collective", default = "the one NCCL's tuner picks",
    help = "force ring, tree, nvls, sharp, hierarchical, p2p or pxn" } } }
opt { name = "prompts", type = "int", metavar = "N", commands = "fit rl",
  value = 64, methods = RL,
  help = "prompts per step",
  suggest = { "num_prompts", "prompts_per_step", "train_batch_size" } }
opt { name = "group", type = "int", metavar = "N", commands = "fit rl", value = 8, methods = RL,
  help = "responses per prompt",
  suggest = { "group_size", "n_samples", "num_generations", "rollout_n" } }
opt { name = "prompt_len", type = "int", metavar = "N", commands = "fit rl", value = 512,
  kind = "tokens",
  methods = RL,
  help = "tokens per prompt",
  suggest = { "prompt_length", "max_prompt_length" } }
opt { name = "response_len", type = "int", metavar = "N", commands = "fit rl",
  default = "1024; rl with --response-max alone: 0.696 x it (0.113 with --base-checkpoint), "
    .. "assumed from published runs",
  kind = "tokens", value = 1024,
  methods = RL,
  help = "mean response tokens",
  suggest = { "response_length", "completion_len" } }
opt { name = "base_checkpoint", type = "flag", commands = "fit rl", methods = RL,
  default = "off: with --response-max alone the mean is a reasoning policy's 0.696 of it",
  help = "the policy starts from a pretrained-only (base) checkpoint, as DAPO runs do: with "
    .. "--response-max alone its mean response is assumed at 0.113 of the limit, the median of "
    .. "published verl DAPO runs from base checkpoints, or at the model's own published mean "
    .. "where one is known (Qwen2.5-Math-7B: 1294 tokens at its runs' 8192-token limit; a higher "
    .. "limit does not lengthen it, a lower one -- any by the catalog id, whose context is its "
    .. "config's 4096 -- takes that share of it)",
  suggest = { "base_model", "from_base" } }
opt { name = "response_max", type = "int", metavar = "N", commands = "fit rl", methods = RL,
  kind = "tokens",
  default = "--response-len: all responses that long",
  help = "the generation limit",
  suggest = { "max_response_length", "max_new_tokens", "max_completion_length" } }
opt { name = "response_min", type = "int", metavar = "N", commands = "fit rl", methods = RL,
  kind = "tokens",
  default = "none: the lengths as --response-dist spreads them",
  help = "the shortest response of a stated range: the lengths uniform from it to "
    .. "--response-max, their mean the middle (a source that bounds every response between two lengths)",
  suggest = { "min_response_length", "response_range" } }
opt { name = "response_dist", type = "string", metavar = "D", commands = "fit rl", methods = RL,
  default = "exp: clipped at the limit, the longest response sets the rollout's tail",
  help = "fixed|uniform|exp: response lengths up to --response-max" }
opt { name = "response_clip", type = "number", metavar = "F", commands = "fit rl", methods = RL,
  kind = "fraction",
  default = "0.01 with exp (at most response_len / (2 response_max), 0 at response_len 1): "
    .. "published GRPO runs cut several percent at the limit",
  help = "exp: share of the responses that never end and are cut at --response-max",
  suggest = { "clip_ratio", "truncation_rate" } }
opt { name = "reward_model", type = "string", metavar = "ID|actor", commands = "fit rl",
  methods = RL, default = "rule-based rewards",
  help = "a reward model: a catalog model id (Lua: or a catalog-shaped model table), or actor "
    .. "(Lua: true) for one of the actor's shape",
  suggest = { "rm", "reward_model_path" } }
opt { name = "critic_model", type = "string", metavar = "ID", commands = "fit rl", methods = RL,
  default = "the actor's shape",
  help = "PPO: the critic's model, a catalog model id (Lua: or a catalog-shaped model table), "
    .. "laid out as the actor (DeepSpeed-Chat's --critic_model_name_or_path)",
  suggest = { "critic", "critic_model_name_or_path", "critic_pretrain" } }
opt { name = "ref_model", type = "flag", commands = "fit rl", default = true, methods = RL,
  help = "drop the KL reference model",
  suggest = { "reference_model", "ref" } }
opt { name = "colocated", type = "flag", commands = "fit rl", default = true, methods = RL,
  help = "separate rollout and training pools",
  suggest = { "colocate", "hybrid_engine" } }
opt { name = "rollout_gpus", type = "string", metavar = "N|auto", commands = "rl",
  help = "GPUs of the rollout pool, implies --no-colocated (auto: the split with the "
    .. "shortest step)" }
opt { name = "ref_gpus", type = "int", metavar = "N", commands = "rl",
  default = "on the actor's GPUs",
  help = "GPUs of the reference model's own group, laid out as the actor (OpenRLHF's "
    .. "--ref_num_gpus_per_node x nodes); its forward runs beside the actor's",
  suggest = { "ref_num_gpus", "ref_num_gpus_per_node" } }
opt { name = "reward_gpus", type = "int", metavar = "N", commands = "rl",
  default = "on the actor's GPUs",
  help = "GPUs of the reward model's own group (OpenRLHF's --reward_num_gpus_per_node x "
    .. "nodes)",
  suggest = { "reward_num_gpus", "reward_num_gpus_per_node" } }
opt { name = "critic_gpus", type = "int", metavar = "N", commands = "rl",
  default = "on the actor's GPUs",
  help = "PPO: GPUs of the critic's own group (OpenRLHF's --critic_num_gpus_per_node x "
    .. "nodes); it trains while the actor does",
  suggest = { "critic_num_gpus", "critic_num_gpus_per_node" } }
opt { name = "colocate_critic_reward", type = "flag", commands = "rl",
  help = "the reward model on the critic's group, their forwards in turn (OpenRLHF's "
    .. "--colocate_critic_reward)" }
opt { name = "staleness", type = "int", metavar = "N", commands = "rl", range = { 0, 1024 },
  default = "1: step k + 1's rollouts run while step k trains",
  help = "separate pools: 0 each waits for the other; N >= 1 the rollouts run N steps "
    .. "ahead of the training (NeMo RL's max_trajectory_age_steps): at 1 the next step's "
    .. "prompt groups enter the engines as the step's end, its tail under them, from 2 on "
    .. "N steps' prompts are in flight and the engines never drain",
  suggest = { "off_policy", "async_steps" } }
opt { name = "refit_drain", type = "flag", commands = "rl",
  default = "off: the weights updated in flight, the running sequences go on",
  help = "staleness >= 1: each refit first waits for every pending generation (NeMo RL's "
    .. "async GRPO with in_flight_weight_updates: false, its default), so the engines drain "
    .. "each step's batch alone, one step off",
  suggest = { "in_flight_weight_updates", "wait_for_pending_generations" } }
opt { name = "rollout_tp", type = "int", metavar = "N", commands = "fit rl", methods = RL,
  default = "the actor's tp",
  help = "the rollout engine's TP (beyond a node: whole nodes, its all-reduces over the NICs)",
  suggest = { "rollout_tensor_parallel", "tensor_model_parallel_size_rollout" } }
opt { name = "rollout_pp", type = "int", metavar = "N", commands = "rl",
  default = "1",
  help = "the rollout engine's pipeline stages (vLLM's pipeline_parallel_size): its GPUs "
    .. "rollout_tp x rollout_pp, a decode step the pass of one of rollout_pp micro-batches "
    .. "in flight; stages beyond a node send their activations over the NICs",
  suggest = { "pipeline_parallel_size", "rollout_pipeline_parallel" } }
opt { name = "rollout_ep", type = "int", metavar = "N", commands = "rl",
  default = "1: the experts sliced by the rollout TP",
  help = "the rollout engine's expert parallelism (MoE): = --rollout-tp, each expert whole on "
    .. "one of its GPUs (vLLM's enable_expert_parallel)",
  suggest = { "enable_expert_parallel", "rollout_expert_parallel" } }
opt { name = "rollout_dp_attention", type = "flag", commands = "rl",
  help = "with --rollout-ep: the rollout engine's attention data-parallel over its GPUs "
    .. "(SGLang's --enable-dp-attention, as slime's --sglang-enable-dp-attention): each GPU "
    .. "attends to its own sequences with the attention weights whole; a prompt admitted "
    .. "while the engine decodes stalls every rank",
  suggest = { "enable_dp_attention", "sglang_enable_dp_attention", "dp_attention" } }
opt { name = "rollout_engine", type = "string", metavar = "E", commands = "rl", fold = true,
  default = "vllm",
  help = "vllm (continuous batching) | hybrid (DeepSpeed-Chat's hybrid engine: the actor's "
    .. "weights, Hugging Face generate in static batches run to their longest response) | hf "
    .. "(those static batches through the actor's own Hugging Face modules: OpenRLHF without "
    .. "vLLM engines)",
  suggest = { "enable_hybrid_engine", "generator" } }
opt { name = "generation_batch", type = "int", metavar = "N", commands = "rl",
  default = "16 (DeepSpeed-Chat's)",
  help = "hybrid or hf engine: sequences each GPU generates at once (DeepSpeed-Chat's "
    .. "per_device_generation_batch_size, OpenRLHF's micro_rollout_batch_size); vllm: "
    .. "sequences an engine generates at once, one actor rank's micro-batch a call "
    .. "(OpenRLHF 2024's vLLM engines); default for vllm: continuous batching",
  suggest = { "per_device_generation_batch_size" } }
opt { name = "rollout_weights", type = "string", metavar = "W", commands = "fit rl",
  methods = RL, default = "bf16", kind = "dtype",
  help = "the rollout engine's weight format (as --weights)" }
opt { name = "rollout_memory", type = "number", metavar = "F", commands = "rl", kind = "fraction",
  -- a share of the card: 0 holds no engine (rl.lua refused it, "(0, 1]",
  -- where 1.5 said "[0, 1]")
  range = { 0, 1, gt = true },
  default = "what the trainer leaves",
  help = "share of a card the rollout engine may hold (vLLM's gpu_memory_utilization)",
  suggest = { "gpu_memory_utilization" } }
opt { name = "epochs", type = "int", metavar = "N", commands = "rl train plan", default = "1",
  help = "passes over the samples",
  suggest = { "ppo_epochs", "num_epochs" },
  -- train: the epochs over --samples (gpuplan.train tokens_total), a
  -- fraction too (checked there: the rl reading is a whole count)
  -- plan: train's reading, the job's run as gp.sweep times it
  variants = { train = { type = "number", metavar = "E", group = "cost",
    default = "1 with --samples",
    help = "passes over the --samples: tokens = samples x --sample-tokens x epochs (a fraction "
      .. "too: 0.5 is half the dataset)" },
    plan = { type = "number", metavar = "E", group = "cost",
    default = "1 with --samples",
    help = "passes over the --samples: tokens = samples x --sample-tokens x epochs (a fraction "
      .. "too: 0.5 is half the dataset)" } } }
opt { name = "old_logprobs", type = "flag", commands = "rl", default = true,
  help = "the trainer does not recompute the policy's log-probabilities" }
opt { name = "offload_states", type = "flag", commands = "rl",
  help = "colocated: trainer states wait in host memory during the rollout, the engine's "
    .. "weights during the training (vLLM sleep level 1)" }
opt { name = "logprob_offload", type = "flag", commands = "rl",
  help = "separate pools: the training pool's optimizer states go to host memory before the "
    .. "log-probability forwards and come back for the update, each step (NeMo RL v0.4.0's "
    .. "prepare_for_lp_inference): out into fresh pageable memory, back at the host link",
  suggest = { "offload_optimizer_for_logprob", "optimizer_offload_logprob" } }
opt { name = "param_offload", type = "flag", commands = "rl",
  help = "colocated: the actor's weights leave for host memory after each of its phases "
    .. "and return before the next (verl's megatron.param_offload: .cpu() three times a step)",
  suggest = { "offload_params", "megatron_param_offload" } }
opt { name = "offload_pinned", type = "flag", commands = "rl",
  help = "colocated, with offload_states or param_offload: the copies out land in pinned host "
    .. "memory at the host link's rate and the parameters moved around each phase are the fp32 "
    .. "master (verl's FSDP workers: .to(\"cpu\", non_blocking=True))",
  suggest = { "pinned_offload", "offload_pin_memory" } }
opt { name = "ref_host", type = "flag", commands = "rl",
  help = "the reference model waits in host memory, swapped in for its forward (NeMo RL's "
    .. "Megatron worker)",
  suggest = { "ref_offload", "offload_reference" } }
opt { name = "ref_reward_offload", type = "flag", commands = "rl",
  help = "ZeRO-3: the reference's and the reward model's partitions wait in host memory, "
    .. "each forward copies them in over the host link (DeepSpeed's offload_param: "
    .. "DeepSpeed-Chat's --offload_reference_model and --offload_reward_model)",
  suggest = { "offload_reference_model", "offload_reward_model", "offload_param" } }
opt { name = "rank_skew", type = "flag", commands = "rl",
  help = "each DP rank trains an unbalanced draw of each mini-batch and every optimizer step "
    .. "waits for the busiest (verl's dynamic batch: the step's batch is balanced over the "
    .. "ranks, its mini-batches are not); sequences at their own lengths only",
  suggest = { "imbalance", "dp_imbalance", "balance_batch" } }
opt { name = "count_split", type = "flag", commands = "rl",
  help = "under --pp > 1, each micro-batch is the next --batch sequences at their own random "
    .. "lengths (verl's Megatron actor without use_dynamic_bsz: mini_batch.batch.split("
    .. "micro_batch_size)) and the pipeline's stages wait for the slower neighbour at every "
    .. "exchange; not with --pad, --pad-batch, --pack-tokens or --token-batch",
  suggest = { "split_by_count", "no_dynamic_bsz", "fixed_micro_batches" } }
opt { name = "pad", type = "flag", commands = "rl",
  help = "training sequences padded to --response-max",
  suggest = { "padding" } }
opt { name = "pad_batch", type = "flag", commands = "rl",
  help = "each micro-batch's sequences padded to its own longest response (OpenRLHF's "
    .. "zero_pad_sequences), attention over the real tokens",
  suggest = { "pad_to_longest", "padding_longest" } }
opt { name = "pack_tokens", type = "int", metavar = "N", commands = "rl",
  kind = "tokens", range = { 0, 1 << 24 },
  default = "0: --batch sequences at the mean length",
  help = "training sequences packed into micro-batches of at most N tokens by first-fit "
    .. "decreasing, a multiple of the DP ranks of them per optimizer step, dealt out in turn "
    .. "(as many a rank, not as many tokens: each pass waits for the rank with the most); "
    .. "with --pp > 1 each padded to N (NeMo RL's sequence packing: max_total_sequence_length x "
    .. "train_micro_batch_size)",
  suggest = { "packing", "train_mb_tokens", "max_tokens_per_microbatch" } }
opt { name = "logprob_pack_tokens", type = "int", metavar = "N", commands = "rl",
  kind = "tokens", range = { 0, 1 << 24 },
  default = "0: --pack-tokens",
  help = "with --pack-tokens: the log-probability forwards (old policy, reference) pack the "
    .. "step's samples into micro-batches of at most N tokens (NeMo RL's logprob_mb_tokens: "
    .. "max_total_sequence_length x logprob_batch_size)",
  suggest = { "logprob_mb_tokens", "logprob_batch_size", "logprob_micro_batch" } }
opt { name = "token_batch", type = "int", metavar = "N", commands = "rl",
  kind = "tokens", range = { 0, 1 << 24 },
  default = "0: --batch sequences at the mean length",
  help = "training micro-batches cut by tokens: each DP rank splits its share of a "
    .. "mini-batch into ceil(its tokens / (N x --cp)) micro-batches of even token sums, the "
    .. "count the busiest rank's, not padded under --pp > 1 (verl's use_dynamic_bsz: N its "
    .. "ppo_max_token_len_per_gpu)",
  suggest = { "ppo_max_token_len_per_gpu", "max_token_len", "dynamic_bsz", "use_dynamic_bsz" } }
opt { name = "rollout_eager", type = "flag", commands = "rl",
  help = "the rollout engine runs without CUDA graphs (vLLM enforce_eager, verl's default "
    .. "before 2025-08): the host dispatches every op of a decode step",
  suggest = { "enforce_eager", "eager" } }
-- A V1 release's fall-back to V0 (gpuplan.rl M.v0_outputs): no other
-- option says it, rollout_eager running either engine.
opt { name = "vllm_v0", type = "flag", commands = "rl",
  default = "off: vLLM's V1 engine, or V0 where --vllm-version is before 0.8.0",
  help = "the rollout runs vLLM's V0 engine on a release whose default is V1 (0.8.0 on: "
    .. "VLLM_USE_V1=0, or a fall-back its log reports, \"Falling back to V0\"), which under "
    .. "--rollout-eager has no async output processor: each step's outputs processed between "
    .. "two decode steps, --frontend-host 1.03e-4 s a sequence a step (vLLM RFC #6913); "
    .. "--rollout-eager required (with CUDA graphs the overlap is not priced), not with a "
    .. "--vllm-version before 0.8.0 (V0 there anyway); --rollout-engine vllm only",
  suggest = { "vllm_use_v1", "v0_engine", "use_v0" } }
opt { name = "rollout_custom_ar", type = "flag", commands = "rl", form = "both",
  default = "on: vLLM's own custom all-reduce within one host (disable_custom_all_reduce "
    .. "False, vLLM's default, kept by NeMo RL's vllm_worker.py)",
  help = "the rollout engine's TP all-reduces within one host run vLLM's custom all-reduce "
    .. "kernels on a full NVLink mesh; --no-rollout-custom-ar: NCCL's, as verl's vLLM rollout "
    .. "asks (vllm_rollout_spmd.py: disable_custom_all_reduce=True)",
  suggest = { "disable_custom_all_reduce", "custom_all_reduce", "custom_ar" } }
opt { name = "rollout_piecewise", type = "flag", commands = "rl",
  default = "off: one CUDA graph a decode step",
  help = "the rollout engine replays each decode step as piecewise CUDA graphs, each layer's "
    .. "attention run between two captured pieces (vLLM's default before 0.11; NeMo RL v0.3 "
    .. "and v0.4 pin 0.9.0 and 0.10.0): 15 us a layer a decode step (vLLM PR #20059)",
  suggest = { "piecewise", "cudagraph_piecewise", "piecewise_graphs" } }
opt { name = "rollout_fused_grouped_topk", type = "flag", commands = "rl",
  default = "off: the native grouped_topk's 9 kernels",
  help = "the rollout engine routes a grouped-top-k MoE (the MLA models', DeepSeek's) in "
    .. "vLLM's one fused kernel, the sigmoid, bias and casts inside (vLLM PR #28124, "
    .. "2025-11; NeMo RL v0.6 pins vLLM 0.17.1), not the native path's 9 kernels a layer",
  suggest = { "fused_grouped_topk", "grouped_topk" } }
opt { name = "rollout_fused_topk_softmax", type = "flag", commands = "rl",
  default = "off: the cast, topk_softmax, sum and division, 4 kernels",
  help = "the rollout engine's softmax top-k MoE router (Qwen3-MoE's, Mixtral's) casts, "
    .. "selects and renormalises in vLLM's one topk_softmax kernel (vLLM PR #26717, "
    .. "2025-10; NeMo RL v0.5 and v0.6 pin vLLM 0.11.2 and 0.17.1), not 4 kernels a layer",
  suggest = { "fused_topk", "topk_softmax" } }
-- Decode steps the client waits past a prompt's prefill for its first
-- token.  vLLM V0 (0.6.0 to 0.7.x) with its async output processor, on by
-- default with CUDA graphs, processes a step's outputs inside the next
-- step: "Adds a callback function to `execute_model` so that
-- `process_model_outputs` is triggered right before sampler inside
-- `ModelRunner`" (vllm PR #7049).  Its in-process AsyncLLMEngine runs that
-- step in an executor thread ("output = await
-- make_async(self.execute_model)(execute_model_req)",
-- vllm/executor/executor_base.py) and the callback puts the output on the
-- request's asyncio queue from that thread ("self._queue.put_nowait(item)",
-- async_llm_engine.py AsyncStream.put), which does not wake the event
-- loop: the awaiting client resumes when the step's future completes, a
-- whole decode step after the prefill.  A V0-derived fork names the
-- effect: "the first prefill output was not processed (for the async out
-- proc case) until after the first decode (resulting in higher ttft for the
-- batch 1 case)" (tenstorrent/vllm PR #116).  The OpenAI server's
-- MQLLMEngine sends the callback's outputs over ZMQ at once: no lag.
opt { name = "first_token_lag", type = "int", metavar = "N", commands = "infer",
  default = "0",
  help = "decode steps the first token waits past its prompt's prefill before the client "
    .. "sees it (vLLM V0's in-process AsyncLLMEngine with its async output processor: 1); "
    .. "each adds the decode step at the run's batch to the TTFT",
  suggest = { "ttft_lag", "output_lag" } }
opt { name = "async_scheduling", type = "flag", commands = "rl infer",
  default = { "off: vLLM's before v0.14.0, and where the engine turns it off (Ray's executor)",
    infer = "on: vLLM's from v0.14.0" },
  help = "the engine prepares each decode step while the GPU runs the previous one "
    .. "(vLLM --async-scheduling; off: its host work, 0.43 ms a step and 19.8 us a "
    .. "sequence, adds to every step)",
  variants = { infer = { group = "inference",
    help = "vLLM's engine prepares each decode step while the GPU runs the previous one "
      .. "(vLLM --async-scheduling, on by default from v0.14.0); off: vLLM's host work "
      .. "between steps, V1's 0.43 ms a step and 19.8 us a sequence, adds to every step "
      .. "(--runtime vllm only; off by default with --vllm-version, a V0 release; validate "
      .. "sets it off for a case of vLLM 0.8 to 0.13, and of V0, before 0.8, at these V1 "
      .. "figures as a floor, unless it states multi-step scheduling)" } } }
opt { name = "ray_step", type = "number", metavar = "S", commands = "infer",
  range = { 0, 1 },
  default = "0; validate: 3.6e-3 for a vLLM case before 0.4.3 on more than one GPU",
  help = "seconds vLLM's Ray executor adds to each step, scheduling a Ray task on every "
    .. "worker and waiting for its result, before vllm PR #4894 (\"Eliminate parallel worker "
    .. "per-step task scheduling overhead\", after v0.4.2) kept the workers in a loop "
    .. "(3.6e-3: PR #3763's A100 TP 2 runs, 24.2 s under Ray against 17.0 s under the "
    .. "multiprocessing executor over 2000 tokens); --runtime vllm only, one model on its "
    .. "replicas, each of more than one GPU (tp x pp > 1)",
  suggest = { "ray_task_step", "executor_step", "worker_step" } }
opt { name = "v0_step", type = "number", metavar = "S", commands = "infer",
  range = { 0, 1 },
  default = "0; validate: 1.78e-3 for a vLLM 0.4.x case",
  help = "seconds vLLM 0.4's engine adds to each step between the GPU's steps beyond V1's "
    .. "host figures (--no-async-scheduling): its scheduler, the inputs rebuilt in Python and "
    .. "the outputs built each step (1.78e-3: vllm PR #3763's one-A100 Llama-2-7B run, 24.2 s "
    .. "over 2000 tokens at batch 1, against the 20.6 s priced); --runtime vllm with "
    .. "--no-async-scheduling only (or a --vllm-version, which implies it), not with a "
    .. "--vllm-version outside 0.4, one model on its replicas",
  suggest = { "v0_host_step", "engine_v0_step", "host_step" } }
opt { name = "engine_xhost_step", type = "number", metavar = "S", commands = "rl",
  default = "0",
  help = "seconds the rollout engine's executor adds to each decode step when the engine's "
    .. "GPUs span more than one host (the system's host_gpus), on an x86 server CPU (the "
    .. "system's host_op_scale multiplies it): vLLM's Ray executor runs each step as a Ray "
    .. "Compiled Graph whose cross-host channels go through gRPC (NeMo RL's engines: 1.56e-3, "
    .. "ray PR #49755's cross-node round trip)",
  suggest = { "executor_xhost", "ray_cgraph_xhost", "xhost_step" } }
opt { name = "filter_keep", type = "number", metavar = "F", commands = "rl", kind = "fraction",
  -- keeping no group trains on nothing (rl.lua refused 0 as "(0, 1]")
  range = { 0, 1, gt = true },
  default = "1: no filter",
  help = "DAPO dynamic sampling: the share of generated prompt groups kept (0-1]; the "
    .. "rollout generates prompts / F groups",
  suggest = { "dynamic_sampling", "keep_ratio", "filter_groups" } }
opt { name = "loss_ops", type = "int", metavar = "N", commands = "rl",
  range = { 0, 1000000 },
  default = "0: one loss per micro-batch",
  help = "the actor's loss runs one sequence at a time: PyTorch ops the host dispatches per "
    .. "trained sequence, each an eager op's host time (NeMo RL's sequence-packing loss "
    .. "wrapper: 147)",
  suggest = { "seq_loss_ops", "loss_loop" } }
opt { name = "fwd_bwd_scale", type = "number", metavar = "K", commands = "rl",
  default = "1: as the training step prices them",
  help = "the training engine's forward and backward compute (the update and the "
    .. "log-probability forwards, their recompute and pipeline bubble) times K, 1 to 10: a "
    .. "framework's passes measured slower than the training stack's own on the same tokens "
    .. "(NeMo RL's Megatron backend: 1.1, the low end of the 1.1-1.3x its issue #2129 measures)",
  suggest = { "pass_scale", "train_scale", "compute_scale" } }
opt { name = "fp32_logits", type = "flag", commands = "rl",
  help = "the log-probabilities come from the vocabulary logits materialized in fp32, the "
    .. "log-softmax unfused and the softmax kept for the backward, in every pass (NeMo RL's "
    .. "DistributedLogprob); with --loss-ops and --pack-tokens each packed sequence's loss "
    .. "narrows its micro-batch's logits, a zero-filled gradient of them each",
  suggest = { "logits_fp32", "defer_fp32_logits" } }
opt { name = "logit_onehot", type = "flag", commands = "rl",
  help = "with --fp32-logits: the log-probabilities' backward builds the chosen tokens' "
    .. "one-hot over the vocabulary as int64 (NeMo RL v0.3.0's DistributedLogprob, before "
    .. "its PR #761): 62 bytes a logit where the scatter of later releases moves 30",
  suggest = { "one_hot", "onehot_backward" } }
opt { name = "gae_ops", type = "int", metavar = "N", commands = "rl",
  range = { 0, 1000000 },
  default = "0: none",
  help = "PPO's advantage estimate runs as a Python loop over the response positions, once "
    .. "per training micro-batch: PyTorch ops the host dispatches per position, each an "
    .. "eager op's host time (DeepSpeed-Chat's get_advantages_and_returns: 5)",
  suggest = { "gae_loop", "advantage_ops" } }
opt { name = "sync_tp_first", type = "flag", commands = "rl",
  help = "the weight sync gathers each tensor whole over the training TP group, then "
    .. "broadcasts it over the pipeline (NeMo RL v0.3.0's gather_params): every GPU receives "
    .. "the whole model, the pipeline moving whole tensors, not the stages' TP slices",
  suggest = { "gather_params", "refit_full_gather" } }
opt { name = "sync_fp8_cast", type = "flag", commands = "rl",
  help = "the engine (rollout_weights fp8) casts each 16-bit weight the weight sync sends it "
    .. "to fp8 itself, the whole tensor on every rank, before keeping its slice (NeMo RL's fp8 "
    .. "generation, fp8.load_weights): 49 bytes of memory traffic per fp8 linear's weight",
  suggest = { "fp8_refit", "refit_quantize" } }
opt { name = "token_host", type = "number", metavar = "S", commands = "rl", default = "0",
  help = "the framework's host work per generated token once the engine returns its batch, "
    .. "seconds on an x86 server CPU (the system's host_op_scale multiplies it), serial on "
    .. "each engine's worker (NeMo RL's vLLM worker: 7.04e-6)",
  suggest = { "output_token_host", "postprocess" } }
opt { name = "frontend_host", type = "number", metavar = "S", commands = "rl",
  default = "0; 1.03e-4 for vLLM's V0 engine without its async output processor (--vllm-version "
    .. "before 0.6.0, or V0 under --rollout-eager)",
  help = "the inference engine's frontend work per sequence per decode step (detokenizing "
    .. "the new token, updating the request's output) when it runs in the caller's process, "
    .. "serial with the GPU: vLLM's LLM with VLLM_ENABLE_V1_MULTIPROCESSING=0, seconds on an "
    .. "x86 server CPU (the system's host_op_scale multiplies it; NeMo RL's synchronous "
    .. "engine: 12.5e-6)",
  suggest = { "inproc_host", "engine_frontend" } }
opt { name = "logprob_host", type = "number", metavar = "S", commands = "rl", default = "0",
  help = "the inference engine's work per sequence per decode step to return each sampled "
    .. "token's log-probability (vLLM with logprobs=0: the core's per-request slicing and "
    .. "packing of the log-probability arrays, the output processor's Logprob objects), "
    .. "serial with the GPU unless the engine schedules asynchronously, seconds on an x86 "
    .. "server CPU (the system's host_op_scale multiplies it; NeMo RL's synchronous engine: "
    .. "10.35e-6)",
  suggest = { "logprobs_host", "engine_logprob" } }
opt { name = "sync_tensor_time", type = "number", metavar = "S", commands = "rl", default = "0",
  help = "seconds per weight tensor a weight sync spends when the framework exports the "
    .. "trainer's weights one tensor at a time (verl's and NeMo RL's Megatron exports into "
    .. "vLLM's load_weights), on an x86 server CPU (the system's host_op_scale multiplies it); "
    .. "0: bucketed, priced by its bytes only",
  suggest = { "refit_tensor_time", "export_tensor_time" } }
opt { name = "gen_empty_cache", type = "int", metavar = "N", commands = "rl", default = "0",
  range = { 0, 1000 },
  help = "torch.cuda.empty_cache() calls the framework makes around each generate call (the "
    .. "step's rollout and each validation batch), each 0.080 s of host time on an x86 server "
    .. "CPU (the system's host_op_scale multiplies it), on the weight sync's path; verl's FSDP "
    .. "hybrid worker: 4 (its vLLM sharding manager 3, generate_sequences 1), 5 with the "
    .. "actor's param_offload; colocated only (a rollout on GPUs of its own switches none)",
  suggest = { "empty_cache", "gen_cleanup" } }
opt { name = "ipc_transfer", type = "number", metavar = "S", commands = "rl", default = "0",
  help = "colocated: seconds per hand-off of a weight sync that streams the whole 16-bit "
    .. "model through a CUDA-IPC staging buffer of 0.3 of the GPU's free memory, two halves "
    .. "in turn (NeMo RL's refit from v0.4: 0.141), on an x86 server CPU (the system's "
    .. "host_op_scale multiplies it); 0: none",
  suggest = { "refit_transfer", "ipc_handoff" } }
opt { name = "val_every", type = "int", metavar = "N", commands = "rl", range = { 1, 1000000 },
  default = "none: no validation",
  help = "a validation pass every N steps inside the step's time (verl's trainer.test_freq: "
    .. "ray_trainer.py runs _validate() within the step timer): a weight sync and the "
    .. "rollout of --val-prompts prompts, one answer each, at the rollout's settings, over "
    .. "the rollout engines (ceil per engine); its seconds / N the validation phase",
  suggest = { "test_freq", "eval_every", "val_freq" } }
opt { name = "val_prompts", type = "int", metavar = "N", commands = "rl", range = { 1, 10000000 },
  default = "none: no validation",
  help = "the validation set's prompts that each --val-every pass generates one answer for "
    .. "(verl's val_kwargs.n=1 over data.val_files); nothing trains on them: any count, "
    .. "not only multiples of the data-parallel ranks",
  suggest = { "val_samples", "eval_prompts" } }
opt { name = "critic_batch", type = "int", metavar = "N", commands = "rl", range = { 1, 1000000 },
  default = "the actor's micro-batches",
  help = "PPO: the critic's forward and update in micro-batches of N sequences, not the "
    .. "actor's token cuts (verl's critic.ppo_micro_batch_size_per_gpu with "
    .. "critic.use_dynamic_bsz off, its default): its passes priced as its own, on the "
    .. "actor's GPUs (not with --critic-gpus)",
  suggest = { "critic_micro_batch" } }
opt { name = "pad_to", type = "int", metavar = "N", commands = "rl",
  range = { 1, 16777216 },
  default = "packed to their lengths",
  help = "every training sequence of the actor's passes (update and log-probability "
    .. "forwards) takes N token slots, its attention over the real tokens only: verl without "
    .. "use_remove_padding, whose batches hold each prompt left-padded to max_prompt_length "
    .. "and each response padded to max_response_length (transformers' FlashAttention-2 "
    .. "unpads by the mask); not with pad, pad_batch, pack_tokens, token_batch or rank_skew",
  suggest = { "padded_len", "pad_len" } }
opt { name = "critic_pad_to", type = "int", metavar = "N", commands = "rl",
  range = { 1, 16777216 },
  default = "packed to their lengths",
  help = "PPO: the critic's own micro-batches (--critic-batch, --critic-token-batch) hold "
    .. "each sequence in N token slots, "
    .. "the attention over the real tokens (verl's critic.model.use_remove_padding false, its "
    .. "default)",
  suggest = { "critic_pad_len" } }
opt { name = "critic_token_batch", type = "int", metavar = "N", commands = "rl",
  range = { 1, 100000000 }, default = "the actor's micro-batches",
  help = "PPO: the critic's forward and update in micro-batches of at most N real tokens, its "
    .. "own cuts beside the actor's (verl's critic.use_dynamic_bsz with its "
    .. "ppo_max_token_len_per_gpu); on the actor's GPUs, not with --critic-batch",
  suggest = { "critic_max_token_len" } }
opt { name = "val_batch", type = "int", metavar = "N", commands = "rl", range = { 1, 10000000 },
  default = "all of --val-prompts at once",
  help = "the validation pass's prompts in batches of N, one generate call each in turn, each "
    .. "with its own weight sync and its own longest response (verl's data.val_batch_size: "
    .. "_validate iterates the val dataloader, one generate_sequences a batch)",
  suggest = { "val_batch_size" } }
opt { name = "step_overhead", type = "number", metavar = "S", commands = "rl", default = "0",
  help = "the framework's host work per step between the phases (data collation, rewards, "
    .. "actor calls), seconds on an x86 server CPU (the system's host_op_scale multiplies it)",
  suggest = { "framework_overhead" } }

---------------------------------------------------------------------------
section "collective"

-- gpuplan comm / gp.comm: one collective as nccl-tests measures it
-- (lua/gpuplan/comm.lua).
opt { name = "op", type = "string", metavar = "OP", commands = "comm", kind = "enum",
  default = "all_reduce",
  help = "all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce or "
    .. "send_recv (allreduce, bcast ... too)",
  suggest = { "collective", "operation" } }
opt { name = "bytes", type = "number|string", lua_only = true, commands = "comm",
  kind = "bytes", default = "required",
  -- A volume of any element type (1 B is one int8; a step's average
  -- share need not be whole): any amount >= 0, 0 moving nothing at no
  -- cost.  The comm command's --min/--max (gp.comm.sweep's sizes) are
  -- nccl-tests' messages of its default float: whole 4-byte elements.
  help = "the message: the total buffer for all_gather and reduce_scatter, the per-rank "
    .. "send buffer for all_to_all (nccl-tests' sizes); B, or a string with its unit "
    .. "(\"1MiB\", or nccl-tests' \"1G\": powers of 1024, as the comm command's --min); any volume >= 0 (1 B is one int8 element, 0 moves nothing), where the "
    .. "comm command's sizes are whole 4-byte floats",
  suggest = { "size", "sizes", "message_size" } }
opt { name = "gpus_per_thread", type = "int", metavar = "N", commands = "comm",
  default = "1",
  help = "GPUs one thread drives (nccl-tests -g N): its kernel launches, 4.2 us each, "
    .. "bound the time from below" }
opt { name = "nccl", type = "string", metavar = "X.Y.Z", commands = "comm",
  default = "the latest modelled, 2.30.7",
  help = "the NCCL release whose tuner picks the algorithm, e.g. 2.20.5",
  suggest = { "nccl_version" } }
opt { name = "nvls", type = "string", metavar = "M", commands = "comm", kind = "enum",
  -- gp.comm's own list, which its nvls check reads
  values = require("gpuplan.comm").NVLS_MODES, default = "auto",
  help = "NVLink SHARP as NCCL_NVLS_ENABLE sets it: auto (NCCL's default: NVLS and "
    .. "NVLS_TREE where the NVLink switch multicasts), off (=0: the tuner picks among the "
    .. "others) or on (=1: refused where the switch has no NVLS)",
  suggest = { "nvls_enable", "nccl_nvls_enable" } }
opt { name = "min", type = "string", metavar = "SIZE", commands = "comm", cli_only = true,
  in_lua = "call gp.comm once per bytes = SIZE",
  default = "8B",
  help = "smallest message, at least 4 B (one float); sizes double (nccl-tests -f 2) up "
    .. "to --max.  SIZE: 8, 1MiB, 4GB ... or nccl-tests' 1K, 1M, 1G (powers of 1024)" }
opt { name = "max", type = "string", metavar = "SIZE", commands = "comm", cli_only = true,
  in_lua = "call gp.comm once per bytes = SIZE",
  default = "8GiB",
  -- gpuplan.comm sweep: nccl-tests holds a send and a receive buffer of
  -- the largest message on each GPU (src/common.cu AllocateBuffs)
  help = "largest message: a send and a receive buffer of it must fit the card (a larger "
    .. "--max is refused, exit 1; the default stops at the largest that fits, as nccl-tests "
    .. "reduces its maxBytes)" }
opt { name = "topology", type = "table", lua_only = true, commands = "comm",
  help = "the node and network as a table of the fields below (nodes: how many there "
    .. "are) instead of system or gpu" }
-- The topology's fields (engine/comm.h gp_topo), each also a key of its
-- own that overrides the node's: numbers in SI units, or strings with
-- their units ("450GB/s", "0.6us").
for _, f in ipairs {
  { "up_kind", "string", "the scale-up link: \"nvlink\" or \"pcie\"" },
  { "up_bw", "number|string", "B/s per direction per GPU on the scale-up link" },
  { "up_latency", "number|string", "s per scale-up hop" },
  { "up_achievable", "number", "the share of up_bw a long stream sustains, (0, 1]" },
  { "up_nvls", "boolean", "the NVLink switch reduces in-network (NVLS)" },
  { "up_crosses_cpu", "boolean", "PCIe traffic goes through the CPU root complex and host "
    .. "memory (no direct P2P)" },
  { "up_mesh_peers", "int", "the scale-up is a full mesh of direct links, up_bw split evenly "
    .. "over this many peers (at least gpus_per_node - 1): a group of g GPUs of a node gets "
    .. "(g - 1) / up_mesh_peers of it; "
    .. "0: a switch" },
  { "nic_bw", "number|string", "B/s per direction per NIC" },
  { "nic_latency", "number|string", "s per network hop" },
  { "nic_achievable", "number", "the share of nic_bw a long stream sustains, (0, 1]" },
  { "nic_sharp", "boolean", "the network reduces in-network (SHARP)" },
  { "nic_path_bw", "number|string", "B/s one GPU pushes to the NICs: its PCIe link; 0: no "
    .. "limit beyond the NICs" },
  { "nic_gdr_off", "boolean", "no GPUDirect RDMA between a GPU and its NICs (the path is "
    .. "farther than NCCL_NET_GDR_LEVEL allows): the network data is staged through host "
    .. "memory, and the GPU's PCIe link carries it both ways at the host-staged share of "
    .. "nic_path_bw" },
  { "nvls_tree_bw2", "number|string", "bus B/s one NVLS_TREE head carries on 2 nodes "
    .. "(NCCL perChMaxNVLSTreeBws); 0: no limit" },
  { "nvls_tree_bw3", "number|string", "the same on 3 or more nodes" },
  { "tree_ch_bw2", "number|string", "NCCL's ceiling on the bus B/s one tree channel carries "
    .. "across 2 nodes, which its tuner ranks the tree by (perChMaxTreeBws); 0: none" },
  { "tree_ch_bw3", "number|string", "the same across 3 or more nodes" },
  { "tree_tune_ch_bw2", "number|string", "tree_ch_bw2 as NCCL releases before "
    .. "tree_tune_until ranked the tree by (their perChMaxTreeBws row); the tree's time "
    .. "keeps tree_ch_bw2; 0: the same as tree_ch_bw2" },
  { "tree_tune_ch_bw3", "number|string", "the same across 3 or more nodes" },
  { "tree_tune_until", "number", "the first NCCL release (code, 2.28.3 = 22803) that ranks "
    .. "the tree by tree_ch_bw2/3; 0: none" },
  { "tree_ll128_ch_bw2", "number|string", "NCCL's ceiling on the bus B/s one tree channel "
    .. "carries with LL128 across 2 nodes, which bounds and ranks the LL128 tree "
    .. "(perChMaxTreeLL128Bws); 0: none" },
  { "tree_ll128_ch_bw3", "number|string", "the same across 3 or more nodes" },
  { "ring_ll128_ch_bw", "number|string", "NCCL's ceiling on the bus B/s one ring channel "
    .. "carries with LL128, which its tuner ranks LL128 by across nodes "
    .. "(perChMaxRingLL128Bws); 0: none" },
  { "p2p_nvl_ch_bw", "number|string", "B/s one NCCL p2p channel moves to a peer it writes "
    .. "to over NVLink (send/recv, all-to-all inside a node); 0: NCCL's 14 GB/s network "
    .. "figure" },
  { "ll_max_bw", "number|string", "NCCL's ceiling on LL's bus B/s on one node, which its "
    .. "tuner ranks LL by (llMaxBws); 0: none" },
  { "host_mem_bw", "number|string", "B/s of host DRAM: traffic staged through host memory "
    .. "shares it" },
  { "host_amd", "boolean", "the nodes' CPUs are AMD x86: NCCL posts network messages "
    .. "slower there" },
  { "p2p_read", "boolean", "NCCL reads NVLink peer-to-peer data from the sender (compute "
    .. "capability 8.0) rather than writing it into the receiver: a send/recv stream then "
    .. "reaches 0.83 of the link's rate, not all of it, and a large all-to-all inside a node "
    .. "0.83, not 0.94" },
  { "nic_c2c", "boolean", "the NICs hang off the host CPU the GPU reaches over NVLink-C2C "
    .. "(GB200): NCCL before 2.27.3 sees a PHB path to them and runs no LL128 across nodes" },
  { "base_lat_ll", "number|string", "the collective library's per-call base latency with "
    .. "LL where it is not NCCL's 6.6 us (ring) / 6.8 us (tree): RCCL's 12 us on AMD Instinct" },
  { "base_lat_ll128", "number|string", "the same with LL128 (NCCL's 14 us; RCCL's 12)" },
  { "base_lat_simple", "number|string", "the same with Simple (NCCL's 8.4 us; RCCL's 17)" },
  { "ll128_off", "boolean", "the collective library runs no LL128 on the part, on one node "
    .. "or several (RCCL on CDNA 3 and 4: LL128 only where a Rome model of the node sets "
    .. "ll128Enabled)" },
  { "pxn_off", "boolean", "the collective library relays no send through a NIC's own GPU "
    .. "(PXN off: RCCL's default), so a ring across nodes leaves each node from its last "
    .. "GPU's own NIC and, with a NIC a GPU, a rank's links carry (g - 1) / g of its ring "
    .. "bytes" },
  { "up_nccl", "table", "NCCL's step latencies and NVLS terms on the scale-up link, over "
    .. "the link kind's defaults (catalog/FORMAT.md, a fabric's nccl block)" },
  { "nic_nccl", "table", "the same for the network" },
} do
  opt { name = f[1], type = f[2], lua_only = true, commands = "comm",
    default = "the node's", help = f[3] .. " (a topology field)" }
end

---------------------------------------------------------------------------
section "node"

opt { name = "system", type = "string", metavar = "ID", commands = "train plan rl infer comm fit",
  default = "the catalog's system of this GPU",
  help = "the node: a catalog system (GPUs, NVLink, NICs, host memory)",
  suggest = { "node", "server" },
  variants = { comm = { default = "none: this, --gpu (or in Lua topology) is required",
    help = "catalog system (one node), e.g. dgx-h100, hgx-h800, pcie-8x-4090" } } }
opt { name = "fabric", type = "string", metavar = "ID", commands = "comm",
  default = "the node's own",
  help = "a scale-up fabric joining the node's GPUs in place of its own, e.g. pcie4-p2p "
    .. "(RTX 4090s with P2P on), nvlink-bridge" }
opt { name = "nodes", type = "int", metavar = "N", commands = "comm",
  default = "1, or as many as --gpus fill",
  help = "nodes of that system",
  suggest = { "num_nodes", "nnodes" } }
opt { name = "nics", type = "int", metavar = "N", commands = "train plan rl infer comm",
  serve = true, range = { 0, 1 << 24 },
  default = "the system's",
  help = "NICs per node",
  notes = { comm = "fewer NICs than GPUs share them, --nics 4 on 8-GPU nodes halves a "
    .. "ring's network rate" },
  suggest = { "num_nics" } }
opt { name = "nic_fabric", type = "string", metavar = "ID", commands = "train plan rl infer",
  serve = true, default = "the system's",
  help = "the NICs' fabric (a catalog fabric id)" }
opt { name = "gpus_per_node", type = "int", metavar = "N", commands = "train plan rl",
  lua = "comm", default = "the system's",
  help = "GPUs per node",
  variants = { comm = { default = "all of the node's, or --gpus over --nodes",
    help = "ranks on each node: where the ranks sit (gpus = nodes x gpus_per_node)" } },
  suggest = { "nproc_per_node", "gpus_per_host" } }
opt { name = "overlap_grad_reduce", type = "flag", commands = "train plan rl", form = "both",
  default = "by stack",
  help = "the DP gradient reduction under backward (plan, Lua: {false, true} searches both)" }
opt { name = "overlap_param_gather", type = "flag", commands = "train plan rl", form = "both",
  default = "by stack",
  help = "the ZeRO parameter all-gather under forward" }
opt { name = "tp_overlap", type = "flag", commands = "train plan rl", form = "both",
  default = "off",
  help = "TP collectives under the GEMMs (megatron stack: Userbuffers, the layer's GEMMs; "
    .. "else PyTorch's async TP, each under its own matmuls; plan, Lua: {false, true} "
    .. "searches both)",
  suggest = { "tp_comm_overlap" } }
opt { name = "tp_overlap_fp8_rs", type = "flag", commands = "train plan rl",
  help = "with tp_overlap under precision fp8 (Transformer Engine's modules, sp): the "
    .. "forward's Userbuffers reduce-scatters move the row-parallel GEMMs' fp8 output, one "
    .. "byte an element, not 16 bits (fp8_buf on proj_fprop and fc2_fprop of "
    .. "ub_tp_comm_overlap_cfg)",
  suggest = { "fp8_buf", "ub_fp8_buf" } }
opt { name = "tp_overlap_aggregate", type = "flag", commands = "train plan rl",
  help = "with tp_overlap (Transformer Engine's modules, sp): the Userbuffers ring-exchange "
    .. "GEMMs (qkv and fc1 forward, proj and fc2 dgrad) take two ranks' chunks at a time, "
    .. "tp / 2 GEMMs of 2 m / tp rows where they run tp of m / tp (aggregate: 1 in "
    .. "ub_tp_comm_overlap_cfg)",
  suggest = { "aggregate", "ub_aggregate" } }
opt { name = "overlap_p2p", type = "flag", commands = "train plan rl", form = "both",
  default = "by stack: megatron on with vpp > 1, off in its 1F1B (refused there); "
    .. "deepspeed, hf off",
  help = "pipeline sends and receives under compute",
  suggest = { "overlap_p2p_comm" } }
opt { name = "ep_overlap", type = "flag", commands = "train plan rl", form = "both",
  default = "off",
  help = "the expert all-to-all under compute (Megatron-Core's "
    .. "overlap_moe_expert_parallel_comm: it needs ep > 1, vpp > 1 at pp > 1, the alltoall "
    .. "or flex dispatcher, a bf16/fp16/fp8 model and no full recompute; plan skips "
    .. "the layouts without); on a Grace host (host_op_scale 2 or more), or with the expert "
    .. "group inside one node (its all-to-all on the scale-up links), it hides nothing "
    .. "without cuda_graph_scope full_iteration" }
opt { name = "moe_dispatcher", type = "string", metavar = "D", commands = "train plan rl",
  value = "alltoall", kind = "enum", values = { "alltoall", "allgather", "flex", "einsum" },
  help = "how MoE tokens reach their experts (Megatron-Core's moe_token_dispatcher_type): "
    .. "alltoall (each token's top_k copies sent to their experts' ranks and back), "
    .. "allgather (every rank gathers the EP group's tokens once each, the outputs "
    .. "reduce-scattered back) or flex (DeepEP's or HybridEP's fused kernels: the "
    .. "permute and the all-to-all in one call each way, each token sent once to each "
    .. "rank holding any of its experts; HybridEP sorts the received rows by expert in "
    .. "the same call, after DeepEP's Megatron-Core runs a permute kernel of its own) "
    .. "or einsum (DeepSpeed's MOELayer, stack deepspeed with fused kernels: "
    .. "dispatch and combine as dense GEMMs over an S x E x C one-hot mask, "
    .. "C = ceil(top_k S capacity_factor / E), 2 S E C hidden FLOPs each, three more "
    .. "backward)",
  suggest = { "moe_token_dispatcher_type", "token_dispatcher", "dispatcher" } }
opt { name = "moe_flex_backend", type = "string", metavar = "B", commands = "train plan rl",
  value = "deepep", kind = "enum", values = { "deepep", "hybridep" },
  help = "the flex dispatcher's kernels, deepep or hybridep (Megatron-Core's "
    .. "moe_flex_dispatcher_backend, deepep its default): across nodes each sends a token once to each node holding "
    .. "any of its experts and forwards it there over NVLink, at that backend's published "
    .. "internode rate (DeepEP's docs/legacy.md, HybridEP's README); only with "
    .. "moe_dispatcher flex",
  suggest = { "moe_flex_dispatcher_backend", "flex_backend", "moe_enable_deepep" } }
opt { name = "moe_router_ops", type = "int", metavar = "N", commands = "train plan",
  kind = "count", range = { 11, 1000 },
  default = "11 (a softmax top-k router without aux loss: Megatron-Core's "
    .. "topk_softmax_with_capacity and the input's cast)",
  help = "the kernels the MoE router's forward launches, as the run's source counts them "
    .. "(DeepSeek-V3's router with its aux loss: 72, 31 with moe_router_fusion -- Megatron-LM's "
    .. "GB200 guide); those beyond 11 are bare tensor ops from Python, a third of a host op "
    .. "each, on every MoE layer's forward the router is not graphed in; with expert "
    .. "parallelism",
  suggest = { "router_kernels", "moe_router_kernels", "router_ops" } }
opt { name = "moe_flex_sms", type = "int", metavar = "N", commands = "train plan rl",
  kind = "count", range = { 1, 1024 },
  default = "by backend: DeepEP 20, HybridEP 8 across nodes and 24 in one",
  help = "the SMs the flex dispatcher's kernels hold (Megatron-Core's "
    .. "moe_flex_dispatcher_num_sms, moe_deepep_num_sms, moe_hybridep_num_sms): with "
    .. "ep_overlap the compute beside its all-to-alls runs on the rest, N / (SMs - N) "
    .. "slower; HybridEP's rate across nodes follows N through its README's 4, 8 and 16 "
    .. "SM rows (held above 16); only with moe_dispatcher flex",
  suggest = { "moe_flex_dispatcher_num_sms", "moe_hybridep_num_sms", "moe_deepep_num_sms" } }
opt { name = "cuda_device_max_connections", type = "int", metavar = "N",
  commands = "train plan rl", value = 8, kind = "count", range = { 1, 32 },
  help = "the CUDA_DEVICE_MAX_CONNECTIONS the job runs with (CUDA's default 8 when "
    .. "unset): at 1 the streams share one hardware queue in launch order and ep_overlap "
    .. "hides 0.50 of what it hides with more (Megatron-LM PR #6311: 184.2 TFLOP/s without "
    .. "the overlap, 191.1 with it at 1 connection, 198.5 at 32: 3.6% and 7.2% of the step "
    .. "hidden); DualPipe is not affected",
  suggest = { "max_connections", "cuda_max_connections" } }
opt { name = "mtp_layers", type = "int", metavar = "N", commands = "train plan rl",
  lua = "fit", kind = "count", range = { 0, 16 }, default = "0",
  help = "multi-token prediction modules trained with the model (Megatron-Core's "
    .. "mtp_num_layers; DeepSeek-V3 report sec. 2.2): each one more transformer layer of "
    .. "the model's last kind on the last pipeline stage, with its two norms, its 2h x h "
    .. "eh_proj and the shared head's logits and loss once more; their FLOPs count in MFU "
    .. "as Megatron-Bridge's flop_utils.py counts them; memory: the layer's and eh_proj's "
    .. "states and activations, the head's logits once more, and with pp > 1 an embedding "
    .. "copy on the last stage (Megatron-Core builds one for the MTP process) unless "
    .. "DualPipe holds the first stage on the same rank",
  suggest = { "mtp_num_layers" } }
opt { name = "numa_bind", type = "flag", commands = "train plan rl", form = "both",
  default = "off",
  help = "each rank's CPU and memory bound to its GPU's NUMA node (numactl --cpunodebind "
    .. "--membind, as Megatron-Bridge's performance launcher and NeMo RL from v0.7 do): on "
    .. "a system with host_op_scale_bound (the Grace racks) the host's ops take that "
    .. "factor instead of host_op_scale; elsewhere it changes nothing",
  suggest = { "numactl", "bindpcie", "cpu_bind", "numa_binding" } }
opt { name = "moe_balance", type = "string", metavar = "B", commands = "train plan rl",
  value = "balanced", kind = "enum", values = { "balanced", "none" },
  help = "how evenly a MoE router spreads tokens over the expert-parallel ranks: balanced "
    .. "(an auxiliary loss, bias updates or forced balancing keep each rank near the mean, "
    .. "as pretraining and the benchmarks run) or none (Megatron-Core's "
    .. "moe_router_load_balancing_type none with the router frozen, as NeMo RL runs it, or "
    .. "with an expert bias too slow to rebalance one domain's batches, as verl's mbridge "
    .. "DeepSeek-V3 config: the hottest rank receives what TensorRT-LLM measured without "
    .. "balancing, 2.56x the mean at EP 32 with 8 experts a rank, and every layer waits for "
    .. "it)",
  suggest = { "moe_router_load_balancing_type", "load_balancing", "router_balance" } }
opt { name = "moe_gate", type = "string", metavar = "G", commands = "train plan rl",
  value = "learned", kind = "enum", values = { "learned", "fake_balanced" },
  help = "which gate picks a MoE token's experts: learned (a router's top_k: the flex "
    .. "dispatcher sends a token to each EP rank holding any of its experts, 5.34 of 8 "
    .. "ranks for 8 of 128 experts at EP 8) or fake_balanced (NeMo AutoModel's "
    .. "FakeBalancedGate, its benchmark recipes' fake_balanced_gate: true: token i takes "
    .. "the top_k consecutive experts from i x top_k, so it reaches the one or two EP ranks, "
    .. "in one node, that window spans, and every expert gets the same tokens: no "
    .. "imbalance); gp.rl: the actor's training layers, not the rollout engine's",
  suggest = { "fake_balanced_gate", "gate", "router" } }
opt { name = "moe_fp8_pad", type = "string", metavar = "P", commands = "train plan rl",
  kind = "enum", values = { "copy", "none" },
  default = "copy with precision fp8 on the megatron stack's alltoall and allgather "
    .. "dispatchers and DeepEP's flex, else none",
  help = "how an fp8 MoE layer's experts get the row counts their fp8 GEMMs take "
    .. "(multiples of 16, 32 for MXFP8): copy (Megatron-Core's grouped MLP pads them "
    .. "itself: Transformer Engine's Fp8Padding copies the received rows into a padded "
    .. "buffer before the experts and Fp8Unpadding back after, and the backward the "
    .. "reverse) or none (they arrive aligned: Megatron-Core's "
    .. "moe_router_padding_for_quantization pads the routing map, a token-drop dispatch "
    .. "pads each expert to a capacity that is a multiple of 16, HybridEP's dispatch pads "
    .. "them)",
  suggest = { "moe_router_padding_for_quantization", "moe_router_padding_for_fp8",
              "fp8_padding", "router_padding" } }
opt { name = "cuda_graph_scope", type = "string", metavar = "LIST", commands = "train plan rl",
  kind = "enum",
  help = "the parts of each layer's forward Transformer Engine's CUDA graphs capture "
    .. "(Megatron-Core's cuda_graph_scope with cuda_graph_impl transformer_engine): attn "
    .. "(the input norm, attention and its residual add), moe_router (the MLP's norm and "
    .. "the router), moe_preprocess (the token dispatcher's preprocess), mamba (a hybrid "
    .. "stack's Mamba layer: its norm, mixer and residual add); a graph's replay "
    .. "costs the host two calls where its kernels were launched one by one, e.g. "
    .. "moe_router,moe_preprocess (Lua also a list, an empty one none); or full_iteration alone (Megatron-Core's "
    .. "whole forward-backward graph, cuda_graph_impl local: no host launch work and no "
    .. "dispatcher wait in any layer, as its runs' capacity-sized expert buffers allow) "
    .. "(default none)",
  suggest = { "cuda_graph", "cuda_graphs", "graph_scope" } }
opt { name = "fp8_scaling", type = "string", metavar = "S", commands = "train plan rl",
  value = "delayed", kind = "enum", values = { "delayed", "current", "block" },
  help = "with --precision fp8, where each cast's scale comes from: delayed (Transformer "
    .. "Engine's DelayedScaling: past amaxes, one read, the cast fused into the norm), "
    .. "current (Float8CurrentScaling, Megatron's --fp8-recipe tensorwise, torchao's "
    .. "tensorwise: the tensor's own amax, read once more before the cast, the norm "
    .. "written in 16 bits first) or block (per-block scales made in the cast kernel: "
    .. "DeepSeek-V3's 1x128 / 128x128, MXFP8; one read, the norm written in 16 bits "
    .. "first, each cast writing both copies below the streaming rate, its GEMMs at the "
    .. "catalog's block-scaled share of the per-tensor rate: 0.951 on Blackwell)",
  suggest = { "fp8_recipe", "fp8_scaling_recipe", "scaling_recipe" } }
opt { name = "zero3_gather", type = "string", metavar = "G", commands = "train plan rl",
  value = "prefetch", kind = "enum", values = { "prefetch", "per_param" },
  help = "how ZeRO-3 gathers parameters: prefetch (each layer's parameters gathered in "
    .. "one collective, the next layer's under this one's compute: DeepSpeed's "
    .. "stage3_prefetch_bucket_size, FSDP) or per_param (DeepSpeed v0.3, early 2021: "
    .. "each parameter gathered on its own after a device synchronize, nothing under "
    .. "compute, the GPU drained at every submodule); per_param needs --zero 3 "
    .. "without --fsdp",
  suggest = { "allgather_param", "zero3_impl" } }
opt { name = "zero_reduce", type = "string", metavar = "C", commands = "train plan rl",
  value = "reduce_scatter", kind = "enum", values = { "reduce_scatter", "allreduce" },
  help = "the collective ZeRO 1 and 2 reduce gradients with: reduce_scatter (each rank "
    .. "receives its own shard: Megatron's distributed optimizer, FSDP) or allreduce "
    .. "(DeepSpeed's stage 1 and 2 since early 2024: use_multi_rank_bucket_allreduce, "
    .. "on by default, all-reduces each gradient bucket over data parallel and each "
    .. "rank keeps its slice -- twice the bytes); allreduce needs --zero 1 or 2 "
    .. "without --fsdp.  ZeRO 1 on stack deepspeed all-reduces in every DeepSpeed "
    .. "version (its stage 1 has no reduce-scatter path), so there this chooses stage "
    .. "2's collective only, and reduce_scatter stated there at zero 1 is refused, as "
    .. "either stated at zero 0 (a plain all-reduce) is",
  suggest = { "use_multi_rank_bucket_allreduce", "reduce_scatter", "grad_collective" } }
-- DeepSpeed's ZeRO buckets (engine/memory.h ds_reduce_bucket,
-- ds_prefetch_bucket; deepspeed/runtime/zero/config.py DeepSpeedZeroConfig
-- and deepspeed.ai/docs/config-json give the defaults, 5e8 and 5e7
-- elements).  Stated on the defaults line where they act: the deepspeed
-- stack at ZeRO 2 and up (the reduce bucket), at ZeRO 3 (the prefetch).
-- allgather_bucket_size is not an option: ZeRO 1/2 gather the updated
-- parameters through runtime/utils.py all_gather_dp_groups, which takes
-- "if dist.has_all_gather_into_tensor(): return
-- all_gather_into_tensor_dp_groups(...)" -- one collective a group,
-- the bucket unread -- on every PyTorch with all_gather_into_tensor.
local function ds_bucket_value(name, v, zero_min)
  return function(j)
    if j.stack ~= "deepspeed" or (j.zero ~= nil and j.zero < zero_min) then
      return v, false
    end
    return v, string.format("%s=%s (DeepSpeed's default, zero/config.py)", name,
      (string.format("%g", v):gsub("e%+0*", "e")))
  end
end
-- apex DistributedFusedAdam's buckets (3c19f106, the apex NeMo v1.11.0's
-- Dockerfile checks out): "bucket_size = 1024*1024*bucket_cap_mb /
-- dtype_size", bucket_cap_mb=100, one reduce-scatter and one parameter
-- all-gather a bucket (engine/train.c dp_bucketed).
-- A whole number of elements (kind count): a fraction of an element is
-- no bucket apex builds, and a bucket under one element priced billions
-- of collectives (0.5: a 1.2e6 s step) where it should be refused.
opt { name = "dp_bucket", type = "number", metavar = "N", commands = "train plan",
  kind = "count", range = { 0, 1e15 },
  default = "0 (each stage's once-a-step gradient reduction and parameter gather in one "
    .. "collective)",
  help = "elements in each of the once-a-step data-parallel gradient reductions (reduce-"
    .. "scatters, or all-reduces where the step all-reduces, as DDP at ZeRO 0) and "
    .. "distributed-optimizer parameter all-gathers, one collective a bucket, each paying "
    .. "its latency (apex DistributedFusedAdam, as NeMo 1.x runs it: bucket_cap_mb 100 over "
    .. "the gradient-sync dtype, 26214400 fp32 elements; validate's nanotron profile: one "
    .. "gradient tensor a bucket); 0 prices each stage's in one message",
  suggest = { "bucket_cap_mb", "dp_bucket_size", "bucket_size" } }
-- NeMo's fp8_params under its distributed_fused_adam (engine/train.c
-- phase_post): the Float8Tensor weights' buckets sync in uint8.
opt { name = "fp8_param_gather", type = "flag", commands = "train plan",
  help = "with --precision fp8 and a distributed optimizer: the once-a-step parameter "
    .. "all-gather moves the Transformer Engine linears' weights as fp8, 1 byte an element "
    .. "where bf16 moves 2 (Megatron-LM's --fp8-param-gather, \"perform the param all-gather "
    .. "in fp8\"; NeMo's fp8_params: MegatronDistributedFusedAdam gives the Float8Tensor "
    .. "parameters' buckets \"param_sync_dtype=torch.uint8\"); the embeddings, norms and "
    .. "output layer still gather in 16 bits.  ZeRO 0 has no such gather (no change); ZeRO 3's "
    .. "per-layer gathers are not priced in fp8 (refused)",
  suggest = { "fp8_params", "fp8_param", "fp8_param_sync" } }
opt { name = "reduce_bucket_size", type = "number", metavar = "N", commands = TRAIN4,
  methods = TRAINING, kind = "number", range = { 0, 1e15 },
  value = ds_bucket_value("reduce_bucket_size", 5e8, 2),
  default = "5e8 (DeepSpeed's default) on stack deepspeed",
  help = "DeepSpeed's zero_optimization.reduce_bucket_size, in elements (stack deepspeed, "
    .. "ZeRO 2 and 3): gradients are reduced a bucket at a time, a weight larger than "
    .. "the bucket alone, so a small bucket issues many small (latency-bound) "
    .. "collectives and a large one spans layers; the bucket is a buffer of this many "
    .. "16-bit elements on every GPU (Hugging Face's \"auto\": hidden^2)",
  suggest = { "reduce_bucket", "ds_reduce_bucket", "grad_bucket_size" } }
opt { name = "prefetch_bucket_size", type = "number", metavar = "N", commands = TRAIN4,
  methods = TRAINING, kind = "number", range = { 0, 1e15 },
  value = ds_bucket_value("prefetch_bucket_size", 5e7, 3),
  default = "5e7 (DeepSpeed's default) on stack deepspeed",
  help = "DeepSpeed's stage3_prefetch_bucket_size, in elements (stack deepspeed, ZeRO 3): "
    .. "parameters gathered ahead of the module that needs them; 0 prefetches nothing, "
    .. "so every gather waits in the open, whatever --overlap-param-gather says "
    .. "(Hugging Face's \"auto\": 0.9 hidden^2)",
  suggest = { "stage3_prefetch_bucket_size", "prefetch_bucket", "ds_prefetch_bucket" } }
-- DeepSpeed's "data_types": {"grad_accum_dtype": ...} (deepspeed/runtime/
-- engine.py get_data_types, v0.13.5: "if self._config.grad_accum_dtype is
-- None: if model_dtype == torch.bfloat16 and not self.zero_optimization():
-- grad_accum_dtype = torch.float32 else: grad_accum_dtype = model_dtype"),
-- which stage 3 takes as its gradient_accumulation_dtype: the dtype of
-- grad_partitions_flat_buffer ("dtype=self.gradient_accumulation_dtype",
-- stage3.py), on the host when the optimizer is offloaded.  "model" is
-- DeepSpeed's default under ZeRO (engine/memory.h ds_accum_bytes).
opt { name = "grad_accum_dtype", type = "string", metavar = "D", commands = TRAIN4,
  methods = TRAINING, kind = "enum", values = { "model", "fp32", "bf16", "fp16" },
  value = "model",
  default = "model (DeepSpeed's default under ZeRO: the model's dtype)",
  help = "model|fp32|bf16|fp16: DeepSpeed's data_types.grad_accum_dtype (stack deepspeed, "
    .. "ZeRO 3): the dtype of the gradient partition that sums the micro-batches -- its "
    .. "memory, and with --offload optimizer the bytes it crosses PCIe each way every "
    .. "micro-batch; stage 2 keeps the parameter's dtype whatever it says",
  suggest = { "gradient_accumulation_dtype", "accum_dtype" } }
-- ZeRO-3's gathered-parameter window (deepspeed/runtime/zero/
-- partitioned_param_coordinator.py, v0.14-0.18): fetch_sub_module
-- prefetches "min(self.__max_n_available_params - self.__n_available_params,
-- self.__prefetch_bucket_sz)" more elements at every submodule, so the
-- gathered set grows until stage3_max_live_parameters are live;
-- __params_to_release keeps a parameter reused within
-- stage3_max_reuse_distance elements of the trace.  Defaults 1e9 each
-- (zero/config.py "Field(pp_int(1e9), ge=0, alias=...)").
opt { name = "max_live_parameters", type = "number", metavar = "N", commands = TRAIN4,
  methods = TRAINING, kind = "number", range = { 0, 1e15 },
  value = ds_bucket_value("max_live_parameters", 1e9, 3),
  default = "1e9 (DeepSpeed's default) on stack deepspeed",
  help = "DeepSpeed's stage3_max_live_parameters, in elements (stack deepspeed, ZeRO 3): "
    .. "the prefetch gathers ahead until this many parameters are live, so the GPU "
    .. "holds this many gathered 16-bit parameters (plus the one that crosses the "
    .. "limit) whatever the layer size, up to the whole stage; 0 prefetches nothing, as "
    .. "--prefetch-bucket-size 0 does",
  suggest = { "stage3_max_live_parameters", "max_live_params", "max_live" } }
opt { name = "max_reuse_distance", type = "number", metavar = "N", commands = TRAIN4,
  methods = TRAINING, kind = "number", range = { 0, 1e15 },
  value = ds_bucket_value("max_reuse_distance", 1e9, 3),
  default = "1e9 (DeepSpeed's default) on stack deepspeed",
  help = "DeepSpeed's stage3_max_reuse_distance, in elements (stack deepspeed, ZeRO 3): "
    .. "a gathered parameter used again within this many elements of the module trace "
    .. "is kept, so at the turn from forward to backward the last layers, about half "
    .. "this many parameters, stay gathered",
  suggest = { "stage3_max_reuse_distance", "reuse_distance" } }
-- ZeRO-3 on a model built outside deepspeed.zero.Init (engine/
-- memory_deepspeed.c mem_ds_whole_init): runtime/engine.py
-- _configure_distributed_model moves such a model whole onto the GPU
-- ("self.module.to(self.device)" unless a parameter has a ds_id) before
-- stage 3 partitions it, so the GPU holds the whole 16-bit model once.
-- The default is the model built under zero.Init, as transformers'
-- from_pretrained does when a ZeRO-3 HfDeepSpeedConfig is alive (the
-- Trainer's and Accelerate's DeepSpeed integration).
opt { name = "zero_init", type = "flag", commands = TRAIN4, methods = TRAINING,
  form = "both",
  value = function(j)
    if j.stack ~= "deepspeed" or (j.zero ~= nil and j.zero < 3) then return true, false end
    return true, "zero_init=true (built under deepspeed.zero.Init, as the Hugging Face "
      .. "Trainer builds it)"
  end,
  default = "on (stack deepspeed, ZeRO 3)",
  help = "the model built under deepspeed.zero.Init (stack deepspeed, ZeRO 3), as the "
    .. "Hugging Face Trainer and Accelerate build it; --no-zero-init: built whole (a "
    .. "from_pretrained handed to deepspeed.initialize), which moves it whole onto every "
    .. "GPU before partitioning it, so each GPU holds the whole 16-bit model once",
  suggest = { "zero3_init", "deepspeed_zero_init", "zero_init_flag" } }
opt { name = "causal_flops", type = "flag", commands = "train plan rl",
  help = "model FLOPs count causal attention at half" }
opt { name = "embed_flops", type = "flag", commands = "train plan rl",
  help = "model FLOPs count the untied input embedding's vocab x hidden weights at 6 "
    .. "FLOPs a token, as 6N over every parameter does (nanoGPT's estimate_mfu); "
    .. "default: the lookup is no matmul" }
opt { name = "no_router_flops", type = "flag", commands = "train plan rl",
  help = "model FLOPs leave out the MoE router's hidden x experts gate, as Megatron-LM's "
    .. "and Megatron-Bridge's num_floating_point_operations do; default: counted" }
opt { name = "packed_len", type = "number", metavar = "L", commands = "train plan",
  range = { 0, 1 << 24 },
  default = "0: not packed, attention over --seq",
  help = "each --seq-token sequence packs samples of L tokens that attend only within "
    .. "themselves (variable-length attention over cu_seqlens: NeMo's and Megatron's "
    .. "packed SFT/PEFT, FlashAttention's varlen kernels); attention runs over L keys a "
    .. "token, not --seq; for samples of unequal length give E[L^2] / E[L]; 1 to --seq",
  suggest = { "packing", "sample_len", "packed_sequence", "cu_seqlens" } }
opt { name = "pad_mask", type = "flag", commands = "train plan",
  help = "each micro-batch padded to its longest sample and the padding mask handed to "
    .. "transformers' FlashAttention-2 path (kernels eager, flash): per layer q, k and v "
    .. "gathered into the varlen layout and the output scattered back (_upad_input, "
    .. "pad_input), forward 5 q + 4 kv elements moved and 11 launches, backward 5 q + 6 kv",
  suggest = { "padding_mask", "attention_mask", "padded", "upad" } }
opt { name = "pad_share", type = "number", metavar = "P", commands = "train plan",
  range = { 0, 1 },
  default = "0: no padding",
  help = "the share of each micro-batch's tokens that are padding of one pad id (a "
    .. "collator padding every row to max_length): a MoE router sends them all to the same "
    .. "top-k experts, so the Hugging Face modules' expert loop (kernels eager), which waits "
    .. "for each expert's row count, runs K experts long and the rest short of GPU work; "
    .. "0 to 1; with a MoE model, ep 1 only (spread over ranks the pads' experts load a "
    .. "few of them, not priced)",
  suggest = { "padding", "pad_fraction", "max_length", "padding_share" } }
opt { name = "unfused_loss", type = "flag", commands = "train plan",
  help = "the loss as Megatron-Core's unfused vocab-parallel cross-entropy "
    .. "(cross_entropy_loss_fusion off, its default at core_r0.8.0): fp32 logits, "
    .. "max, subtract, exp, sum and divide, A + 36 B a logit forward and A + 12 "
    .. "back where a fused loss moves A + 8 and A + 4",
  suggest = { "cross_entropy_loss_fusion", "loss_fusion", "unfused_ce" } }
opt { name = "mcore_loss", type = "flag", commands = "train plan",
  help = "the loss is Megatron-Core's vocab-parallel cross-entropy: with unfused_loss "
    .. "its op-by-op one, without it the native fused one (cross_entropy_loss_fusion "
    .. "on, cross_entropy_fusion_impl 'native', fused_cross_entropy.py: four compiled "
    .. "graphs, each writing a T x V/tp fp32 tensor), A + 20 B a logit forward and "
    .. "A + 8 back where a one-kernel fused loss moves A + 8 and A + 4",
  suggest = { "cross_entropy_fusion_impl", "native_loss", "megatron_loss" } }
opt { name = "emb_matmul", type = "flag", commands = "train plan",
  help = "the token embedding looked up as a one-hot matmul, not a gather (Praxis' "
    .. "lookup_style 'matmul', which Paxml's GPT configs set): the T x V/tp one-hot "
    .. "written in the 16-bit type and multiplied by the table, 2 T V h / tp FLOPs forward, "
    .. "and the table's gradient a GEMM of as many back, where a gather moves 2 T h A",
  suggest = { "lookup_style", "one_hot_embedding", "embedding_matmul", "matmul_lookup" } }
opt { name = "pp_microbatches", type = "int", metavar = "N", commands = "train plan",
  kind = "count", range = { 0, 1048576 }, default = "0 (the step's micro-batches in one "
    .. "schedule call)",
  -- NeMo AutoModel v0.5.0 (d02f49cb3) nemo_automodel/recipes/llm/
  -- benchmark.py run_benchmark: "ga_steps = global_batch_size //
  -- (local_batch_size * dp_size)", then "for ga_step_idx in
  -- range(ga_steps):" ... "self._forward_backward_step(", each one
  -- "self.pp.info.schedule.step(" (recipes/llm/train_ft.py) over
  -- local_batch_size / pp_microbatch_size micro-batches.
  help = "micro-batches each pipeline schedule call runs (torch.distributed.pipelining's "
    .. "n_microbatches; NeMo AutoModel's local_batch_size / pp_microbatch_size, its "
    .. "gradient-accumulation loop calling schedule.step once a local batch): the step's "
    .. "micro-batches run in (global batch / (dp x micro_batch)) / N calls, each filling "
    .. "and draining the pipeline, so the bubble comes once a call; it must divide the "
    .. "step's micro-batches",
  suggest = { "n_microbatches", "local_batch_size", "pp_n_microbatches", "schedule_microbatches" } }
opt { name = "metric_losses", type = "int", metavar = "N", commands = "train plan",
  kind = "count", range = { 0, 8 }, default = "0",
  -- Composer 0.16 trainer.py _train_microbatch: "# Use microbatch outputs
  -- to update training metrics" after each backward; llm-foundry's MPT
  -- has LanguageCrossEntropy and LanguagePerplexity (use_train_metrics
  -- True by default), each a torch.nn.CrossEntropyLoss(reduction='sum').
  help = "cross-entropies over the logits after each micro-batch's backward, without "
    .. "gradient (Composer's train metrics: llm-foundry's MPT updates LanguageCrossEntropy "
    .. "and LanguagePerplexity, 2): each autocasts the logits to fp32 and runs "
    .. "log_softmax, A + 12 B a logit (8 B where the logits are fp32 already)",
  suggest = { "train_metrics", "use_train_metrics", "metric_loss" } }
opt { name = "eager_loss", type = "flag", commands = "train plan",
  help = "the loss op by op outside the compiled layers (kernels fused): torchtitan "
    .. "compiles each TransformerBlock alone and from December 2024 to April 2025 "
    .. "left its F.cross_entropy(logits.float()) uncompiled: the fp32 cast, log-softmax "
    .. "and nll, A + 12 B a logit forward and A + 20 back where a fused loss moves A + 8 "
    .. "and A + 4",
  suggest = { "uncompiled_loss", "compile_loss", "loss_eager" } }
opt { name = "kv_repeat", type = "flag", commands = "fit train plan", methods = TRAINING,
  help = "K and V copied to every query head before the attention kernel (torchtitan's "
    .. "Llama: repeat_kv, an expand then reshape, ahead of F.scaled_dot_product_attention "
    .. "without enable_gqa): the copy forward, the attention's query-wide dK and dV and "
    .. "their sum over the repeats backward, and K and V kept query-wide for the "
    .. "attention's backward; with fewer KV heads than query heads, fused or unfused attention; "
    .. "under ulysses the all-to-alls then carry K and V query wide (XTuner's Llama dispatch "
    .. "repeats them before its sequence-parallel wrapper)",
  suggest = { "repeat_kv", "gqa_repeat", "expand_kv" } }
opt { name = "async_tp_allreduce", type = "flag", commands = "train plan", form = "both",
  default = "on with stack megatron and kernels fused (off on Intel's Gaudi: Intel TE), "
    .. "off on the other stacks",
  -- Megatron-LM since September 2021 (16c90445; '--no-async-tensor-model-
  -- parallel-allreduce' turns it off) and Megatron-Core's linears: "if
  -- ctx.allreduce_dgrad: # Asynchronous all-reduce ... async_op=True"
  -- before the wgrad GEMM (megatron/core/tensor_parallel/layers.py);
  -- Transformer Engine's column-parallel modules without SP: "elif
  -- ctx.parallel_mode == "column" and ctx.tensor_parallel: dgrad, handle =
  -- allreduce(dgrad, ctx.tp_group, async_op=True)" under "# Overlap
  -- dgrad-RS/AR with wgrad" (module/linear.py, layernorm_linear.py, v1.9;
  -- v2.x "dgrad_work = allreduce(...)", waited after the wgrad GEMM).
  -- Megatron-LM before it (the SC21 scripts' commit) is the validation
  -- profile's to say.  Intel's Gaudi fork (HabanaAI/Megatron-LM) builds
  -- its column-parallel linears on intel_transformer_engine's te.Linear
  -- (megatron/core/transformer/custom_layers/intel_transformer_engine.py
  -- IntelTEColumnParallelLinear), a package whose backward is not
  -- published: its all-reduce stays on the path, and the line says so.
  value = function(j)
    if j.stack ~= "megatron" or j.eager then return false, false end
    if j.vendor == "Intel" then
      return false, (j.tp or 1) > 1 and "async_tp_allreduce=false (Intel TE, "
        .. "intel_transformer_engine: its backward's all-reduce order is not published, "
        .. "kept on the path)" or false
    end
    return true, false
  end,
  help = "Megatron's asynchronous TP all-reduce (Megatron-LM September 2021 on, "
    .. "Megatron-Core and Transformer Engine's linears; --no-async-tensor-model-parallel-"
    .. "allreduce turns it off): each column-parallel "
    .. "linear's input-gradient collective runs under its weight-gradient GEMM in the "
    .. "backward -- both of a layer's backward all-reduces without --sp; with it the "
    .. "reduce-scatters, and the all-gathers of the linears' kept input shards under "
    .. "their input-gradient GEMMs (Megatron's SP runs this way whatever the flag, "
    .. "and --sp on the megatron stack does without it: Transformer Engine's linears; "
    .. "with --tp-overlap every one of them runs under the backward's GEMMs); "
    .. "with tp > 1",
  suggest = { "async_tensor_model_parallel_allreduce", "async_allreduce", "async_tp" } }
opt { name = "tp_input_per_linear", type = "flag", commands = "train plan",
  help = "with sp, each column-parallel projection of its own (q, k, v and a gated MLP's "
    .. "gate and up: split_proj) takes PyTorch's ColwiseParallel(input_layouts=Shard(1)) "
    .. "rather than one PrepareModuleInput a block (KempnerForge's TP plan; torchtitan "
    .. "gathers once): each reduce-scatters its own input gradient in the backward, 2 more "
    .. "for q, k and v and 1 for gate and up, and with kernels eager each gathers its own "
    .. "input in the forward too (compiled, the identical gathers are one); with tp > 1; "
    .. "needs --sp, and PyTorch's linears (not stack megatron's compiled Transformer Engine "
    .. "ones)",
  suggest = { "colwise_input", "per_linear_gather", "tp_per_proj" } }
opt { name = "cp_rotate", type = "string", metavar = "R", commands = "fit train plan",
  value = "p2p", kind = "enum", values = { "p2p", "allgather", "alltoall" },
  help = "how the context-parallel ring moves K and V: p2p (Transformer Engine's ring, "
    .. "Megatron-Core's CP: each step sends the K/V chunk at its kv heads to the next rank "
    .. "beside one step's attention) or PyTorch's context_parallel, torchtitan's "
    .. "context_parallel_rotate_method: allgather (one all-gather of the chunks beside the "
    .. "first step's attention only) or alltoall (a shift a step); both on the K and V "
    .. "SDPA is handed, every query head wide in torchtitan's Llama (repeat_kv), and both "
    .. "send the K/V gradients on each step in fp32, the last shift beside no kernel, and "
    .. "merge the steps' outputs in fp32; that overlap is eager PyTorch's: compiled (kernels "
    .. "fused) each collective is waited for where it is issued, none hidden; memory: PyTorch's ring holds its rotater's K/V "
    .. "chunks (allgather: every rank's) and three fp32 copies of the K/V gradients while a "
    .. "layer's attention backward runs; with cp > 1",
  suggest = { "context_parallel_rotate_method", "rotate_method", "cp_comm_type" } }
opt { name = "split_proj", type = "flag", commands = "train plan rl", form = "both",
  default = "the model's split_proj on stacks hf and deepspeed, off on megatron",
  -- The PyTorch modules a stack runs are the model's own (Hugging Face
  -- transformers' modeling file, torchtitan's model.py): whether they keep
  -- the projections apart is the model's declaration (catalog FORMAT.md
  -- model.split_proj, validation/SCHEMA.md).  Megatron-Core builds its own
  -- modules, fused whatever the checkpoint: "self.linear_qkv =
  -- build_module(submodules.linear_qkv, ..., self.query_projection_size +
  -- 2 * self.kv_projection_size" (megatron/core/transformer/attention.py)
  -- and "if self.config.gated_linear_unit: ffn_hidden_size *= 2" for
  -- linear_fc1 (megatron/core/transformer/mlp.py).
  value = function(j)
    local sp = j.stack ~= "megatron" and j.model and j.model.split_proj or nil
    if sp == nil or sp == "none" then return false, false end
    local own = tostring(j.model.id or j.model.name or "the model") .. "'s own modules: "
      .. (sp == "qkv" and "q, k, v" or sp == "mlp" and "gate, up" or "q, k, v and gate, up")
      .. " linears of their own"
    -- The line names the option's own value: the model's "both" is
    -- split_proj = true (--split-proj), which prices the same GEMMs
    -- (tests/lua/split_proj_model.t); it read "split_proj=both", a value
    -- the option refuses ("split_proj must be true or false").  The
    -- model's "qkv" or "mlp" has no option value (true splits both), so
    -- it is said in words, naming no value to copy.
    if sp == "both" then return sp, "split_proj=true (" .. own .. ")" end
    return sp, "split proj: the model's " .. sp .. " (" .. own .. ")"
  end,
  help = "q, k and v, and the gated MLP's gate and up, are linears of their own "
    .. "(torchtitan's Llama: wq, wk, wv, w1, w3; Hugging Face's Llama, Mistral, Qwen2, Qwen3: "
    .. "q_proj, k_proj, v_proj, gate_proj, up_proj), each its own GEMMs forward, dgrad and "
    .. "wgrad at its narrower width, the input's gradients summed after; off: one GEMM each "
    .. "(fused qkv and gate-up weights, Megatron-Core's)",
  suggest = { "separate_qkv", "unfused_qkv", "split_projections" } }
opt { name = "unfused_permute", type = "flag", commands = "train plan rl",
  help = "the alltoall dispatcher's token permutation as Megatron-Core's PyTorch ops "
    .. "(moe_permute_fusion off, NeMo RL's grpo_math_1B.yaml from v0.4): masked_select, "
    .. "index_select, split and cat, zeros and scatter_add_ -- 8 more host launches a MoE "
    .. "layer's forward than the fused kernels and 3 us - u more rows moved each way (us: "
    .. "the tokens' expert copies, u: the tokens), the forward's scatter_add_ and the "
    .. "backward's index_add_ of the us rows adding with atomics at 11.1x their rows' "
    .. "streaming time (DLBlas PR #66); with expert parallelism.  With moe_dispatcher "
    .. "allgather: Megatron-Core's all-gather dispatcher before its fused permute "
    .. "(core_v0.6.0), torch.gather over the token maps expanded to the hidden width, "
    .. "scatter, the scores' multiply and scatter_add, three of its passes atomic (the "
    .. "forward's scatter_add, the backward's two gather gradients); any expert parallelism",
  suggest = { "moe_permute_fusion", "unfused_moe_permute", "no_permute_fusion" } }
opt { name = "legacy_permute", type = "flag", commands = "train plan",
  help = "the alltoall dispatcher's fused permute as Transformer Engine ran it before its "
    .. "PR #1927 (TE 2.5 and earlier): each token's program loops over every expert of the "
    .. "model to find its top-k rows: ceil(hidden / 1024) x experts dependent loads of its "
    .. "row-id map a token, each an L2 hit, so the token permute and unpermute (and their "
    .. "backward) take the longer of that loop and their bytes (7.5x the later kernel at "
    .. "DeepSeek-V3's 256 experts, top-8, on a GB200 GPU, against the guide's \"up to a 10x "
    .. "unit speedup\"; 1.5x for Qwen3-235B's 128, top-8, on an H100); with expert parallelism "
    .. "(ep > 1, where the permute is priced; refused at ep 1)",
  suggest = { "te_permute_legacy", "old_permute", "permute_v1" } }
opt { name = "te_mxfp8_grouped", type = "string", metavar = "V", commands = "train plan",
  kind = "enum", values = { "fused", "bulk", "per_tensor" },
  default = "fused (Transformer Engine from PR #2019, Aug 2025)",
  help = "Transformer Engine's MXFP8 grouped linear (the experts' GEMMs under "
    .. "fp8_scaling block): fused (from TE PR #2019: one buffer per copy for every "
    .. "expert's cast, one swizzle kernel per operand list), bulk (PR #1934 to #2019: the "
    .. "buffers zero-filled, data and scales, and each GEMM swizzling its two operands' "
    .. "scales, an allocation and a launch each) or per_tensor (before PR #1934: each "
    .. "expert's cast allocating its four tensors, the two scales zero-filled, and the "
    .. "per-GEMM swizzles); priced on the host from an at::empty's 1.46 us and a launch's "
    .. "2.35 us (x86, scaled with the host) and on the GPU per small kernel and pass",
  suggest = { "mxfp8_grouped", "te_grouped_quant", "mxfp8_swizzle", "mxfp8_alloc" } }
opt { name = "unfused_act", type = "flag", commands = "train plan rl",
  help = "the MLP's gated activation as Megatron-Core's PyTorch ops (bias_activation_fusion "
    .. "off: its TransformerConfig default, kept by Megatron-Bridge's and NeMo 2.0's Qwen3 "
    .. "configs): silu and the product as two kernels, 10 and 18 B a 16-bit ffn element "
    .. "forward and back where the fused kernel moves 6 and 9; with fc1's bias (model "
    .. "linear_bias) its add before them and its gradient's sum after; in the experts the router's "
    .. "probabilities then multiply the activation in their dtype (moe_router_dtype) and "
    .. "the product is cast back",
  suggest = { "bias_activation_fusion", "no_bias_activation_fusion", "unfused_swiglu" } }
opt { name = "zero_gather_copies", type = "flag", commands = "train plan rl",
  help = "ZeRO-1's parameter all-gather as nanotron's optimizer runs it (optim/zero.py "
    .. "_all_gather_params): after the blocking gather, every parameter's shard of every DP "
    .. "rank is copied back by its own copy_ from Python, dp x (parameter tensors + 1) host "
    .. "launches at the bare op's 7.1 us (under torch.no_grad); the step's tail is the longer "
    .. "of that loop and the gather (stack profile nanotron sets it at ZeRO 1; dense decoder "
    .. "layers only; refused at "
    .. "ZeRO 0, where nothing is gathered, and at ZeRO 2 and 3, which nanotron's optimizer "
    .. "does not run; a search needs stage 1 in its zero list)" }
opt { name = "unfused_rope", type = "flag", commands = "train plan rl",
  help = "RoPE as Megatron-Core's PyTorch ops (apply_rope_fusion off, as NeMo RL's DeepSeek-V3 "
    .. "recipes set it): on packed sequences (packed_len, or gp.rl's packing) each of the "
    .. "two calls a layer waits twice for the GPU on the host (.tolist() of the sequence "
    .. "lengths) and then launches its 16 small kernels one by one while the GPU idles; "
    .. "on stack deepspeed with kernels fused, Megatron-DeepSpeed's apply_rotary_pos_emb, "
    .. "which has no fused path (five kernels on q and on k each way); stack megatron or "
    .. "deepspeed only",
  suggest = { "apply_rope_fusion", "no_rope_fusion", "rope_fusion" } }
opt { name = "rope_seq_loop", type = "flag", commands = "train plan rl",
  help = "with unfused_rope on packed sequences: Megatron-LM's thd RoPE before 6fe43ce281 "
    .. "(2025-10-06; NeMo RL v0.3.0's and v0.4.0's pins), which waits once and then runs "
    .. "the whole unfused pass (cos, sin, the rope's kernels, the cat: 12 launches) once "
    .. "per sequence of the micro-batch (seq x batch / packed_len of them), and cats them",
  suggest = { "rope_thd_loop", "per_sequence_rope" } }
-- The routed experts as Transformer Engine's fused grouped MLP
-- (engine/train_layer.c gemm_costs, FUSED_MLP_FWD_B).
opt { name = "fused_grouped_mlp", type = "flag", commands = "train plan rl",
  help = "the MoE experts as Transformer Engine's fused grouped MLP (Megatron-Core's "
    .. "use_transformer_engine_op_fuser with NVTE_CUTEDSL_FUSED_GROUPED_MLP=1, "
    .. "Megatron-Bridge's cutedsl_fused_grouped_mlp; MXFP8 on compute capability 10 "
    .. "Blackwell, expert TP 1): fc1, the gated activation with its clamp and the "
    .. "router's weights, fc1's and fc2's biases and the casts between them in cuDNN's "
    .. "grouped GEMM epilogues, one launch for the local experts -- no separate "
    .. "activation, clamp, per-expert bias loop, fc2 input or fc1 dY cast",
  notes = { plan = "the search skips the layouts whose experts split over tp > 1 (give "
    .. "--etp tp,1 to search them folded)" },
  suggest = { "use_transformer_engine_op_fuser", "cutedsl_fused_grouped_mlp",
              "fused_mlp", "op_fuser" } }
-- The fused attention in FP8 (engine/train_layer.c attn_layers_time).
opt { name = "fp8_attention", type = "flag", commands = "train plan rl",
  help = "the fused attention in FP8 (Transformer Engine's fp8_dpa: Megatron's "
    .. "fp8_dot_product_attention under an fp8 recipe; cuDNN's FP8 or MXFP8 kernel). "
    .. "Blackwell: priced as the 16-bit kernel, except that a sliding-window layer's "
    .. "backward walks every key tile up to the diagonal, as a full causal layer's does. "
    .. "Hopper (head dim 128, no window): at cuDNN's measured FP8 time over the 16-bit "
    .. "kernel's, forward 0.66-0.69, backward 0.94 at 2048 queries a call to 1.57 at "
    .. "32768 (its causal backward skips less of the masked triangle)",
  suggest = { "fp8_dot_product_attention", "fp8_dpa", "fp8_attn" } }
-- The dense MLP's down projection left in bf16 by an fp8 recipe
-- (engine/train_layer.c gemm_costs).
opt { name = "mlp_down_bf16", type = "flag", commands = "train plan rl",
  help = "under precision fp8, the dense MLP's down projection (fc2, row-parallel) "
    .. "stays in bf16: its forward, dgrad and wgrad GEMMs at the 16-bit rate, its "
    .. "weight read in 16 bits, no fp8 casts (HabanaAI Megatron-LM's --fp8-coverage "
    .. "mlp_row_parallel=False, the default of its Llama recipe)",
  suggest = { "fp8_coverage", "mlp_row_parallel", "fc2_bf16", "down_bf16" } }
opt { name = "moe_router_dtype", type = "string", metavar = "D", commands = "train plan rl",
  kind = "enum", values = { "fp32", "fp64" }, default = "the activations' dtype",
  help = "fp32|fp64: the MoE router's dtype (Megatron-Core's moe_router_dtype; NeMo RL's "
    .. "GRPO configs and verl's DeepSeek-V3 set fp64): with unfused_act the experts' "
    .. "activation is multiplied by the probabilities in it, the product written in it and "
    .. "cast back (the fused kernel casts in registers); fp64 also runs the router's gating "
    .. "GEMM and its two gradients as torch.mm in float64, at the card's FP64 rate, beside "
    .. "the casts (Transformer Engine's GEMM takes only the other dtypes)",
  suggest = { "router_dtype" } }
opt { name = "ckpt_outside_fsdp", type = "flag", commands = "train plan",
  help = "the activation checkpoint wraps each FSDP unit from outside (Hugging Face's "
    .. "gradient_checkpointing_enable on FSDP1-wrapped decoder layers): the recompute "
    .. "forward gathers the unit and frees it, and its backward gathers it again -- "
    .. "three gathers a micro-batch, not two; needs fsdp full_shard and recompute full",
  suggest = { "checkpoint_outside", "ac_outside_fsdp" } }
-- PyTorch's non-reentrant checkpoint (engine/train_layer.c
-- early_stop_tail: torch 2.1's set_checkpoint_early_stop default).
opt { name = "ckpt_early_stop", type = "flag", commands = "train plan",
  help = "full recompute is PyTorch's non-reentrant torch.utils.checkpoint (2.1 and later: "
    .. "checkpoint_wrapper with CheckpointImpl.NO_REENTRANT, use_reentrant=False), which "
    .. "stops re-running a block's forward once every tensor its backward saved is back: "
    .. "the MLP's down projection and the closing residual add are not recomputed (dense "
    .. "blocks without dropout, LoRA or fp8 linears); needs recompute full",
  suggest = { "early_stop", "checkpoint_early_stop", "non_reentrant" } }
-- torchtitan's per-op SAC save list (engine/memory_act.c act_op_saved):
-- until b39377f9f (2025-12-01) it held the flash and efficient SDPA ops,
-- not cuDNN's, which its SDPA wrapper runs first on sm100.
opt { name = "sac_attn_recompute", type = "flag", commands = "fit train plan", methods = TRAINING,
  help = "recompute op's save list lacks the fused attention kernel that runs, so its "
    .. "forward re-runs in the backward and its output is not kept (torchtitan before "
    .. "December 2025 on sm100: its _save_list held SDPA's flash and efficient ops, and "
    .. "its SDPA wrapper puts cuDNN's first there); needs recompute op and fused attention",
  suggest = { "sac_recompute_attention", "recompute_sdpa", "op_sac_attention" } }
-- PyTorch FSDP's root unit left gathered (engine/memory_train.c
-- stage_states): fully_shard before torch 2.8 un-set the root's
-- reshard_after_forward whatever it was given ("For the root, do not
-- reshard after forward since for training, the parameters would be freed
-- and all-gathered immediately"; pytorch/pytorch#154704 and #155319, June
-- 2025, respect an explicit reshard_after_forward=True from 2.8 on).
opt { name = "fsdp_root_gathered", type = "flag", commands = "fit train plan", methods = TRAINING,
  help = "FSDP's root unit -- the embedding, final norm and output layer where only the "
    .. "blocks are wrapped on their own -- stays gathered (16-bit) from its forward through "
    .. "the backward (torchtitan's fully_shard(model) under torch before 2.8, whose root "
    .. "ignores reshard_after_forward=True); stack hf only, and it moves nothing below full_shard "
    .. "(zero 3)",
  suggest = { "root_unsharded", "fsdp_root_unsharded", "keep_root_gathered" } }
-- Which PyTorch FSDP: Hugging Face Accelerate's FSDP plugin builds
-- FSDP1 (FullyShardedDataParallel) unless its config gives
-- fsdp_version: 2 (FullyShardedDataParallelPlugin, Accelerate v1.14
-- docs: "fsdp_version (`int`, defaults to `1`) : The version of FSDP to
-- use. Defaults to 1."); HF Trainer runs Accelerate's plugin (its
-- fsdp_config "fsdp_version ... defaults to `1`"; newer transformers
-- document "version ... defaults to `2`": such a run gives 2); PyTorch's
-- torch.distributed.fsdp.FullyShardedDataParallel wrapper is FSDP1;
-- torchtitan and NeMo AutoModel call fully_shard (FSDP2).  What each
-- does beside its collectives: engine/train_stage.c fsdp_copies.
opt { name = "fsdp_version", type = "int", metavar = "N", commands = TRAIN4,
  methods = TRAINING,
  range = { 1, 2 },
  default = "1 on stack hf with fsdp (Accelerate's FSDP plugin, HF Trainer and PyTorch's "
    .. "FullyShardedDataParallel are FSDP1; torchtitan, NeMo AutoModel: give 2)",
  value = function(j)
    if j.stack ~= "hf" or not j.fsdp then return 0, false end
    return 1, "fsdp_version=1 (FSDP1: Accelerate's FSDP plugin without fsdp_version, HF "
      .. "Trainer, PyTorch's FullyShardedDataParallel)"
  end,
  help = "PyTorch FSDP's implementation with --fsdp on stack hf: 1 (FullyShardedDataParallel: "
    .. "flat parameters; each micro-batch's unsharded gradient divided in place before its "
    .. "reduce-scatter, on the reduction's stream) or 2 (fully_shard: each gather copied out "
    .. "into per-parameter tensors and the gradients copied into the reduce-scatter input, "
    .. "on the compute stream)",
  suggest = { "fsdp2", "fully_shard", "fsdp_v2", "version" } }
-- Its values are the kernels the catalog's attention measurements name
-- (gpuplan.roofline's list, which the case reader types them by too).
local ATTENTION_KERNELS = require("gpuplan.roofline").attention_kernels
opt { name = "attn_kernel", type = "string", metavar = "K", commands = "train plan rl",
  default = "the arch's; fa2 for eager kernels where the arch's is cudnn and the arch has a "
    .. "fa2 measurement (Hopper: transformers' SDPA tries cuDNN's backend last)",
  kind = "enum", values = ATTENTION_KERNELS,
  help = table.concat(ATTENTION_KERNELS, "|") .. " (efficient: PyTorch SDPA's memory-efficient "
    .. "backend, what SDPA runs under a padding mask: every tile of the square; ck: Transformer "
    .. "Engine's CK / aiter fused attention on ROCm; flex: PyTorch's FlexAttention, "
    .. "torch.compile's Triton templates)",
  suggest = { "attention", "attention_backend", "attn_implementation" } }
-- The cuDNN release the run's software carries (its container's, as the
-- NGC release notes list it, or the one its image installs): cuDNN's fused
-- attention runs that release's published rate where the arch times it
-- apart (catalog/archs.lua, the hopper arch's cudnn releases).
opt { name = "cudnn", type = "string", metavar = "X.Y", commands = "train plan rl",
  default = "none: cuDNN's attention at the arch's reference release (Hopper: 9.1, the "
    .. "FlashAttention-3 paper's rate)",
  help = "the cuDNN release the run used (X.Y or X.Y.Z, e.g. 9.11): cuDNN's fused attention "
    .. "runs the published rate of the newest release the catalog times at or before it "
    .. "(Hopper: 9.9, 9.19); other kernels are unchanged",
  suggest = { "cudnn_version", "cudnn_release" } }
-- The GPUs' board power limit (nvidia-smi -pl): below the TDP the SM
-- clock falls until the board's draw fits, and the tensor-bound work
-- with it (roofline.lua clock_at, the arch's power_curve).
opt { name = "power_limit", type = "string", metavar = "W", commands = "train plan rl infer",
  kind = "power", range = { 1, 1e5 },
  default = "the card's default limit (catalog power_limit), else its TDP",
  help = "the GPUs' board power limit in W, or with its unit (300W, 0.7kW) (nvidia-smi -pl; at most the TDP): below the TDP "
    .. "the SM clock falls until the board's draw fits, slowing GEMMs and attention with it; "
    .. "memory-bound kernels and communication keep their rate",
  suggest = { "power_cap", "power", "tdp", "pl" } }
-- The SM clock the GPUs held through the run, where a trace states it
-- (DCGM's or nvidia-smi's mean): the tensor-bound work (GEMMs, fused
-- attention) is priced at it instead of the clock the arch's sustained
-- factor stands for (roofline.lua clock_at_mhz; hopper: 1500 MHz).
opt { name = "sm_clock", type = "number", metavar = "MHZ", commands = "train plan",
  range = { 100, 5000 },
  default = "the arch's sustained clock (achievable.sustained.clock_mhz: Hopper's 700 W parts "
    .. "1500 MHz), or the one a power_limit leaves",
  help = "the SM clock in MHz the GPUs held through the run, as a DCGM or nvidia-smi trace "
    .. "states it: GEMMs and fused attention are priced at it (scaled from the arch's "
    .. "sustained clock); memory-bound kernels and communication keep their rate; not with "
    .. "power_limit",
  suggest = { "clock", "gpu_clock", "sm_clock_mhz" } }
-- The deepspeed stack runs the Hugging Face modules unless told otherwise:
-- DeepSpeed's ZeRO engine is mostly driven by transformers' Trainer,
-- Accelerate or TRL on transformers' models ("DeepSpeed is integrated with
-- the Trainer class and most of the setup is automatically taken care of
-- for you", huggingface.co/docs/transformers main_classes/deepspeed; TRL's
-- DeepSpeed integration: "No modifications to your training script are
-- required"), whose modules are eager PyTorch ops; Megatron-DeepSpeed's
-- fused modules are the exception, given as kernels fused.
-- gp.memory and fit take it too: what autograd keeps follows the modules
-- that run (eager SwiGLU's silu(gate), the eager softmax's fp32 copy, the
-- loss's logit bytes; lua/gpuplan/memory.lua).
-- liger is what AutoLigerKernelForCausalLM / apply_liger_kernel_to_*
-- run: the Hugging Face modules with Liger-Kernel's Triton RMSNorm, RoPE
-- and SwiGLU in place of theirs (engine/train_layer.c liger_elem), the
-- rest eager; its fused linear cross-entropy is fused_linear_ce.
opt { name = "kernels", type = "string", metavar = "K", commands = TRAIN4, methods = TRAINING,
  default = "eager on the hf and deepspeed stacks (transformers' modules, as the Trainer, "
    .. "Accelerate and TRL hand them to DeepSpeed), fused on megatron", kind = "enum",
  values = { "eager", "fused", "liger" },
  value = function(j)
    if j.stack == "deepspeed" then
      return "eager", "kernels=eager (stack deepspeed: transformers' modules under the "
        .. "Trainer / Accelerate; fused for Megatron-DeepSpeed)"
    end
    return j.stack == "hf" and "eager" or "fused"
  end,
  help = "eager (Hugging Face modules: one PyTorch kernel per tensor op) | fused (one per "
    .. "operator: Megatron / Transformer Engine, torch.compile) | liger (Hugging Face modules "
    .. "with Liger-Kernel's RMSNorm, RoPE and SwiGLU, the rest eager)",
  suggest = { "torch_compile", "compile", "fused_kernels" } }
opt { name = "grad_reduce", type = "string", metavar = "D", commands = TRAIN4,
  default = "the recipe's gradient dtype", kind = "enum", values = { "fp32", "bf16", "fp16" },
  help = "fp32|bf16|fp16: dtype of the DP gradient reduction (stack megatron: also of "
    .. "its main-grad buffer, grad_reduce_in_fp32)",
  suggest = { "grad_reduce_dtype", "reduce_dtype" } }
opt { name = "master_copy", type = "flag", commands = "train plan rl", form = "both",
  default = "on with stack megatron and kernels fused, else off",
  -- Megatron's optimizers step the fp32 master, then copy it to the
  -- 16-bit weights: DistributedOptimizer._copy_main_params_to_model_params
  -- "shard_model_param.data.copy_(shard_main_param)" (megatron/core/
  -- optimizer/distrib_optimizer.py), Float16OptimizerWithFloat16Params
  -- "_multi_tensor_copy_this_to_that(this=main_data, that=model_data)"
  -- (megatron/core/optimizer/optimizer.py).  apex's DistributedFusedAdam
  -- and Transformer Engine's precision-aware FusedAdam write the weights
  -- in the Adam kernel (engine/train_prep.c opt_bytes_of).
  value = function(j) return j.stack == "megatron" and not j.eager, false end,
  help = "the optimizer copies its fp32 master to the 16-bit weights in a pass of its own "
    .. "after Adam (Megatron's _copy_main_params_to_model_params: the master read again, 4 B "
    .. "a parameter); off, the Adam kernel writes them (apex DistributedFusedAdam, Transformer "
    .. "Engine's precision-aware FusedAdam); needs stack megatron with kernels fused",
  suggest = { "copy_main_params", "main_param_copy", "precision_aware_optimizer" } }
opt { name = "gradient_accumulation_fusion", type = "flag", commands = "train plan rl",
  form = "both",
  default = "on with stack megatron and kernels fused, off with fsdp there (Megatron-FSDP) "
    .. "and on the other stacks",
  -- Megatron-LM: '--no-gradient-accumulation-fusion', action='store_false',
  -- dest='gradient_accumulation_fusion' (megatron/training/arguments.py):
  -- on by default; Megatron-FSDP's user guide (docs/discussions/
  -- megatron-fsdp-user-guide) lists "--no-gradient-accumulation-fusion"
  -- among its "Required Configurations", and Megatron-Bridge's
  -- performance configs set "cfg.model.gradient_accumulation_fusion =
  -- False" under use_megatron_fsdp.  Only Megatron-Core's Transformer
  -- Engine modules have the fused path: off on the other stacks.
  value = function(j)
    if j.stack ~= "megatron" or j.eager then return false, false end
    if j.fsdp then
      return false, "gradient_accumulation_fusion=false (Megatron-FSDP: "
        .. "--no-gradient-accumulation-fusion is one of its required settings)"
    end
    return true, false
  end,
  help = "the wgrad GEMMs accumulate into Megatron-Core's main grad in its dtype (Transformer "
    .. "Engine's fuse_wgrad_accumulation: read and write it, 2 x its bytes an element); off, "
    .. "autograd writes a 16-bit .grad that the DDP hook adds into it (8 B); needs stack "
    .. "megatron with kernels fused",
  suggest = { "grad_acc_fusion", "fuse_wgrad_accumulation", "wgrad_fusion" } }

---------------------------------------------------------------------------
section "search"

opt { name = "tp_max", type = "int", metavar = "N", commands = "plan", default = "8",
  help = "the largest TP to try",
  suggest = { "tp", "max_tp" } }
opt { name = "pp_max", type = "int", metavar = "N", commands = "plan", default = "8",
  help = "the most pipeline stages to try",
  suggest = { "pp", "max_pp" } }
opt { name = "cp_max", type = "int", metavar = "N", commands = "plan", default = "1",
  help = "the largest CP to try",
  suggest = { "cp", "max_cp" } }
-- DeepSpeed-Ulysses groups (the ulysses option of train and rl) searched
-- beside CP: a layout's sequence split is a CP ring or a Ulysses group
-- (engine/sweep.c ok_ulysses: the heads rule, at most seq tokens).
opt { name = "ulysses_max", type = "int", metavar = "N", commands = "plan", default = "1",
  help = "the largest DeepSpeed-Ulysses group to try (each a layout's sequence split in "
    .. "place of CP: its degrees divide the attention heads, as --ulysses's; none on "
    .. "--stack megatron, on --stack hf only without pipeline stages or TP, on --stack "
    .. "deepspeed only without pipeline stages)",
  suggest = { "ulysses", "max_ulysses", "ulysses_sp_max" } }
opt { name = "ep_max", type = "int", metavar = "N", commands = "plan", default = "1",
  help = "the largest EP to try",
  suggest = { "ep", "max_ep" } }
opt { name = "vpp_max", type = "int", metavar = "N", commands = "plan", default = "1",
  help = "the most model chunks per stage to try",
  suggest = { "vpp", "max_vpp" } }
opt { name = "micro_batch", type = "string", metavar = "LIST", commands = "plan",
  default = "1,2,4",
  help = "micro-batch sizes to try",
  suggest = { "batch", "micro_batch_size", "mbs" } }
opt { name = "policy", type = "string", metavar = "P", commands = "plan",
  default = "fastest; on the command line cheapest with --tokens or --deadline and no "
    .. "--budget (the run's cost), fastest without --tokens or with --budget",
  help = "fastest|cheapest|fewest-gpus|best-per-dollar (Lua: the name as here, a gp.policy.* "
    .. "table or a function(candidate, cat) -> score; cat: the job's catalog)" }
opt { name = "deadline", type = "string", metavar = "D", commands = "plan",
  help = "train --tokens within D (30d, 12h, 2w; Lua: a string with its unit, or a number of "
    .. "seconds: deadline = 30 is 30 s, which no layout meets)" }
opt { name = "budget", type = "string", metavar = "B", commands = "plan",
  help = "spend at most B ($50k, 100kCNY)" }
opt { name = "per_card", type = "flag", commands = "plan",
  help = "the best layout of each card side by side: GPUs, layout, step, MFU, days, cost, "
    .. "memory, whether it meets the deadline and budget, what it loses to the winner (Lua: "
    .. "the result's per_card)",
  suggest = { "by_card", "per_gpu", "cards" } }
opt { name = "top", type = "int", metavar = "N", commands = "plan", default = "5; Lua: 10",
  -- gp.sweep's bound (sweep.lua: "top must be an integer 1..100000"):
  -- the count kind's 1..16777216 was said for 0, 100001 then refused
  kind = "count", range = { 1, 100000 },
  help = "how many layouts to keep" }
opt { name = "shard", type = "string", metavar = "K/N", commands = "plan",
  help = "this shard of a deterministic split (for gpuplan merge; the command line writes one with --format json)" }
opt { name = "progress", type = "flag", commands = "plan", default = true,
  help = "no progress bar (by default one is drawn on stderr for a search longer than a "
    .. "second, when stderr is a terminal; Lua: true or a function(done, total, gpu))" }
opt { name = "key", type = "string", lua_only = true, commands = "plan",
  help = "time|cost|per_dollar|mfu|gpus: what results are ranked by (default time)" }
opt { name = "where", type = "function", lua_only = true, commands = "plan",
  help = "function(candidate) -> boolean: a predicate on each fitting candidate" }
opt { name = "bound", type = "boolean", lua_only = true, commands = "plan",
  help = "false: time every fitting layout (default true: a lower bound skips those "
    .. "that cannot rank)" }

---------------------------------------------------------------------------
section "cost"

-- A run's total, written as people write one: "2B tokens" (the guide's
-- own "2B tokens in 3 days"), "1.5T"; --budget took "$50k" while
-- --tokens refused "2B" as "expects a number".  The text is kept on the
-- command line (type string) and read, in the CLI and Lua alike, by
-- M.total; its range stays train's (0, 1e15].
opt { name = "tokens", type = "string", metavar = "N", commands = "train plan", kind = "total",
  help = "tokens to train on, for days and cost: 2e12, or with a decimal suffix K, M, B (or "
    .. "G), T: 500M, 2B, 1.5T",
  suggest = { "train_tokens", "total_tokens" } }
-- A run given as its dataset, as a fine-tuning recipe states it (the
-- dataset's samples and the epochs over them: HF TrainingArguments'
-- num_train_epochs, torchtune's epochs): the tokens are samples x
-- sample_tokens x epochs, sample_tokens the sequence unless given (a sample
-- padded or packed to --seq).  One of the two ways: tokens with either is
-- refused (gpuplan.train tokens_total).
-- The samples a count as --tokens takes (kind total, read by M.total):
-- "50k samples" is how a dataset is told, and --samples 50k said
-- "expects a number" where --tokens 500M was taken.  Its range (a whole
-- number 1..1e15) is train's (gpuplan.train tokens_total).  The one
-- reader takes --tokens' suffixes, G and T among them; the help said K, M
-- and B only, and 2G or 1T samples were taken unsaid.  Said, not refused:
-- a count's G (giga) is B, T is 1e12 wherever a count is read, and a
-- T-sized dataset meets train's cap on the tokens, which says so.
opt { name = "samples", type = "string", metavar = "N", commands = "train plan", kind = "total",
  counts = "samples",
  forms = "a number (50000) or one with a suffix K, M, B (or G) or T (50k, 2M, 1.5B)",
  help = "training samples in the dataset: 50000, or with a decimal suffix K, M, B (or G), T "
    .. "as --tokens takes: 50k, 2M; the run's tokens are samples x --sample-tokens x --epochs "
    .. "(instead of --tokens)",
  suggest = { "num_samples", "dataset_size", "train_samples" } }
-- A mean over samples of one token or more is at least 1: 0.5 was taken
-- (a run of 25k tokens for 50k samples).
opt { name = "sample_tokens", type = "number", metavar = "L", commands = "train plan", kind = "number",
  range = { 1, 1 << 24 }, default = "--seq: each sample a whole sequence",
  help = "mean tokens a sample of --samples (the dataset's mean length, where samples are "
    .. "not padded to --seq)",
  suggest = { "mean_len", "avg_len", "sample_length", "avg_sample_len" } }
-- Whole steps: 0.5 was priced as half a step and printed "run: 0 steps
-- in 0.0045 hours"; 2^63 as a run of 1.2e18 USD.
opt { name = "steps", type = "number", metavar = "N", commands = "rl", kind = "count",
  help = "RL steps in the run: hours and cost",
  suggest = { "total_steps", "num_steps", "total_training_steps" } }
opt { name = "price", type = "string", metavar = "P", commands = "train plan rl infer",
  default = "the cheapest catalog offer in the buyer's market",
  help = "per GPU-hour: 2.49, '$2.49/h' or a catalog price id (0: the GPUs are free, cost 0)",
  suggest = { "cost", "price_per_hour", "gpu_price" } }
opt { name = "currency", type = "string", metavar = "C", commands = "train plan rl infer",
  default = "$GPUPLAN_CURRENCY, else the catalog settings'",
  help = "the buyer's currency: of prices and costs (USD, CNY ...; either case)" }
opt { name = "market", type = "string", metavar = "M", commands = "train plan rl infer",
  default = "$GPUPLAN_MARKET, else the catalog settings', else cn for CNY, us,global,overseas "
    .. "for others",
  help = "the buyer's market: where the default price comes from (cn: a buyer in China; "
    .. "us,global,overseas ...; price regions in either case)",
  suggest = { "region", "markets" } }
opt { name = "scaling", type = "flag", commands = "train", lua = "plan",
  help = "also the scaling efficiency: tokens/s per GPU against the job's fastest layout on "
    .. "the smallest GPU count that fits (1 GPU when it fits), or on --scaling-base",
  variants = { plan = { default = true, own = true,
    help = "false: skip each result's scaling efficiency" } } }
opt { name = "scaling_base", type = "int", metavar = "N", commands = "train plan",
  default = "the smallest count that fits",
  help = "the GPU count scaling efficiency is measured from (train: implies --scaling)",
  suggest = { "base_gpus", "scaling_from" } }

---------------------------------------------------------------------------
section "output"

opt { name = "format", type = "format", metavar = "F", commands = ALL .. " comm", cli_only = true,
  in_lua = "a function returns a table; gp.report(rows, {format = ...}) and gp.json print one",
  default = "text",
  help = "text|markdown|csv|json",
  notes = {
    fit = "csv: one table, every row also carries the job, fits, the verdict, the details "
      .. "and the defaults columns",
    infer = "csv: one table, the deployment as one row with its defaults; with --ops the "
      .. "decode operators instead",
  },
  variants = { plan = { type = "format_html",
    help = "text|markdown|csv|json|html (json: one result per line, what gpuplan merge "
      .. "reads; html: one self-contained page with the tables and the plots)" } } }
opt { name = "svg", type = "string", metavar = "FILE", commands = "plan infer comm",
  cli_only = true,
  in_lua = "the charts are the commands' (gp.svg is not the API): run the command, or plot "
    .. "the returned fields yourself",
  help = "with --sweep-batch: write the curve as SVG",
  variants = { comm = { help = "also write an SVG chart of busbw vs size for --systems" },
    plan = { metavar = "BASE",
    help = "write BASE-pareto.svg (the cost-vs-time Pareto front of every fitting layout "
      .. "on every card), BASE-memory.svg (stacked memory per GPU of the best layouts) and "
      .. "BASE-step.svg (where their step goes); with --per-card BASE-cards.svg alone "
      .. "instead (each card's best, time against cost); a "
      .. "BASE ending in .svg is read without it" } } }
opt { name = "systems", type = "string", metavar = "LIST", commands = "comm", cli_only = true,
  in_lua = "call gp.comm once per system = ID",
  default = "--system",
  help = "comma-separated system ids, one line each on the --svg chart; the first is the "
    .. "table's without --system" }
opt { name = "ops", type = "flag", commands = "infer", cli_only = true,
  in_lua = "a dense model's result lists its decode operators in ops (gp.roofline{model = ...}: "
    .. "prefill's too)",
  help = "also print the decode step operator by operator" }
opt { name = "sweep_batch", type = "flag", commands = "infer", cli_only = true,
  in_lua = "call gp.infer once per batch = N",
  help = "throughput vs latency as the batch doubles up to the KV limit" }
opt { name = "target", type = "number", metavar = "TPS", commands = "infer", cli_only = true,
  in_lua = "gp.infer_plan{target = TPS, ...} plans for a target",
  -- output tokens/s, an amount: above 0, at most the engine's bound
  -- (GP_AMOUNT_MAX), checked here for the dense and the MoE search alike
  range = { 0, 1e15, gt = true },
  help = "GPUs needed for TPS output tokens/s; with --gpu A,B,... each card's plan side by "
    .. "side, the cheapest per token first (Lua: gp.infer_plan{target = ...}, a card a call)" }
-- itl_max and ttft_max are bounds, not serve options: they do not choose the
-- MoE serving model (gp.infer{itl_max = 0.02} alone priced llama3-8b with
-- it, TTFT 410 ms where the replica said 53 ms, while the command line
-- refused --itl-max without --target or a serving option); gp.infer
-- refuses them alone as the command line does (gpuplan.infer M.infer).
opt { name = "itl_max", type = "number", metavar = "MS", commands = "infer",
  kind = "duration",
  -- the command line's is a plain number of milliseconds or a time with
  -- its unit, read and checked where infer reads it, (0, 3600000] ms:
  -- the duration kind's range (seconds, [0, inf]) refused -1 in other
  -- words than 0
  variants = { infer = { type = "string" } },
  default = "50",
  help = "with --target, every user's mean ITL within MS milliseconds (or a time with its "
    .. "unit: 20ms, 0.05s) (the decode step and "
    .. "the other requests' prompts between its tokens); MoE serving: also the "
    .. "largest batch within MS without --target (not with --batch or --concurrency, which fix it) (Lua: a time, \"50ms\", or a number of seconds under 1)",
  suggest = { "max_itl", "itl_limit", "tpot_max" } }
opt { name = "ttft_max", type = "number", metavar = "MS", commands = "infer",
  kind = "duration",
  -- milliseconds or a time with its unit on the command line, read and
  -- checked where infer reads it, (0, 3600000] ms, as --itl-max
  variants = { infer = { type = "string" } },
  help = "every request's TTFT within MS milliseconds (or a time with its unit: 500ms, "
    .. "0.5s), one prompt's TTFT (the tables' \"TTFT (one prompt)\" or \"TTFT (full prefill "
    .. "steps)\", not the TTFT under load beside it): a TP "
    .. "replica's prefill of one prompt (its part the prefix cache does not hold), a MoE "
    .. "serving instance's prefill steps (--prefill-tokens a step: a longer prompt takes "
    .. "ceil(its tokens / prefill-tokens) of them), disaggregated plus the KV "
    .. "transfer to the decode pool; no queueing for a free slot.  It does not depend on "
    .. "the decode batch: it picks the layout --target searches (replica TP, instance, "
    .. "prefill pool), or refuses the one given; with --target or the MoE serving options "
    .. "(Lua: a time, \"500ms\", or a number of seconds under 1)",
  suggest = { "max_ttft", "ttft_limit", "ttft" } }

---------------------------------------------------------------------------
-- Checks of the declarations themselves: a malformed one is a bug that
-- must show at once, naming it.

local CLI_TYPES = { int = true, number = true, string = true, flag = true, format = true,
                    format_html = true }
local FIELDS = args.set [[name type metavar help default commands lua cli lua_only cli_only
  in_lua variants methods serve form suggest notes group kind range value values switch fold argument
  counts forms]]
local VARIANT_FIELDS = args.set [[type metavar help default own group]]
local GROUP_NAMES = {}
for _, g in ipairs(M.GROUPS) do GROUP_NAMES[g[1]] = true end
local IS_COMMAND = {}
for _, c in ipairs(M.COMMANDS) do IS_COMMAND[c] = true end

local function bad(d, msg) error("gpuplan.options: option '" .. tostring(d.name) .. "': " .. msg, 0) end

local function commands_of(d, field)
  local s = {}
  local v = d[field]
  if v == nil then return s end
  if type(v) ~= "string" then bad(d, field .. " must be a list of commands") end
  for c in v:gmatch("%S+") do
    if not IS_COMMAND[c] then bad(d, field .. ": unknown command '" .. c .. "'") end
    s[c] = true
  end
  return s
end

-- Kinds of value.  A quantity (bytes, bandwidth, duration) is a string
-- with its unit ("6GB", "200GB/s", "50ms"): a bare number there is
-- refused, naming the option (6 what?); Lua may give an SI number (B,
-- B/s, s), which is what every Lua function returns too.
M.KINDS = {
  count = "a whole number 1..COUNT_MAX (GPUs, parallel sizes, sequences)",
  tokens = "a whole number of tokens 1..TOKENS_MAX",
  total = "a count of tokens in a run: a number, or text with a decimal suffix (2B, 1.5T)",
  number = "a finite number",
  fraction = "a share of a whole, in [0, 1]",
  bytes = "a size with its unit: 6GB, 80GiB", bandwidth = "a rate with its unit: 200GB/s",
  duration = "a time with its unit: 50ms, 2s",
  power = "a power in W, or with its unit: 300W, 0.7kW",
  dtype = "a number format: bf16, fp8 ...", enum = "one of a fixed set of names",
  name = "a catalog id or a free text", flag = "on or off",
  list = "a list of values to search", table = "a Lua table", ["function"] = "a Lua function",
}
-- The kind a declaration's type implies when it names none.
local KIND_OF_TYPE = { int = "count", number = "number", string = "name", flag = "flag",
  boolean = "flag", format = "enum", format_html = "enum", table = "table",
  ["string|table"] = "name", ["number|string"] = "number", ["function"] = "function" }
-- The units module's name of each quantity kind.
local UNIT_KIND = { bytes = "bytes", bandwidth = "bandwidth", duration = "time",
  power = "power" }
-- The SI unit a quantity kind's bounds (declared ranges) are in.
local UNIT_SI = { bytes = "B", bandwidth = "B/s", duration = "s", power = "W" }

-- 2^24, the engine's bound on every count (engine/common.h GP_COUNT_MAX).
M.COUNT_MAX = 1 << 24
-- Tokens of one sequence (seq, ctx, prompt and response lengths): at most
-- 2^24, the engine's count bound; the longest context any model takes is
-- 10M (Llama 4 Scout).  --seq 1e15 gave an answer in PB.
M.TOKENS_MAX = 1 << 24

local BY = {}
for _, d in ipairs(D) do
  if type(d.name) ~= "string" or not d.name:match("^[a-z][a-z0-9_]*$") then
    bad(d, "name must be lowercase words joined by _")
  end
  if BY[d.name] then bad(d, "declared twice") end
  for k in pairs(d) do
    if not FIELDS[k] then bad(d, "unknown field '" .. tostring(k) .. "'") end
  end
  if type(d.help) ~= "string" or d.help == "" then bad(d, "has no help") end
  local both = commands_of(d, "commands")
  if next(both) == nil then bad(d, "no command takes it") end
  d.cli_set, d.lua_set = {}, {}
  for c in pairs(both) do
    if not d.lua_only then d.cli_set[c] = true end
    if not d.cli_only then d.lua_set[c] = true end
  end
  for c in pairs(commands_of(d, "lua")) do d.lua_set[c] = true end
  for c in pairs(commands_of(d, "cli")) do d.cli_set[c] = true end
  if next(d.cli_set) ~= nil and not CLI_TYPES[d.type] then
    bad(d, "CLI type must be int, number, string, flag, format or format_html")
  end
  for c, v in pairs(d.variants or {}) do
    if not (d.cli_set[c] or d.lua_set[c]) then bad(d, "a variant for " .. c .. ", which does not take it") end
    for k in pairs(v) do
      if not VARIANT_FIELDS[k] then bad(d, "variant " .. c .. ": unknown field '" .. k .. "'") end
    end
    if v.type and not CLI_TYPES[v.type] then bad(d, "variant " .. c .. ": bad CLI type") end
    -- A flag variant of a valued option (rl's ema, of train's none|gpu|cpu)
    -- inherited the option's default: 'gpuplan rl --help' said "--ema ...
    -- (default none)" and docs/lua.md gp.rl's ema "boolean, none".  Its own
    -- default is on or off.
    local vd = v.default
    if vd == nil and type(d.default) ~= "table" then vd = d.default end
    if v.type == "flag" and vd ~= nil and type(vd) ~= "boolean" then
      bad(d, "variant " .. c .. ": a flag whose default is " .. tostring(vd)
        .. " (give the variant default = false or true)")
    end
    if v.group and not GROUP_NAMES[v.group] then
      bad(d, "variant " .. c .. ": unknown group '" .. tostring(v.group) .. "'")
    end
  end
  if d.methods ~= nil and not (d.cli_set.fit or d.lua_set.fit) then
    bad(d, "methods, but fit does not take it")
  end
  d.kind = d.kind or KIND_OF_TYPE[d.type]
  if not M.KINDS[d.kind] then bad(d, "unknown kind '" .. tostring(d.kind) .. "'") end
  if d.values ~= nil then
    if d.kind ~= "enum" or type(d.values) ~= "table" or #d.values < 2 then
      bad(d, "values must be a list of two or more names, of an enum")
    end
    for _, v in ipairs(d.values) do
      if type(v) ~= "string" then bad(d, "values must be names") end
    end
    if d.value ~= nil and type(d.value) ~= "function"
        and not args.set(table.concat(d.values, " "))[d.value] then
      bad(d, "value '" .. tostring(d.value) .. "' is not one of its values")
    end
  end
  if d.range ~= nil and not (type(d.range) == "table" and type(d.range[1]) == "number"
      and type(d.range[2]) == "number" and d.range[1] < d.range[2]) then
    bad(d, "range must be { lo, hi } with lo < hi")
  end
  -- A literal value is what --help shows; a text beside it (a note on
  -- other commands' defaults) starts with the value, so the two agree.
  if d.value ~= nil and type(d.value) ~= "function" then
    local text = d.default
    if type(text) == "table" then text = text[1] end
    if text ~= nil and (type(text) ~= "string" or
                        text:sub(1, #tostring(d.value)) ~= tostring(d.value)) then
      bad(d, "default text '" .. tostring(text) .. "' does not start with its value "
        .. tostring(d.value))
    end
  end
  BY[d.name] = d
end

-- Suggestions name an option of the same command and are never accepted
-- where it is.
for _, d in ipairs(D) do
  for _, s in ipairs(d.suggest or {}) do
    local other = BY[s]
    if other then
      for c in pairs(d.lua_set) do
        if other.lua_set[c] then bad(d, "suggests '" .. s .. "', which " .. c .. " accepts") end
      end
      for c in pairs(d.cli_set) do
        if other.cli_set[c] then bad(d, "suggests '" .. s .. "', which " .. c .. " accepts") end
      end
    end
  end
end

M.list = D

-- The declaration of an option name, or nil.
function M.get(name) return BY[name] end

-- The declaration as command cmd takes it (its variant for cmd applied).
function M.view(d, cmd)
  local v = (d.variants or {})[cmd] or {}
  local dflt = v.default
  if dflt == nil then
    dflt = d.default
    if type(dflt) == "table" then
      if dflt[cmd] ~= nil then dflt = dflt[cmd] else dflt = dflt[1] end
    end
  end
  if dflt == nil and d.value ~= nil and type(d.value) ~= "function" then
    dflt = type(d.value) == "boolean" and d.value or tostring(d.value)
  end
  return {
    name = d.name, type = v.type or d.type, metavar = v.metavar or d.metavar,
    help = v.help or d.help, default = dflt, own = v.own, form = d.form,
    note = (d.notes or {})[cmd], group = v.group or d.group,
  }
end

-- Does command cmd take option name on its command line ("cli") or in
-- its Lua function ("lua")?
function M.takes(cmd, name, side)
  local d = BY[name]
  if not d then return false end
  return (side == "cli" and d.cli_set or d.lua_set)[cmd] == true
end

local cache = { spec = {}, keys = {} }

-- cli.parse's option table of command cmd: name -> CLI type.
function M.spec(cmd)
  if cache.spec[cmd] then return cache.spec[cmd] end
  local s = {}
  for _, d in ipairs(D) do
    if d.cli_set[cmd] then s[d.name] = M.view(d, cmd).type end
  end
  cache.spec[cmd] = s
  return s
end

-- The set of keys the Lua function of cmd accepts.
function M.keys(cmd)
  if cache.keys[cmd] then return cache.keys[cmd] end
  local s = {}
  for _, d in ipairs(D) do
    if d.lua_set[cmd] then s[d.name] = true end
  end
  cache.keys[cmd] = s
  return s
end

-- The keys of cmd's Lua function that it reads itself rather than passing
-- on as base's (rl's own against train's; plan's search against the job):
-- those base does not accept, and those cmd takes as a variant of its own.
function M.own(cmd, base)
  local s, b = {}, M.keys(base)
  for _, d in ipairs(D) do
    if d.lua_set[cmd] and (not b[d.name] or M.view(d, cmd).own) then s[d.name] = true end
  end
  return s
end

-- The card of a job that names its node and not its card: the system's
-- (a catalog system holds one kind of GPU, and train, infer, rl and fit
-- refuse a gpu it does not hold).  gp.train{system = "dgx-h100"} and
-- `gpuplan train M --system dgx-h100` were told "gpu is required", the
-- card the system names; comm took it.  o: a job's options (Lua keys or
-- the command line's), o.gpu set in place; an unknown system is refused
-- as the catalog refuses it ("unknown system 'x' (did you mean ...)").
function M.gpu_of_system(o)
  if o.gpu ~= nil or type(o.system) ~= "string" then return end
  local cat = o.cat or o.catalog
  if type(cat) ~= "table" or type(cat.get) ~= "function" then cat = require("gpuplan").catalog() end
  o.gpu = cat:get("systems", o.system).gpu
end

-- The table command cmd's Lua function takes from its parsed command
-- line opts: t (a new table when nil) with every option of opts that the
-- function takes under the same name, except those in skip (a set: the
-- ones the command turns into something else first).
function M.lua_args(cmd, opts, t, skip)
  t = t or {}
  for k, v in pairs(opts) do
    if M.takes(cmd, k, "lua") and not (skip and skip[k]) then t[k] = v end
  end
  return t
end

-- Names, sorted, of the options that send gp.infer to the MoE serving model.
function M.serve_keys()
  local t = {}
  for _, d in ipairs(D) do if d.serve then t[#t + 1] = d.name end end
  table.sort(t)
  return t
end

-- The first option, in declaration order, that fit refuses with `method`:
-- its name, or nil.  opts: the parsed command line.
function M.misplaced(opts, method)
  for _, d in ipairs(D) do
    if d.methods and opts[d.name] ~= nil then
      local ok = false
      for m in d.methods:gmatch("%S+") do if m == method then ok = true end end
      if not ok then return d.name, d.methods end
    end
  end
  return nil
end

-- Values: the one rule for each kind, the declared defaults ------------

local shown = args.shown

-- What is wrong with v as option name's count ("tp must be a whole number
-- 1..16777216 (got 0)"), or nil: the count kind's rule (M.check), for a
-- value a caller derives itself.  The caller raises it at its level.
function M.bad_count(name, v, lo, hi)
  lo, hi = lo or 1, hi or M.COUNT_MAX
  if type(v) ~= "number" or v ~= math.floor(v) or v < lo or v > hi then
    return string.format("%s must be a whole number %d..%d (got %s)", name, lo, hi, shown(v))
  end
end

-- The same for a number of tokens of one sequence.
function M.bad_tokens(name, v, lo, hi)
  lo, hi = lo or 1, hi or M.TOKENS_MAX
  if type(v) ~= "number" or v ~= math.floor(v) or v < lo or v > hi then
    return string.format("%s must be a whole number of tokens, %d..%d (got %s)", name, lo,
      hi, shown(v))
  end
end

-- A quantity option's value as an SI number (B, B/s, s): a string with
-- its unit parsed, a Lua number taken as it is; a string that is a bare
-- number is refused, naming the option.  Returns the number, or nil and
-- the message ("memory '6' needs a unit, e.g. 6GB"); shown: the name the
-- message gives (the CLI's --flag; default name).  Other values come
-- back unchanged for the caller's own check.
local UNIT_EXAMPLE = { bytes = "6GB", bandwidth = "200GB/s", duration = "50ms", power = "300W" }
-- The kinds whose bare number is in their SI unit, on the command line as
-- in Lua: a power in W (nvidia-smi -pl takes watts; docs/catalog.md
-- "--power-limit in watts").
local BARE_SI = { power = true }
function M.quantity(name, v, shown_name)
  local d = BY[name]
  local kind = d and UNIT_KIND[d.kind]
  shown_name = shown_name or name
  if not kind or type(v) ~= "string" then return v end
  if BARE_SI[d.kind] and tonumber(v) then return tonumber(v) end
  if tonumber(v) then
    return nil, string.format("%s '%s' needs a unit, e.g. %s", shown_name, v,
      UNIT_EXAMPLE[d.kind])
  end
  -- Text the units parser cannot read ("abc", "5xx", "1e400GB", whose
  -- number is no finite one) is a value the option cannot parse: a usage
  -- error, exit 2 on the command line (docs/output.md), marked here for
  -- every quantity option at once; a value that parses but is out of its
  -- range stays a plain refusal, exit 1 as --memory 0GB and --budget -5
  -- are: a negative one ("-5GB") or one past what a count of bytes holds
  -- ("9e10GB", 9e19 B; it exited 2) -- units.OUT_OF_RANGE's reasons.
  local units = require("gpuplan.units")
  local ok, n = pcall(units.parse, v, kind)
  if not ok then
    local msg = shown_name .. ": " .. tostring(n)
    for _, why in ipairs(units.OUT_OF_RANGE) do
      if msg:sub(-#why) == why then return nil, msg end
    end
    local unsigned = v:match("^%s*%-(.*)$")
    if unsigned and pcall(units.parse, unsigned, kind) then return nil, msg end
    return nil, args.usage(msg)
  end
  return n
end

-- A run's count of tokens (the total kind): a number as it is, or text
-- -- a number with one decimal suffix, K 1e3, M 1e6, B or G 1e9, T 1e12
-- (either case: "7b" is how a model's size is written too), or none
-- ("2e12") -> the number, or nil where the text is no such count ("2x",
-- "0x10", "B").  No binary reading: a token total is no power of 2.
local TOTAL_SUFFIX = { [""] = 1, k = 1e3, m = 1e6, b = 1e9, g = 1e9, t = 1e12 }
function M.total(v)
  if math.type(v) then return v end
  if type(v) ~= "string" then return nil end
  local num, suffix = v:match("^%s*([%d%.][%d%.eE%+%-]*)%s*(%a?)%s*$")
  local sign = ""
  if not num then
    sign, num, suffix = v:match("^%s*([%+%-])([%d%.][%d%.eE%+%-]*)%s*(%a?)%s*$")
  end
  local n, f = num and tonumber(sign .. num), suffix and TOTAL_SUFFIX[suffix:lower()]
  if not (n and f) or n ~= n or n == math.huge or n == -math.huge then return nil end
  return n * f
end

-- The range each numeric kind has when its declaration gives none.
local KIND_RANGE = {
  count = { 1, M.COUNT_MAX }, tokens = { 1, M.TOKENS_MAX }, fraction = { 0, 1 },
  number = { -math.huge, math.huge }, bytes = { 0, math.huge },
  bandwidth = { 0, math.huge }, duration = { 0, math.huge }, power = { 0, math.huge },
}
M.KIND_RANGE = KIND_RANGE

-- Is flag name one gp.sweep searches as a list ({false, true})?  The
-- engine's sweep dimensions that default to the job's own value.
local swept
local function swept_flag(name)
  if not swept then
    swept = {}
    for _, d in ipairs(require("gpuplan.core").SWEEP_DIMS) do
      if d.base then swept[d.name] = true end
    end
  end
  return swept[name] == true
end

-- Option name's value v checked by its declared kind and range, as the
-- command cmd takes it: returns the value (a quantity as its SI number),
-- or nil and what is wrong, naming shown_name (the CLI's --flag; default
-- the Lua key).  A count or tokens is a whole number in its range
-- (1..COUNT_MAX, 1..TOKENS_MAX unless declared), a fraction a number in
-- [0, 1], a number finite, a quantity a string with its unit or a
-- number, at least 0, never a boolean unless the declaration says it is
-- also a switch (switch = true: lora_dropout = true), which its reader
-- takes.  Left to the reader that takes it: a value of a command's own
-- variant (plan's lists to search), the kinds whose values are names
-- (dtype, enum, name), and a use's own narrower bounds (an open end, a
-- bound that depends on the job).
-- The resolve step's one rule for text where a name or a number goes
-- (M.check, before any other check): a number format (kind dtype) or a
-- name (any option whose value is text, but a file's name) is read in
-- either case, lower-cased (--weights FP8, --kv FP8, --runtime VLLM,
-- --optimizer Muon, --stack Megatron: the catalog's and the runtimes'
-- names are lower case), as --currency and --market are
-- (gp.prices.buyer); text
-- that is a plain decimal number where a count, a number of tokens, a
-- number or a fraction goes is that number (seq = "4096" as 4096, what
-- the command line's --seq 4096 is, and plan's gpus = "256" already
-- was).  A quantity's bare number still needs its unit (M.quantity).
-- Returns the value to take, and true where it differs from v.
-- Only a name the option reads is lower-cased (one of its declared values
-- or a word of its help, the names the user reads; a grouped format
-- "GPTQ-G64" by its base): text that is no name stays as typed, so the
-- reader's refusal quotes what the user typed ('BOGUS', not 'bogus').
local PLAIN_NUMBER_KIND = { count = true, tokens = true, number = true, fraction = true }
local function names_a_value(d, help, l)
  for _, x in ipairs(d.values or {}) do if x == l then return true end end
  local function word(w)
    -- w delimited in the help by anything but a name's own characters
    local at = 1
    while true do
      local i, j = help:find(w, at, true)
      if not i then return false end
      local before, after = help:sub(i - 1, i - 1), help:sub(j + 1, j + 1)
      if not before:match("[%w%-%._]") and not after:match("[%w_%-]") then
        return true
      end
      at = i + 1
    end
  end
  if word(l) then return true end
  local base = l:match("^(%a+%d?)%-g%d+")
  return base ~= nil and word(base)
end
function M.normal(name, v, cmd)
  local d = BY[name]
  if not d or type(v) ~= "string" then return v, false end
  local variant = cmd and d.variants and d.variants[cmd]
  if variant and (variant.own or variant.type) then return v, false end
  -- every name-valued option, not only those declared fold: --kv FP8
  -- was read while --optimizer Muon was an unknown optimizer (a file's
  -- name, --svg FILE, is the user's own and stays as typed)
  if d.kind == "dtype" or d.fold or (d.type == "string" and d.metavar ~= "FILE") then
    local l = v:lower()
    if l == v then return v, false end
    if not names_a_value(d, (variant and variant.help or d.help or ""), l) then
      return v, false
    end
    return l, true
  end
  if PLAIN_NUMBER_KIND[d.kind] and v:match("^%s*[%+%-]?%d*%.?%d+[eE]?[%+%-]?%d*%s*$") then
    local n = tonumber(v)
    if n and n == n and n ~= math.huge and n ~= -math.huge then
      return math.tointeger(n) or n, true
    end
  end
  return v, false
end

function M.check(name, v, cmd, shown_name)
  local d = BY[name]
  v = M.normal(name, v, cmd)
  -- The catalog a script passes: anything else failed inside the planner
  -- as a Lua error ("attempt to index a number value (local 'cat')").
  if (name == "cat" or name == "catalog") and not M.is_catalog(v) then
    return nil, string.format("%s must be a catalog, as gp.catalog() returns (got %s)",
      shown_name or name, shown(v))
  end
  -- A script's model table: the engine checks its shape, but max_seq and
  -- id are gpuplan's Lua's to read (defaults, context limits, messages),
  -- and were read unchecked: max_seq = "4096" raised "attempt to compare
  -- number with string", 2.5 "bad argument #5 to 'format'", and 0 or NaN
  -- were priced (gp.memory's ctx=0).
  if (name == "model" or name == "reward_model" or name == "critic_model")
     and type(v) == "table" then
    local ms = v.max_seq
    if ms ~= nil and not (type(ms) == "number" and ms == math.floor(ms) and ms >= 1
                          and ms < math.huge) then
      return nil, string.format("%s.max_seq must be a whole number of tokens >= 1 (got %s)",
        shown_name or name, shown(ms))
    end
    if v.id ~= nil and type(v.id) ~= "string" then
      return nil, string.format("%s.id must be a string (got %s)", shown_name or name, shown(v.id))
    end
    -- Read by gpuplan's Lua alone (the engine ignores them), unchecked:
    -- attn_sinks = "no" was taken as true (any value but false and nil
    -- is, in Lua), and name = {} went into gp.infer's result as its model,
    -- where the catalog's schema (schema.lua model) refuses both.
    for _, k in ipairs { "name", "family" } do
      if v[k] ~= nil and type(v[k]) ~= "string" then
        return nil, string.format("%s.%s must be a string (got %s)", shown_name or name, k,
          shown(v[k]))
      end
    end
    if v.attn_sinks ~= nil and type(v.attn_sinks) ~= "boolean" then
      return nil, string.format("%s.attn_sinks must be true or false (got %s)",
        shown_name or name, shown(v.attn_sinks))
    end
    -- Read by gpuplan's Lua before the engine sees the table: moe = 5 or
    -- true raised "attempt to index a number value (field 'moe')", a
    -- moe.experts of "x" "attempt to compare number with string", and
    -- split_proj = true "attempt to concatenate a boolean value".
    local moe = v.moe
    if moe ~= nil and moe ~= false and type(moe) ~= "table" then
      return nil, string.format("%s.moe must be a table {experts =, top_k = ...} (got %s)",
        shown_name or name, shown(moe))
    end
    if type(moe) == "table" and moe.experts ~= nil and type(moe.experts) ~= "number" then
      return nil, string.format("%s.moe.experts must be a number (got %s)", shown_name or name,
        shown(moe.experts))
    end
    local sp = v.split_proj
    if sp ~= nil then
      local ok = false
      for _, x in ipairs(require("gpuplan.schema").SPLIT_PROJ) do ok = ok or sp == x end
      if not ok then
        local sps = require("gpuplan.schema").SPLIT_PROJ
        return nil, string.format("%s.split_proj must be one of %s (got %s)", shown_name or name,
          table.concat(sps, ", "), shown(sp))
      end
    end
  end
  local range = d and KIND_RANGE[d.kind]
  local variant = d and cmd and d.variants and d.variants[cmd]
  -- A function where a name goes (currency = print: "currency a function:
  -- no exchange rate"), or a table where one of a fixed set of names goes
  -- (method = {}: "unknown method 'table: 0x55...'", its address): the
  -- readers quoted it as text.  Left to them: policy (a function in Lua),
  -- a command's own variant (plan's lists) and an enum whose help says
  -- Lua takes a list (weights takes a table too: {bits, group ...}).
  if d and d.type == "string" and name ~= "policy" and not variant
     and (type(v) == "function" or (type(v) == "table"
       and (d.kind == "enum" or name == "precision" or name == "kv")
       and not d.help:find("Lua also a list", 1, true))) then
    return nil, string.format("%s must be a name, a string (got %s)", shown_name or name, shown(v))
  end
  -- An enum that declares its values: one of them.  Any other is a value
  -- the option cannot read, a usage error (exit 2 on the command line,
  -- docs/output.md), as a command's own choices are (comm --op foo, infer
  -- --runtime foo); a declared range refused (--gpus 0) stays exit 1.
  if d and d.values and not (variant and (variant.own or variant.type)) then
    for _, x in ipairs(d.values) do if v == x then return v end end
    return nil, args.usage(string.format("%s must be %s or %s (got %s)", shown_name or name,
      table.concat(d.values, ", ", 1, #d.values - 1), d.values[#d.values], shown(v)))
  end
  -- A flag is on or off: true or false, said by one message whatever
  -- its reader (each said "must be a boolean" its own way: "(got no)",
  -- "(got string)").  gp.sweep (plan) takes a list of the flags it
  -- searches (the engine's SWEEP_DIMS with a base value: tp_overlap ...),
  -- each element checked where it reads the list.
  if d and d.kind == "flag" and not (variant and (variant.own or variant.type))
     and type(v) ~= "boolean" and not (cmd == "plan" and type(v) == "table"
       and swept_flag(name)) then
    return nil, string.format("%s must be true or false (got %s)", shown_name or name, shown(v))
  end
  -- A run's total: its text read (M.total), the range left to its
  -- reader (train's "a positive number up to 1e+15"); text that is no
  -- count a usage error, naming the forms it takes.
  if d and d.kind == "total" then
    local n = M.total(v)
    if n == nil then
      -- what it counts: tokens, or a declaration's counts (samples)
      return nil, args.usage(string.format("%s must be a count of %s: %s (got %s)",
        shown_name or name, d.counts or "tokens", d.forms or "a number (2e12) or one with a "
        .. "suffix K, M, B or T (500M, 2B, 1.5T)", shown(v)))
    end
    return n
  end
  if not range or (variant and (variant.own or variant.type)) or
     (type(v) == "boolean" and d.switch) then
    return v
  end
  shown_name = shown_name or name
  local lo, hi = table.unpack(d.range or range)
  local open = d.range and d.range.open
  local gt = d.range and d.range.gt
  -- A boolean where a number goes: the kind's own message below (the
  -- readers compared it with numbers, "attempt to compare number with
  -- boolean", or the engine's binding named itself).
  if d.kind == "count" then
    local msg = M.bad_count(shown_name, v, lo, hi)
    if msg then return nil, msg end
    return v
  elseif d.kind == "tokens" then
    local msg = M.bad_tokens(shown_name, v, lo, hi)
    if msg then return nil, msg end
    return v
  end
  local n, msg = M.quantity(name, v, shown_name)
  if msg then return nil, msg end
  if type(n) ~= "number" or n ~= n or n == math.huge or n == -math.huge then
    return nil, string.format("%s must be a finite number (got %s)", shown_name, shown(v))
  end
  if n < lo or n > hi or (open and n == hi) or (gt and n == lo) then
    local function bound(x)
      if x == math.huge or x == -math.huge then return x > 0 and "inf" or "-inf" end
      return math.tointeger(x) and string.format("%d", x) or string.format("%g", x)
    end
    -- a quantity's bounds are in its SI unit, and a value given with its
    -- unit is shown as typed: "--power-limit must be a number in [1,
    -- 100000] (got string '0.5W')" named neither the W of the bounds nor
    -- the 0.5 W the text was read as
    local si = UNIT_SI[d.kind]
    -- no upper bound: "at least 0", not "in [0, inf]" (a refusal shows
    -- no inf the user did not type: tests/lua/fuzz_options.t)
    if hi == math.huge and lo > -math.huge then
      local fb = si == "B" and require("gpuplan.units").fmt_bytes or bound
      return nil, string.format("%s must be %s%s%s (got %s)", shown_name,
        si == "B" and "a size of " or "", gt and "above " .. fb(lo) or "at least " .. fb(lo),
        (si and si ~= "B") and (" " .. si) or "",
        type(v) == "string" and string.format("'%s'", v) or shown(v))
    end
    if si == "B" then
      -- sizes in the units the user reads: "(0B, 1000TB] (got '2000TB' =
      -- 2000TB)", not 1000000000000000 B and 2e+15 B
      local function fb(x)
        local t = require("gpuplan.units").fmt_bytes(x)
        -- past a million TB, the exponent (1e+18TB, not 19 digits)
        return #t > 12 and string.format("%gTB", x / 1e12) or t
      end
      return nil, string.format("%s must be a size in %s%s, %s%s (got %s%s)", shown_name,
        gt and "(" or "[", fb(lo), fb(hi), open and ")" or "]",
        type(v) == "string" and "'" .. v .. "'" or shown(v),
        (type(v) ~= "string" or v:gsub("%s", "") ~= fb(n)) and " = " .. fb(n) or "")
    end
    return nil, string.format("%s must be a number in %s%s, %s%s%s (got %s)", shown_name,
      gt and "(" or "[", bound(lo), bound(hi), open and ")" or "]", si and (" " .. si) or "",
      si and type(v) == "string" and string.format("'%s' = %g %s", v, n, si) or shown(v))
  end
  return n
end

-- The declared default of option name for job (gpuplan.memory's job:
-- method, model, stack, dp, seq ...): the value, and the text the
-- "defaults assumed" line says ("name=value" unless the declaration
-- words it; nil where it says there is nothing to say).
function M.default(name, job)
  local d = BY[name] or error("gpuplan.options: no option '" .. tostring(name) .. "'", 2)
  local v, text = d.value, nil
  if type(v) == "function" then v, text = v(job or {}) end
  if v == nil then error("gpuplan.options: option '" .. name .. "' declares no value", 2) end
  if text == false then return v, nil end
  return v, text or (name .. "=" .. tostring(v))
end

-- o's string keys, sorted: the first bad one is the same every run.
local function sorted_keys(o)
  local t = {}
  for k in pairs(o) do if type(k) == "string" then t[#t + 1] = k end end
  table.sort(t)
  return t
end

-- The command line's flag of option name: --host-bw for host_bw.
function M.flag(name)
  return "--" .. (name:gsub("_", "-"))
end

-- The first of command cmd's parsed command line opts (cli.parse's) that
-- its declared kind and range refuse: the message, naming the flag the
-- user typed (--host-bw, where Lua's is host_bw), or nil.
function M.check_cli(cmd, opts)
  for _, k in ipairs(sorted_keys(opts)) do
    if M.takes(cmd, k, "cli") then
      local _, msg = M.check(k, opts[k], cmd, M.flag(k))
      if msg then return msg end
      -- the command's own readers see the value the Lua key would be
      -- (M.normal: --runtime VLLM is vllm before infer's own check)
      local nv, changed = M.normal(k, opts[k], cmd)
      if changed then opts[k] = nv end
    end
  end
end

-- The words a message's option name may stand beside and still be the
-- option: a word character, dash or dot touching it makes it part of
-- something else (a catalog field's path rl.response_max, tp*pp), a
-- quote makes it a value the user gave.
local function free_left(c) return c == "" or c:match("[%s%(%[,;]") ~= nil end
local function free_right(c) return c == "" or c:match("[%s%)%],;:%.]") ~= nil end

-- "name = v" as the command line writes it, for an option of CLI type
-- ty: a flag's true its flag, false --no-NAME, another value after the
-- flag; nil where the two do not go together (a number's "= true").
local function flag_form(ty, name, v)
  if ty == "flag" and v == "true" then return M.flag(name) end
  if ty == "flag" and v == "false" then return "--no-" .. M.flag(name):sub(3) end
  if ty ~= "flag" and v ~= "true" and v ~= "false" then return M.flag(name) .. " " .. v end
end

local NUMERIC = { count = true, tokens = true, number = true, fraction = true,
  total = true }

-- msg, an error command cmd's Lua function raised (it names Lua keys), as
-- the command line says it: every option that cmd's command line takes
-- named by its flag, the user's Lua key never (issue: "--base-checkpoint
-- needs response_max" named one option by its flag and the next by its
-- key).  Where a name is the option and where only a word:
--   a name with an underscore (response_max) is an identifier: the
--     option wherever it stands free;
--   a one-word name (pp, precision, model) is often a word of the
--     sentence ("the MTP drafts' acceptance"), so it is the option only
--     where the message writes it as one: opening the message (after
--     the command's "rl: "), as an assignment ("colocated = false",
--     "algo = ppo"), or, for a numeric option, beside its number or a
--     comparison ("pp 1", "pp > 1"), or beside one of its declared
--     values.
-- An assignment "name = value" that ends a clause becomes what the user
-- types: "--no-colocated", "--algo ppo"; one inside an equation
-- ("rollout_ep = rollout_tp > 1") keeps its "=".  A flag beside true or
-- false is the flag as typed: "train_llm false" is --no-train-llm.  A
-- list's entry "zero[2]" is "value 2 of --zero" (the flag's comma-joined
-- values: the command line has no index), and a list assigned, 'etp =
-- {"tp", 1}' (a Lua table), is the flag with its comma-joined values,
-- "--etp tp,1".
function M.flags_named(cmd, msg)
  local head = #(msg:match("^[%w_]+: ") or "") + 1
  local out, i = {}, 1
  while true do
    local s, w, e = msg:match("()([%a][%w_]*)()", i)
    if not s then break end
    out[#out + 1] = msg:sub(i, s - 1)
    i = e
    local d = BY[w]
    local rep = w
    -- The values a message lists after "must be" ("grad_sync must be
    -- micro_batch or step") are values, though one may also be another
    -- option's name (plan's --micro-batch read "--grad-sync must be
    -- --micro-batch or step"): a word whose text back to "must be" is
    -- only such a list ("a, b or ") is one of them.
    local listed = msg:sub(1, s - 1):match("must be ([%w_, ]*)$")
    if listed and listed:gsub("[%w_]+, ", ""):gsub("[%w_]+ or ", "") == "" then d = nil end
    -- A list's entry, "zero[2]" (a Lua script's key and index): the
    -- command line gave the list as one flag's comma-joined values.
    local idx, past = msg:match("^%[(%d+)%]()", e)
    local list, lpast = msg:match("^ = (%b{})()", e)
    if idx and d and M.takes(cmd, w, "cli") and free_left(msg:sub(s - 1, s - 1)) then
      rep, i = "value " .. idx .. " of " .. M.flag(w), past
    elseif list and d and M.takes(cmd, w, "cli") and free_left(msg:sub(s - 1, s - 1)) then
      local vals = {}
      for x in list:sub(2, -2):gmatch("[^,]+") do
        vals[#vals + 1] = x:gsub("^%s+", ""):gsub("%s+$", ""):gsub('^"(.*)"$', "%1")
      end
      rep, i = M.flag(w) .. " " .. table.concat(vals, ","), lpast
    elseif d and M.takes(cmd, w, "cli") and free_left(msg:sub(s - 1, s - 1))
       and free_right(msg:sub(e, e)) then
      -- "name = value" closing a clause (the end, punctuation, or a word
      -- going on: not an operator), not a link of "a = b = c".
      -- (a "+" inside: offload = params+optimizer is one value)
      local v, after = msg:match("^ = ([%w_%.%-]+[%w_%.%-%+]*[%w_%.%-])()", e)
      if not v then v, after = msg:match("^ = ([%w_%.%-]+)()", e) end
      -- after "=" or an operator ("tp x pp = 6") it is a term of an
      -- expression, not an assignment
      local before = msg:sub(1, s - 1)
      local chained = before:match("= $") or before:match("%f[%w]x $")
        or before:match("[%*%+/] $")
      local closes = v and not chained and (after > #msg
        or msg:sub(after, after):match("[%),;:%.]")
        or msg:match("^ %a%a", after) or msg:match("^ %(", after))
        and not msg:match("^ =", after)
      local ty = M.view(d, cmd).type
      local assigned = closes and flag_form(ty, w, v)
      -- A flag beside its value reads as the user turns it: "train_llm
      -- false" is --no-train-llm.
      local fv, fafter = msg:match("^ (%a+)()%f[^%w_]", e)
      if not assigned and ty == "flag" and (fv == "true" or fv == "false") then
        assigned, after = flag_form(ty, w, fv), fafter
      end
      if assigned then
        rep, i = assigned, after
      elseif w:find("_", 1, true) or s == head
          or (NUMERIC[d.kind] and (msg:match("^ %-?%d", e) or msg:match("^ [<>]=? ", e)))
          or (d.values and v == nil and (function()
                local x = msg:match("^ ([%w_:%-]+)", e)
                for _, y in ipairs(d.values) do if x == y then return true end end
              end)()) then
        rep = M.flag(w)
      end
    end
    out[#out + 1] = rep
  end
  out[#out + 1] = msg:sub(i)
  return table.concat(out)
end

-- The "defaults assumed" line of command cmd's command line, from
-- entries (a Lua function's r.defaults: "name=value[ (why)]", plan's
-- "card: name=value"): one name per option, the one the user can type
-- on that surface.  gp.* results keep the Lua key; here an option the
-- command line takes keeps its name=value (the flag is the name with
-- "_" -> "-"), a flag is written as typed (flash=true is --flash, its
-- help's --no-flash the other way; async_scheduling=false is
-- --no-async-scheduling), and one the command line does not take at all
-- (infer's kv_policy, fit's max_num_tokens: Lua keys only there) is said
-- in words, "kv policy: mean", naming no key the command refuses.
-- Entries that are no option (a catalog note) are kept as they are.
local function cli_entry(cmd, e)
  local pre, name, v, rest = e:match("^(.-)([%a][%w_]*)=([^%s,]*)(.*)$")
  -- a flag said on by its bare name: "chunked_prefill (vLLM V1 ...)"
  local bare, brest = e:match("^([%a][%w_]*)(.*)$")
  if bare and BY[bare] and BY[bare].type == "flag" and (brest == "" or brest:match("^ %(")) then
    pre, name, v, rest = "", bare, "true", brest
  end
  local d = name and BY[name]
  if not (d and (pre == "" or pre:match("^[%w%.%-]+: $"))) then
    -- A note that is no option but tells the user what to give (plan's
    -- "h100-nvl: 4 GPUs skipped (...; to search them give nics = N and
    -- nic_fabric = ID ...)") names the options as this surface does,
    -- from its "give " on (M.flags_named, the errors' rule); the rest
    -- is kept as it is.
    local at = e:find("%f[%w]give ")
    if at then return e:sub(1, at - 1) .. M.flags_named(cmd, e:sub(at)) end
    return e
  end
  -- one entry may carry two ("max_batch=1024, max_num_tokens=...")
  local more = rest:match("^, ([%a][%w_]*=.*)$")
  if more then rest = ", " .. cli_entry(cmd, more)
  else
    -- the reason names options as this surface does: "ulysses_max 4 not
    -- searched ... on stack megatron" is "--ulysses-max 4 ... on --stack
    -- megatron" here (M.flags_named, the errors' rule)
    rest = M.flags_named(cmd, rest)
  end
  if M.takes(cmd, name, "cli") then
    local ty = M.view(d, cmd).type
    local typed = ty == "flag" and flag_form(ty, name, v)
    return pre .. (typed or (name .. "=" .. v)) .. rest
  end
  return pre .. name:gsub("_", " ") .. ": " .. v .. rest
end

function M.cli_defaults(cmd, entries)
  local out = {}
  for i, e in ipairs(entries) do out[i] = cli_entry(cmd, e) end
  return table.concat(out, ", ")
end

-- The resolve step of one call: o's keys checked against command cmd's
-- (unknown ones refused with the nearest, naming who), each value
-- checked by its declared kind and range (M.check: a quantity parsed, a
-- bare number refused), and a function that fills a default
-- from the declarations and writes it on the "defaults assumed" line.
-- Returns r = { values = o with quantities as numbers, defaults = the
-- line's entries, dflt = function(name, job) -> value }; raises the
-- message (level: the caller's caller) on bad input; also(k)
-- (optional) passes more keys, which the caller refuses itself (gp.rl's
-- gp.train options that are not an RL step's, naming why).
function M.resolve(cmd, o, who, level, also)
  level = (level or 1) + 1
  local bad = M.unknown(o, cmd, also)
  if bad ~= nil then error(M.unknown_message(cmd, bad, who), level) end
  -- o's own keys as given (its __index too), its quantities as numbers:
  -- a bare number refused here; a malformed string is left to the
  -- reader's own check, which says what it wanted.
  local values = setmetatable({}, { __index = o })
  -- the first bad key by name: the same message every run, and no sort
  -- on the way of a good call
  local bad_key, bad_msg
  local normal = {}
  for k, v in pairs(o) do
    if type(k) == "string" then
      local n, msg = M.check(k, v, cmd)
      if msg then
        if not bad_key or k < bad_key then bad_key, bad_msg = k, msg end
      elseif n ~= nil then
        values[k] = n
        local nv, changed = M.normal(k, v, cmd)
        if changed then normal[k] = nv end
      end
    end
  end
  -- The case-folded names and numbers read from text (M.normal) are the
  -- options' own values from here on, for every reader of o: the planners
  -- that read o itself (gp.infer, gp.rl, gp.sweep) as those that read
  -- r.values.  o is the planner's own copy, never a script's table
  -- (gp.*'s entry copies it, gpuplan's init.lua flattened): a script's
  -- o.weights = "FP8" still reads "FP8" after gp.infer(o).
  for k, nv in pairs(normal) do rawset(o, k, nv) end
  if bad_key then error((who and who .. ": " or "") .. bad_msg, level) end
  local r = { values = values, defaults = {} }
  function r.dflt(name, job)
    local v, text = M.default(name, job)
    r.defaults[#r.defaults + 1] = text
    return v
  end
  return r
end

-- Whether v is a catalog (gp.catalog's): a table with the catalog's methods.
function M.is_catalog(v)
  return type(v) == "table" and type(v.get) == "function" and type(v.ids) == "function"
end

-- Did-you-mean ----------------------------------------------------------

M.distance = args.distance

local function list_words(names)
  if #names == 1 then return names[1] end
  return table.concat(names, ", ", 1, #names - 1) .. " and " .. names[#names]
end

-- What to say after "unknown option 'key'" for command cmd on side "cli"
-- or "lua": " (did you mean 'x'?)" for a declared synonym or a name
-- within two edits, " (an option of ...)" for an option of other
-- commands, or "".
-- A runtime's own flag that gpuplan prices through its options, by key:
-- cmd -> what to give instead (fn(cli): in the command line's words, or
-- the Lua keys').  llama.cpp's --split-mode (llama.h enum
-- llama_split_mode: none, layer, row) is infer's --tp (row: every
-- matrix's rows over the GPUs, infer.lua M.row_split) or --pp (layer:
-- whole layers a GPU) under --runtime llama.cpp; 'unknown option
-- --split-mode' said nothing of either.
-- Model fields whose name says nothing of a model (the entry's own
-- bookkeeping): not hinted as one.
local MODEL_FIELD_NOT_HINTED = { id = true, name = true, source = true, notes = true,
  family = true }

local FOREIGN = {
  split_mode = { infer = function(cli)
    return cli and " (llama.cpp's --split-mode: give --tp N for its row split or --pp N for its "
      .. "layer split, with --runtime llama.cpp)"
      or " (llama.cpp's --split-mode: give tp = N for its row split or pp = N for its layer "
      .. "split, with runtime = 'llama.cpp')"
  end },
}
-- One message size on comm's command line: gp.comm's bytes (its
-- synonyms size, message_size) is a Lua key, and the command line sweeps
-- --min to --max (nccl-tests' -b and -e); '--size 1GiB' was "unknown
-- option" with no hint and '--bytes' pointed at docs/lua.md.  The Lua
-- side keeps its own hint (nil here: "did you mean 'bytes'?").
local function one_size(cli)
  return cli and " (the command line sweeps sizes: --min SIZE --max SIZE, both the same for "
    .. "one size, e.g. --min 1GiB --max 1GiB)" or nil
end
for _, k in ipairs { "size", "sizes", "message_size", "bytes" } do
  FOREIGN[k] = { comm = one_size }
end
-- plan's per-card view is infer's whenever --gpu lists several cards
-- (gp.infer{gpu = {...}}: its result's per_card); 'infer --per-card'
-- named plan's option, as if infer had no comparison.
FOREIGN.per_card = { infer = function(cli)
  return cli and " (infer compares cards by --gpu alone: --gpu h100-sxm,h200-sxm,b200)"
    or " (gp.infer compares cards given gpu = a list: gpu = {'h100-sxm', 'b200'}, its "
      .. "result's per_card)"
end }

function M.hint(cmd, key, side)
  if type(key) ~= "string" then return "" end
  local cli = side == "cli"
  local function shown(n) return cli and ("'--" .. n:gsub("_", "-") .. "'") or ("'" .. n .. "'") end
  local k = key:lower():gsub("%-", "_")
  local foreign = FOREIGN[k] and FOREIGN[k][cmd]
  foreign = foreign and foreign(cli)
  if foreign then return foreign end
  -- A key this command's Lua function takes and no command line does
  -- (lua_only: 'train --optimizer-impl' was "did you mean
  -- '--optimizer'?", which is another option).
  local own = BY[k]
  -- ... save where the command line gives it as its argument ('train
  -- --model X' is 'train X', which "a key of gp.train only" hid)
  if cli and own and own.argument and own.lua_set[cmd] then
    return " (" .. own.name .. " is the command's " .. own.argument .. " argument, not a flag: "
      .. "gpuplan " .. cmd .. " " .. own.argument .. " ...)"
  end
  if cli and own and own.lua_set[cmd] and not own.cli_set[cmd] and M.FUNCTION[cmd] then
    return " (" .. own.name .. " is a key of " .. M.FUNCTION[cmd] .. " only, not a flag: "
      .. "docs/lua.md)"
  end
  -- The converse: a flag of this command's line that its Lua function
  -- does not take (cli_only).  gp.infer{target = 1000} was "did you mean
  -- 'market'?", gp.sweep{svg = ...} "did you mean 'seq'?", gp.infer{ops =
  -- true} "did you mean 'gpu'?": near names that are other options.
  if not cli and own and own.cli_set[cmd] and not own.lua_set[cmd] and M.FUNCTION[cmd] then
    return " (--" .. own.name:gsub("_", "-") .. " is a flag of gpuplan " .. cmd .. ", not a key of "
      .. M.FUNCTION[cmd] .. (own.in_lua and (": " .. own.in_lua) or "") .. ")"
  end
  -- One edit from a name this command takes: that name, before any
  -- synonym (comm's 'node' is its nodes, not the system that 'node'
  -- stands for in the job commands).
  for _, d in ipairs(D) do
    if M.takes(cmd, d.name, side) and #k > 2 and M.distance(k, d.name, 1) == 1 then
      return " (did you mean " .. shown(d.name) .. "?)"
    end
  end
  -- A synonym users write for an option of this command.
  for _, d in ipairs(D) do
    if M.takes(cmd, d.name, side) then
      for _, s in ipairs(d.suggest or {}) do
        if s == k then return " (did you mean " .. shown(d.name) .. "?)" end
      end
    end
  end
  -- An option of other commands; on the command line also a switch's
  -- --no- form ('train --no-progress' said nothing of plan, where
  -- '--progress' did).
  local d = BY[k]
  if not d and cli and k:match("^no_") then
    d = BY[k:sub(4)]
    if d and d.type ~= "flag" and d.type ~= "boolean" then d = nil end
  end
  if d and not M.takes(cmd, d.name, side) then
    local where = {}
    for _, c in ipairs(M.COMMANDS) do
      if (cli and d.cli_set or d.lua_set)[c] then
        where[#where + 1] = cli and c or M.FUNCTION[c]
      end
    end
    if #where > 0 then
      return " (an option of " .. (cli and "gpuplan " or "") .. list_words(where) .. ")"
    end
    -- a Lua-only key of other commands: its functions, not a near flag
    if cli and d.lua_only then
      for _, c in ipairs(M.COMMANDS) do
        if d.lua_set[c] and M.FUNCTION[c] then where[#where + 1] = M.FUNCTION[c] end
      end
      if #where > 0 then return " (a Lua option of " .. list_words(where) .. ")" end
    end
  end
  -- A field of the model (shared_norm, parallel_attn, qk_norm ...) given
  -- as the job's option, after the synonyms (dtype: precision): it is the architecture's, set in the model's
  -- catalog entry or a script's model table.  'train --shared-norm' was
  -- "unknown option" with no word of where it goes.
  if cmd ~= "comm" and not BY[k] and not MODEL_FIELD_NOT_HINTED[k] then
    local ok, schema = pcall(require, "gpuplan.schema")
    local fields = ok and schema.model and schema.model.fields
    if type(fields) == "table" and fields[k] ~= nil then
      return " (" .. k .. " is a field of the model, not of the job: set it in the model's "
        .. (cli and "catalog entry, docs/models.md)"
          or "catalog entry or a model table, model = { ..., " .. k .. " = ... }: docs/models.md)")
    end
  end
  -- A near miss or an abbreviation (args.nearest) among this command's.
  local names = {}
  for _, o in ipairs(D) do
    if M.takes(cmd, o.name, side) then names[#names + 1] = o.name end
  end
  -- A switch's --no- form with the switch misspelt or spelt out
  -- ('rl --no-reference-model' named nothing): the nearest of the
  -- command's switches, with its --no- (cli.parse takes --no-NAME for
  -- every flag).  Read before the near miss over the whole key, which
  -- found the switch itself and offered the form that turns it on
  -- ('train --no-flash-attention': '--flash'), or an option that takes a
  -- value ('--no-cudnn': '--cudnn').
  -- An option of the command that takes a value (--no-top, --no-cudnn)
  -- has no --no- form: said so, and no near name is offered for it.
  local no = cli and k:match("^no_(.+)$")
  if no then
    local r = BY[no]
    if r and r.type ~= "flag" then
      -- (another command's: no switch of this one is what it meant)
      if M.takes(cmd, r.name, side) then
        return " (" .. shown(r.name) .. " takes a value and has no --no- form)"
      end
    else
      local flags = {}
      for _, o in ipairs(D) do
        if o.type == "flag" and M.takes(cmd, o.name, side) then flags[#flags + 1] = o.name end
      end
      local off = args.nearest(no, flags)
      if off then return " (did you mean '--no-" .. off:gsub("_", "-") .. "'?)" end
    end
  end
  local best = args.nearest(k, names)
  -- (a switch found for a --no- key is offered in its --no- form)
  if best and no and BY[best] and BY[best].type == "flag" then
    return " (did you mean '--no-" .. best:gsub("_", "-") .. "'?)"
  end
  if best then return " (did you mean " .. shown(best) .. "?)" end
  return ""
end

-- The first key of t (sorted) that cmd's Lua function does not accept,
-- nor also(k) (optional) -- or nil.
function M.unknown(t, cmd, also)
  local keys = M.keys(cmd)
  return args.unknown_key(t, function(k) return keys[k] or (also ~= nil and also(k)) end)
end

-- "who: unknown option 'key' (did you mean 'x'?)": the Lua error of cmd
-- (args.unknown_option's words, as every gp.* call and the command line).
-- extra: names the function takes besides cmd's options (infer_plan's
-- target), suggested when no option is.
function M.unknown_message(cmd, key, who, extra)
  local hint = M.hint(cmd, key, "lua")
  local near = hint == "" and extra and args.nearest(key, extra)
  if near then hint = " (did you mean '" .. near .. "'?)" end
  return args.unknown_option(who or cmd, "'" .. tostring(key) .. "'", hint)
end

-- A function for cli.parse: the hint after "unknown option '--name'".
function M.cli_hint(cmd)
  return function(key) return M.hint(cmd, key, "cli") end
end

-- --help ------------------------------------------------------------------

local WIDTH, COL = 76, 20

-- Words of s wrapped into lines: the first starts after `first` (a
-- string), the rest are indented to COL.
local function wrap(first, s)
  local lines, line = {}, first
  local fresh = true
  -- A word longer than a line (a|b|c|... alternatives) breaks after a "|".
  local words = {}
  for word in s:gmatch("%S+") do
    while #word > WIDTH - COL do
      local cut = word:sub(1, WIDTH - COL):match("^.*|")
      if not cut then break end
      words[#words + 1] = cut
      word = word:sub(#cut + 1)
    end
    words[#words + 1] = word
  end
  for _, word in ipairs(words) do
    if not fresh and #line + 1 + #word > WIDTH then
      lines[#lines + 1] = line
      line = string.rep(" ", COL) .. word
    else
      line = line .. (fresh and "" or " ") .. word
    end
    fresh = false
  end
  lines[#lines + 1] = line
  return lines
end

-- One option as command cmd's help shows it: the flag as written (--gpu,
-- --no-flash, --[no-]sp), its value's placeholder (nil for a flag) and the
-- help text with the command's note and its default.  --help, the man page
-- and the references (gpuplan.docgen) all show this.
function M.describe(d, cmd)
  local v = M.view(d, cmd)
  local flag = v.name:gsub("_", "-")
  local left, metavar
  if v.type == "flag" then
    local form = v.form or (v.default == true and "no") or nil
    if form == "no" then left = "--no-" .. flag
    elseif form == "both" then left = "--[no-]" .. flag
    else left = "--" .. flag end
  else
    left, metavar = "--" .. flag, v.metavar or "X"
  end
  local text = v.help
  if v.note then text = text .. "; " .. v.note end
  local dflt = v.default
  if dflt == "required" then
    text = text .. " (required)"
  elseif dflt ~= nil and type(dflt) ~= "boolean" then
    text = text .. " (default " .. tostring(dflt) .. ")"
  end
  return left, metavar, text
end

-- The option line(s) of one option as command cmd takes it.
function M.help_line(d, cmd)
  local flag, metavar, text = M.describe(d, cmd)
  local left = "  " .. flag .. (metavar and (" " .. metavar) or "")
  local first = #left + 2 <= COL and left .. string.rep(" ", COL - #left) or left .. "  "
  return wrap(first, text)
end

-- The option lines of command cmd's --help, grouped under headings.
function M.help(cmd)
  local out = {}
  for _, g in ipairs(M.GROUPS) do
    local rows = {}
    for _, d in ipairs(D) do
      if d.cli_set[cmd] and M.view(d, cmd).group == g[1] then
        for _, l in ipairs(M.help_line(d, cmd)) do rows[#rows + 1] = l end
      end
    end
    if #rows > 0 then
      if #out > 0 then out[#out + 1] = "" end
      out[#out + 1] = g[2] .. ":"
      for _, l in ipairs(rows) do out[#out + 1] = l end
    end
  end
  return table.concat(out, "\n")
end

-- A command's whole usage: its header, the option lines, its closing prose.
function M.usage(cmd, head, tail)
  return head .. "\n\n" .. M.help(cmd) .. (tail and ("\n\n" .. tail) or "")
end

-- A command module's usage, built the first time something reads C.usage
-- (--help, a usage error, the generated references) from what
-- M.usage_of(cmd, head, tail) kept: a command that runs never reads it,
-- and wrapping every option's help for it was a fifth of the time of a
-- short command such as `gpuplan train ...` (`make test` runs gpuplan
-- some thousands of times).
function M.usage_of(cmd, head, tail)
  return { later = true, cmd = cmd, head = head, tail = tail }
end

function M.command(C)
  local u = rawget(C, "usage")
  if type(u) ~= "table" or not u.later then return C end
  C.usage = nil
  return setmetatable(C, { __index = function(t, k)
    if k ~= "usage" then return nil end
    local text = M.usage(u.cmd, u.head, u.tail)
    rawset(t, "usage", text)
    return text
  end })
end

return M
