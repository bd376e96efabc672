-- gpuplan.memory: "does it fit?" -- the per-GPU memory breakdown.
--
--   local gp = require "gpuplan"
--   local r = gp.memory{ model = "llama2-7b", gpu = "h100-sxm", gpus = 8,
--                        method = "full", zero = 3, seq = 4096, batch = 1 }
--   print(r.fits, r.total / gp.GiB, r.largest)
--   for _, c in ipairs(r.components) do print(c.name, c.bytes) end
--
-- The arithmetic is engine/memory.c (core.memory); this module turns
-- names (models, GPUs, methods, dtypes) into the engine's numbers and
-- records every default it chose in r.defaults.

local units = require "gpuplan.units"

local options = require "gpuplan.options"
local M = {}

-- Training precision -> recipe, by software stack (memory.h has the bytes
-- and the sources).  The stack is who owns the optimizer:
--   megatron   Megatron-LM: bf16/fp16 params with fp32 main grads, master
--              and Adam states, 18 B/param (6 + 12/d with its distributed
--              optimizer, which gpuplan spells zero = 1).
--   deepspeed  DeepSpeed (and Megatron-DeepSpeed): bf16 runs through
--              BF16_Optimizer, 20 B/param (8 + 12/d); fp16 through the
--              classic mixed-precision ZeRO optimizer, 16 B/param.
--   hf         HF Trainer / accelerate / PEFT / LitGPT / torchtune on plain
--              torch.optim: mixed precision with fp32 master and Adam
--              states, the ZeRO paper's 16 B/param.
-- fp8 and fp32 are one recipe each whatever the stack.
local RECIPE = {
  megatron = { bf16 = "megatron-18", fp16 = "megatron-18" },
  deepspeed = { bf16 = "deepspeed-bf16", fp16 = "mixed-16" },
  hf = { bf16 = "mixed-16", fp16 = "mixed-16" },
  any = { fp8 = "fp8", fp32 = "fp32", tf32 = "fp32" },
}
M.stacks = { megatron = true, deepspeed = true, hf = true }
-- The recipe a stack trains a precision with, or nil (the declared
-- default of option recipe).
function M.stack_recipe(stack, precision)
  return (RECIPE[stack] or {})[precision] or RECIPE.any[precision]
end

-- Weight storage formats: bits per weight plus group overhead (memory.h).
M.weight_formats = {
  fp32 = { bits = 32 }, bf16 = { bits = 16 }, fp16 = { bits = 16 },
  fp8 = { bits = 8 }, int8 = { bits = 8 },
  -- bitsandbytes NF4 as its plain mode stores it: 4-bit codes and one fp32
  -- absmax per 64-weight block, 4 + 32/64 = 4.5 bits (bitsandbytes
  -- quantize_4bit, blocksize 64; HF BitsAndBytesConfig defaults
  -- bnb_4bit_use_double_quant=False; Lightning's BitsandbytesPrecision
  -- names it "nf4" and the double-quantised one "nf4-dq").
  nf4 = { bits = 4, group = 64, group_bits = 32 },
  -- NF4 + double quantisation: the absmax itself in 8 bits with an fp32
  -- scale per 256 blocks, 4 + (8 + 32/256)/64 = 4.127 bits (Dettmers et
  -- al. 2023, QLoRA, sec. 3 "Double Quantization") -- the QLoRA recipe.
  ["nf4-dq"] = { bits = 4, group = 64, group_bits = 8 + 32 / 256 },
  -- GPTQ / AWQ int4, group 128, fp16 scale + 4-bit zero point per group
  -- (Frantar et al. 2023; Lin et al. 2024; AutoGPTQ/AutoAWQ packing).
  int4 = { bits = 4, group = 128, group_bits = 16 + 4 },
  gptq = { bits = 4, group = 128, group_bits = 16 + 4 },
  awq = { bits = 4, group = 128, group_bits = 16 + 4 },
  -- NVFP4: an fp8 (E4M3) scale per 16 elements (NVIDIA Blackwell NVFP4).
  fp4 = { bits = 4, group = 16, group_bits = 8 },
  -- SmoothQuant-style W8A8: int8 weights, per-channel scales (< 0.01 bit).
  w8a8 = { bits = 8 },
  -- OCP Microscaling v1.0: an E8M0 scale per 32 elements, 4 + 8/32 = 4.25
  -- (MXFP4) and 6 + 8/32 = 6.25 (MXFP6); the block is fixed by the format.
  mxfp4 = { bits = 4, group = 32, group_bits = 8, fixed_group = true },
  fp6 = { bits = 6, group = 32, group_bits = 8, fixed_group = true },
}

-- Effective bits per weight of a format (codes plus the group scales):
-- int4 4 + 20/128 = 4.156, nf4-dq 4.127, fp4 4.5.
function M.weight_bits(f)
  return f.bits + (f.group and f.group_bits / f.group or 0)
end

-- Bytes per cached K/V element.
-- fp4 is NVFP4's E2M1 nibble and one 8-bit block scale per 16 elements:
-- FlashInfer's nvfp4_kv_dequantize takes "block_scales ... [M, K/16]"
-- uint8 beside the "[M, K/2]" packed data, SGLang's MHATokenToKVPoolFP4
-- allocates "(m, (n * k) // scale_block_size)" uint8 scales with
-- scale_block_size = 16: 0.5 + 1/16 B an element (the per-tensor fp32
-- global scale is negligible).
M.kv_bytes = { fp32 = 4, bf16 = 2, fp16 = 2, fp8 = 1, int8 = 1, fp4 = 0.5 + 1 / 16, int4 = 0.5 }

-- The caller a refusal names: the `who` of the M.prepare on the stack
-- (gp.train's "train", gp.sweep's "sweep"), so every option's refusal
-- opens as the function's others do ("train: attn_clamp ... needs flash =
-- false" where it read "attn_clamp ...", and "train: model is required"
-- where it read "memory: ..."); nil outside it.
local prepare_fn
local function caller()
  for level = 3, 200 do
    local info = debug.getinfo(level, "f")
    if not info then return nil end
    if info.func == prepare_fn then
      for i = 1, 8 do
        local name, v = debug.getlocal(level, i)
        if name == nil then break end
        if name == "who" then return v end
      end
      return nil
    end
  end
end

-- A refusal's message, opening with the caller's name.
local function named(fmt, ...)
  local msg = string.format(fmt, ...)
  local who = caller()
  -- gp.memory's refusals open with "memory: " as its others do (zero_group's
  -- and the layout's read bare); gpuplan fit drops that head and names the
  -- option the user typed (cmd/fit.lua).
  if who == "memory" and msg:sub(1, 8) ~= "memory: " then return "memory: " .. msg end
  if who and who ~= "memory" then
    local head = msg:match("^memory: ")
    if head and who ~= "memory" then
      msg = who .. ": " .. msg:sub(#head + 1)
    elseif msg:sub(1, #who + 2) ~= who .. ": " then
      msg = who .. ": " .. msg
    end
  end
  return msg
end

local function fail(fmt, ...) error(named(fmt, ...), 3) end

-- Where a model's context is too short for `need` tokens: the catalog
-- models of its family with the same shape (layers, hidden, heads,
-- kv_heads, ffn_hidden, vocab) whose context holds them, as a refusal's
-- tail ("; llama3.1-70b, llama3.3-70b (same shape, context 131072) hold
-- it"), else "".  Llama 3 70B's 8192 against Llama 3.1 70B's 131072 is
-- the case a user meets: the same weights' shape, a longer RoPE context.
function M.longer_context(model, need, cat)
  if type(model) ~= "table" or not model.family then return "" end
  local ok, c = pcall(function() return cat or require("gpuplan").catalog() end)
  if not ok or not c then return "" end
  local found, ctx = {}, nil
  for _, id in ipairs(c:ids("models")) do
    local m = c:get("models", id)
    if id ~= model.id and m.family == model.family and (m.max_seq or 0) >= need then
      local same = true
      for _, k in ipairs { "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab" } do
        if m[k] ~= model[k] then same = false end
      end
      if same and not m.moe == not model.moe then
        found[#found + 1] = id
        ctx = ctx and math.min(ctx, m.max_seq) or m.max_seq
      end
    end
  end
  if #found == 0 then return "" end
  return string.format("; %s of the same family and shape hold%s it (context %d%s)",
    table.concat(found, ", "), #found == 1 and "s" or "", ctx, #found > 1 and " or more" or "")
end
-- A usage refusal (gpuplan.args usage): options that do not go together,
-- whatever the model and the card; the command line exits 2 on it.
local function usage(fmt, ...) error(require("gpuplan.args").usage(named(fmt, ...)), 3) end

-- Option key's value v read as a weight format (M.weight_format, defined
-- below), refused under key: M.weight_format says "unknown weight format
-- 'x'" or "weights: 0 bits ...", and gp.memory{rollout_weights = "x"}
-- was told of no key at all, the command line of --weights, a flag the
-- user never gave (tests/lua/fuzz_options.t).
local function keyed_format(key, v)
  local ok, f = pcall(M.weight_format, v)
  if ok then return f end
  local msg = tostring(f):gsub("^[^%s:]+:%d+: ", "", 1)
  -- (the caller's head, "train: ", its own refusal put there: usage()
  -- puts it back)
  local head = msg:match("^([%a_]+): ")
  if head and head ~= "weights" then msg = msg:sub(#head + 3) end
  msg = msg:gsub("^weights([: ])", key .. "%1", 1)
  if msg:sub(1, #key + 1) ~= key .. ":" and msg:sub(1, #key + 1) ~= key .. " " then
    msg = key .. ": " .. msg
  end
  if require("gpuplan.args").is_usage(f) then usage("%s", msg) end
  fail("%s", msg)
end

-- A training job's offload values (the engine's c_offload reads the same
-- four; "params" is params+optimizer's short name).
local TRAIN_OFFLOAD = { none = true, optimizer = true, params = true,
                        ["params+optimizer"] = true }

-- A weight format from a name, a bits-per-weight number (GGUF-style
-- "4.85") or a {bits=, group=, group_bits=} table.  The one rule for
-- --weights in every command (fit, infer, the RL rollout engine): infer
-- reads its bits from here too.
-- Bits per weight: from 1 (BitNet's binary weights; GGUF's smallest,
-- IQ1_S, is 1.56) to 32 (fp32), as engine/infer.c bounds them; a group
-- of 1 to 65536 weights sharing scales of up to 64 bits (an fp32 scale
-- and an fp32 zero point).  1e-300 bits made any model fit, group_bits
-- 1e300 every model short by inf.
local function check_format(w)
  local function bad(field, range, v)
    fail("weights: %s must be %s (got %s)", field, range, require("gpuplan.args").shown(v))
  end
  local b = w.bits
  if type(b) ~= "number" or not (b >= 1 and b <= 32) then bad("bits", "a number in [1, 32]", b) end
  local g, gb = w.group, w.group_bits
  if g ~= nil and not (math.type(g) == "integer" or (type(g) == "number" and g == math.floor(g)))
     or g ~= nil and not (g >= 0 and g <= 65536) then
    bad("group", "a whole number of weights, 1..65536 (0: none)", g)
  end
  if gb ~= nil and (type(gb) ~= "number" or not (gb >= 0 and gb <= 64)) then
    bad("group_bits", "a number of bits in [0, 64]", gb)
  end
  if (gb or 0) > 0 and (g or 0) == 0 then bad("group", "given with group_bits", g) end
  for k in pairs(w) do
    if k ~= "bits" and k ~= "group" and k ~= "group_bits" then
      fail("weights: unknown field '%s' (bits, group, group_bits)", tostring(k))
    end
  end
  return { bits = b, group = g and math.tointeger(g) or nil, group_bits = gb }
end

-- What a refused weight format's message adds where the name is
-- another's for one gpuplan prices, or "": NVIDIA's name for fp4 (issue
-- 22's "NVFP4 grouped GEMMs"), so that the user who asks for nvfp4 is
-- told which name prices it and that mxfp4 is the other 4-bit block
-- format (weight_formats above: fp4's E4M3 scale per 16, mxfp4's E8M0
-- per 32).  The case reader's refusals (gpuplan.validate workload.
-- weight_dtype, expert_weight_dtype) add the same words.
function M.weight_name_hint(w)
  if type(w) == "string" and w:lower() == "nvfp4" then
    return "; NVFP4 is fp4 here (an fp8 E4M3 scale per 16 weights; mxfp4 is OCP's "
      .. "MXFP4, an E8M0 scale per 32)"
  end
  return ""
end

function M.weight_format(w)
  if type(w) == "table" then return check_format(w) end
  if type(w) == "number" or (type(w) == "string" and tonumber(w)) then
    local b = tonumber(w)
    if not (b >= 1 and b <= 32) then
      fail("weights: %s bits per weight is out of [1, 32]",
        type(w) == "string" and w or require("gpuplan.args").shown(w))
    end
    return { bits = b }
  end
  local f = M.weight_formats[w]
  -- A grouped integer format with its group size and, optionally, its
  -- scale dtype: "gptq-g64", "awq-g32-fp32".  Each group stores a scale
  -- and a 4-bit zero point (AutoGPTQ / AutoAWQ packing).
  local base, g, scale = tostring(w):match("^(%a+%d?)%-g(%d+)(.*)$")
  if not f and base and M.weight_formats[base] and M.weight_formats[base].group
     and not M.weight_formats[base].fixed_group then
    local sb = ({ [""] = 16, ["-fp16"] = 16, ["-bf16"] = 16, ["-fp32"] = 32 })[scale]
    -- "gptq-g1.5" or "gptq-g64x": the group's digits run on into no
    -- "-" scale (it was refused as a scale dtype, naming none)
    if not sb and scale:sub(1, 1) ~= "-" then
      fail("weights '%s': group size must be a whole number 1..65536", w)
    end
    if not sb then
      fail("weights '%s': scale dtype must be -fp16, -bf16 or -fp32", w)
    end
    local group = math.tointeger(tonumber(g))
    if not group or group < 1 or group > 65536 then
      fail("weights '%s': group size must be 1..65536", w)
    end
    local b = M.weight_formats[base]
    return { bits = b.bits, group = group, group_bits = sb + (base == "fp4" and 0 or 4) }
  end
  if not f then
    local names = {}
    for k in pairs(M.weight_formats) do names[#names + 1] = k end
    table.sort(names)
    -- A llama.cpp user types the GGUF type (Q4_K_M, Q8_0, IQ4_XS); the
    -- refusal said "or bits per weight" without which bits.  GGUF types
    -- mix quantizations per tensor, so the bits are the file's: llama.cpp
    -- tools/quantize/README.md (ggml-org/llama.cpp@311c2c9f) tabulates
    -- them for Llama 3.1 8B, "| Q4_K_M | 4.8944 | 4.58 |" (bits/weight,
    -- GiB); the hint points there rather than guessing another model's.
    local gguf = ""
    if type(w) == "string" and (w:lower():match("^i?q%d") or w:lower() == "f16") then
      -- (gpuplan infer prices the types it lays out by name:
      -- gpuplan.infer GGUF_TYPES)
      local names = {}
      for k in pairs(require("gpuplan.infer").GGUF_TYPES) do names[#names + 1] = k:upper() end
      table.sort(names)
      gguf = string.format("; gpuplan infer and fit --method infer take %s by name; another "
        .. "GGUF type is given as "
        .. "its bits per weight, e.g. --weights 4.89 for Q4_K_M (the bits/weight column of "
        .. "llama.cpp's tools/quantize/README.md, Llama 3.1 8B)", table.concat(names, ", "))
    end
    gguf = gguf .. M.weight_name_hint(w)
    usage("unknown weight format '%s' (expected %s or bits per weight)%s", tostring(w),
      table.concat(names, "|"), gguf)
  end
  return f
end

local function kv_elem(k)
  if k == nil then return 2 end
  local b = M.kv_bytes[k] or tonumber(k)
  if not b then usage("unknown kv dtype '%s' (expected bf16|fp16|fp8|int8|fp4|int4|fp32)", tostring(k)) end
  -- A number is bytes per element: fp32 (4) is the widest cache anyone
  -- keeps; 8 leaves room for fp64 experiments, 0 or less is no dtype.
  if not (b > 0 and b <= 8) then
    fail("kv: %s bytes per element is out of (0, 8]", b == b and tostring(b) or "NaN")
  end
  return b
end

local function get(cat_kind, v, cat)
  -- a script's own gpu table is checked as a catalog file's gpu{} is
  if type(v) == "table" then
    return cat_kind == "gpu" and require("gpuplan.catalog").entry("gpu", v) or v
  end
  -- the value given, as gp.infer and gp.roofline name it ("gpu must be
  -- an id or a table" alone left gpu = 5 and gpu = true alike)
  if type(v) ~= "string" then
    fail("%s must be an id or a table (got %s)", cat_kind, require("gpuplan.args").shown(v))
  end
  cat = cat or require("gpuplan").catalog()
  return cat:get(cat_kind .. "s", v)
end

local shown = require("gpuplan.args").shown
-- The LoRA target names (engine/memory_act.c mem_lora_targets_parse).
local LORA_TARGETS = { q = true, k = true, v = true, o = true, gate = true, up = true, down = true }
-- The recompute policies a job may name: the engine's (engine/memory_act.c)
-- and auto, the least that fits.
local RECOMPUTE = { none = true, selective = true, full = true, op = true, auto = true }

-- A count (GPUs, a parallel size, sequences, a rank) and the tokens of
-- one sequence: the rules of their kinds (gpuplan.options), raised at
-- the caller's level.
M.COUNT_MAX, M.TOKENS_MAX = options.COUNT_MAX, options.TOKENS_MAX
local function posint(name, v, def)
  if v == nil then return def end
  local msg = options.bad_count(name, v)
  if msg then fail("%s", msg) end
  return math.tointeger(v)
end

local function tokens(name, v, def)
  if v == nil then return def end
  local msg = options.bad_tokens(name, v)
  if msg then fail("%s", msg) end
  return math.tointeger(v)
end

-- PyTorch FSDP's sharding strategies (torch.distributed.fsdp.ShardingStrategy;
-- FSDP2's fully_shard(reshard_after_forward=)), each the ZeRO stage whose
-- states it shards (Zhao et al. 2023, PyTorch FSDP, sec. 3.2):
--   full_shard     parameters, gradients and optimizer states sharded; each
--                  layer gathered for its forward, resharded, gathered again
--                  for its backward (reshard_after_forward=True): zero 3
--   shard_grad_op  gradients and optimizer states sharded; the parameters
--                  gathered for the forward stay whole until the backward is
--                  done (reshard_after_forward=False): zero 2
--   hybrid_shard   full_shard within a node, the shard groups replicated
--                  across nodes: gathers and reduce-scatters in the node,
--                  the reduced shard all-reduced across nodes; the states
--                  shard over the node's data-parallel ranks (HYBRID_SHARD;
--                  FSDP2's fully_shard on a 2-D replicate x shard mesh):
--                  zero 3 with the engine's hsdp set to the node's GPUs
M.FSDP_ZERO = { full_shard = 3, shard_grad_op = 2, hybrid_shard = 3 }
-- When gradients are reduce-scattered: each micro-batch (FSDP's default),
-- or once per step after accumulating whole gradients over the micro-batches
-- (FSDP's no_sync / set_requires_gradient_sync(False), as torch.distributed.
-- pipelining runs FSDP under a pipeline).
M.GRAD_SYNC = { micro_batch = true, step = true }

-- M.sharding(fsdp, grad_sync, zero) -> strategy (nil: no FSDP), the ZeRO
-- stage the engine prices, whether the gradients are whole (zero 3 only).  fsdp: a strategy name, or true (full_shard,
-- the Lua and case-file boolean of before).  shard_grad_op with one
-- gradient sync per step keeps whole parameters and whole gradients from
-- the first micro-batch's forward to the step's one reduce-scatter (FSDP's
-- _should_free_in_backward keeps SHARD_GRAD_OP's parameters unsharded
-- outside a sync): one all-gather and one reduce-scatter of the stage's
-- weights per step, with only the optimizer states sharded -- what zero 1
-- (a distributed optimizer) sends and holds.
function M.sharding(fsdp, grad_sync, zero)
  local shown = require("gpuplan.args").shown
  if fsdp == true then fsdp = "full_shard" end
  if fsdp == false then fsdp = nil end
  if fsdp ~= nil and not M.FSDP_ZERO[fsdp] then
    usage("fsdp must be full_shard, shard_grad_op or hybrid_shard (got %s)", shown(fsdp))
  end
  if grad_sync ~= nil and not M.GRAD_SYNC[grad_sync] then
    usage("grad_sync must be micro_batch or step (got %s)", shown(grad_sync))
  end
  if fsdp == nil then
    if grad_sync ~= nil then
      usage("grad_sync %s needs fsdp (ZeRO 0/1 reduce once per step, ZeRO 2/3 per "
        .. "micro-batch)", grad_sync)
    end
    return nil, zero
  end
  local z = M.FSDP_ZERO[fsdp]
  -- a whole float as the count it is: a case file's "zero": 1 (JSON,
  -- read as 1.0) or a script's 1.0 read "not 1.0"
  if zero ~= nil and zero ~= z then
    usage("fsdp %s is zero %d, not %s", fsdp, z, math.tointeger(zero) or shown(zero))
  end
  -- full_shard under no_sync still gathers every layer for each
  -- micro-batch's forward and backward, but accumulates whole gradients
  -- and reduce-scatters them once per step (PyTorch pull request 126166
  -- on FSDP2's set_requires_gradient_sync: "no reduce-scatter ... avoids
  -- the communication but uses more gradient memory (storing the
  -- unsharded gradients)"): whole = true (memory.h grads_whole).
  if grad_sync == "step" then
    if z == 3 then return fsdp, z, true end
    z = 1
  end
  return fsdp, z, false
end

-- PyTorch FSDP's version (engine/train_stage.c fsdp_copies; the whole
-- gradients' bytes, engine/memory_train.c whole_grad_bytes) of a step on
-- stack under the FSDP rule rule (gp.train's step_choices fsdp_rule: a
-- strategy given, or the hf stack's sharding), at_zero: the rule at the
-- step's ZeRO stage (where the engine reads it): o's fsdp_version, else
-- its declared default -> version, why it is refused (nil: not), the
-- default's "defaults assumed" text.  Only the hf stack's sharding is
-- PyTorch FSDP (Megatron-FSDP and DeepSpeed have their own buffers).
-- gp.train's setup asks it of its own step, a job's step that gives fsdp
-- of that step, and gp.memory / fit (M.prepare) of theirs.
function M.fsdp_version(o, stack, rule, at_zero)
  local fv = o.fsdp_version
  if fv ~= nil and not (rule and stack == "hf") then
    return nil, string.format("fsdp_version is PyTorch FSDP's (1 or 2): it needs stack = hf "
      .. "with fsdp (got stack %s%s)", tostring(stack), rule and "" or " without fsdp")
  end
  if fv ~= nil then return fv end
  local v, text = options.default("fsdp_version", { stack = stack, fsdp = at_zero })
  return v, nil, text
end

-- The DP gradient reduction's dtype (the grad_reduce option) into cfg,
-- the engine's reduce_bytes: what the step's reduction moves
-- (engine/train_prep.c) and FSDP2's whole gradients hold
-- (engine/memory_train.c whole_grad_bytes).  who: the caller's name for
-- its messages (train, memory).
function M.grad_reduce(o, cfg, who)
  if o.grad_reduce == nil then return end
  local b = ({ fp32 = 4, bf16 = 2, fp16 = 2 })[o.grad_reduce]
  if not b then
    fail("%s: grad_reduce must be fp32, bf16 or fp16 (got %s)", who,
      require("gpuplan.args").shown(o.grad_reduce))
  end
  cfg.reduce_bytes = b
  -- Megatron-Core keeps its gradients in the buffer it reduces:
  -- distributed_data_parallel.py, "grad_dtype = torch.float if
  -- self.ddp_config.grad_reduce_in_fp32 else param.dtype" -- bf16
  -- main grads (2 B/param) when the reduction is bf16.
  if cfg.stack == "megatron" and cfg.recipe.grads ~= b then
    local r = {}
    for k, v in pairs(cfg.recipe) do r[k] = v end
    r.grads = b
    cfg.recipe = r
  end
end

-- The sharding as the user asked for it, for the commands' titles: FSDP's
-- strategy (and its gradient sync) by name, then the ZeRO stage it prices
-- as -- shard_grad_op with grad_sync step is ZeRO 1 (M.sharding above),
-- and "zero 1" alone would lose the words the user typed.  hsdp: the
-- hybrid shard group's GPUs (0 or nil: none); group: the zero_group the
-- user gave (its shard groups' data-parallel ranks), said as such.
function M.sharding_words(fsdp, grad_sync, zero, hsdp, group)
  if fsdp == true then fsdp = "full_shard" elseif fsdp == false then fsdp = nil end
  local s = string.format("zero %d%s", zero,
    group and string.format(" in groups of %d rank%s", group, group == 1 and "" or "s") or
    (hsdp or 0) > 0 and string.format(" hybrid in %d-GPU nodes", hsdp) or "")
  if not fsdp then return s end
  return string.format("fsdp %s%s (= %s)", fsdp, grad_sync and (", grad-sync " .. grad_sync) or "",
    s)
end

local function boolean(name, v)
  if v ~= nil and type(v) ~= "boolean" then
    fail("%s must be a boolean (got %s)", name, type(v))
  end
  return v
end

-- The share of a card's memory CUDA lets a framework allocate when the
-- catalog does not say (catalog/FORMAT.md "Memory capacity"): PyTorch's
-- total_memory (the "total capacity" of its OOM message) over the
-- marketed size read as GiB is 79.15/80 = 0.989 on A100 80GB,
-- 79.10-79.19/80 = 0.989-0.990 on H100 80GB, 139.80/141 = 0.991 on
-- H200 and 95.01/96 = 0.990 on RTX PRO 6000; the rest is the driver's
-- own reservation.  0.989, the low end, so a derived capacity does not
-- promise more than the measured cards give.
M.USABLE_FRACTION = 0.989

-- Capacity of a GPU entry in bytes, the one rule every command uses: the
-- catalog's usable_memory when it gives one, else memory x
-- USABLE_FRACTION.  Second result: true when derived.
function M.capacity(gpu)
  local u = gpu.usable_memory
  if type(u) == "string" then u = units.parse(u, "bytes") end
  if u ~= nil then
    if type(u) ~= "number" or not (u > 0 and u < math.huge) then
      fail("gpu '%s': usable_memory must be a positive size", tostring(gpu.id))
    end
    return u, false
  end
  local c = gpu.memory
  if type(c) == "string" then c = units.parse(c, "bytes") end
  if type(c) ~= "number" or not (c > 0 and c < math.huge) then
    fail("gpu '%s' has no memory size", tostring(gpu.id))
  end
  return c * M.USABLE_FRACTION, true
end

-- Every option M.memory reads, declared in gpuplan.options; anything else
-- is a misspelling (tp_size for tp) that would otherwise plan a different
-- job in silence.
local OPTIONS = options.keys("fit")

M.OPTIONS = OPTIONS

-- margin and kv_free_fraction given together (gp.memory's and gp.infer's
-- refusal): two rules for one KV pool.
M.KV_RULES_BOTH = "margin and kv_free_fraction are two rules for the KV pool (a share of the "
  .. "card held back, or a share of the memory the model leaves free): give one"

local METHODS = { pretrain = true, full = true, lora = true, qlora = true,
  grpo = true, ppo = true, infer = true }
M.METHODS = METHODS

-- M.memory{...} -> breakdown (see the header comment).  Options:
--   model, gpu (ids or tables), gpus, method, precision (bf16), recipe,
--   optimizer (adamw|adam8bit|sgd), tp, pp, cp, ep, vpp, zero, fsdp, sp,
--   seq, batch (micro-batch), microbatches, schedule, recompute, flash,
--   dropout, offload (none|optimizer|params+optimizer), lora_rank,
--   lora_targets ("q,v"), lora_dropout (p, or a boolean), weights (format), kv (dtype), concurrency, ctx,
--   block, chunk_tokens, kv_free_fraction, prompts, group, prompt_len, response_len, colocated, ppo
--   reward_model, margin, capacity (bytes, overrides the GPU's),
--   paged_optimizer, grads_in_bwd, logits_freed, fused_qkv_view, lora_zero_pad, quant_head, kv_repeat,
--   sac_attn_recompute (booleans,
--   memory.h gp_train_cfg), stack (megatron|deepspeed|hf), logit_bytes,
--   eager_swiglu, eager_softmax, eager_norm, autocast (boolean: fp32 weights under
--   torch.autocast), partition (auto|uniform|parameters|type:transformer|
--   type:transformer|embedding: layers per pipeline stage), images (per
--   sequence, vision-language models; seq counts their tokens),
--   train_vision (boolean: the ViT tower trains), video_frames (frames per
--   sequence, encoded temporal_patch at a time), image_size / frame_size
--   (pixels of a square image / frame; towers of native resolution only:
--   gpuplan.vlm), enc_seq (encoder-decoder models: encoder tokens per
--   sequence; seq is then the decoder's; default seq), cat.
-- The result carries `warnings`: codes of a plan that runs but wastes
-- something (M.WARNINGS), the same codes gp.train reports; and, training,
-- `recompute`: the policy the breakdown is of -- with recompute = "auto"
-- the one chosen, and then recompute_auto = true.
-- The fields of a catalog `recipe` / `optimizer` entry the engine reads
-- (engine/memory_states.h), and the record of the entry `name` of that kind
-- (its id kept for the results).
local RECORD_FIELDS = {
  recipe = { "weights", "grads", "master", "state", "reduce", "activations", "offload",
             "master_shard0", "reduce_phase" },
  optimizer = { "states", "state", "foreach_adamw", "scalar_states", "ns_steps", "dp_shard" },
}
function M.recipe_record(kind, name, cat)
  -- A script's own recipe table (as its own gpu and model tables are
  -- taken) was "recipe must be a name (got table)": neither the form the
  -- other refusals quote a value in nor where such an entry goes.
  if type(name) ~= "string" then
    fail("%s must be a name, a string (got %s)%s", kind, require("gpuplan.args").shown(name),
      type(name) == "table" and string.format(": %s %s of your own goes in a catalog file's "
        .. "%s{...} (gp.catalog{dirs = ...}, catalog/FORMAT.md)", kind == "optimizer" and "an" or "a",
        kind, kind) or "")
  end
  -- An id the catalog does not hold is a name outside the option's
  -- enum (the catalog's ids): a usage error, exit 2 as any unknown enum
  -- name, its "did you mean" kept.  A catalog that cannot be read stays
  -- the catalog's own error.
  local okg, e = pcall(get, kind, name, cat)
  if not okg then
    if type(e) == "string" and e:sub(1, #kind + 10) == "unknown " .. kind .. " '" then
      usage("%s", e)
    end
    error(e, 0)
  end
  local r = { id = e.id }
  for _, k in ipairs(RECORD_FIELDS[kind]) do r[k] = e[k] end
  return r
end

-- M.prepare's parts, in the order it runs them (the order of the
-- `defaults` it reports).  dflt(name, job) takes option name's declared
-- default (gpuplan.options) for the job and records it.

-- Inference: the replica's weights, KV cache, sequences and context.
local function prepare_infer(o, cfg, model, gpu, gpus, tp, pp, dflt, defaults)
  -- (images, train_vision ... under method infer: refused with every
  -- option of other methods, in prepare_fn)
  if gpus % (tp * pp) ~= 0 then
    -- gpus left out is 1 (gp.memory's default), a count the user never
    -- wrote: said as the default, with the count to give
    usage("gpus %d%s is not a multiple of tp*pp = %d%s", gpus,
      o.gpus == nil and " (the default)" or "", tp * pp,
      o.gpus == nil and string.format(": give gpus = %d", tp * pp) or "")
  end
  -- A replica's TP group within one node: gp.infer's rule, from there.
  -- (fit takes no runtime: the refusal names pp, not the runtimes whose
  -- group spans nodes)
  local beyond = gpu and require("gpuplan.infer").tp_beyond_node(tp, pp, gpu, nil, false)
  if beyond then fail("%s", beyond) end
  cfg.kind = "infer"
  local job = { method = "infer", model = model }
  -- The 16-bit default follows the card, as gp.infer's (gpuplan.infer
  -- half_dtype): fp16 where it has no bf16 -- a V100 read
  -- "defaults: weights=bf16" where gp.infer says fp16.
  local inf = require "gpuplan.infer"
  local half, no_bf16 = inf.half_dtype(gpu)
  local function said16(name)
    local v = dflt(name, job)
    if no_bf16 and v == "bf16" then
      defaults[#defaults] = string.format("%s=%s (%s)", name, half, no_bf16)
      return half
    end
    return v
  end
  -- A llama.cpp GGUF type (Q4_K_M, Q8_0 ...) as gp.infer reads it, by the
  -- same parser (gpuplan.infer gguf_mix, llama.cpp src/llama-quant.cpp's
  -- per-tensor rules): its layers' mean bits are the format and its ends
  -- their own types, so fit sizes the file gpuplan infer serves; refused
  -- where gp.infer refuses it (an MoE or MLA model).
  local okg, gguf = pcall(inf.gguf_mix, o.weights, model)
  if not okg then fail("%s", (tostring(gguf):gsub("^infer: ", "", 1))) end
  if gguf then
    cfg.weights = keyed_format("weights", gguf.layer_bits)
    cfg.embed_bits, cfg.head_bits = gguf.embed_bits, gguf.head_bits
    defaults[#defaults + 1] = gguf.said
    -- A GGUF file is served by llama.cpp (gp.infer's runtime for a GGUF
    -- type, gpuplan.infer gguf_runtime), which holds no fraction of the
    -- card back (gpuplan.infer runtime_memory, its source): the margin
    -- gpuplan infer sizes the same file with, where fit's 10% budget
    -- refused a file infer serves.
    if o.margin == nil and o.kv_free_fraction == nil then
      local rm = inf.runtime_memory["llama.cpp"]
      cfg.margin = rm.margin
      defaults[#defaults + 1] = rm.said
    end
  else
    cfg.weights = keyed_format("weights", o.weights or said16("weights"))
  end
  -- FP8 weights on a card that runs none (gpuplan.infer fp8_weights_on:
  -- no FP8 tensor cores and below compute capability 8.0, where vLLM's
  -- and SGLang's FP8 Marlin does not run): gp.infer's refusal, in its
  -- words; fit --method infer --weights fp8 on a V100 sized a
  -- checkpoint no runtime there loads.
  if type(gpu) == "table" and o.weights ~= nil and inf.weight_base(o.weights) == "fp8"
     and not inf.fp8_weights_on(gpu) then
    fail("weights fp8 on %s: %s; give weights = %s or int8", tostring(gpu.id),
      inf.FP8_WEIGHTS_FLOOR, half)
  end
  -- An FP8 KV cache on a card whose runtimes attend none (gpuplan.infer
  -- kv_fp8_refusal: below compute capability 8.0), as gp.infer refuses
  -- it; fit --method infer --kv fp8 on a V100 sized a cache vLLM cannot
  -- run there.
  if type(gpu) == "table" and o.kv == "fp8" then
    local why = inf.kv_fp8_refusal(gpu, nil)
    if why then fail("kv fp8 on %s: %s", tostring(gpu.id), why) end
  end
  cfg.kv_bytes = kv_elem(o.kv)
  if o.kv == nil and gguf and not no_bf16 then
    -- llama.cpp's f16 cache (the same two bytes), named as gp.infer names it
    cfg.kv_bytes = kv_elem("fp16")
    defaults[#defaults + 1] = inf.LLAMACPP_KV_SAID
  elseif o.kv == nil then said16("kv") end
  -- a hybrid stack's SSM state, as gp.infer sizes it
  cfg.mamba_ssm_bytes = inf.mamba_ssm_bytes(o.mamba_ssm_cache_dtype, model,
    function(text) defaults[#defaults + 1] = text end, "memory")
  cfg.seqs = posint(o.concurrency ~= nil and "concurrency" or "batch",
    o.concurrency or o.batch) or dflt("batch")
  cfg.ctx = tokens(o.ctx ~= nil and "ctx" or "seq", o.ctx or o.seq)
    or dflt("ctx", job)
  -- A served sequence holds its tokens in the model's context, as gp.infer
  -- refuses input + output past max_seq; here a context of a million
  -- tokens for an 8k model was priced.  Not for an encoder-decoder (its
  -- max_seq is a training length; gp.infer's rule).
  if model.max_seq and (model.encoder_layers or 0) == 0 and cfg.ctx > model.max_seq then
    fail("%s %d tokens exceed %s's context of %d tokens (max_seq)%s",
      o.ctx ~= nil and "ctx" or "seq", cfg.ctx, model.id or "the model", model.max_seq,
      M.longer_context(model, cfg.ctx))
  end
  cfg.block = o.block
  cfg.chunk_tokens = o.chunk_tokens
  -- The KV pool as a fraction of the memory free after loading
  -- (TensorRT-LLM kv_cache_free_gpu_mem_fraction; gp.infer's option too).
  local kf = o.kv_free_fraction
  if kf ~= nil and (type(kf) ~= "number" or not (kf > 0 and kf <= 1)) then
    fail("kv_free_fraction must be in (0, 1] (got %s)", shown(kf))
  end
  -- With the fraction the margin is the rest of the free memory
  -- (memory.h mem_kv_margin never reads the caller's): a margin given
  -- beside it was dropped without a word.
  if kf ~= nil and o.margin ~= nil then usage("%s", M.KV_RULES_BOTH) end
  cfg.kv_free_fraction = kf
  -- Serving's offload is the layers (gp.infer's flag, fit's --offload
  -- layers): anything else -- 40, "optimizer", "bogus" -- was dropped in
  -- silence and the job priced with no offload, where fit refuses it.
  local off = o.offload
  if off ~= nil and off ~= true and off ~= false and off ~= "layers" then
    fail("offload for method infer is 'layers' or a boolean (got %s)", shown(off))
  end
  cfg.offload = off == true or off == "layers"
end

-- DeepSpeed-Ulysses sequence parallelism (verl's FSDP workers'
-- ulysses_sequence_parallel_size): its size, 1 without, checked against
-- the layout and the model's heads.  The engine prices it as a CP group
-- of that size (each rank holds seq / N tokens outside attention, the
-- FSDP shard over dp x N as verl's device mesh is all the ranks) whose
-- exchange is Ulysses' all-to-alls (train_layer.c ulysses_comm), not a
-- ring.  The heads rule (verl's asserts in apply_monkey_patch: the heads
-- of a TP rank divide by N, its kv heads divide N or N them) is the
-- engine's one (layout.h layout_check_ulysses_heads, which train_job's
-- steps and the layout search check by too); its words are raised here.
-- C's INT_MAX: gp_model's heads and kv_heads are ints, and the binding
-- (core.ulysses_refusal) takes none past it
local INT_MAX = 0x7fffffff

-- Where the ulysses option runs, the one rule for gp.train, gp.rl,
-- gp.memory (fit) and the layout search (gpuplan.sweep space_of): nil
-- where a group of n ranks runs on stack `stack` with pp stages and tp
-- ranks, else why not, naming the options.
--   megatron: Megatron-Core's Ulysses is its context parallelism with
--     Transformer Engine's all-to-all exchange (megatron/training/
--     arguments.py: "--cp-comm-type ... p2p, a2a, allgather or a2a+p2p";
--     transformer_config.py: "\"a2a\": Like DeepSpeed Ulysses, scatter
--     attention heads across the CP group, and gather to get full
--     sequence of QKV"), TE's AttnFuncWithCPAndQKVOA2A, another
--     implementation than the one priced here (verl's): it repeats no kv
--     heads ("assert q.shape[-2] % cp_size == 0 and k.shape[-2] %
--     cp_size == 0, \"The number of attention heads needs to be
--     divisible by CP size!\"", context_parallel.py), splits each
--     sequence into 2 cp load-balancing chunks (its
--     get_seq_chunk_ids_for_reordering_before_attn) where verl pads, and
--     holds its own buffers.  gpuplan's CP exchanges (cp_rotate: p2p,
--     allgather, alltoall -- PyTorch's ring shift) hold no a2a type, so
--     it is refused, not priced as verl's.
--   hf: verl's Ulysses runs on its FSDP workers, whose device mesh is
--     data x sequence parallel over every rank and nothing else
--     (verl/workers/fsdp_workers.py: "dp = world_size //
--     self.ulysses_sequence_parallel_size", "init_device_mesh(device_name,
--     mesh_shape=(dp, self.ulysses_sequence_parallel_size),
--     mesh_dim_names=[\"dp\", \"sp\"])"): no pipeline stage and no
--     tensor parallelism (dp x ulysses is every rank).
--   deepspeed: DeepSpeed's Ulysses (deepspeed/sequence/layer.py
--     DistributedAttention over the mpu's sequence parallel group,
--     Megatron-DeepSpeed's ds_sequence_parallel_size) runs beside TP
--     (megatron/core/parallel_state.py initialize_model_parallel: "dp =
--     world_size // (tensor_model_parallel_size *
--     pipeline_model_parallel_size * sequence_parallel_size)"), but not
--     under DeepSpeed's pipeline engine: Megatron-DeepSpeed's pipeline
--     model (GPTModelPipe, whenever pp > 1: "pipeline_model_parallel_size
--     must be 1 if pipeline parallel is disabled") builds its grid as
--     PipeModelDataParallelTopology(num_pp, num_mp, num_dp = that dp), a
--     pipe x data x model grid with no sequence axis, and
--     PipelineParallelGrid asserts the grid is the world ("assert
--     self._is_grid_valid(), \"Invalid Grid\"": the product of the axes
--     == dist.get_world_size()), which is gpus / ulysses there
--     (DeepSpeed 0.16.5, Megatron-DeepSpeed of 2024-12).
function M.ulysses_refusal(n, stack, pp, tp)
  if (n or 1) <= 1 then return nil end
  if stack == "megatron" then
    return string.format("ulysses %d with stack = megatron: Megatron-Core's Ulysses is its "
      .. "context parallelism with Transformer Engine's all-to-all exchange (Megatron's "
      .. "cp_comm_type a2a: no kv heads repeated, 2 cp chunks a sequence), which gpuplan does "
      .. "not price (cp_rotate has no a2a type); give cp = %d (the p2p ring), or stack = hf or "
      .. "stack = deepspeed (verl's or DeepSpeed's Ulysses)", n, n)
  end
  if stack == "hf" and (pp or 1) > 1 then
    return string.format("ulysses %d with pp = %d and stack = hf: verl's Ulysses runs on its "
      .. "FSDP workers, whose device mesh is data x sequence parallel (dp = gpus / ulysses), "
      .. "with no pipeline stages; give pp = 1 or ulysses = 1", n, pp)
  end
  if stack == "hf" and (tp or 1) > 1 then
    return string.format("ulysses %d with tp = %d and stack = hf: verl's Ulysses runs on its "
      .. "FSDP workers, whose device mesh is data x sequence parallel (dp = gpus / ulysses), "
      .. "with no tensor parallelism; give tp = 1 or ulysses = 1", n, tp)
  end
  if stack == "deepspeed" and (pp or 1) > 1 then
    return string.format("ulysses %d with pp = %d and stack = deepspeed: DeepSpeed's pipeline "
      .. "engine lays its ranks out as pipe x data x model with no sequence axis "
      .. "(PipeModelDataParallelTopology; Megatron-DeepSpeed's pipeline model fails its "
      .. "\"Invalid Grid\" check with ds_sequence_parallel_size > 1); give pp = 1 or "
      .. "ulysses = 1", n, pp)
  end
  return nil
end

-- Why a Muon-type optimizer (a catalog entry with Newton-Schulz steps,
-- gp_optim ns_steps) is refused at ZeRO stage zero on stack, or nil.
-- Megatron-Core builds Muon in get_megatron_muon_optimizer
-- (megatron/core/optimizer/muon.py), which raises "muon with dist
-- optimizer is not supported." when use_distributed_optimizer is set
-- ("Dist-opt is not supported due to strong coupling with how DDP init
-- grad buffer"); Megatron-Bridge's Kimi K2 recipe: "cfg.ddp.
-- use_distributed_optimizer = False  # Muon needs this to be False".  Its
-- sharding is dist_muon's (the entry's dp_shard), at zero 0.  Megatron-
-- FSDP (zero 2/3 with fsdp) is that distributed optimizer's too.  Other
-- stacks take it at a ZeRO stage: DeepSpeed applies the Muon update inside
-- its stage 1 and 2 ZeRO optimizer (DeepSpeed's blog "Using Muon Optimizer
-- with DeepSpeed": "We move the Muon update to the get_flat_partition
-- function of stage 1 and 2 DeepSpeedZeroOptimizer").  The words name the
-- options as Lua keys; a command line's message names their flags.
function M.muon_refusal(opt, stack, zero)
  if stack ~= "megatron" or type(opt) ~= "table" or (opt.ns_steps or 0) <= 0
     or (zero or 0) < 1 then
    return nil
  end
  return string.format("optimizer %s with zero %s on stack megatron: Megatron-Core's Muon "
    .. "refuses the distributed optimizer (muon.py: \"muon with dist optimizer is not "
    .. "supported\"); its own dist_muon shards the states over data parallelism at zero 0: "
    .. "give zero 0, or another optimizer", tostring(opt.id), tostring(math.tointeger(zero) or zero))
end

-- Why a Muon-type optimizer (ns_steps > 0) is refused in fp16 on stack,
-- or nil.  Megatron-Core builds Muon through its emerging-optimizer
-- factory, which raises "emerging optimizer with fp16 is not supported."
-- when config.fp16 is set (megatron/core/optimizer/__init__.py
-- _get_megatron_emerging_optimizer, Megatron-LM d98e8a64): its loss
-- scaler is not wired to the Newton-Schulz update.  bf16 (and fp8, whose
-- master path is bf16's) are taken.
function M.muon_fp16_refusal(opt, stack, precision)
  if stack ~= "megatron" or type(opt) ~= "table" or (opt.ns_steps or 0) <= 0
     or precision ~= "fp16" then
    return nil
  end
  return string.format("optimizer %s with precision = fp16 on stack megatron: Megatron-Core "
    .. "refuses it (\"emerging optimizer with fp16 is not supported.\"): give precision = bf16, "
    .. "or another optimizer", tostring(opt.id))
end

-- Why a Muon-type optimizer (ns_steps > 0) is refused with its states
-- offloaded (offload = optimizer or params+optimizer, which steps the
-- optimizer on the host), or nil.  DeepSpeed's ZeRO-Offload hands the
-- host optimizer flat 1-D partitions, and Muon there runs no
-- Newton-Schulz: DeepSpeed PR #8464 (open) "Parameters and gradients
-- flattened into 1D partitions lost matrix geometric properties, bypassing
-- Newton-Schulz polar decomposition and first-order momentum tracking",
-- RFC #8463 measuring the CPUAdam-offload run's loss off the baseline by
-- 9.37e-2.  What that step computes is not Muon, and no source times a
-- Newton-Schulz on the host, so the step is not priced (it was priced as
-- a cheaper host step than AdamW's, with no Newton-Schulz at all).
function M.muon_offload_refusal(opt, offload)
  if type(opt) ~= "table" or (opt.ns_steps or 0) <= 0 or offload == nil
     or offload == "none" then
    return nil
  end
  return string.format("optimizer %s with offload = %s: ZeRO-Offload steps the optimizer on "
    .. "the host on flat 1-D partitions, where Muon runs no Newton-Schulz (DeepSpeed PR #8464: "
    .. "\"bypassing Newton-Schulz polar decomposition\"), and no source prices a host "
    .. "Newton-Schulz: give offload = none, or another optimizer", tostring(opt.id),
    tostring(offload))
end

-- The stack job o runs (its own, else the method's default: gpuplan.options).
local function stack_of(o, method)
  return o.stack or options.get("stack").value({ method = method or o.method })
end
M.stack_of = stack_of

function M.ulysses(o, model, tp, method, pp)
  local n = posint("ulysses", o.ulysses, 1)
  if n == 1 then return 1 end
  local why = M.ulysses_refusal(n, stack_of(o, method), pp, tp)
  if why then usage("%s", why) end
  if (o.cp or 1) ~= 1 then
    usage("ulysses %d and cp %s: Ulysses is the sequence split (the CP group); give one",
      n, shown(math.tointeger(o.cp) or o.cp))
  end
  if o.cp_rotate ~= nil then
    usage("cp_rotate moves a CP ring's K and V; ulysses %d exchanges heads by all-to-all", n)
  end
  -- the engine's one rule and its words (layout.h layout_check_ulysses_heads),
  -- asked of counts alone: a model table's heads of 3.5, 0, -8 or 2^31
  -- reached the rule as "must divide the 0 attention heads" or the
  -- binding's own "bad argument #1 to 'ulysses_refusal'"; the model's
  -- check refuses them by name ("model.heads must be an integer in
  -- 1..2147483647"), after this
  local h, kv = math.tointeger(model.heads), math.tointeger(model.kv_heads or 0)
  if h and kv and h >= 1 and h <= INT_MAX and kv >= 0 and kv <= INT_MAX then
    local why = require("gpuplan.core").ulysses_refusal(h, kv, tp, n)
    if why then fail("%s", why) end
  end
  return n
end

-- Training layout: data parallelism, interleaving, ZeRO / FSDP
-- sharding; returns the sharding.
local function prepare_layout(o, cfg, method, gpus, tp, pp, cp, ep, dflt)
  if gpus % (tp * pp * cp) ~= 0 then
    usage("gpus %d%s is not a multiple of tp*pp*%s = %d%s", gpus,
      o.gpus == nil and " (the default)" or "", cfg.cp_ulysses and "ulysses" or "cp",
      tp * pp * cp, o.gpus == nil and string.format(": give gpus = %d", tp * pp * cp) or "")
  end
  cfg.kind = (method == "grpo" or method == "ppo") and "rl" or "train"
  cfg.dp = gpus // (tp * pp * cp)
  cfg.cp, cfg.ep, cfg.vpp = cp, ep, posint("vpp", o.vpp)
  cfg.etp = posint("etp", o.etp)
  -- Interleaving splits each pipeline stage into chunks: with one stage
  -- there is nothing to interleave, and the option would do nothing.
  if (cfg.vpp or 1) > 1 and pp == 1 then
    usage("vpp %d needs a pipeline (pp > 1; got pp 1)", cfg.vpp)
  end
  boolean("sp", o.sp)
  local sharding, zero, whole = M.sharding(o.fsdp, o.grad_sync, o.zero)
  -- (an RL step's default is its stack's framework's: options.lua zero)
  cfg.zero = zero or dflt("zero", { kind = cfg.kind, stack = stack_of(o, method),
    dp = cfg.dp * cp })
  if whole then cfg.grads_whole = true end
  cfg.sp = o.sp
  return sharding
end

-- Training shape: sequence (RL: prompt + response), micro-batch,
-- recompute, attention kernel, encoder length; returns the RL prompt and
-- response lengths given.
-- Whether the eager kernels run (the Hugging Face modules, one PyTorch
-- kernel per tensor op): the job's kernels (gp.train, gp.memory, fit),
-- else its default from the stack, gpuplan.options' one declaration (the
-- hf stack eager, the others fused).
local function eager_kernels(o, stack)
  local k = o.kernels or options.get("kernels").value({ stack = stack })
  return k ~= "fused", k == "liger"
end

-- Whether job o's attention is unfused on the hf stack (flash = false
-- given, or the model's default there: T5's bias, ALiBi), where verl's
-- Ulysses, its replacement of the flash-attention forward, does not run
-- (the refusal below).  One rule for gp.train's refusal and the layout
-- search, which then searches no Ulysses group (gpuplan.sweep space_of).
function M.ulysses_unfused(o, model, method)
  local stack = o.stack or options.get("stack").value({ method = method or o.method })
  if stack ~= "hf" then return false end
  if o.flash ~= nil then return o.flash == false end
  return not options.default("flash", { model = model, eager = eager_kernels(o, stack) })
end


-- Whether model has a dense MLP layer for recompute_modules mlpwi or mlp_act to act
-- on: a dense model, an MoE model with leading dense layers or a layer
-- step, a hybrid stack whose pattern holds an MLP layer ("-").
local function has_dense_mlp(model)
  if type(model.hybrid_pattern) == "string" and model.hybrid_pattern ~= "" then
    return model.hybrid_pattern:find("-", 1, true) ~= nil
  end
  local moe = model.moe
  if not (type(moe) == "table" and (moe.experts or 0) > 0) then return true end
  return (moe.dense_layers or 0) > 0 or (moe.layer_step or 1) > 1
end

local function prepare_shape(o, cfg, model, method, dflt, defaults, who)
  -- RL trains the actor on whole rollouts: prompt + response tokens.
  local prompt_len = tokens("prompt_len", o.prompt_len)
  local response_len = tokens("response_len", o.response_len)
  cfg.seq = tokens("seq", o.seq)
  if cfg.seq == nil then
    cfg.seq = dflt("seq", { kind = cfg.kind, method = method, model = model,
      prompt_len = prompt_len, response_len = response_len })
    tokens("prompt_len + response_len", cfg.seq)
  end
  -- Ulysses' group is the engine's CP group, whose own check named it
  -- "cp 4 is larger than seq 1" (--cp, which the user did not give)
  if cfg.cp_ulysses and cfg.seq < o.ulysses then
    fail("ulysses %d is larger than seq %s (each rank holds seq / ulysses tokens)",
      o.ulysses, shown(cfg.seq))
  end
  -- Sequences of a micro-batch: a count as above (2^31 gave an answer
  -- 26 billion GiB short); a fraction is an average of uneven ones.
  local mb = o.batch or o.micro_batch
  if mb ~= nil and (type(mb) ~= "number" or mb ~= mb or mb <= 0 or mb > M.COUNT_MAX) then
    fail("%s must be a number of sequences in (0, %d] (got %s)",
      o.batch ~= nil and "batch" or "micro_batch", M.COUNT_MAX, shown(mb))
  end
  -- a whole one an integer: batch = 2.0 (as JSON gives it) came back
  -- in train's result as micro_batch 2.0
  cfg.micro_batch = mb and (math.tointeger(mb) or mb) or dflt("batch")
  cfg.microbatches = o.microbatches
  -- (one of its declared values: the resolve step checked it)
  -- Interleaving is vpp's: without chunks it ran 1F1B under its name.
  if o.schedule == "interleaved" and (o.vpp or 1) < 2 then
    usage("schedule interleaved runs vpp model chunks a stage: give vpp >= 2 (got vpp %s)",
      shown(o.vpp or 1))
  end
  if o.schedule == "dualpipe" and (o.vpp or 1) > 1 then
    usage("schedule dualpipe holds two chunks a rank by itself; vpp %s is interleaved's",
      shown(o.vpp))
  end
  cfg.schedule = o.schedule
  -- A recompute_modules list is read under the selective granularity
  -- alone (Megatron-Core's TransformerLayer: "if
  -- self.config.recompute_granularity == 'selective':" before its
  -- layernorm and mlp flags; MultiLatentAttention "recompute_granularity
  -- == 'selective' and \"mla_up_proj\" in self.config.recompute_modules";
  -- the MoE layer's and experts' the same): with none it re-runs nothing.
  -- A list given without a policy is selective's (Megatron-Bridge's
  -- _set_recompute_overrides sets "recompute_granularity = \"selective\""
  -- with any recipe's list), said on the defaults line; recompute none
  -- with a list names a job that re-runs nothing, refused below.  An
  -- empty list re-runs nothing under either.
  local listed = o.recompute_modules ~= nil and not (type(o.recompute_modules) == "table"
    and #o.recompute_modules == 0) and o.recompute_modules ~= ""
  if o.recompute == nil and listed and who ~= "sweep" then
    cfg.recompute = "selective"
    defaults[#defaults + 1] = "recompute=selective (recompute_modules given: Megatron-Core "
      .. "reads the list under recompute_granularity \"selective\" only, and re-runs the "
      .. "listed modules alone, core_attn only when listed)"
  else
    cfg.recompute = o.recompute or dflt("recompute")
  end
  -- A misspelt policy refused with the user's key, not the engine's argument.
  if not RECOMPUTE[cfg.recompute] then
    usage("recompute must be none, selective, full, op or auto (got %s)", shown(cfg.recompute))
  end
  if o.recompute_layers ~= nil then
    cfg.recompute_layers = posint("recompute_layers", o.recompute_layers)
    if cfg.recompute ~= "full" then
      usage("recompute_layers applies to recompute = full (got recompute = %s)", tostring(cfg.recompute))
    end
  end
  -- Megatron-Core's recompute_modules (output-discarding checkpointing;
  -- engine/memory_act.c): a list, or its names joined by commas.  A
  -- stated list replaces selective's default core_attn, as Megatron-
  -- Core's does (engine/memory_act.c mem_core_attn_recomputed, the one
  -- place the rule is applied): selective with a list re-runs exactly
  -- the listed modules, core_attn only when listed (none with a list is
  -- refused below).
  local rm = o.recompute_modules
  if rm ~= nil then
    local e
    rm, e = require("gpuplan.args").name_list(rm, "recompute_modules", "module name")
    if not rm then fail("%s", e) end
  end
  -- An empty list names no module: nothing is dropped this way, as a
  -- recipe's recompute_modules that lists only modules the model prices
  -- otherwise states (Megatron-Bridge's DeepSeek-V3 GB200 preset
  -- ["mlp"]: the dense layers' MLPs), where a stack profile would add its
  -- own default list.
  if rm ~= nil and rm ~= "" then
    for name in (rm .. ","):gmatch("([^,]*),") do
      if name == "mla_up_proj" and not (model.mla and (model.mla.kv_lora_rank or 0) > 0) then
        fail("recompute_modules: mla_up_proj needs an MLA model; %s has no MLA",
          tostring(model.id or model.name))
      elseif (name == "moe_act" or name == "moe")
          and not (model.moe and (model.moe.experts or 0) > 0) then
        fail("recompute_modules: %s needs a MoE model; %s has no experts", name,
          tostring(model.id or model.name))
      elseif (name == "mlpwi" or name == "mlp_act") and not has_dense_mlp(model) then
        fail("recompute_modules: %s needs dense MLP layers; every layer of %s is MoE",
          name, tostring(model.id or model.name))
      elseif name ~= "layernorm" and name ~= "mla_up_proj" and name ~= "moe_act"
          and name ~= "core_attn" and name ~= "moe" and name ~= "mlpwi"
          and name ~= "mlp_act" then
        usage("recompute_modules: unknown module '%s' (expected layernorm, mla_up_proj, "
          .. "moe_act, core_attn, moe, mlpwi, mlp_act)", name)
      end
    end
    if cfg.recompute == "full" or cfg.recompute == "op" then
      usage("recompute_modules applies to recompute = selective (%s keeps only "
        .. "what its policy lists)", cfg.recompute)
    end
    -- none with a list: Megatron-Core runs no recomputation (above), so
    -- the list would price modules the job does not re-run.  (A search's
    -- policies are its space's: gpuplan.sweep recompute_space.)
    if cfg.recompute == "none" and who ~= "sweep" then
      usage("recompute_modules applies to recompute = selective: Megatron-Core reads the "
        .. "list only under recompute_granularity \"selective\", and with none re-runs "
        .. "nothing (give recompute = selective, or no recompute_modules)")
    end
  end
  -- An empty list goes to the engine too: stated, it replaces
  -- selective's default core_attn (Megatron-Core re-runs no module when
  -- "len(self.recompute_modules)" is 0).  Full and op keep only what
  -- their policy lists.
  if rm ~= nil and not (rm == "" and (cfg.recompute == "full" or cfg.recompute == "op")) then
    cfg.recompute_modules = rm
  end
  if o.moe_probs ~= nil then
    if o.moe_probs ~= "combine" and o.moe_probs ~= "activation" then
      usage("moe_probs must be combine or activation (got %s)", shown(o.moe_probs))
    end
    if not (model.moe and (model.moe.experts or 0) > 0) then
      fail("moe_probs applies to MoE models; %s has no experts", tostring(model.id or model.name))
    end
    cfg.moe_probs_in_act = o.moe_probs == "activation"
  end
  cfg.flash = o.flash
  if o.flash == nil then
    -- Off by default only where no fused kernel runs (T5's bias, ALiBi on
    -- the Hugging Face modules: the eager kernels, eager_kernels above;
    -- the stack is prepare_stack's, its default taken here unrecorded).
    local stack = o.stack or options.get("stack").value({ method = method })
    local flash = dflt("flash", { model = model, eager = eager_kernels(o, stack) })
    if not flash then cfg.flash = false end
  end
  -- verl's Ulysses is its replacement of the flash-attention forward
  -- (verl/models/transformers/monkey_patch.py apply_monkey_patch:
  -- "Replace _flash_attention_forward to _ulysses_flash_attention_forward",
  -- the one function it patches): the Hugging Face modules' eager or
  -- SDPA attention runs no all-to-all, each rank attending its own
  -- seq / N tokens -- another model, not Ulysses priced.
  if cfg.cp_ulysses and M.ulysses_unfused(o, model, method) then
    local say = o.flash == false and usage or fail
    say("ulysses %d is verl's replacement of the flash-attention forward (apply_monkey_patch "
      .. "patches _flash_attention_forward alone); the run's attention is unfused "
      .. "(flash = false%s), where each rank would attend its own tokens", o.ulysses,
      o.flash == false and "" or (", " .. tostring(model.id or model.name) .. "'s default"))
  end
  -- Encoder-decoder: the encoder's length beside seq, the decoder's.
  local encdec = (model.encoder_layers or 0) > 0
  if o.enc_seq ~= nil and not encdec then
    fail("enc_seq applies to encoder-decoder models; %s is decoder-only",
      tostring(model.id or model.name))
  end
  if encdec then
    cfg.enc_seq = posint("enc_seq", o.enc_seq) or dflt("enc_seq", { seq = cfg.seq })
  end
  cfg.dropout = o.dropout
  return prompt_len, response_len
end

-- stage_layers sl as gp.train and a job's step (gp.train_job's job:step,
-- by the job's stage_list function: engine lgp_job_step) take it, the
-- one rule: a list of whole numbers >= 1, or their comma-joined text, on
-- the megatron stack, at pp >= 2 where pp is given (a step's pp the
-- engine checks: memory_layout.c stage_list_check) -> the comma text the
-- engine reads (engine/layout.c layout_stage_list_parse), or nil, why,
-- and true where why is a usage refusal (the stack's, pp's).  A step
-- took only the text, on every stack, and "" cleared the job's list.
function M.stage_list(sl, stack, pp)
  local list = {}
  local a = require "gpuplan.args"
  if type(sl) == "string" then
    -- "" (or blanks) is no list, refused as one below
    if sl:find("%S") then
      for x in (sl .. ","):gmatch("([^,]*),") do list[#list + 1] = x end
    end
  elseif type(sl) == "table" then
    local n = 0
    for k in pairs(sl) do
      if math.type(k) ~= "integer" or k < 1 then
        return nil, string.format("stage_layers must be a list of layer counts (got a table "
          .. "with key %s)", type(k) == "string" and ("'" .. k .. "'") or shown(k))
      end
      n = n + 1
    end
    for i = 1, n do
      if sl[i] == nil then
        return nil, string.format("stage_layers[%d] must be a whole number of layers >= 1 "
          .. "(got nil)", i)
      end
      list[i] = sl[i]
    end
  else
    return nil, string.format("stage_layers must be a list of layer counts, e.g. {9, 9, 8, 6} "
      .. "or \"9,9,8,6\" (got %s)", shown(sl))
  end
  if #list == 0 then return nil, "stage_layers is empty: give each pipeline stage's layers" end
  -- the engine's bound (engine/layout.h GP_STAGE_LIST_MAX)
  local most = require("gpuplan.core").STAGE_LIST_MAX
  if #list > most then
    return nil, string.format("stage_layers: %d stages, more than the %d it takes", #list, most)
  end
  for i, x in ipairs(list) do
    local raw = type(x) == "string" and x:match("^%s*(.-)%s*$") or x
    local n = a.decimal_int(raw)
    -- a whole count past the bound was said as not one ("must be a
    -- whole number of layers >= 1 (got '2147483647')"): its bound named
    local whole = n or (type(raw) == "number" and raw)
      or (type(raw) == "string" and not raw:match("^[%+%-]?0[xX]") and tonumber(raw))
    if whole and whole > M.COUNT_MAX and whole < math.huge and whole == math.floor(whole) then
      return nil, string.format("stage_layers[%d] must be at most %d layers (got %s)", i,
        M.COUNT_MAX, shown(x))
    end
    if n == nil or n < 1 then
      return nil, string.format("stage_layers[%d] must be a whole number of layers >= 1 "
        .. "(got %s)", i, shown(x))
    end
    list[i] = n
  end
  if pp and pp < 2 then
    return nil, string.format("stage_layers applies to pipeline stages (pp >= 2; got pp %d)",
      pp), true
  end
  if stack ~= "megatron" then
    return nil, string.format("stage_layers is Megatron-Core's layout "
      .. "(pipeline_model_parallel_layout); stack = %s partitions by its own rule (the "
      .. "megatron stack takes it)", stack), true
  end
  return table.concat(list, ",")
end

-- The software stack and what follows from it, framework switches,
-- the MoE capacity factor; returns the stack.
-- searched: the layout is the search's (gp.sweep), pp not yet known.
local function prepare_stack(o, cfg, model, method, pp, dflt, searched)
  -- Software stack: Megatron-style pre-training fuses SiLU*up (saves gate
  -- and up only) and keeps fp32 logits for its vocab-parallel loss (4 B,
  -- Korthikanti et al. 2022 sec. 4.3).  Fine-tuning stacks (HF
  -- transformers, PEFT, LitGPT, torchtune) run eager modules: F.silu
  -- saves its input and the product saves silu(gate) and up, and the
  -- loss keeps the bf16 lm_head output (2 B) plus the fp32 log-softmax
  -- that cross_entropy saves after the upcast (4 B): 6 B per logit.
  -- Megatron-DeepSpeed runs Megatron's fused modules: like megatron here.
  local stack = o.stack or dflt("stack", { method = method })
  if not M.stacks[stack] then
    usage("unknown stack '%s' (expected megatron|deepspeed|hf)", tostring(stack))
  end
  cfg.stack = stack
  -- The pipeline engine follows the stack: DeepSpeed's PipelineEngine
  -- keeps an output buffer per micro-batch in flight, Megatron-LM's
  -- schedules pseudo-free each sent output (memory.c, ds_pipe_buffers).
  -- Fine-tuning stacks do not pipeline; Megatron's rule stands for them.
  cfg.pipe = stack == "deepspeed" and "deepspeed" or "megatron"
  -- Layers per stage (memory.h gp_partition): auto follows the engine,
  -- Megatron's uniform split or DeepSpeed PipelineModule's default
  -- 'parameters'; the breakdown is the most loaded stage's.
  if o.partition ~= nil and type(o.partition) ~= "string" then
    fail("partition must be a string (got %s)", tostring(o.partition))
  end
  cfg.partition = o.partition
  -- (stage_layers given, below: the split is the job's, no rule's)
  if o.partition == nil and pp > 1 and o.stage_layers == nil then
    dflt("partition", { stack = stack })
  end
  -- Megatron-Core's cpu_offloading_num_layers (engine/memory_train.c,
  -- train.c act_offload_time; its layer and pp checks memory_layout.c's).
  if o.activation_offload_layers ~= nil then
    cfg.activation_offload_layers = posint("activation_offload_layers",
      o.activation_offload_layers)
    if stack ~= "megatron" then
      usage("activation_offload_layers is Megatron-Core's cpu_offloading (Transformer "
        .. "Engine's offload context); stack = %s has no such option (the megatron stack "
        .. "takes it)", stack)
    end
    -- In a search pp and recompute are the search's: it keeps pp 1 and
    -- recompute none (engine/sweep.c job_pp_ok, ok_rec).
    if pp > 1 and not searched then
      usage("activation_offload_layers needs pp = 1 (got pp %d): Megatron-Core has \"no "
        .. "support for Pipeline parallelism with CPU offloading\"", pp)
    end
    if cfg.recompute ~= "none" and not searched then
      usage("activation_offload_layers needs recompute = none (got recompute = %s): "
        .. "Megatron-Core's \"CPU offloading does not work when activation recomputation "
        .. "is enabled\"", tostring(cfg.recompute))
    end
    -- A module list is re-run under none too (the same job as selective
    -- with the list: engine/memory_act.c mem_core_attn_recomputed), in
    -- every layout a search tries.
    if (cfg.recompute_modules or "") ~= "" then
      usage("activation_offload_layers needs no recompute_modules (got %s: its modules are "
        .. "re-run in the backward, and Megatron-Core's \"CPU offloading does not work when "
        .. "activation recomputation is enabled\")", cfg.recompute_modules)
    end
    if model.layers and cfg.activation_offload_layers >= model.layers then
      fail("activation_offload_layers %d: Megatron-Core offloads fewer layers than the "
        .. "model's %d (\"CPU offloading can be done only for layers less than %d\")",
        cfg.activation_offload_layers, model.layers, model.layers)
    end
  end
  -- before_step: the micro-batches before the first optimizer step, the
  -- optimizer's states not yet allocated (engine/memory_train.c
  -- stage_states; options.lua before_step).
  if o.before_step ~= nil and type(o.before_step) ~= "boolean" then
    fail("before_step must be true or false (got %s)", shown(o.before_step))
  end
  cfg.before_step = o.before_step == true or nil
  -- Full recompute's checkpoints in host memory (engine/memory_train.c,
  -- train.c ckpt_offload_time): PyTorch's checkpoint_wrapper(offload_to_cpu
  -- =True) and DeepSpeed's cpu_checkpointing move what full recompute keeps,
  -- every wrapped block's input.
  if o.checkpoint_offload ~= nil and type(o.checkpoint_offload) ~= "boolean" then
    fail("checkpoint_offload must be true or false (got %s)", shown(o.checkpoint_offload))
  end
  cfg.checkpoint_offload = o.checkpoint_offload == true
  if cfg.checkpoint_offload then
    if stack == "megatron" then
      usage("checkpoint_offload is PyTorch's checkpoint_wrapper(offload_to_cpu=True) or "
        .. "DeepSpeed's cpu_checkpointing; Megatron-Core's full recompute keeps its "
        .. "checkpoints on the GPU (its CPU offload is activation_offload_layers, without "
        .. "recompute)")
    end
    if cfg.recompute ~= "full" then
      usage("checkpoint_offload moves the checkpoints full recompute keeps (each layer's "
        .. "input): give recompute = full (got recompute = %s)", tostring(cfg.recompute))
    end
    if cfg.recompute_layers then
      usage("checkpoint_offload moves every layer's checkpoint (checkpoint_wrapper wraps each "
        .. "block); recompute_layers %d keeps whole layers on the GPU", cfg.recompute_layers)
    end
  end
  -- DeepSpeed's ZeRO buckets (engine/memory_train.c stage_states,
  -- train_stage.c ds_reduce_time and ds_no_prefetch): the engine's own
  -- config, so the deepspeed stack's alone.
  cfg.ds_zero = stack == "deepspeed"
  for _, k in ipairs { "reduce_bucket_size", "prefetch_bucket_size", "max_live_parameters",
                       "max_reuse_distance" } do
    if o[k] ~= nil then
      if stack ~= "deepspeed" then
        usage("%s is DeepSpeed's ZeRO config (zero_optimization); stack = %s has no such "
          .. "option (the deepspeed stack takes it)", k, stack)
      end
      cfg[k] = o[k]
    elseif stack == "deepspeed" then
      cfg[k] = dflt(k, { stack = stack, zero = cfg.zero })
    end
  end
  -- ZeRO-3 on a model built outside deepspeed.zero.Init (options.lua
  -- zero_init; engine/memory_deepspeed.c mem_ds_whole_init): DeepSpeed's
  -- engine moves it whole onto the GPU before partitioning.  At ZeRO 0-2
  -- the GPU keeps the whole 16-bit model anyway: nothing to add.
  local zero_init = o.zero_init
  if zero_init == nil then zero_init = dflt("zero_init", { stack = stack, zero = cfg.zero }) end
  if zero_init == false then
    -- the stack named as the caller gave it or as the method's default,
    -- as fused_linear_ce's refusal below ("stack = hf" read as a --stack
    -- hf never typed)
    if stack ~= "deepspeed" then
      usage("zero_init is DeepSpeed's (deepspeed.zero.Init); %s has no such "
        .. "option (the deepspeed stack takes it)", o.stack ~= nil
          and string.format("stack = %s", stack)
          or string.format("the default stack of method = %s, %s,", tostring(method), stack))
    end
    if (cfg.lora_rank or 0) > 0 or method == "lora" or method == "qlora" then
      usage("zero_init = false is priced for full training only (the LoRA base's "
        .. "arrival is not modelled); leave it out with LoRA")
    end
    cfg.ds_whole_init = true
  end
  -- DeepSpeed's data_types.grad_accum_dtype (options.lua): stage 3's
  -- accumulator bytes (engine/memory.h ds_accum_bytes), 0 the model's.
  if o.grad_accum_dtype ~= nil and o.grad_accum_dtype ~= "model" then
    if stack ~= "deepspeed" then
      usage("grad_accum_dtype is DeepSpeed's ds_config (data_types); stack = %s has no such "
        .. "option (the deepspeed stack takes it)", stack)
    end
    cfg.grad_accum_bytes = ({ fp32 = 4, bf16 = 2, fp16 = 2 })[o.grad_accum_dtype]
  end
  -- Megatron-Core's num_layers_in_first/last_pipeline_stage: these ends
  -- hold N layers, the other stages the rest evenly (engine/
  -- memory_layout.c mem_stage_split, which checks they divide).  In a
  -- search they are the job's: the search keeps the pp they fit
  -- (engine/sweep.c ok_pp, by layout_ends_ok).
  for _, k in ipairs { "first_stage_layers", "last_stage_layers" } do
    if o[k] ~= nil then
      cfg[k] = posint(k, o[k])
      if pp < 2 and not searched then usage("%s applies to pipeline stages (pp >= 2; got pp %d)", k, pp) end
      if stack ~= "megatron" then
        usage("%s is Megatron-Core's split (num_layers_in_%s_pipeline_stage); stack = %s "
          .. "partitions by its own rule (the megatron stack takes it)", k, k:match("^(%a+)_"),
          stack)
      end
    end
  end
  -- Every stage's layers as the job states them (nanotron's cost-balanced
  -- split, Megatron-Core's pipeline_model_parallel_layout): a list of
  -- whole numbers >= 1, or their comma-joined text, handed to the engine
  -- as that text (engine/layout.c layout_stage_list_parse), which checks
  -- one entry a stage and the model's layers in all (memory_layout.c
  -- stage_list_check).  Not searched: plan does not take it.
  if o.stage_layers ~= nil then
    local text, why, use = M.stage_list(o.stage_layers, stack, not searched and pp or nil)
    if not text then (use and usage or fail)("%s", why) end
    cfg.stage_layers = text
  end
  -- Megatron-Core's account_for_embedding/loss_in_pipeline_split (the
  -- embedding and the loss each take a layer's place in the split; Llama
  -- 3's pipeline): engine/memory_layout.c checks the division.
  if o.split_ends ~= nil then
    if type(o.split_ends) ~= "boolean" then
      fail("split_ends must be true or false (got %s)", shown(o.split_ends))
    end
    -- in a search the pp it divides over (engine/sweep.c job_pp_ok)
    if o.split_ends and pp < 2 and not searched then
      usage("split_ends applies to pipeline stages (pp >= 2; got pp %d)", pp)
    end
    if o.split_ends and stack == "deepspeed" then
      usage("split_ends is Megatron-Core's split; stack = deepspeed partitions by its own rule")
    end
    cfg.split_ends = o.split_ends
  end
  -- Multi-token prediction modules on the last stage (engine/
  -- memory_train.c stage_shares and stage_activations; the option's
  -- declaration checked the range)
  cfg.mtp_layers = o.mtp_layers
  -- What autograd keeps follows the modules that run (gp.train's kernels):
  -- Hugging Face's eager modules keep silu(gate) beside gate and up, the
  -- fp32 softmax beside its 16-bit copy and the fp32 logits, whether the
  -- hf stack (FSDP, the Trainer) or DeepSpeed's engine drives them
  -- (transformers' LlamaForCausalLM under deepspeed.initialize is the same
  -- module); fused modules (Megatron/TE, torch.compile) keep neither.
  -- Without kernels the stack says which.  Liger's modules in the eager
  -- ones (kernels liger) keep what its autograd Functions save: its
  -- SwiGLU a and b ("ctx.save_for_backward(a, b)", the backward
  -- recomputes silu), its RMSNorm X, W and the rows' rstd
  -- ("ctx.save_for_backward(X, W, RSTD)", no fp32 copy), the attention
  -- as eager (Liger-Kernel src/liger_kernel/ops/swiglu.py, rms_norm.py).
  local eager, liger = eager_kernels(o, stack)
  cfg.eager_swiglu = o.eager_swiglu
  if cfg.eager_swiglu == nil then cfg.eager_swiglu = eager and not liger end
  cfg.eager_softmax = o.eager_softmax
  if cfg.eager_softmax == nil then cfg.eager_softmax = eager end
  -- ... and the fp32 upcast each RMSNorm keeps (engine/memory_act.c
  -- mem_norm_bytes: transformers' LlamaRMSNorm).
  if o.eager_norm ~= nil and type(o.eager_norm) ~= "boolean" then
    fail("eager_norm must be true or false (got %s)", shown(o.eager_norm))
  end
  cfg.eager_norm = o.eager_norm
  if cfg.eager_norm == nil then cfg.eager_norm = eager and not liger end
  -- (0: the engine's default, 4 B a logit, or 4 A under replicated_logits:
  -- engine/memory_train.c's logits term)
  cfg.logit_bytes = o.logit_bytes or (eager and 6 or 0)
  -- Liger-Kernel's fused linear cross-entropy (engine/memory_train.c,
  -- train_layer.c train_ends_costs): one chunk of logits, so no bytes a
  -- logit over the whole of them to state.
  if o.fused_linear_ce ~= nil and type(o.fused_linear_ce) ~= "boolean" then
    fail("fused_linear_ce must be true or false (got %s)", shown(o.fused_linear_ce))
  end
  if o.fused_linear_ce and o.logit_bytes then
    usage("fused_linear_ce holds one chunk of logits, not all of them: logit_bytes "
      .. "(bytes a logit over the whole logits) does not apply with it; give one")
  end
  cfg.fused_linear_ce = o.fused_linear_ce == true
  -- The TP head's logits gathered to every rank (engine/memory_train.c's
  -- logits term): Liger's chunked head keeps no whole logits to gather.
  if o.replicated_logits ~= nil and type(o.replicated_logits) ~= "boolean" then
    fail("replicated_logits must be true or false (got %s)", shown(o.replicated_logits))
  end
  if o.replicated_logits and cfg.fused_linear_ce then
    usage("replicated_logits gathers the whole logits to every TP rank; fused_linear_ce "
      .. "never makes them whole: give one")
  end
  cfg.replicated_logits = o.replicated_logits == true
  -- Liger's patch replaces a transformers model's head and loss
  -- (monkey_patch.py apply_liger_kernel_to_llama); Megatron-Core's
  -- GPTModel runs its own output layer and vocab-parallel loss, which no
  -- Liger patch reaches.  Refused here, the one place fit, train and plan
  -- share (gp.memory priced the chunked logits under megatron where
  -- gp.train refused the pair), naming the stack as the caller gave it or
  -- as the method's default (plan's pretrain: "stack = megatron" read as a
  -- --stack megatron never typed).
  if cfg.fused_linear_ce and stack == "megatron" then
    usage("fused_linear_ce is Liger-Kernel's, which patches transformers' models; %s runs "
      .. "Megatron-Core's own output layer and loss: give stack = hf or deepspeed",
      o.stack ~= nil and "stack = megatron"
        or string.format("the default stack of method = %s, megatron,", tostring(method)))
  end
  -- transformers' 2023 eager attention clamps the masked scores
  -- (engine/memory_act.c, train_price.c): unfused attention only.
  if o.attn_clamp ~= nil then
    if type(o.attn_clamp) ~= "boolean" then
      fail("attn_clamp must be true or false (got %s)", shown(o.attn_clamp))
    end
    if o.attn_clamp and cfg.flash ~= false then
      usage("attn_clamp is the eager attention's torch.max over the masked scores: "
        .. "it needs flash = false (a fused attention kernel keeps no scores)")
    end
    cfg.attn_clamp = o.attn_clamp
  end
  cfg.act_bytes = o.act_bytes
  -- Framework behaviour (memory.h, gp_train_cfg): paged optimizer states
  -- outside PyTorch's allocator (bitsandbytes Paged*), the optimizer
  -- step fused into backward (torchtune optimizer_in_bwd), the logits
  -- dropped by the loop before backward (torchtune's "del logits"), LitGPT's
  -- fused-QKV views and its index_copy zero padding of a partial QKV
  -- adapter, an output layer quantised with the base, K and V copied to
  -- every query head before the attention (torchtitan's repeat_kv), the
  -- fused attention missing from recompute op's save list (torchtitan's
  -- _save_list before b39377f9f under SDPA's cuDNN backend).
  for _, k in ipairs { "paged_optimizer", "grads_in_bwd", "logits_freed", "fused_qkv_view", "lora_zero_pad", "quant_head",
                       "kv_repeat", "sac_attn_recompute", "fsdp_root_gathered" } do
    if o[k] ~= nil and type(o[k]) ~= "boolean" then
      fail("%s must be a boolean (got %s)", k, tostring(o[k]))
    end
    cfg[k] = o[k] or nil
  end
  -- The optimizer fused into backward steps each parameter in its
  -- gradient's hook (torchtune optimizer_in_bwd; its memory guide:
  -- "Gradient accumulation should always be set to 1 when fusing the
  -- optimizer step into the backward pass"), so the first backward is its
  -- first step: no micro-batch runs before it, and zeroing its states
  -- would price a backward without the moments it creates as it goes.
  if cfg.before_step and cfg.grads_in_bwd then
    fail("before_step with grads_in_bwd: the optimizer fused into backward steps in the "
      .. "first backward, so no micro-batch runs before its first step")
  end
  -- PyTorch's context_parallel ring (torchtitan's
  -- context_parallel_rotate_method) holds its rotater's K/V chunks and the
  -- fp32 gradients it passes on while a layer's attention backward runs
  -- (engine/memory_train.c cp_ring_bytes); Transformer Engine's p2p ring
  -- (the default) is not priced.  The declared values were checked by the
  -- resolve step.
  cfg.cp_ring = ({ allgather = 1, alltoall = 2 })[o.cp_rotate] or nil
  -- The MoE token buffer per expert over its even share: an MoE
  -- option, which a dense model would ignore in silence.
  if o.capacity_factor ~= nil then
    if not model.moe then
      fail("capacity_factor applies to MoE models; %s has no experts",
        tostring(model.id or model.name or "the model"))
    end
    local f = o.capacity_factor
    if type(f) ~= "number" or not (f >= 0 and f <= 64) then
      fail("capacity_factor must be a number in [0, 64] (got %s)", shown(f))
    end
  end
  cfg.capacity_factor = o.capacity_factor
  -- What a training job offloads, refused here by its name: the engine's
  -- own check would name its internal field (train.offload).
  if o.offload ~= nil and not TRAIN_OFFLOAD[o.offload] then
    fail("offload must be none, optimizer or params+optimizer (got %s)", shown(o.offload))
  end
  cfg.offload = o.offload
  -- Where an MoE layer's router weights multiply when the job does not
  -- say: Megatron-Core's grouped experts apply them inside the
  -- activation (moe/experts.py at Megatron-Bridge 25.11's pin,
  -- TEGroupedMLP's bias_act_func: "intermediate_parallel =
  -- intermediate_parallel * permuted_probs", before the down
  -- projection), the other stacks at the combine (GShard, Hugging Face).
  if o.moe_probs == nil and model.moe and (model.moe.experts or 0) > 0 then
    cfg.moe_probs_in_act = dflt("moe_probs", { stack = stack }) == "activation"
  end
  return stack
end

-- Optimizer, precision recipe and LoRA adapter; returns whether the
-- run trains adapters.
local function prepare_recipe(o, cfg, model, gpu, method, stack, dflt, defaults)
  cfg.optimizer = o.optimizer or dflt("optimizer")
  local precision = o.precision
  -- The declared default is bf16, which a card without bf16 tensor cores
  -- (Volta, Turing) cannot train in: the training step refused the job
  -- with "bf16 training needs bf16 tensor cores" although the user chose
  -- no precision.  Such cards train in fp16 mixed precision with loss
  -- scaling (Micikevicius et al. 2018, arXiv:1710.03740, "Mixed Precision
  -- Training", on Volta; Megatron-LM's --fp16, DeepSpeed's "fp16":
  -- {"enabled": true}), the same 2-byte params and activations; the
  -- defaults line says so.
  if precision == nil and gpu and type(gpu.peak) == "table" and not ((gpu.peak.bf16 or 0) > 0)
     and (gpu.peak.fp16 or 0) > 0 then
    precision = "fp16"
    defaults[#defaults + 1] = string.format("precision=fp16 (%s has no bf16 tensor cores: fp16 "
      .. "mixed precision)", tostring(gpu.id))
  elseif precision == nil then
    precision = dflt("precision")
  end
  -- fp8 compute needs fp8 tensor cores (Hopper, Ada, Blackwell); the
  -- catalog lists a dense fp8 peak only for those.  The training step
  -- (engine/train.c) refuses the same; say it here in the same words.
  if (precision == "fp8" or o.recipe == "fp8") and gpu and
     not (type(gpu.peak) == "table" and (gpu.peak.fp8 or 0) > 0) then
    fail("fp8 training needs fp8 tensor cores; gpu %s has none (bf16 or fp16 instead)",
      tostring(gpu.id))
  end
  -- bf16 likewise (Volta and Turing have fp16 tensor cores only): the
  -- step's refusal said "this device has none", naming neither.
  if (precision == "bf16" or o.recipe == "bf16") and gpu and type(gpu.peak) == "table"
     and not ((gpu.peak.bf16 or 0) > 0) then
    fail("bf16 training needs bf16 tensor cores; gpu %s has none (fp16 instead)", tostring(gpu.id))
  end
  -- A rank-0 adapter has no parameters: a given rank is a positive one.
  -- And at most hidden: an adapter B A of a d_in x d_out weight has rank
  -- at most min(d_in, d_out), and every adapted projection reads or
  -- writes the hidden state; past it the adapter only adds parameters.
  local lora_rank = posint("lora_rank", o.lora_rank)
  if lora_rank and model.hidden and lora_rank > model.hidden then
    fail("lora_rank %d is above the model's hidden size %d (an adapter's rank is at most "
      .. "its weight's smaller side)", lora_rank, model.hidden)
  end
  local lora = method == "lora" or method == "qlora" or lora_rank ~= nil
  -- A weight format is the frozen base's of an adapter (cfg.base below)
  -- or a served replica's (prepare_infer); a step that trains every
  -- weight holds them in its recipe's dtype, and a given format was
  -- dropped in silence (--weights int4, even --weights foo, planned a
  -- bf16 full fine-tune): refused, naming what sets that dtype.
  if o.weights ~= nil and not lora then
    -- gp.train, gp.sweep and gp.rl take no method grpo|ppo|infer (those
    -- are gp.memory's): their refusal names only what they take, as the
    -- LoRA options' does (prepare_fn)
    local who = caller()
    if who and who ~= "memory" then
      usage("weights applies to an adapter's frozen base (method lora|qlora); method %s trains "
        .. "every weight in its recipe's dtype (precision, recipe)", method)
    end
    usage("weights applies to an adapter's frozen base (method lora|qlora, or lora_rank with "
      .. "method grpo|ppo) and to inference; method %s trains every weight in its recipe's "
      .. "dtype (precision, recipe)", method)
  end
  -- The precision's name, whatever sets the recipe: an adapter's run
  -- (method lora: precision = "zzz", true or NaN planned bf16) and a
  -- given recipe read it unchecked, priced in silence.  Every known
  -- precision has a recipe on every stack (RECIPE).
  if not M.stack_recipe(stack, precision) then
    usage("unknown precision %s (expected bf16|fp16|fp8|fp32|tf32)",
      type(precision) == "string" and "'" .. precision .. "'" or shown(precision))
  end
  if o.recipe then
    cfg.recipe = o.recipe
  elseif lora then
    -- Adapters train in the compute dtype with fp32 states.
    cfg.recipe = precision == "fp32" and "fp32" or "mixed-16"
  else
    cfg.recipe = dflt("recipe", { stack = stack, precision = precision })
  end
  -- fp8 caching of the linears' inputs (engine/act.c) rides on fp8
  -- weight-gradient GEMMs: an fp8 run's, and only a full one's.
  if o.fp8_activations ~= nil then
    if type(o.fp8_activations) ~= "boolean" then
      fail("fp8_activations must be a boolean (got %s)", shown(o.fp8_activations))
    end
    if o.fp8_activations and precision ~= "fp8" and o.recipe ~= "fp8" then
      usage("fp8_activations needs precision = fp8 (got %s): the fp8 weight-gradient GEMM "
        .. "reads the cached fp8 inputs", tostring(precision))
    end
    -- With adapters the frozen base runs no weight-gradient GEMM, and the
    -- adapters' own run in 16 bits (NeMo's ParallelLinearAdapter is
    -- Megatron-Core's tensor_parallel linears, outside Transformer
    -- Engine's fp8 autocast): nothing would read an fp8 cached input.
    -- MLPerf's LoRA FP8_ACTIVATION (fp8_activation_input_store) is another
    -- thing, the SwiGLU input in e4m3, and its pinned NeMo never reads it
    -- (validation/cases.json, mlperf-t40-llama2-70b-lora-h200-n1).
    if o.fp8_activations and lora then
      usage("fp8_activations applies to full training, not to adapters (%s): it caches the "
        .. "linears' inputs in fp8 for their fp8 weight-gradient GEMMs, which a frozen base "
        .. "does not run and the adapters run in 16 bits", method)
    end
    cfg.fp8_activations = o.fp8_activations
  end
  -- The megatron stack's fp8 linears are Transformer Engine's: each
  -- keeps its quantised fp8 input for the weight gradient
  -- (engine/memory_act.c).
  cfg.fp8_te = ((precision == "fp8" or o.recipe == "fp8") and stack == "megatron"
    and not lora) or nil
  -- An adapter's base given as fp8 under the megatron stack's fp8 recipe
  -- is Transformer Engine's fp8 parameters (NeMo's "fp8_params:
  -- ${oc.decode:${oc.env:FP8,False}}", TE's fp8_model_init): the fp8 GEMM
  -- reads the weight as it is ("if primary_weights_in_fp8: # Weight is
  -- already in FP8 ... weight_fp8 = weight", TE v1.6 module/linear.py),
  -- and a frozen TE linear keeps no input ("if weight.requires_grad: ...
  -- saved_inputmat = inputmat"), where a bitsandbytes-style base is
  -- dequantised and keeps its input (engine/memory_stage_act.c).
  cfg.base_fp8_gemm = (lora and method ~= "qlora" and o.weights == "fp8" and stack == "megatron"
    and (precision == "fp8" or o.recipe == "fp8")) or nil
  -- The engine reads the recipe and the optimizer as their catalog
  -- records (catalog/recipes.lua); an unknown name is refused there.
  cfg.recipe = M.recipe_record("recipe", cfg.recipe, o.cat)
  cfg.optimizer = M.recipe_record("optimizer", cfg.optimizer, o.cat)
  -- An entry's dp_shard (Muon's) is Megatron-Core's dist_muon
  -- (LayerWiseDistributedOptimizer: each DP rank keeps and steps its
  -- share of the matrices, then all-gathers them).  Without ZeRO the
  -- other stacks step the optimizer as it is, whole on every rank:
  -- Hugging Face's torch.optim.Muon (PyTorch 2.9) is a plain per-process
  -- optimizer (the DDP ranks each step every parameter), and DeepSpeed
  -- shards Muon only inside its stage 1 and 2 ZeRO optimizer (its blog
  -- "Using Muon Optimizer with DeepSpeed": the update moved into
  -- DeepSpeedZeroOptimizer's get_flat_partition).  There it is priced
  -- unsharded: every rank's momentum and Newton-Schulz work, no gather.
  if cfg.optimizer.dp_shard and stack ~= "megatron" and (cfg.zero or 0) == 0 then
    cfg.optimizer.dp_shard = false
  end
  -- DeepSpeed in fp16 without ZeRO steps through its FP16 optimizers
  -- (engine/memory_deepspeed.c mem_ds_fp16_step): FP16_Optimizer when the
  -- optimizer is DeepSpeed's FusedAdam (AdamW from the ds_config), 8 B of
  -- fp32 per gradient element at its step; FP16_UnfusedOptimizer for a
  -- client optimizer (8-bit Adam, SGD), 4 B.  The recipe is the stack's
  -- (mixed-16); a recipe given by name is taken as its own account.
  if stack == "deepspeed" and precision == "fp16" and not o.recipe and not lora then
    cfg.ds_fp16_step = cfg.optimizer.id == "adamw" and 8 or 4
  end
  -- optimizer_impl foreach, stated: torch.optim's AdamW on its foreach
  -- path, whose step makes one copy of the second moment beside the states
  -- (engine/memory_train.c foreach_step_phase), the peak where it outgrows
  -- the backward's activations -- small micro-batches, small models.
  -- Stated only: gp.train's hf-stack default prices the step's passes, and
  -- the memory kind's shipped rows state no implementation.  fused (one
  -- multi-tensor kernel) and loop (a tensor at a time) make no such copy.
  local impl = o.optimizer_impl
  if impl ~= nil and impl ~= "fused" and impl ~= "foreach" and impl ~= "loop" then
    usage("memory: optimizer_impl must be fused, foreach or loop (got %s)",
      require("gpuplan.args").shown(impl))
  end
  if impl == "foreach" then
    if not cfg.optimizer.foreach_adamw then
      usage("memory: optimizer_impl foreach is AdamW's step (its m and v); optimizer %s is "
        .. "not priced that way: leave optimizer_impl out", tostring(cfg.optimizer.id))
    end
    if stack ~= "deepspeed" and not lora then cfg.foreach_step = 0.5 end
  end
  -- autocast, stated: fp32 weights trained under torch.autocast (nanoVLM's
  -- loop, "with torch.autocast(device_type='cuda', dtype=torch.bfloat16)"
  -- over a model left in fp32): the residual stream and the norms' tensors
  -- fp32, each linear its own 16-bit cast of its input (engine/memory_act.c
  -- act_autocast); the model's split_proj says how many linears cast the
  -- same input.  Stated only: a stack's bf16 says nothing of the dtype the
  -- model was loaded in (a Trainer over a model loaded in bf16 runs no
  -- cast at all).
  if o.autocast ~= nil then
    if type(o.autocast) ~= "boolean" then
      fail("memory: autocast must be true or false (got %s)",
        require("gpuplan.args").shown(o.autocast))
    end
    if o.autocast then
      if precision ~= "bf16" and precision ~= "fp16" then
        usage("memory: autocast casts fp32 weights' matmuls to bf16 or fp16: precision %s "
          .. "runs no cast (leave autocast out)", tostring(precision))
      end
      if lora or stack == "megatron" then
        usage("memory: autocast is priced for full training of fp32 weights under "
          .. "torch.autocast: %s keeps 16-bit weights (leave autocast out)",
          lora and "a LoRA base" or "stack megatron")
      end
      cfg.autocast = true
      -- the loss's tensors under autocast (engine/memory_train.c: the
      -- 16-bit logits, log_softmax's fp32 output and the two fp32
      -- gradients of its backward) where no logit_bytes is stated: the
      -- eager modules' 6 B is 16-bit weights' bf16 logits and their copy
      if o.logit_bytes == nil then cfg.logit_bytes = 0 end
      cfg.act_split_proj = ({ qkv = 1, mlp = 2, both = 3 })[model.split_proj or ""] or 0
    end
  end
  if lora then
    cfg.lora_rank = lora_rank or dflt("lora_rank")
    cfg.lora_targets = o.lora_targets or dflt("lora_targets")
    -- Checked here, naming the key: train passed a misspelt target to
    -- the engine's binding, which said "bad argument #4 to
    -- 'gpuplan.core.train' (unknown LoRA target 'foo' ...)", and fit
    -- named no option.  The names are engine/memory_act.c's
    -- mem_lora_targets_parse.
    local lt = o.lora_targets
    if lt ~= nil then
      if type(lt) ~= "string" or lt == "" then
        fail("lora_targets must be a comma-separated list of q,k,v,o,gate,up,down or all (got %s)",
          shown(lt))
      end
      if lt ~= "all" then
        local seen = {}
        for name in (lt .. ","):gmatch("([^,]*),") do
          if not LORA_TARGETS[name] then
            fail("lora_targets: unknown LoRA target '%s' (expected q,k,v,o,gate,up,down or all)",
              name)
          end
          -- a target given twice is one adapter (the engine reads a set):
          -- "q,q" priced "q" in silence, where "q,k" was likely meant;
          -- refused as recompute_modules and cuda_graph_scope refuse theirs
          if seen[name] then fail("lora_targets names '%s' twice", name) end
          seen[name] = true
        end
      end
    end
    -- Adapter dropout: any p > 0 keeps a dropout output and a mask per
    -- adapted input (memory.c, keep_input).  Default on: the QLoRA
    -- recipe (Dettmers et al. 2023, appendix: 0.1 up to 13B, 0.05
    -- above) and LitGPT's finetune/lora.py (0.05) train with it;
    -- PEFT's LoraConfig default is 0, so say lora_dropout = 0 for it.
    local d = o.lora_dropout
    -- Adapters merged into the weight (gp.train's lora_merged, Praxis'
    -- LoraTheta) have no input of their own: nothing to drop, no default.
    if o.lora_merged and d ~= nil and d ~= false and d ~= 0 then
      usage("lora_dropout: the adapters lora_merged adds into the weight have no input of their "
        .. "own to drop (got %s)", shown(d))
    end
    if d == nil and o.lora_merged then d = 0 end
    if d == nil then d = dflt("lora_dropout") end
    if type(d) ~= "boolean" and type(d) ~= "number" then
      fail("lora_dropout must be a number in [0, 1) or a boolean")
    end
    if type(d) == "number" and not (d >= 0 and d < 1) then
      fail("lora_dropout must be in [0, 1) (got %s)", tostring(d))
    end
    cfg.lora_dropout = d == true or (type(d) == "number" and d > 0)
    if method == "qlora" then
      cfg.base = keyed_format("weights", o.weights or dflt("weights", { method = method }))
      -- QLoRA is LoRA on a quantised frozen base (Dettmers et al. 2023):
      -- a 16- or 32-bit base priced method lora under qlora's name.
      if (cfg.base.bits or 0) >= 16 then
        local wn = type(o.weights) == "table" and string.format("{bits = %g}", cfg.base.bits)
          or tostring(o.weights)
        usage("weights %s: method qlora quantises the frozen base (nf4-dq by default, "
          .. "int4, fp8 ...); a %s base is method lora", wn, wn)
      end
    else
      cfg.base = keyed_format("weights", o.weights or (precision == "fp32" and "fp32" or "bf16"))
    end
  end
  return lora, precision
end

-- Vision-language models: images per sequence, the tower frozen or not.
-- ema: an fp32 moving average of the trained parameters, on each rank's
-- GPU (gpu) or in its host's memory (cpu): engine/memory_train.c
-- stage_ema (its bytes), engine/train.c ema_update (its step).  Full
-- training of every parameter only: an adapter's or a frozen part's
-- average would be of fewer parameters than the stage's, which the engine
-- does not count.
local EMA = { none = true, gpu = true, cpu = true }
local function prepare_ema(o, cfg, method, lora)
  local e = o.ema
  -- gp.rl's ema is its own (a flag: the actor's 16-bit average, rl.lua),
  -- a boolean the resolve step refuses from fit, train and plan
  if method == "grpo" or method == "ppo" or type(e) == "boolean" then return end
  if e == nil or e == "none" then return end
  if not EMA[e] then usage("ema must be none, gpu or cpu (got %s)", tostring(e)) end
  if lora then
    usage("ema %s: the moving average of LoRA's adapters is not priced (method %s); "
      .. "ema applies to full training", e, tostring(method))
  end
  if cfg.vision_frozen or cfg.llm_frozen then
    usage("ema %s: the moving average with a frozen part (a frozen vision tower or LLM) is "
      .. "not priced: give train_vision = true, or leave ema out", e)
  end
  cfg.ema = e
end

local function prepare_vision(o, cfg, model, method, lora, media, dflt)
  -- Vision-language models: images per sequence through the ViT tower
  -- (memory.c, vision_act).  Full fine-tuning freezes the tower by
  -- default, as LLaMA-Factory (FinetuningArguments.freeze_vision_tower
  -- = True) and ms-swift (freeze_vit = True) do; pre-training trains
  -- it; LoRA freezes the whole base, tower included.
  if o.images ~= nil then
    if math.type(o.images) ~= "integer" and not (type(o.images) == "number" and o.images == math.floor(o.images)) then
      fail("images must be a whole number of images per sequence (got %s)", tostring(o.images))
    end
    if o.images < 0 then fail("images must be >= 0 (got %s)", tostring(o.images)) end
    if o.images > 0 and not model.vision then
      fail("images given for %s, which has no vision tower", tostring(model.id or model.name))
    end
    cfg.images = o.images
  end
  if media then
    cfg.images = media.units
    -- The engine's check counts image units; say what the user gave
    -- (video frames go temporal_patch to a unit).
    if cfg.seq and media.tokens > cfg.seq then
      local parts = {}
      local ni = media.image_tokens // media.tokens_per_unit
      if ni > 0 then
        parts[#parts + 1] = string.format("%d image%s", ni, ni == 1 and "" or "s")
      end
      local nv = media.video_tokens // media.tokens_per_unit
      if nv > 0 then
        parts[#parts + 1] = string.format("%d video frame%s (%d unit%s of %d frames)",
          o.video_frames, o.video_frames == 1 and "" or "s", nv, nv == 1 and "" or "s",
          media.frames_per_unit)
      end
      fail("%s of %d tokens each (%d px) make %d tokens, more than the sequence of %d "
        .. "(seq counts them: give a seq of %d plus the text tokens)", table.concat(parts, " and "),
        media.tokens_per_unit, media.size, media.tokens, cfg.seq, media.tokens)
    end
  end
  -- A vision-language model trained on nothing stated: one image per
  -- sequence, as its instruction data are built (LLaVA-1.5's
  -- llava_v1_5_mix665k, "one image per sample"); stated in the
  -- defaults.  Without it the tower would run on no input, its forward,
  -- backward and gradients unpriced, --train-vision changing memory
  -- only.  RL prices no tower (it refuses images).
  if model.vision and o.images == nil and not media and method ~= "grpo"
      and method ~= "ppo" then
    cfg.images = dflt("images", { model = model })
  end
  if model.vision and o.train_vision and (cfg.images or 0) == 0 then
    usage("train_vision: no image reaches the tower (images 0, no video_frames): "
      .. "give images or video_frames")
  end
  if o.train_vision ~= nil then
    if type(o.train_vision) ~= "boolean" then
      fail("train_vision must be a boolean (got %s)", tostring(o.train_vision))
    end
    if not model.vision then
      fail("train_vision given for %s, which has no vision tower", tostring(model.id or model.name))
    end
    if lora and o.train_vision then
      usage("train_vision: LoRA/QLoRA freeze the whole base, the vision tower included")
    end
  end
  if model.vision and not lora then
    local tv = o.train_vision
    if tv == nil then tv = dflt("train_vision", { method = method }) end
    cfg.vision_frozen = not tv
  end
  if o.train_llm ~= nil then
    if type(o.train_llm) ~= "boolean" then
      fail("train_llm must be a boolean (got %s)", tostring(o.train_llm))
    end
    if o.train_llm == false then
      if not model.vision then
        fail("train_llm false freezes a vision-language model's LLM to train its projector; "
          .. "%s has no vision tower", tostring(model.id or model.name))
      end
      if lora then
        usage("train_llm false: LoRA/QLoRA already freeze the base (their adapters train)")
      end
      if o.offload then
        usage("train_llm false with offload: only the projector trains, nothing to offload")
      end
      if method == "grpo" or method == "ppo" then
        usage("train_llm false: method = %s trains the policy's language model", method)
      end
      cfg.llm_frozen = true
    end
  end
end

-- RL: the rollout's batch, lengths, models and placement.
local function prepare_rl(o, cfg, method, prompt_len, response_len, dflt)
  if cfg.kind == "rl" then
    cfg.ppo = method == "ppo"
    -- true, "actor", or a model of its own (gpuplan.rl prices it)
    cfg.reward_model = o.reward_model ~= nil and o.reward_model ~= false
    cfg.ref_model = o.ref_model ~= false
    cfg.prompts = o.prompts or dflt("prompts", { dp = cfg.dp })
    cfg.group = o.group or dflt("group")
    cfg.prompt_len = prompt_len or dflt("prompt_len")
    cfg.response_len = response_len or dflt("response_len")
    cfg.kv_bytes = kv_elem(o.kv)
    cfg.rollout_weights = o.rollout_weights and keyed_format("rollout_weights", o.rollout_weights)
    cfg.rollout_tp = o.rollout_tp
    cfg.colocated = o.colocated ~= false
  end
end

-- M.prepare(o, cmd, who): the options of M.memory checked and turned into
-- the engine's config.  cmd (optional, default "fit") is the command whose
-- declared options (gpuplan.options) o may have: "train" or "plan" for
-- gpuplan.train, which reads its own itself; who names the caller in
-- errors.  Returns a table {model, gpu, capacity, cfg, defaults, method,
-- gpus}; raises on a bad option.
-- The first of DeepSpeed's stage3_* buckets o gives (prefetch_bucket_size,
-- max_live_parameters, max_reuse_distance), or nil: ZeRO-3's coordinator
-- alone reads them (deepspeed/runtime/zero/config.py declares them with
-- the aliases stage3_prefetch_bucket_size, stage3_max_live_parameters,
-- stage3_max_reuse_distance), so another stage would take them in silence.
function M.stage3_key(o)
  for _, k in ipairs { "prefetch_bucket_size", "max_live_parameters", "max_reuse_distance" } do
    if o[k] ~= nil then return k end
  end
end

function M.prepare(o, cmd, who)
  who = who or "memory"
  return prepare_fn(o, cmd, who)
end

prepare_fn = function(o, cmd, who)
  cmd = cmd or "fit"
  if type(o) ~= "table" then fail("%s{...}: expected a table of options", who) end
  -- The resolve step: keys checked, quantities parsed, defaults declared.
  local ok, r = pcall(options.resolve, cmd, o, who)
  if not ok then fail("%s", r) end
  local given = o
  o = r.values
  local defaults, sharding, dflt, precision = r.defaults, nil, r.dflt, nil
  local model = get("model", o.model or usage("memory: model is required"), o.cat)
  local capacity = o.capacity
  local gpu
  if capacity == nil then
    gpu = get("gpu", o.gpu or usage("memory: gpu (or capacity) is required"), o.cat)
    capacity = M.capacity(gpu)
  elseif o.gpu ~= nil then
    -- capacity in place of the card's memory, the card still the one
    -- given: it was dropped, so gp.train{gpu = "h100-sxm", capacity =
    -- "40GiB"} said "gpu is required" and gp.memory priced no card
    gpu = get("gpu", o.gpu, o.cat)
  end
  local method = o.method or dflt("method")
  if not METHODS[method] then
    usage("unknown method '%s' (expected pretrain|full|lora|qlora|grpo|ppo|infer)", tostring(method))
  end
  -- A LoRA adapter's options with a method that trains none planned an
  -- adapter in silence under the method's name (lora_rank with method
  -- full: "full bf16" over a LoRA step), and an RL step's (prompts,
  -- response_max ...) with a method that runs no rollout were dropped in
  -- silence: refused against their declared methods, naming the option,
  -- as gpuplan fit refuses their flags.
  -- Every option the caller gave that is declared for some methods
  -- (options.lua `methods`; not the values resolve filled in), the check
  -- gpuplan fit makes on its flags: kv or block with method full
  -- (an inference cache on a training step) was accepted here.
  local bad, methods = options.misplaced(given, method)
  if bad and method == "infer" and methods:find("pretrain", 1, true) then
    -- a flag given false names its value: the command line writes it as
    -- its --no- form (flash = false is --no-flash, not --flash)
    usage("%s applies to training, not method infer", o[bad] == false and (bad .. " = false") or bad)
  end
  if bad then
    -- gp.train, gp.sweep and gp.rl take method pretrain|full|lora|qlora
    -- (rl: the actor's): "lora_rank applies to method lora|qlora|grpo|ppo"
    -- named methods they refuse (grpo and ppo are gp.memory's, an RL
    -- step's memory).  gp.memory's own refusal keeps them.
    if who ~= "memory" then
      local kept = {}
      for m in methods:gmatch("%S+") do
        if m ~= "grpo" and m ~= "ppo" and m ~= "infer" then kept[#kept + 1] = m end
      end
      if #kept > 0 then methods = table.concat(kept, " ") end
    end
    usage("%s applies to method %s (got %s)", bad, (methods:gsub(" ", "|")), method)
  end
  local gpus = posint("gpus", o.gpus, 1)
  local tp = posint("tp", o.tp, 1)
  local pp = posint("pp", o.pp, 1)
  local cp = posint("cp", o.cp, 1)
  local ep = posint("ep", o.ep, 1)
  local usp = M.ulysses(o, model, tp, method, pp)
  if usp > 1 then cp = usp end
  -- The safety margin: the caller's, else the catalog's settings (as
  -- gpuplan.infer reads it), else the engine's 10%.
  local margin = o.margin
  if margin == nil then
    local cat = o.cat or require("gpuplan").catalog()
    margin = cat.settings and cat.settings.safety_margin
  end
  local cfg = {
    capacity = capacity, gpus = gpus, margin = margin, tp = tp, pp = pp,
    cp_ulysses = usp > 1 or nil,
  }
  -- Video and image sizes (gpuplan.vlm): the tower at the media's
  -- resolution, the sequence's media as that many image units.
  local media
  if method ~= "infer" and (o.video_frames ~= nil or o.image_size ~= nil or
                            o.frame_size ~= nil) then
    -- An image size alone sizes the default image (options.lua images:
    -- "1 for a vision-language model without --video-frames"); without
    -- it the tower would price no image at all.
    local mo = o
    if o.images == nil and o.video_frames == nil and model.vision then
      mo = setmetatable({ images = dflt("images", { model = model }) }, { __index = o })
    end
    -- its refusals open with the planner's name, as the others here do
    -- (gp.train's "frame_size 448 sizes video frames ..." had none)
    local okm, m = pcall(require("gpuplan.vlm").media, model, mo, true)
    if not okm then fail("%s", require("gpuplan.args").unplaced(m)) end
    media = m
    model = media.model
    for _, d in ipairs(media.defaults) do defaults[#defaults + 1] = d end
  end
  if method == "infer" then
    prepare_infer(o, cfg, model, gpu, gpus, tp, pp, dflt, defaults)
  else
    sharding = prepare_layout(o, cfg, method, gpus, tp, pp, cp, ep, dflt)
    -- Hybrid sharding shards in a node: the node's GPUs (gp.train's
    -- node, which train resolves again from its topology).
    if sharding == "hybrid_shard" then
      cfg.hsdp = o.gpus_per_node
      if cfg.hsdp == nil and gpu == nil then
        usage("memory: fsdp hybrid_shard shards within a node: give gpu (the node is its "
          .. "catalog system's)")
      end
      if cfg.hsdp == nil then
        local _, g = require("gpuplan.train").default_node(gpu, o.cat or require("gpuplan").catalog())
        cfg.hsdp = g
      end
      -- (plan's search skips the counts its engine refuses: a list
      -- 8,12,16 is searched at 8 and 16)
      if cmd ~= "plan" then M.hybrid_nodes(cfg.hsdp, gpus, pp) end
    end
    M.zero_group(o, cfg, sharding, model)
    local prompt_len, response_len =
      prepare_shape(o, cfg, model, method, dflt, defaults, who)
    -- selective with a list that leaves out core_attn keeps the core
    -- attention's tensors (Megatron-Core's rule, engine/memory_act.c
    -- mem_core_attn_recomputed): said, as selective alone means more.
    -- (a policy taken from the list says it itself: prepare_shape)
    if cfg.recompute == "selective" and cfg.recompute_modules ~= nil
        and not (o.recompute == nil and who ~= "sweep")
        and not ("," .. cfg.recompute_modules .. ","):find(",core_attn,", 1, true) then
      defaults[#defaults + 1] = "recompute=selective rebuilds recompute_modules' list alone, "
        .. "not core_attn (Megatron-Core: a list replaces the default [\"core_attn\"])"
    end
    -- DualPipe pairs the pipeline's two ends: gp.train met the rule at
    -- its step, gp.train_job never (its own layout passed unchecked, as
    -- a vpp without pp here does not).  The rule and its words are the
    -- engine's (layout.c layout_check_dualpipe, through core.check).  A
    -- search's pp is its own.
    if cfg.schedule == "dualpipe" and who ~= "sweep" then
      local okd, e = pcall(require("gpuplan.core").check, "dualpipe", { pp = pp, vpp = cfg.vpp or 1 })
      if not okd then usage("%s", tostring(type(e) == "table" and e.msg or e)) end
    end
    local stack = prepare_stack(o, cfg, model, method, pp, dflt, who == "sweep")
    -- The kernels the stack's default runs (eager_kernels above) change
    -- what autograd keeps, so gp.memory and fit say the one they assumed
    -- on the defaults line; gp.train's step says it itself (train.lua).
    if who == "memory" and o.kernels == nil then dflt("kernels", { stack = stack }) end
    -- The stage3_* buckets at another ZeRO stage: refused as zero3_gather
    -- per_param is (gp.train's, gp.sweep's and the jobs' in train.lua
    -- sharding_rule; fit's here).
    local s3 = cmd == "fit" and M.stage3_key(o)
    if s3 and cfg.zero ~= 3 then
      usage("%s is DeepSpeed's stage 3 (stage3_%s): it needs zero 3 (got zero %s)", s3, s3,
        tostring(math.tointeger(cfg.zero) or cfg.zero))
    end
    local lora
    lora, precision = prepare_recipe(o, cfg, model, gpu, method, stack, dflt, defaults)
    local fp16_why = M.muon_fp16_refusal(cfg.optimizer, stack, precision)
    if fp16_why then usage("%s", fp16_why) end
    local off_why = M.muon_offload_refusal(cfg.optimizer, cfg.offload)
    if off_why then usage("%s", off_why) end
    -- Muon at a ZeRO stage on megatron: fit's here (gp.train's, the
    -- jobs' steps' in train.lua sharding_rule; gp.sweep's of its list)
    if cmd == "fit" then
      local why = M.muon_refusal(cfg.optimizer, stack, cfg.zero)
      if why then usage("%s", why) end
    end
    -- PyTorch FSDP's version and the reduction's dtype: gp.memory's and
    -- fit's here, by gp.train's rules (its setup asks the same two of
    -- its step, train.lua): what FSDP2's whole gradients hold
    -- (engine/memory_train.c whole_grad_bytes).  The version's default is
    -- said where the engine reads it, under whole gradients.
    if who == "memory" then
      M.grad_reduce(o, cfg, "memory")
      local rule = sharding ~= nil or stack == "hf"
      if o.fsdp_version ~= nil and not o.fsdp and (cfg.zero or 0) < 2 then
        usage("fsdp_version chooses PyTorch FSDP's implementation, and this job has no FSDP "
          .. "(zero %d on stack hf): turn it on with fsdp = full_shard or shard_grad_op (or "
          .. "zero = 3 or 2), or leave fsdp_version out", cfg.zero or 0)
      end
      local fv, bad, text = M.fsdp_version(o, stack, rule, rule and (cfg.zero or 0) >= 2)
      if bad then usage("%s", bad) end
      if o.fsdp_root_gathered and stack ~= "hf" then
        usage("fsdp_root_gathered is PyTorch FSDP's root unit: it needs stack = hf (got stack %s)",
          tostring(stack))
      end
      if text and cfg.grads_whole then defaults[#defaults + 1] = text end
      cfg.fsdp_version = fv
      -- The fused attention left out of recompute op's save list
      -- (engine/memory_act.c act_op_saved) is op's and a fused kernel's:
      -- fit's and gp.memory's refusals here, in gp.train's words
      -- (train.lua sharding_rule and its flash check); under another
      -- policy or unfused attention the flag would change nothing.
      if cfg.sac_attn_recompute then
        if cfg.recompute ~= "op" then
          usage("sac_attn_recompute prices the attention missing from recompute op's save "
            .. "list: it needs recompute = op (got recompute = %s)", tostring(cfg.recompute))
        elseif cfg.flash == false then
          usage("sac_attn_recompute is a fused attention kernel missing from recompute op's "
            .. "save list; the run's attention is unfused (flash = false), which op recomputes "
            .. "anyway: give one or the other")
        end
      end
    end
    prepare_vision(o, cfg, model, method, lora, media, dflt)
    prepare_ema(o, cfg, method, lora)
    prepare_rl(o, cfg, method, prompt_len, response_len, dflt)
    -- torchtitan's op policy is priced from its dense decoder block
    -- (engine/memory_act.c): say which part of the job it cannot price.
    if cfg.recompute == "op" then
      local why = (model.moe and (model.moe.experts or 0) > 0) and "MoE layers"
        or (model.mla and (model.mla.kv_lora_rank or 0) > 0) and "MLA attention"
        or lora and "adapters (LoRA)"
        or (cfg.images or 0) > 0 and "a vision tower"
        or (model.encoder_layers or 0) > 0 and "an encoder-decoder model"
      if why then
        fail("recompute op is priced for dense decoder layers in full training; "
          .. "%s has %s (use selective or full)", tostring(model.id or model.name), why)
      end
    end
  end
  return { model = model, gpu = gpu, capacity = capacity, cfg = cfg, defaults = defaults,
           method = method, gpus = gpus, media = media, sharding = sharding,
           precision = precision }
end

-- The policies recompute = "auto" tries, least first, for a training
-- config cfg: gp.train's ep_overlap refuses full recompute (Megatron-
-- Core's assert, engine/train_prep.c check_ep_overlap) outside DualPipe,
-- so auto stops before it there.  With a recompute_modules list auto
-- starts at selective: none re-runs nothing in Megatron-Core, whatever
-- the list (prepare_shape), so the list is selective's to price.
function M.auto_policies(cfg)
  local rm = cfg.recompute_modules
  local from = (rm ~= nil and rm ~= "") and 2 or 1
  local all = (cfg.ep_overlap and cfg.schedule ~= "dualpipe") and { "none", "selective" }
    or { "none", "selective", "full" }
  return table.move(all, from, #all, 1, {})
end

-- What the "defaults assumed" line says of auto's choice for cfg.
function M.auto_said(cfg, fits)
  -- A recompute_modules list is selective's (full refuses one given
  -- with it): auto's full leaves the list aside, which was unsaid.
  local list = cfg.recompute == "full" and cfg.recompute_modules ~= nil
    and "; full re-runs whole layers, recompute_modules' list unused" or ""
  if fits then
    return string.format("recompute=%s (auto: the least that fits%s)", cfg.recompute, list)
  end
  return string.format("recompute=%s (auto: nothing fits; the most saving%s%s)", cfg.recompute,
    cfg.ep_overlap and cfg.schedule ~= "dualpipe" and " ep_overlap allows" or "", list)
end

-- The least recomputation that fits: none, then selective, then full
-- (each costs more compute in backward; Korthikanti et al. 2022 sec. 5).
-- With margin = 0 this asks "would the run start at all".  Sets
-- cfg.recompute and returns the memory result of the choice, with the
-- choice in its fields recompute and recompute_auto = true.
function M.auto_recompute(model, cfg, defaults)
  local core = require "gpuplan.core"
  local r
  for _, rc in ipairs(M.auto_policies(cfg)) do
    cfg.recompute = rc
    r = core.memory(model, cfg)
    if r.fits then break end
  end
  r.recompute, r.recompute_auto = cfg.recompute, true
  defaults[#defaults + 1] = M.auto_said(cfg, r.fits)
  return r
end

-- Sharding in groups smaller than data parallel, replicated across them
-- (zero_group N): InternEvo's Hybrid Zero ("zero1=8: optimizer states are
-- distributed within 8 GPUs in a single node", InternLM doc/en/
-- train_performance.md), DeepSpeed's MiCS (mics_shard_size) and PyTorch
-- FSDP2's HSDP on a 2-D (replicate, shard) mesh.  The states shard over
-- the N ranks of a group (memory: 1/N of what ZeRO shards); the engine's
-- hsdp is the GPUs one group spans, N x tp in the default rank order
-- (tp, cp, dp, pp: N consecutive ranks of the dp x cp group), its
-- collectives engine/train_stage.c train_zero_coll_of.  N = dp x cp is
-- today's one group over all data parallel (hsdp 0).  The count and the
-- rule that N divides dp x cp are the engine's, the search's too
-- (engine/layout.h layout_zero_group_gpus, core.zero_group_gpus).
--
-- What a zero_group goes with in no job, by gp.train and the search
-- alike (gpuplan.sweep refuses a space by these words, "sweep: " before
-- them): hybrid_shard, whose group is a node's, and an order other than
-- the default its groups are placed in.
M.ZERO_GROUP_REFUSED = {
  -- "fsdp = hybrid_shard" reads "--fsdp hybrid_shard" on the command line
  -- (gpuplan.options flags_named)
  hybrid = "zero_group %d and fsdp = hybrid_shard both set the shard group (hybrid_shard is "
    .. "zero_group of a node's data-parallel ranks): give one",
  order = "zero_group %d is placed in the default rank order (tp, cp, dp, pp); give no order",
}

-- Hybrid sharding's groups are whole nodes: PyTorch FSDP's HYBRID_SHARD
-- builds its intra-node shard groups with dist.new_subgroups(num_devices_
-- per_node) (torch/distributed/fsdp/_init_utils.py _init_intra_node_
-- process_group), which refuses a world size that group size does not
-- divide ("The world size must be divisible by 'group_size'",
-- distributed_c10d.py new_subgroups).  A pipeline stage's data-parallel
-- ranks (gpus / pp of them, the stages outermost) must then fill whole
-- nodes, or share one node evenly; a job within one node is its own
-- group.  12 GPUs on nodes of 8 were passed to the engine, whose
-- placement (8 + 4) then failed as "6 gpus do not fill whole nodes of 4",
-- naming no option.  gpn: the node's GPUs; refused naming gpus and fsdp.
function M.hybrid_nodes(gpn, gpus, pp)
  gpus, pp = gpus or 1, pp or 1
  if type(gpn) ~= "number" or gpn < 1 or gpus <= gpn then return end
  local stage = gpus / pp
  if stage % gpn == 0 or gpn % stage == 0 then return end
  local step = gpn * pp
  local below, above = math.floor(gpus / step) * step, math.ceil(gpus / step) * step
  usage("fsdp = hybrid_shard shards within each node of %d GPUs, but gpus = %d%s leaves a "
    .. "node part-filled (PyTorch FSDP's shard groups are whole nodes: dist.new_subgroups(%d) "
    .. "needs the ranks to divide into them); give gpus = %s%d, or fsdp = full_shard",
    gpn, gpus, pp > 1 and string.format(" over pp = %d (%d GPUs a stage)", pp, stage) or "",
    gpn, below > 0 and string.format("%d or ", below) or "", above)
end

function M.zero_group(o, cfg, sharding, model)
  local n = o.zero_group
  if n == nil then return end
  n = posint("zero_group", n)
  if sharding == "hybrid_shard" then usage(M.ZERO_GROUP_REFUSED.hybrid, n) end
  if (cfg.zero or 0) < 1 then
    usage("zero_group %d shards the ZeRO states: it needs zero 1, 2 or 3 or fsdp (got zero %s)",
      n, tostring(math.tointeger(cfg.zero) or cfg.zero))
  end
  local group = cfg.dp * (cfg.cp or 1)
  local hsdp = require("gpuplan.core").zero_group_gpus(n, group, cfg.tp)
  if hsdp == nil then
    -- a Ulysses job's sequence group is its ulysses, not a cp never given
    usage("zero_group %d must divide the data-parallel group dp x %s = %d", n,
      cfg.cp_ulysses and "ulysses" or "cp", group)
  end
  if o.order ~= nil then usage(M.ZERO_GROUP_REFUSED.order, n) end
  -- The experts shard over the group's expert replicas: a group of
  -- hsdp = N x tp GPUs holds hsdp / (etp x ep) of them, so a group that
  -- cuts an expert group (etp x ep) holds none and is refused, as
  -- Megatron-Core refuses a num_distributed_optimizer_instances that does
  -- not divide the expert data-parallel size: the engine's one rule
  -- (layout.h layout_hsdp_experts_ok, its source; the engine's words for
  -- a step or a search), worded here by the flags.  etp 0 is tp
  -- (layout.c, Megatron-Core's default); an etp of its own cuts a group
  -- at ep 1 too (tp 1, etp 2, zero_group 1).
  local ep = cfg.ep or 1
  local etp = (cfg.etp or 0) > 0 and cfg.etp or cfg.tp
  local experts = model.moe and model.moe.experts or 0
  if not require("gpuplan.core").hsdp_experts_ok(experts, hsdp, etp, ep) then
    -- "groups of 1 GPUs" read wrong: the noun agrees with the count
    usage("zero_group %d shards in groups of %d GPU%s (zero_group x tp %d), which cut the expert "
      .. "group etp %d x ep %d: the experts' states shard only over whole expert groups; "
      .. "give a zero_group whose N x tp is a multiple of etp x ep", n, hsdp,
      hsdp == 1 and "" or "s", cfg.tp, etp, ep)
  end
  cfg.hsdp = hsdp > 0 and hsdp or nil
end

-- Warnings of a plan that runs but wastes something, by code (the codes
-- the training step reports, engine/train.c TRAIN_WARN_*), each a sentence
-- for a job j = { zero, tp, ep, pp, tp_per_node, ep_per_node, tp_nodes,
-- ep_nodes } (the fewest ranks of one TP / EP group on a node, and the
-- nodes it spans: the launcher's placement, engine/layout_fill.c).
-- "1 rank", "4 ranks": the count of ranks a group keeps on a node, in English
-- (a 3-GPU node under tp 4 keeps 1 on its poorer node).
local function ranks_phrase(n)
  return string.format("%d rank%s", n, n == 1 and "" or "s")
end

M.WARNINGS = {
  zero_dp1 = function(j)
    if (j.hsdp or 0) > 0 then
      return string.format("ZeRO-%d over shard groups of one rank (one data-parallel rank "
        .. "in each %d-GPU node under hybrid sharding) shards nothing", j.zero or 0, j.hsdp)
    end
    return string.format("ZeRO-%d over a data-parallel group of one rank (dp x cp = 1) "
      .. "shards nothing", j.zero or 0)
  end,
  tp_leaves_node = function(j)
    local tp, per = j.tp or 1, j.tp_per_node or 8
    local nodes = j.tp_nodes or math.ceil(tp / per)
    return string.format("tp %d spans %d nodes, %s%s on each: every layer's TP "
      .. "collectives cross the NICs", tp, nodes, nodes * per < tp and "at least " or "",
      ranks_phrase(per))
  end,
  ep_leaves_node = function(j)
    local ep, per = j.ep or 1, j.ep_per_node or 8
    local nodes = j.ep_nodes or math.ceil(ep / per)
    return string.format("an ep %d group spans %d nodes, %s%s on each: the expert "
      .. "all-to-alls cross the NICs", ep, nodes, nodes * per < ep and "at least " or "",
      ranks_phrase(per))
  end,
  microbatches_not_multiple_of_pp = function(j)
    return string.format("the interleaved schedule's micro-batches are not a multiple "
      .. "of pp %d", j.pp or 1)
  end,
}

-- "warnings: zero_dp1 (ZeRO-1 over ...), tp_leaves_node (...)", or nil.
function M.warning_line(codes, j)
  if not codes or #codes == 0 then return nil end
  local parts = {}
  for _, c in ipairs(codes) do
    local f = M.WARNINGS[c]
    parts[#parts + 1] = f and string.format("%s (%s)", c, f(j)) or c
  end
  return "warnings: " .. table.concat(parts, ", ")
end

-- The warnings of a training plan that the memory model can tell (no
-- placement): ZeRO that shards nothing -- unless it carries the offload,
-- which DeepSpeed runs through its ZeRO optimizer -- and a TP group wider
-- than the node (TP ranks are innermost, Megatron's default order; the
-- node is gp.train's: the catalog system of the GPU, else its NVLink
-- domain, else 8).
--
-- The TP groups are then blocks of tp consecutive ranks, which the
-- launcher puts on nodes of g in order (engine/layout_fill.c, as gp.train
-- places them): a block of 12 on nodes of 8 is 8 + 4 or 4 + 8.  Its
-- fewest ranks on a node and the most nodes a block spans, over the job's
-- gpus / tp blocks (their starts repeat mod g every g / gcd(tp, g)).
local function tp_blocks(tp, g, gpus)
  local a, b = tp, g
  while b ~= 0 do a, b = b, a % b end
  local share, nodes = tp, 1
  for i = 0, math.min(g // a, gpus // tp) - 1 do
    local s = i * tp
    local first, last = s // g, (s + tp - 1) // g
    if last > first then
      nodes = math.max(nodes, last - first + 1)
      share = math.min(share, (first + 1) * g - s, s + tp - last * g)
    end
  end
  return share, nodes
end

local function plan_warnings(cfg, gpu, cat)
  local w, j = {}, { zero = cfg.zero, tp = cfg.tp, pp = cfg.pp }
  if (cfg.zero or 0) > 0 and (cfg.dp or 1) * (cfg.cp or 1) == 1 and
     (cfg.offload == nil or cfg.offload == "none") then
    w[#w + 1] = "zero_dp1"
  end
  if gpu then
    local _, g = require("gpuplan.train").default_node(gpu, cat or require("gpuplan").catalog())
    local tp = cfg.tp or 1
    j.tp_per_node = math.min(tp, g)
    if tp > g then
      w[#w + 1] = "tp_leaves_node"
      j.tp_per_node, j.tp_nodes = tp_blocks(tp, g,
        tp * (cfg.pp or 1) * (cfg.dp or 1) * (cfg.cp or 1))
    end
  end
  return w, j
end

-- RL fine-tuning has one memory model, gpuplan.rl's: the step's states
-- (rollout, forward, update) on the most loaded GPU of each pool, the
-- rollout's KV cache as its sequences run.  fit reports the state that
-- needs the most, and says which.  Separate pools: the fit's GPUs train
-- and as many more roll out.
local function rl_memory(o, p)
  if not p.gpu then usage("memory: method %s needs gpu (the rollout engine runs on it)", p.method) end
  if o.seq ~= nil then
    usage("memory: seq: an RL step trains on prompt_len + response_len tokens per sample")
  end
  -- The step's own options pass on, those the caller's table inherits
  -- through an __index table too (a script's setmetatable({ method =
  -- "grpo" }, { __index = job })): pairs sees only the table's own keys, and
  -- an inherited tp or recompute left behind would price another job.
  local ro, src = {}, o
  while type(src) == "table" do
    for k in pairs(src) do
      local v = o[k]
      if ro[k] == nil and options.unknown({ [k] = v }, "rl") == nil then ro[k] = v end
    end
    local mt = getmetatable(src)
    src = mt and type(mt.__index) == "table" and mt.__index or nil
  end
  local cfg = p.cfg
  -- The actor trains an adapter where the step's options give one (their
  -- declared methods take grpo and ppo for it), else every weight.
  local adapter = o.lora_rank ~= nil or o.lora_targets ~= nil or o.lora_dropout ~= nil
  ro.method, ro.algo = adapter and "lora" or nil, p.method
  ro.model, ro.gpu, ro.cat = p.model, p.gpu, o.cat
  ro.prompts, ro.group = cfg.prompts, cfg.group
  ro.prompt_len, ro.response_len = cfg.prompt_len, cfg.response_len
  -- A mean response not given is gp.rl's to assume (given only the
  -- limit: 0.696 of it, 0.113 from a base checkpoint, the response_len
  -- declaration), not the fixed 1024 the training shape took: the
  -- rollout's KV cache grows with it.  The shape's defaults that said
  -- 1024 make way for gp.rl's assumed one.
  if o.response_len == nil then
    ro.response_len = nil
    for i = #p.defaults, 1, -1 do
      local k = p.defaults[i]:match("^([%w_]+)=")
      if o.response_max ~= nil and (k == "seq" or k == "response_len") then
        table.remove(p.defaults, i)
      end
    end
  end
  ro.zero = cfg.zero
  ro.recompute = cfg.recompute
  if cfg.colocated then
    ro.gpus = p.gpus
  else
    ro.colocated, ro.gpus, ro.rollout_gpus = nil, 2 * p.gpus, p.gpus
  end
  local ok, r = pcall(require("gpuplan.rl").rl, ro)
  if not ok then
    -- the position in front is the script's, whatever its file is named:
    -- cli.clean strips a *.lua one only, so from a script run as x.t the
    -- refusal kept gp.rl's name ("x.t:5: rl: rollout: ..."), not memory's
    local msg = require("gpuplan.cli").clean(r)
    if type(msg) == "string" then
      msg = msg:gsub("^[^%s:][^\n:]*:%d+: ", "", 1):gsub("^rl: ", "memory: ", 1)
    end
    error(msg, 0)
  end
  local worst
  for _, st in ipairs { "rollout", "forward", "update" } do
    local m = r.memory[st]
    if m and (not worst or m.total > r.memory[worst].total) then worst = st end
  end
  local m = r.memory[worst]
  m.rl_state = worst
  local seen = {}
  for _, d in ipairs(p.defaults) do seen[d:match("^([%w_]+)=") or d] = true end
  for _, d in ipairs(r.defaults) do
    local k = d:match("^([%w_]+)=") or d
    -- The step's time and cost assumptions are not the memory's.
    if not seen[k] and k ~= "algo" and k ~= "price" and k ~= "market"
        and k ~= "async_scheduling" then
      p.defaults[#p.defaults + 1] = d
      seen[k] = true
    end
  end
  return m
end

function M.memory(o)
  local p = M.prepare(o)
  local model, gpu, cfg, defaults, method, gpus = p.model, p.gpu, p.cfg, p.defaults,
    p.method, p.gpus
  local core = require "gpuplan.core"
  local r
  -- A training job's offload against its node's host memory (the
  -- engine's mem_host_fit, the rule gp.train and gp.sweep follow): the
  -- node train would run on, its DRAM the system's host_memory.
  -- The node is the training offload's host; inference's memory reads
  -- none of it (a system there was dropped in silence).
  if o.system ~= nil and cfg.kind == "infer" then
    usage("memory: system applies to training (the host an offload lives in), not method = infer")
  end
  local node = cfg.kind == "train" and gpu and M.host_node(o, gpu, o.cat) or nil
  if node then
    cfg.host_memory, cfg.node_gpus, cfg.host_gpus = node.host_memory, node.gpus_per_node,
      node.host_gpus
  end
  if cfg.kind == "rl" then
    r = rl_memory(o, p)
  elseif cfg.recompute == "auto" then
    r = M.auto_recompute(model, cfg, defaults)
  else
    r = core.memory(model, cfg)
  end
  if node then
    cfg.host_memory, cfg.node_gpus, cfg.host_gpus = nil, nil, nil
    r.host_system = node.system
  end
  -- The recomputation policy the breakdown is of (training): with
  -- recompute = "auto" the one chosen, and recompute_auto = true.
  r.recompute = cfg.recompute
  r.model = model.id or model.name
  r.gpu = gpu and gpu.id or nil
  r.gpus = gpus
  r.method = method
  r.recipe = cfg.recipe and cfg.recipe.id
  r.stack = cfg.stack
  -- Bytes per parameter of the (trainable) model states before sharding,
  -- {weights, grads, master, optimizer, total} (memory.h's recipe table).
  if cfg.recipe then r.state_bytes = core.state_bytes(cfg.recipe, cfg.optimizer) end
  -- DeepSpeed's ZeRO-2/3 optimizer keeps no recipe gradient: the grads
  -- component holds its 16-bit partition (the backward) or the step's
  -- fp32 gradient with it (engine/memory_deepspeed.c mem_ds_zero_phases),
  -- and the bytes per parameter say the same as that row.
  if r.grad_phase and r.state_bytes then
    local b = r.state_bytes
    b.total = b.total - b.grads + r.grad_bytes
    b.grads = r.grad_bytes
  end
  -- PyTorch FSDP2 over a recipe with an fp32 master, as the engine prices
  -- it (engine/memory_train.c fsdp2_fp32_shard): the sharded parameter is
  -- the master, so zero 3 keeps no 16-bit weight beside it; a sharded
  -- gradient is in the master's dtype, whole gradients (grads_whole) in
  -- the reduction's (whole_grad_bytes).  A full model only (LoRA's
  -- adapter and a frozen language model keep the recipe's).
  local b = r.state_bytes
  if b and cfg.fsdp_version == 2 and b.master > 0 and not cfg.llm_frozen
     and method ~= "lora" and method ~= "qlora" then
    local g = b.grads
    if cfg.grads_whole then
      local rb = cfg.reduce_bytes or (cfg.recipe and cfg.recipe.reduce) or 0
      if rb > 0 then g = rb end
    elseif (cfg.zero or 0) >= 2 then
      g = b.master
    end
    local w = (cfg.zero or 0) == 3 and 0 or b.weights
    b.total = b.total - b.grads - b.weights + g + w
    b.grads, b.weights = g, w
    r.fsdp2_shard = true
  end
  r.dp = cfg.dp
  -- training's sequence split as gp.train returns it (cp 1 beside
  -- ulysses N; ulysses 1: none), which fit's title names as train's does
  if cfg.kind ~= "infer" then
    r.cp, r.ulysses = cfg.cp_ulysses and 1 or cfg.cp, cfg.cp_ulysses and cfg.cp or 1
  end
  r.defaults = defaults
  r.warnings, r.job = {}, { tp = cfg.tp }
  if cfg.kind ~= "infer" then r.warnings, r.job = plan_warnings(cfg, gpu, o.cat) end
  -- The KV cache's fields are a serving job's (docs/lua.md: "longest
  -- context that fits (inference)"): a training or RL breakdown holds no
  -- KV pool, and the engine's zeros there read "no context fits, no
  -- sequence fits" -- fit --format json leaves them out for the same job.
  if cfg.kind ~= "infer" then
    r.kv_per_seq, r.kv_room, r.max_ctx, r.max_seqs = nil, nil, nil, nil
  end
  return r
end

-- The node a training job's offload lives on, as gpuplan.train places it:
-- { host_memory = bytes of one node's DRAM (its catalog system's
-- host_memory, nil when the system gives none or there is no system),
-- gpus_per_node, host_gpus, system = id or nil }, or nil where no node
-- can be built (train refuses that job itself).
function M.host_node(o, gpu, cat)
  cat = cat or require("gpuplan").catalog()
  local sys
  if o.system ~= nil then
    -- the job's node, as gp.train takes it (an id or a system table):
    -- fit checked the offload against the card's default node only, where
    -- train --system a node of more DRAM said it does not fit
    local train = require("gpuplan.train")
    if type(o.system) ~= "string" and type(o.system) ~= "table" then
      error(string.format("memory: system must be an id or a table (got %s)",
        require("gpuplan.args").shown(o.system)), 0)
    end
    local ok, v = pcall(train.system_of, o.system, cat)
    -- system_of raises at its caller's level: the script's FILE:LINE, which
    -- the API wrapper adds again before "memory:" ("t.lua:2: memory:
    -- system: t.lua:2: unknown system ''"); dropped here.
    if not ok then
      error("memory: system: " .. (require("gpuplan.args").unplaced(v):gsub("^[^%s:]+:%d+: ", "",
        1)), 0)
    end
    sys = v
    if sys.gpu ~= gpu.id then
      error(string.format("memory: system '%s' holds %s, not %s", tostring(sys.id),
        tostring(sys.gpu), gpu.id), 0)
    end
  else
    sys = require("gpuplan.train").default_node(gpu, cat)
  end
  local ok, spec = pcall(require("gpuplan.comm").node_spec, sys, gpu, function() end,
    "memory", o)
  if not ok then return nil end
  return { host_memory = spec.host_memory, gpus_per_node = spec.gpus_per_node,
           host_gpus = spec.host_gpus and spec.host_gpus < spec.gpus_per_node
             and spec.host_gpus or nil,
           system = sys and sys.id or nil }
end

-- What makes an offload not fit its host (the engine's host_need past
-- host_memory), as one phrase, or nil: "host memory: the offload holds
-- 3779.8 GiB on a host of 8 GPUs, which has 1862.6 GiB".
-- What holds the host memory: "the offload", or where ema cpu's moving
-- average is all of it (nothing offloaded), "ema cpu's moving average".
local function host_holder(r)
  local h = r.host
  if h and (h.ema or 0) > 0 and (h.weights or 0) + (h.grads or 0) + (h.master or 0)
      + (h.optimizer or 0) + (h.activations or 0) <= 0 then
    return "ema cpu's moving average"
  end
  return "the offload"
end

function M.host_short(r)
  if (r.host_memory or 0) > 0 and (r.host_need or 0) > r.host_memory then
    return string.format("host memory: %s holds %.1f GiB on a host of %d GPU%s, "
      .. "which has %.1f GiB", host_holder(r), r.host_need / units.GiB, r.host_ranks,
      r.host_ranks == 1 and "" or "s", r.host_memory / units.GiB)
  end
  return nil
end

-- The host memory an offloaded training job holds (ZeRO-Offload: the
-- optimizer's, and with params+optimizer the parameters'; Megatron-Core's
-- activation offload: the offloaded layers' saved activations): per GPU by kind
-- and the job's sum, the line `gpuplan fit` and `gpuplan train` print.
-- m: a memory result with cpu_bytes and host; nil when nothing is offloaded.
-- Where the fullest host cannot hold its GPUs' share (the engine's
-- host_need past host_memory, which also made m.fits false) the line says
-- so: Llama 3.1 405B over two DGX H100s read "7559.61 GiB for the 16
-- GPUs" beside "fits: yes", where ZeRO-Offload keeps every GPU's
-- partition in its own node's DRAM (DeepSpeed's pinned CPU buffers),
-- 3780 GiB a node of 8 against its 2 TB.
function M.host_line(m, gpus)
  if (m.cpu_bytes or 0) <= 0 or not m.host then return nil end
  local h, g = m.host, units.GiB
  -- Activation offload (activation_offload_layers) adds its own term.
  local acts = (h.activations or 0) > 0 and string.format(" + activations %.2f",
    h.activations / g) or ""
  -- ema cpu (engine/memory_train.c stage_ema): the fp32 moving average
  -- each GPU's process keeps in host memory.
  if (h.ema or 0) > 0 then acts = acts .. string.format(" + ema %.2f", h.ema / g) end
  local terms = string.format("weights %.2f + grads %.2f + master %.2f + optimizer %.2f%s GiB",
    h.weights / g, h.grads / g, h.master / g, h.optimizer / g, acts)
  -- ema cpu alone offloads nothing: "host memory (offload): ... (weights
  -- 0.00 + grads 0.00 + master 0.00 + optimizer 0.00 + ema 25.10 GiB)"
  -- named an offload the job does not run.
  local what = "offload"
  if host_holder(m) ~= "the offload" then
    what, terms = "ema cpu", string.format("the moving average %.2f GiB", h.ema / g)
  end
  local line = string.format("host memory (%s): %.2f GiB per GPU (%s), %.2f GiB for the %d GPU%s",
    what, m.cpu_bytes / g, terms, m.cpu_bytes * gpus / g, gpus, gpus == 1 and "" or "s")
  if M.host_short(m) then
    line = line .. string.format("; past the host: %.2f GiB on a host of %d GPU%s, which "
      .. "holds %.2f GiB (%s), so %s does not fit", m.host_need / g, m.host_ranks,
      m.host_ranks == 1 and "" or "s", m.host_memory / g,
      m.host_system and (m.host_system .. "'s host_memory") or "host_memory", host_holder(m))
  end
  return line
end

-- One-line verdict: "fits: yes (headroom 3.2 GiB)" or
-- "fits: no (short by 27.9 GiB; largest term optimizer 50.2 GiB)", or
-- with the host the reason "fits: no (host memory: ...)".
function M.verdict(r)
  local big
  for _, c in ipairs(r.components) do
    if c.name == r.largest then big = c.bytes end
  end
  local largest = string.format("largest term %s %.1f GiB", r.largest,
    (big or 0) / units.GiB)
  if r.fits then
    return string.format("fits: yes (headroom %.1f GiB; %s)", -r.short_by / units.GiB, largest)
  end
  -- The GPU holds it and its host does not: the host is the reason.
  local host = M.host_short(r)
  if host and r.short_by <= 0 then
    return string.format("fits: no (%s; the GPU's headroom %.1f GiB)", host,
      -r.short_by / units.GiB)
  end
  return string.format("fits: no (short by %.1f GiB; %s%s)", r.short_by / units.GiB, largest,
    host and "; and " .. host or "")
end

-- A misuse found anywhere inside names the caller's line (gpuplan.args).
return require("gpuplan.args").api_module(M)
