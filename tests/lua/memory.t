-- gp.memory{} and core.memory against hand-derived numbers, and its errors.
-- Run with ./gpuplan run tests/lua/memory.t.
local t = require "tap"
local gp = require "gpuplan"
local memory = require "gpuplan.memory"
local core = require "gpuplan.core"

t.plan(159)

local GiB = 2 ^ 30
-- Llama-2-7B params: 32 (4 h^2 + 3 h f + 2h) + h + 2 V h = 6,738,415,616.
local P7 = 6738415616

local function comp(r, name)
  for _, c in ipairs(r.components) do if c.name == name then return c.bytes end end
  return 0
end
local function states(r)
  return comp(r, "weights") + comp(r, "grads") + comp(r, "master") + comp(r, "optimizer")
end

-- 7B full fine-tune, AdamW mixed precision: 16 B/param of model states
-- (ZeRO paper sec. 3.1), 107.8 GB; does not fit one 80 GB card.
local r = gp.memory { model = "llama2-7b", capacity = 80e9, method = "full" }
t.near(states(r), 16 * P7, 1e-12, "7B full FT model states = 16 B/param")
t.is(r.fits, false, "7B full FT does not fit 80 GB")
t.is(r.largest, "optimizer", "largest term is the optimizer")
-- budget 0.9 * 80e9 = 72e9 (default 10% margin).
t.near(r.budget, 72e9, 1e-12, "budget = capacity - 10% margin")
t.near(r.short_by, r.total - 72e9, 1e-12, "short_by = total - budget")
t.ok(memory.verdict(r):match("^fits: no %(short by %d+%.%d GiB; largest term optimizer"),
  "verdict line names the shortfall and the largest term")

-- ZeRO-3 over 8 divides model states by 8.
local r8 = gp.memory { model = "llama2-7b", capacity = 80e9, gpus = 8, zero = 3 }
t.near(states(r8), 16 * P7 / 8, 1e-12, "ZeRO-3 over 8: states / 8")
t.is(r8.dp, 8, "dp = gpus / (tp*pp*cp)")

-- Llama-2-70B bf16 KV: 2 * 80 * 8 * 128 * 2 B * 4096 = 1.25 GiB.
local ri = gp.memory { model = "llama2-70b", capacity = 80e9, gpus = 8, tp = 8,
                       method = "infer", ctx = 4096, concurrency = 1 }
t.near(ri.kv_per_seq * 8, 1.25 * GiB, 1e-12, "70B KV 4096 tokens = 1.25 GiB (8 TP shards)")
-- fp8 KV halves it.
local rf = gp.memory { model = "llama2-70b", capacity = 80e9, gpus = 8, tp = 8,
                       method = "infer", ctx = 4096, kv = "fp8" }
t.near(rf.kv_per_seq * 8, 0.625 * GiB, 1e-12, "fp8 KV = 0.625 GiB")

-- 70B QLoRA base: 68,451,041,280 linear weights at 4.126953125 bits +
-- 525,606,912 embedding/norm params at 2 B = 36,362,993,664 B (~36 GB).
local rq = gp.memory { model = "llama2-70b", capacity = 80e9, method = "qlora",
                       seq = 512, recompute = "full" }
t.near(comp(rq, "weights"), 36362993664, 1e-12, "70B QLoRA NF4 base = 36.4 GB")
t.is(comp(rq, "grads"), 0, "frozen base: no grads")
-- LoRA r=8 on q,v of 70B: 80 * 8 * ((8192+8192) + (8192+1024)) = 16,384,000.
t.near(rq.trainable, 16384000, 1e-12, "QLoRA trainable = r (in + out) per q, v")

-- Weight formats: GGUF-style bits per weight and named formats.
t.near(memory.weight_format("4.85").bits, 4.85, 0, "bits-per-weight string")
t.is(memory.weight_format("nf4").group, 64, "nf4 block of 64")
-- bitsandbytes plain NF4: 4-bit codes + an fp32 absmax per 64 weights
-- = 4 + 32/64 = 4.5 bits/weight.
local f = memory.weight_format("nf4")
t.near(f.bits + f.group_bits / f.group, 4.5, 0, "nf4 (no double quant) = 4.5 bits")
-- 7B QLoRA base, nf4 vs nf4-dq: the linears, 32 (4 h^2 + 3 h f) =
-- 6,476,005,376 weights, differ by 4.5 - 4.126953125 = 0.373046875 bits:
-- 301,981,696 B.  (LitGPT's resource table shows 14.14 vs 13.84 GB for the
-- two modes, 0.30 GB: a check, nothing was fitted to it.)
local qa = gp.memory { model = "llama2-7b", capacity = 80e9, method = "qlora", weights = "nf4" }
local qb = gp.memory { model = "llama2-7b", capacity = 80e9, method = "qlora" }
t.near(comp(qa, "weights") - comp(qb, "weights"), 301981696, 1e-9,
  "nf4 - nf4-dq on 7B linears = 0.302 GB; qlora defaults to nf4-dq")

-- Adapter dropout (default p = 0.05): on a QLoRA base, whose 4-bit matmuls
-- keep their inputs anyway, it adds the dropout output (2 B) and its bool
-- mask (1 B) on the q,v adapters' input: 3 h B per token per layer,
-- 3 * 4096 * 2048 tokens * 32 layers = 805,306,368 B.
local qd = gp.memory { model = "llama2-7b", capacity = 80e9, method = "qlora" }
local q0 = gp.memory { model = "llama2-7b", capacity = 80e9, method = "qlora", lora_dropout = 0 }
t.near(comp(qd, "activations") - comp(q0, "activations"), 805306368, 1e-12,
  "QLoRA adapter dropout = +3h B per token per layer")
t.ok(table.concat(qd.defaults, " "):find("lora_dropout=0.05", 1, true) ~= nil,
  "the dropout default is recorded")
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, method = "lora",
                                lora_dropout = 1.5 } end,
  "lora_dropout must be a number in %[0, 1%) %(got 1.5%)", "lora_dropout out of range")
-- The declared range is open at 1: a dropout of 1 drops every input.
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, method = "lora",
                                lora_dropout = 1 } end,
  "lora_dropout must be a number in %[0, 1%) %(got 1%)", "lora_dropout 1 refused by its range")

-- DeepSpeed BF16_Optimizer: 2 + (2 + 4) + 4 + 8 = 20 B/param before
-- sharding; 7B on one GPU: 6,738,415,616 * 20 = 134,768,312,320 B.
local rd = gp.memory { model = "llama2-7b", capacity = 80e9, method = "pretrain",
                       stack = "deepspeed" }
t.is(rd.recipe, "deepspeed-bf16", "stack deepspeed + bf16 -> deepspeed-bf16")
t.near(states(rd), 134768312320, 1e-12, "deepspeed-bf16 7B = 20 B/param (134.8 GB)")
t.near(rd.state_bytes.total, 20, 0, "r.state_bytes.total = 20")
t.near(rd.state_bytes.grads, 6, 0, "r.state_bytes.grads = bf16 2 + fp32 4")
-- ZeRO-1 over 8: 2 + 6 + 12/8 = 9.5 B/param = 64,014,948,352 B.
local rd8 = gp.memory { model = "llama2-7b", capacity = 80e9, method = "pretrain",
                        stack = "deepspeed", gpus = 8, zero = 1 }
t.near(states(rd8), 6738415616 * 9.5, 1e-12, "deepspeed-bf16 ZeRO-1/8 = 9.5 B/param")
-- Muon (catalog muon): one fp32 momentum (4 B) on every hidden matrix,
-- Adam's m and v (8 B) on the embedding, output layer and norms of
-- llama2-7b: 2 x 32000 x 4096 + 65 x 4096 = 262,410,240 of P7.  One GPU:
-- 4 P7 + 4 x 262,410,240 = 28,003,303,424 B, exact.
local rm = gp.memory { model = "llama2-7b", capacity = 80e9, method = "full", optimizer = "muon" }
t.near(comp(rm, "optimizer"), 4 * (P7 + 262410240), 0, "Muon 7B: 4 B/param + Adam's 4 more on 262M")
t.near(rm.state_bytes.scalar, 8, 0, "r.state_bytes.scalar = Adam's 2 x 4 B")
-- dist_muon (Megatron-Core's, the megatron stack's) shards master and
-- states over DP at ZeRO 0: over 8, each / 8.  (The hf and deepspeed
-- stacks step it whole at ZeRO 0: tests/lua/muon_stacks.t.)
local rm8 = gp.memory { model = "llama2-7b", capacity = 80e9, method = "full", optimizer = "muon",
                        gpus = 8, stack = "megatron" }
t.near(comp(rm8, "optimizer"), 4 * (P7 + 262410240) / 8, 1e-12, "Muon over DP 8 at ZeRO 0: states / 8")
t.near(comp(rm8, "master"), 4 * P7 / 8, 1e-12, "Muon over DP 8 at ZeRO 0: master / 8")
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, method = "full",
                                optimizer = "moun" } end,
  "unknown optimizer 'moun' %(did you mean muon%?%)", "a misspelt optimizer named")
-- The stacks answer the 16 / 18 / 20 question for the same bf16 job.
local r16 = gp.memory { model = "llama2-7b", capacity = 80e9, method = "pretrain", stack = "hf" }
local r18 = gp.memory { model = "llama2-7b", capacity = 80e9, method = "pretrain" }
t.ok(r16.state_bytes.total == 16 and r18.state_bytes.total == 18,
  "hf 16, megatron 18 B/param")
local rf16 = gp.memory { model = "llama2-7b", capacity = 80e9, method = "pretrain",
                         stack = "deepspeed", precision = "fp16" }
t.is(rf16.recipe, "mixed-16", "DeepSpeed fp16 is the classic 16 B/param")
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, stack = "jax" } end,
  "unknown stack 'jax'", "unknown stack")

-- The pipeline engine follows the stack.  Llama-2-7B, tp 2, pp 4, seq 2048,
-- micro-batch 1, on stage 0: DeepSpeed keeps each in-flight micro-batch's
-- output as its 1/t slice, 2048 * 4096 * 2 B / 2 = 8,388,608 B, for 4 in
-- flight plus one partitioned grad buffer: 5 * 8,388,608 = 41,943,040 B;
-- Megatron pseudo-frees its outputs: no such component.
local pj = { model = "llama2-7b", capacity = 80e9, method = "pretrain", gpus = 8,
             tp = 2, pp = 4, seq = 2048, batch = 1 }
pj.stack = "deepspeed"
local rpd = gp.memory(pj)
pj.stack = "megatron"
local rpm = gp.memory(pj)
t.near(comp(rpd, "pipe_buffers"), 41943040, 1e-12,
  "deepspeed stage 0: 4 partitioned outputs + grad buffer")
t.is(comp(rpm, "pipe_buffers"), 0, "megatron: no pipe buffers")
-- Layers per stage: DeepSpeed's default balances parameters; Llama-2-7B's
-- 131M-param embedding and head against 202M-param layers still give 8
-- layers a stage (32 = 4 x 8: the ends hold e + 8w = 1.75e9 < 9w).
t.ok(rpd.stage == 0 and rpd.stage_layers == 8, "7B pp 4: 8 layers on stage 0")
t.ok(table.concat(rpd.defaults, " "):find("partition=parameters", 1, true) ~= nil,
  "the partition default is recorded")
-- BLOOM-176B with Megatron-DeepSpeed's 'type:transformer' (70 ones in 12
-- parts: 6 a stage, 4 on the last): stage 0 holds 6 layers + the embedding.
local bt = gp.memory { model = "bloom-176b", capacity = 80e9, method = "pretrain",
                       gpus = 48, tp = 4, pp = 12, seq = 2048, batch = 2,
                       recompute = "full", stack = "deepspeed", partition = "type:transformer" }
t.ok(bt.stage == 0 and bt.stage_layers == 6, "type:transformer: stage 0, 6 layers")
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, pp = 4, gpus = 4,
                                partition = 2 } end,
  "memory: partition must be auto, uniform, parameters, type:transformer or "
    .. "type:transformer|embedding (got 2)", "partition: a string", true)
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, pp = 4, gpus = 4,
                                partition = "greedy" } end,
  "memory: partition must be auto, uniform, parameters, type:transformer or "
    .. "type:transformer|embedding (got string 'greedy')", "partition: a known name", true)

-- Predictor rule: pretrain + ZeRO stage >= 1 without FSDP -> DeepSpeed.
local predict = require "gpuplan.predict.memory"
local function case(zero, fsdp)
  return { model = { name = "tiny", layers = 32, hidden = 4096, heads = 32, kv_heads = 32,
                     ffn_hidden = 11008, ffn_gated = true, vocab = 32000 },
           hardware = { gpu = "a100-sxm-80gb", gpus = 8 },
           parallel = { tp = 1, pp = 1, dp = 8, zero = zero, fsdp = fsdp, micro_batch = 1 },
           workload = { seq_len = 2048, precision = "bf16", method = "pretrain" },
           measured = { metric = "peak_memory_gb", value = 1 } }
end
local function has(list, pat)
  for _, d in ipairs(list) do if d:match(pat) then return true end end
  return false
end
local cat = gp.catalog()
t.ok(has(predict(case(1, false), cat).defaults, "^recipe=deepspeed%-bf16"),
  "ZeRO-1 pretrain case -> deepspeed-bf16")
t.ok(has(predict(case(3, true), cat).defaults, "^recipe=megatron%-18"),
  "FSDP case is not DeepSpeed")
t.ok(has(predict(case(0, false), cat).defaults, "^recipe=megatron%-18"),
  "no ZeRO stage -> Megatron 18 B/param")

-- Errors are clear.
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, tp = 3, gpus = 3 } end,
  "tp 3 does not divide the 32 attention heads", "tp not dividing heads")
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, seq = -5 } end,
  "seq must be a whole number of tokens, 1..16777216 (got -5)", "negative seq", true)
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, recipe = "fp7" } end,
  "unknown recipe 'fp7'", "unknown recipe")
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, method = "dpo" } end,
  "unknown method 'dpo'", "unknown method")
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, method = "infer",
                                weights = "int3" } end,
  "unknown weight format 'int3'", "unknown weight format")
t.raises(function() core.memory(gp.catalog():get("models", "llama2-7b"),
                                { capacity = 0 / 0, seq = 1 }) end,
  "memory.capacity must be finite", "NaN capacity")
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, gpus = 8, tp = 8,
                                zero = 5 } end,
  "zero must be a whole number 0..3 %(got 5%)", "zero 5")
-- Stack profiles of the memory predictor: the framework a case names
-- fills what the case leaves open (lua/gpuplan/predict/memory.lua).
do
  local predict = require "gpuplan.predict.memory"
  local function case(title, method, extra)
    local c = {
      kind = "memory",
      model = { name = "l31-8b", layers = 32, hidden = 4096, heads = 32, kv_heads = 8,
                ffn_hidden = 14336, ffn_gated = true, vocab = 128256 },
      hardware = { gpu = "h100-sxm", gpus = 1 },
      parallel = { tp = 1, pp = 1, micro_batch = 2 },
      workload = { seq_len = 2048, precision = "bf16", method = method },
      measured = { metric = "peak_memory_gib", value = 1 },
      source = { title = title },
    }
    for k, v in pairs(extra or {}) do c.workload[k] = v end
    return c
  end
  local function has(defaults, pat)
    for _, d in ipairs(defaults) do if d:find(pat, 1, true) then return true end end
    return false
  end
  local cat = gp.catalog()
  -- torchtune full fine-tune (8B_full_single_device.yaml): bf16 params
  -- 8030261248 * 2 = 16060522496; one grad at a time, lm_head 128256 *
  -- 4096 * 2 = 1050673152; checkpointed layer inputs 32 * 4096 tok *
  -- 4096 * 2 = 1073741824; one layer recomputed, per token 2 B * (norms
  -- 2h 8192 + attention h+q+k+v+o 14336 + MLP h + 4f 61440) + flash
  -- lse 4 * 32 = 168064 B, * 4096 = 688390144; logits 4096 * (2 h * 2 +
  -- V * 2.25) = 1249116160.  Sum 20122443776 B = 18.7405 GiB; the paged
  -- 8-bit states are outside max_memory_allocated.
  -- On a 24 GB RTX 4090 the run without checkpointing needs ~40 GiB, so
  -- the profile checkpoints (the README rows are the fastest run that fits).
  local c4090 = case("torchtune README table", "full", { framework = "torchtune" })
  c4090.hardware.gpu = "rtx-4090"
  local p = predict(c4090, cat)
  t.near(p.value, 20122443776 / GiB, 1e-9, "torchtune full FT profile: 18.74 GiB allocated")
  t.ok(has(p.defaults, "paged_optimizer=true") and has(p.defaults, "grads_in_bwd=true")
       and has(p.defaults, "recompute=full (auto: the least that fits)"), "torchtune profile settings listed in defaults")
  -- On an 80 GB H100 it fits without: every matmul input kept, per
  -- layer per token 2 B * (norms 8192 + attention 14336 + MLP 61440) +
  -- lse 128 = 168064 B, * 32 layers * 4096 tokens = 22028484608; plus
  -- weights 16060522496, one grad 1050673152 and logits 1249116160 (as
  -- above), no recompute term: 40388796416 B = 37.61 GiB.
  local ph = predict(case("torchtune README table", "full", { framework = "torchtune" }), cat)
  t.near(ph.value, 40388796416 / GiB, 1e-9, "torchtune on 80 GB: no checkpointing, 37.61 GiB")
  t.ok(has(ph.defaults, "recompute=none (auto: the least that fits)"), "the resolved recompute is listed")
  -- A stated recompute is kept whatever the card.
  local cs = case("torchtune README table", "full", { framework = "torchtune" })
  cs.parallel.recompute = "full"
  t.near(predict(cs, cat).value, 20122443776 / GiB, 1e-9, "stated recompute wins over auto")
  -- The same case with no framework named: no profile, AdamW mixed
  -- precision with grads and states in the allocator -- far larger:
  -- 16 B/param x 8030261248 = 128484179968; no recompute, so every
  -- layer keeps 168064 B per token (as above) x 32 x 4096 tokens =
  -- 22028484608, plus the hf stack's eager RMSNorms, 4 B an element more
  -- each (fp32 upcast and normalised copy, 6 B, against the input's 2):
  -- 2 x 4 x 4096 x 32 x 4096 = 4294967296; logits at the hf stack's 6 B
  -- (bf16 + fp32 upcast): 4096 x (2 h x 2 + 128256 x 6) = 3219128320, and
  -- the final norm's 4 B more, 4096 x 4 x 4096 = 67108864.  Sum
  -- 158093869056 B = 147.24 GiB, 7.9 times the profile's 18.74.
  local q = predict(case("some benchmark", "full"), cat)
  t.ok(not has(q.defaults, "stack profile"), "no framework named: no profile")
  t.near(q.value, 158093869056 / GiB, 1e-9, "... AdamW mixed-16 in the allocator: 147.24 GiB")
  t.ok(q.value > 3 * p.value, "... far above the profile's 18.74 GiB")
  -- The title's word alone is no framework: the case states it.
  q = predict(case("torchtune README table", "full"), cat)
  t.ok(not has(q.defaults, "stack profile"), "a title naming torchtune, no workload.framework: no profile")
  -- What the case states wins over the profile.
  q = predict(case("torchtune", "full", { optimizer = "adamw", framework = "torchtune" }), cat)
  t.ok(not has(q.defaults, "optimizer=adam8bit") and has(q.defaults, "grads_in_bwd=true"),
       "a stated optimizer is kept, the rest of the profile applies")
  -- ... but not the paging, which is PagedAdamW8bit's own (bitsandbytes'
  -- cudaMallocManaged states): torch.optim.AdamW's states sit in PyTorch's
  -- allocator.  With recompute stated full (the same activations as the
  -- 20122443776 B above), the bf16 AdamW's two states add 2 x 2 B x
  -- 8030261248 params = 32121044992 B: 52243488768 B.  Exact sums of
  -- integer byte counts, so a 1e-9 GiB tolerance.
  t.ok(not has(q.defaults, "paged_optimizer=true"), "torch AdamW stated: no paged states")
  local qa = case("torchtune", "full", { optimizer = "adamw", framework = "torchtune" })
  qa.parallel.recompute = "full"
  t.near(predict(qa, cat).value, 52243488768 / GiB, 1e-9,
         "torch AdamW under the torchtune profile: its bf16 states counted, 48.66 GiB")
  -- A case stating workload.paged_optimizer false keeps the profile's
  -- 8-bit AdamW but in PyTorch's allocator (torchao's AdamW8bit): the
  -- paged 20122443776 B above plus the catalog's adam8bit states, 2 x
  -- (1 + 4 / 2048) B x 8030261248 = 16091890704 B: 36214334480 B.
  local qp = case("torchtune", "full", { framework = "torchtune", paged_optimizer = false })
  qp.parallel.recompute = "full"
  local pq = predict(qp, cat)
  t.near(pq.value, 36214334480 / GiB, 1e-9, "paged_optimizer false: the 8-bit states counted, 33.73 GiB")
  t.ok(has(pq.defaults, "optimizer=adam8bit") and not has(pq.defaults, "paged_optimizer=true"),
       "the case's paged_optimizer over the profile's")
  -- The recipe follows the case's dtype (predict/case.lua
  -- torchtune_recipe, the train profile's rule): fp32 stated, the fp32
  -- recipe; fp16 the recipes refuse, and so does the predictor.
  local q32 = predict(case("torchtune", "full", { framework = "torchtune", precision = "fp32" }), cat)
  t.ok(q32 and has(q32.defaults, "recipe=fp32"), "torchtune, dtype fp32: the fp32 recipe")
  local q16, why16 = predict(case("torchtune", "full", { framework = "torchtune", precision = "fp16" }), cat)
  t.ok(q16 == nil and tostring(why16):find("torchtune's recipes refuse it", 1, true) ~= nil,
       "torchtune, dtype fp16: refused as its recipes refuse it")
  -- PEFT example script: seq 64, batch 8 unless stated.
  local c = case("Hugging Face PEFT README", "lora", { framework = "peft" })
  c.workload.seq_len, c.parallel.micro_batch = nil, nil
  q = predict(c, cat)
  t.ok(has(q.defaults, "seq=64") and has(q.defaults, "batch=8")
       and has(q.defaults, "lora_dropout=0.1"), "PEFT profile: the example script's settings")
  c = case("Hugging Face PEFT README", "lora", { framework = "peft" })
  q = predict(c, cat)
  t.ok(not has(q.defaults, "seq=64"), "PEFT profile: a stated seq wins")
  -- LitGPT: the fused-QKV view is listed and raises the estimate by
  -- exactly 32 layers * tok * 2 * (q - k) * 2 B for this GQA shape
  -- (k, v expanded copies): 32 * 4096 * 2 * 3072 * 2 = 1610612736 B.
  local lit = predict(case("LitGPT resource tables", "lora", { lora = { rank = 8, targets = { "q", "v" } },
                                                   framework = "litgpt" }), cat)
  t.ok(has(lit.defaults, "fused_qkv_view=true"), "LitGPT profile lists the fused QKV view")
  local gl = memory.memory { model = case("x", "lora").model, gpu = "h100-sxm", cat = cat,
    method = "lora", seq = 2048, batch = 2, lora_rank = 8, lora_targets = "q,v",
    lora_dropout = 0.05, recipe = "bf16", logit_bytes = 4, fused_qkv_view = false }
  local gl2 = memory.memory { model = case("x", "lora").model, gpu = "h100-sxm", cat = cat,
    method = "lora", seq = 2048, batch = 2, lora_rank = 8, lora_targets = "q,v",
    lora_dropout = 0.05, recipe = "bf16", logit_bytes = 4, fused_qkv_view = true }
  t.near(gl2.allocated - gl.allocated, 1610612736, 1e-12, "fused QKV (GQA) adds 2 (q - k) per token per layer")
  -- LitGPT's zero padding of the q,v adapter keeps the index_copy
  -- source: 32 layers * 4096 tok * (q 4096 + v 1024) * 2 B = 1342177280 B.
  t.ok(has(lit.defaults, "lora_zero_pad=true"), "LitGPT profile lists the zero padding")
  local gl3 = memory.memory { model = case("x", "lora").model, gpu = "h100-sxm", cat = cat,
    method = "lora", seq = 2048, batch = 2, lora_rank = 8, lora_targets = "q,v",
    lora_dropout = 0.05, recipe = "bf16", logit_bytes = 4, fused_qkv_view = true,
    lora_zero_pad = true }
  t.near(gl3.allocated - gl2.allocated, 1342177280, 1e-12, "zero pad keeps q + v widths per token per layer")
  t.raises(function() memory.memory { model = "llama2-7b", capacity = 80e9, lora_zero_pad = "yes" } end,
    "lora_zero_pad must be true or false (got string 'yes')", "lora_zero_pad type checked", true)
  -- LitGPT generate sizes its KV cache for prompt + max_new_tokens (9 +
  -- 50 = 59 tokens), the case's seq_len only caps it.
  local ci = case("LitGPT resource tables", "infer", { framework = "litgpt" })
  ci.parallel.micro_batch, ci.workload.batch, ci.workload.seq_len = 1, 1, 4096
  local pi = predict(ci, cat)
  local want = memory.memory { model = ci.model, gpu = "h100-sxm", cat = cat,
    method = "infer", ctx = 59, concurrency = 1 }
  t.near(pi.value * GiB, want.allocated, 1e-12, "LitGPT generate: KV for 59 tokens")
  t.ok(has(pi.defaults, "input_len=9 (generate/base.py") and has(pi.defaults, "ctx=59 (prompt 9 + output 50)"),
       "the generate sizing is listed")
  ci.workload.seq_len = 32
  t.ok(has(predict(ci, cat).defaults, "ctx=32 (prompt 9 + output 50, capped by seq_len)"),
       "seq_len caps the generate cache")
  ci.workload.seq_len, ci.workload.input_len, ci.workload.output_len = 4096, 1000, 24
  local ds = predict(ci, cat).defaults
  t.ok(not has(ds, "input_len=9") and has(ds, "ctx=1024 (prompt 1000 + output 24)"), "stated lengths win")
end
t.raises(function() memory.memory { model = "llama2-7b", capacity = 80e9, paged_optimizer = 1 } end,
  "paged_optimizer must be true or false (got 1)", "paged_optimizer type checked", true)
-- FSDP's CPU offload with an 8-bit AdamW (torchao's AdamW8bit, the one
-- torchtune's distributed recipes take: "All of our recipes support
-- lower-precision optimizers from the torchao library. For single device
-- recipes, we also support bitsandbytes") is priced; bitsandbytes' paged
-- optimizer, which pages GPU states through unified memory, is refused
-- beside offload, and the refusal names the configuration that is priced.
t.raises(function()
  memory.memory { model = "llama3-8b", gpu = "rtx-4090", gpus = 2, fsdp = "full_shard",
                  offload = "optimizer", optimizer = "adam8bit", paged_optimizer = true }
end, "offload does not combine with paged_optimizer (bitsandbytes pages GPU states through "
  .. "unified memory; an 8-bit AdamW stepping the offloaded partition on the CPU is optimizer "
  .. "adam8bit without paged_optimizer)", "paged optimizer beside offload: refused, the priced one named", true)
do
  -- The same job without paged_optimizer: host memory per GPU of FSDP
  -- full_shard (ZeRO-3) over 2 GPUs, 8030261248 / 2 = 4015130624 elements:
  -- fp32 master 4 + fp32 grad 4 + the bf16 gradient partition 2 + two
  -- 8-bit states with a 4-byte scale per 2048-element block 2 (1 + 4/2048)
  -- = 12.00390625 B an element, 48197251592 B, exact.
  local r = memory.memory { model = "llama3-8b", gpu = "rtx-4090", gpus = 2, fsdp = "full_shard",
                            offload = "optimizer", optimizer = "adam8bit" }
  t.near(r.cpu_bytes, 4015130624 * (4 + 4 + 2 + 2 * (1 + 4 / 2048)), 1e-12,
    "FSDP offload + 8-bit AdamW: 12.004 B an element on the host")
end


-- Vision-language models: images per sequence through the ViT tower.
do
  local function comp(r, name)
    for _, c in ipairs(r.components) do if c.name == name then return c.bytes end end
    return 0
  end
  local function has(defaults, pat)
    for _, d in ipairs(defaults) do if d:find(pat, 1, true) then return true end end
    return false
  end
  -- Frozen tower (the fine-tuning default): the merger's inputs only,
  -- 4 images * 4 * 1024 patches * 1280 * 2 B = 41943040 B.
  local r = gp.memory { model = "qwen2-vl-7b", gpu = "h100-sxm", method = "full",
                        seq = 4096, images = 4 }
  t.near(comp(r, "vision_activations"), 41943040, 1e-12, "frozen tower: merger inputs")
  t.ok(has(r.defaults, "train_vision=false"), "full fine-tuning freezes the tower by default")
  -- Pre-training trains the tower: each of its 32 layers keeps, per
  -- patch (4 images x 1024 patches), 2 B x (norm inputs 2h 2560 +
  -- attention input, q, k, v, out 5h 6400 + MLP input h 1280 + GELU
  -- input and fc2 input 2f 10240) + flash lse 4 B x 16 heads = 41024 B:
  -- 32 x 4096 x 41024 = 5377097728, + the merger's 41943040 =
  -- 5419040768 B, 129 times the frozen tower's.
  local rp = gp.memory { model = "qwen2-vl-7b", gpu = "h100-sxm", method = "pretrain",
                         seq = 4096, images = 4 }
  t.ok(has(rp.defaults, "train_vision=true") and comp(rp, "vision_activations") > 100 *
       comp(r, "vision_activations"), "pre-training trains the tower")
  t.near(comp(rp, "vision_activations"), 32 * 4096 * 41024 + 41943040, 1e-12,
         "... every ViT layer keeps its inputs: 5.42 GB")
  local rt = gp.memory { model = "qwen2-vl-7b", gpu = "h100-sxm", method = "full",
                         seq = 4096, images = 4, train_vision = true }
  t.ok(comp(rt, "grads") > comp(r, "grads"), "a training tower has grads")
  t.raises(function() gp.memory { model = "llama2-7b", gpu = "h100-sxm", images = 1 } end,
    "images given for llama2-7b, which has no vision tower", "images on a text model", true)
  t.raises(function() gp.memory { model = "qwen2-vl-7b", gpu = "h100-sxm", images = 1.5 } end,
    "images must be a whole number", "fractional images")
  t.raises(function() gp.memory { model = "qwen2-vl-7b", gpu = "h100-sxm", images = -1 } end,
    "images must be a whole number 0..16777216 %(got %-1%)", "negative images")
  t.raises(function() gp.memory { model = "qwen2-vl-7b", gpu = "h100-sxm", method = "lora",
                                  train_vision = true } end,
    "LoRA/QLoRA freeze the whole base", "LoRA cannot train the tower")
  t.raises(function() gp.memory { model = "qwen2-vl-7b", gpu = "h100-sxm", train_vision = "yes" } end,
    "train_vision must be true or false (got string 'yes')", "train_vision type checked", true)
  t.raises(function() gp.memory { model = "qwen2-vl-7b", gpu = "h100-sxm", method = "infer",
                                  images = 2 } end,
    "images applies to training, not method infer",
    "images are not silently ignored in inference")
end

-- recompute = "auto": the least recomputation that fits the budget.
-- Llama 2 7B full fine-tune, seq 2048, on 8 x 80 GB with ZeRO-3 fits
-- without recomputation (the CLI test shows headroom with full
-- recompute; the states are 16 B/param / 8 = 13.5 GB); on one 80 GB card
-- the 107.8 GB of states alone do not fit, so auto ends at full and says
-- nothing fits.
do
  local r = gp.memory { model = "llama2-7b", gpu = "h100-sxm", gpus = 8, zero = 3,
                        recompute = "auto" }
  local want = gp.memory { model = "llama2-7b", gpu = "h100-sxm", gpus = 8, zero = 3,
                           recompute = "none" }
  t.ok(r.fits and r.total == want.total, "auto picks none when none fits")
  local r1 = gp.memory { model = "llama2-7b", gpu = "h100-sxm", recompute = "auto" }
  local listed = false
  for _, d in ipairs(r1.defaults) do
    if d == "recompute=full (auto: nothing fits; the most saving)" then listed = true end
  end
  t.ok(not r1.fits and listed, "auto says when nothing fits")
end

-- The margin comes from the catalog's settings when the caller gives
-- none, as gpuplan.infer takes it: 0.2 of capacity here; a given margin wins.
do
  local cat = gp.catalog()
  local c2 = setmetatable({ settings = { safety_margin = 0.2 } }, { __index = cat })
  local r = gp.memory { model = "llama2-7b", gpu = "h100-sxm", cat = c2 }
  t.near(r.margin / r.capacity, 0.2, 1e-12, "catalog safety_margin honoured")
  r = gp.memory { model = "llama2-7b", gpu = "h100-sxm", cat = c2, margin = 0.05 }
  t.near(r.margin / r.capacity, 0.05, 1e-12, "a given margin wins")
end

-- RL trains on whole rollouts: with no seq given the actor's sequence is
-- prompt + response (1024 + 2048 = 3072, within Llama 2's 4096-token
-- context, which the rollout engine refuses to pass), and says so.
do
  local r = gp.memory { model = "llama2-7b", gpu = "h100-sxm", gpus = 8, zero = 3,
                        method = "grpo", prompt_len = 1024, response_len = 2048 }
  local listed = false
  for _, d in ipairs(r.defaults) do
    -- said in words (seq is refused beside an RL method: no value to copy)
    if d == "seq: 3072 (prompt 1024 + response 2048)" then listed = true end
  end
  t.ok(listed, "GRPO actor seq defaults to prompt + response")
end

-- One RL memory model: gp.memory's GRPO breakdown is gp.rl's state that
-- needs the most (the same engine result: equal to the byte).
do
  local o = { model = "llama3.1-8b", gpu = "h100-sxm", gpus = 8, zero = 3, prompts = 64,
              group = 8, prompt_len = 512, response_len = 1024 }
  local m = gp.memory(setmetatable({ method = "grpo" }, { __index = o }))
  local r = gp.rl(o)
  local top = math.max(r.memory.rollout.total, r.memory.forward.total, r.memory.update.total)
  t.is(m.total, top, "fit --method grpo = gp.rl's largest state")
  t.is(r.memory[m.rl_state].total, top, "and names it")
  -- Keys inherited through __index reach the RL step as given ones do: the
  -- same job read from a plain table and through setmetatable gives the
  -- same bytes (tp 8 and full recompute inherited; were they dropped the
  -- step would price TP 1 without recompute, about 3x the bytes).
  local j = { model = "qwen3-32b", gpu = "h100-sxm", gpus = 16, tp = 8, zero = 1,
              recompute = "full" }
  local plain = gp.memory { model = "qwen3-32b", gpu = "h100-sxm", gpus = 16, tp = 8,
                            zero = 1, recompute = "full", method = "grpo" }
  local inh = gp.memory(setmetatable({ method = "grpo" }, { __index = j }))
  t.is(inh.total, plain.total, "inherited tp and recompute are the job's")
  local sep = gp.memory { model = "llama3.1-8b", gpu = "h100-sxm", gpus = 8, zero = 3,
                          method = "grpo", colocated = false }
  local rs = gp.rl { model = "llama3.1-8b", gpu = "h100-sxm", gpus = 16, zero = 3,
                     rollout_gpus = 8, prompts = 64 }
  t.is(sep.total, math.max(rs.memory.rollout.total, rs.memory.update.total,
       rs.memory.forward.total), "separate pools: the fit's GPUs train, as many roll out")
end

-- ... and one default: without prompts both take the declared 64 (fit's
-- was 8 per DP rank: 16 at dp 2 here, a smaller rollout KV cache and a
-- lower peak than gp.rl's for the same job).  Equal to the byte: one
-- engine result.
do
  local function job(extra)
    local o = { model = "qwen3-32b", gpu = "h100-sxm", gpus = 16, tp = 8, zero = 1,
                recompute = "full" }
    for k, v in pairs(extra) do o[k] = v end
    return o
  end
  local m = gp.memory(job { method = "grpo" })
  local r = gp.rl(job {})
  local top = math.max(r.memory.rollout.total, r.memory.forward.total, r.memory.update.total)
  t.is(m.total, top, "no prompts given: fit --method grpo = gp.rl's peak")
  local listed = false
  for _, d in ipairs(m.defaults) do if d == "prompts=64" then listed = true end end
  t.ok(listed, "gp.memory lists prompts=64")
end

-- ... and the same response lengths: the rollout's KV cache follows the
-- limit and the mean gp.rl takes, so fit takes response_max (and its
-- family) for an RL step.  Given only the limit, the mean is gp.rl's
-- assumption (0.696 x 8192 = 5702 tokens; 0.113 x 8192 = 929 from a base
-- checkpoint), not the training shape's fixed 1024, and the defaults say
-- that one mean, with no seq of prompt + 1024 beside it.  Equal to the
-- byte: one engine result.  Before, fit refused response_max, and a job
-- of 8192-token limits was 36.5 GiB in fit against 48.2 in gp.rl.
do
  local function job(extra)
    local o = { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, zero = 3,
                recompute = "full" }
    for k, v in pairs(extra) do o[k] = v end
    return o
  end
  local function peak(r)
    return math.max(r.memory.rollout.total, r.memory.forward.total, r.memory.update.total)
  end
  for _, x in ipairs {
    { response_max = 8192, mean = "response_len=5702 (assumed: 0.696" },
    { response_max = 8192, base_checkpoint = true, mean = "response_len=929 (assumed: 0.113" },
    { response_max = 8192, response_len = 5000, response_dist = "uniform" },
  } do
    local mean = x.mean
    x.mean = nil
    local r = gp.rl(job(x))
    x.method = "grpo"
    local m = gp.memory(job(x))
    t.is(m.total, peak(r), string.format("fit = gp.rl's peak at response_max 8192, %s",
      mean or "response_len 5000 uniform"))
    if mean then
      local said, seq = false, false
      for _, d in ipairs(m.defaults) do
        if d:sub(1, #mean) == mean then said = true end
        if d:match("^seq=") then seq = true end
      end
      t.ok(said and not seq, "fit says gp.rl's assumed mean, " .. mean .. "), and no seq")
    end
  end
  t.ok(gp.memory(job { method = "grpo", response_max = 8192 }).total
       > gp.memory(job { method = "grpo" }).total + 2^30,
    "the limit's longer responses hold more KV cache than 1024 each (by over 1 GiB)")
end

-- Grouped integer formats by name: GPTQ/AWQ group size and scale dtype
-- (each group a scale and a 4-bit zero point).
do
  local f = memory.weight_format("gptq-g64")
  t.ok(f.bits == 4 and f.group == 64 and f.group_bits == 20, "gptq-g64: fp16 scale + 4-bit zero per 64")
  f = memory.weight_format("awq-g32-fp32")
  t.ok(f.group == 32 and f.group_bits == 36, "awq-g32-fp32: fp32 scale + 4-bit zero per 32")
  t.raises(function() memory.weight_format("gptq-g0") end, "group size must be 1..65536", "group 0")
  t.raises(function() memory.weight_format("bf16-g64") end, "unknown weight format 'bf16-g64'",
    "a format without groups takes no group size", true)
end

-- A misspelled option is an error naming it, never a silent default: tp_size
-- (for tp) would otherwise plan a tp = 1 job.
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, tp_size = 2 } end,
  "memory: unknown option 'tp_size'", "misspelled option named", true)

-- Values that would plan nonsense in silence are errors naming the option:
-- a rank-0 adapter has no parameters; 0 concurrent sequences or a 0-token
-- context hold no KV; a 0-byte KV element is no dtype; fsdp = "yes" is not
-- the boolean it reads as.
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, method = "lora", lora_rank = 0 } end,
  "lora_rank must be a whole number 1..16777216 (got 0)", "lora_rank 0 refused", true)
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, method = "lora", lora_rank = -4 } end,
  "lora_rank must be a whole number 1..16777216 (got -4)", "negative lora_rank refused", true)
-- An adapter's options with a method that trains none: lora_rank with
-- method full (given, or the default) priced a LoRA step under "full";
-- refused against their declared methods (lora qlora, and an RL step's,
-- whose actor they make an adapter's).
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, lora_rank = 16 } end,
  "lora_rank applies to method lora|qlora|grpo|ppo (got full)", "lora_rank under full refused",
  true)
-- An RL step's options with a method that runs no rollout were dropped in
-- silence (response_max under full planned a full step as if never
-- given): refused against their declared methods, as fit's flags are.
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, response_max = 8192 } end,
  "response_max applies to method grpo|ppo (got full)", "response_max under full refused", true)
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, method = "infer",
  prompts = 32 } end,
  "prompts applies to method grpo|ppo (got infer)", "prompts under infer refused", true)
-- Every method-bound option, as gpuplan fit checks its flags: an
-- inference KV cache under a training method, and a training layout's
-- ZeRO under method infer, were taken in silence.
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, method = "full", kv = "fp8" } end,
  "kv applies to method infer|grpo|ppo (got full)", "kv under full refused", true)
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, method = "infer", zero = 1 } end,
  "zero applies to training, not method infer", "zero under infer refused", true)
t.ok(pcall(gp.memory, { model = "llama2-7b", capacity = 80e9, method = "infer", kv = "fp8" }),
  "kv under infer taken")
-- (512 + 3072 tokens: within Llama 2's 4096-token context)
t.ok(pcall(gp.memory, { model = "llama2-7b", gpu = "h100-sxm", method = "grpo",
  response_max = 3072 }), "response_max under grpo taken")
t.raises(function() gp.train { model = "llama3-8b", gpu = "h100-sxm", gpus = 8,
  method = "pretrain", lora_targets = "q,k,v" } end,
  "train: lora_targets applies to method lora|qlora (got pretrain)",
  "gp.train: lora_targets under pretrain refused", true)
t.raises(function() gp.rl { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, lora_rank = 16 } end,
  "rl: lora_rank applies to method lora|qlora (got full)",
  "gp.rl: an adapter needs the actor's method lora", true)
t.ok(pcall(gp.rl, { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, method = "lora",
  lora_rank = 16 }), "gp.rl: method lora with its rank")
-- The pipeline schedule: its declared values, and interleaved only with
-- the model chunks it interleaves (without them it ran 1F1B under the
-- name).
t.raises(function() gp.memory { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, pp = 2,
  schedule = "interleaved" } end,
  "schedule interleaved runs vpp model chunks a stage: give vpp >= 2 (got vpp 1)",
  "interleaved without vpp refused", true)
t.raises(function() gp.train { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, pp = 2,
  schedule = "gpipe" } end, "schedule must be 1f1b, interleaved or dualpipe (got string 'gpipe')",
  "an unknown schedule: its declared values", true)
t.ok(pcall(gp.train, { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, pp = 2, vpp = 2,
  schedule = "interleaved" }), "interleaved with vpp 2")
-- gpuplan fit's RL step keeps its LoRA actor (method grpo takes the
-- adapter's options): Llama 3 8B's full actor at ZeRO 0 holds 16 B a
-- parameter of states, 8.03e9 x 16 = 128 GB, on each GPU -- past the
-- card; the adapter's actor holds the 2 B weights and a small adapter,
-- so its peak is under half the full one's.
do
  local base = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, method = "grpo", zero = 0 }
  local fm, f0 = gp.memory(t.with(base, { lora_rank = 16 })), gp.memory(base)
  t.ok(fm.rl_state ~= nil and fm.total < f0.total / 2, string.format("fit grpo with "
    .. "lora_rank: an adapter actor's step, %.1f GB against the full actor's %.1f",
    fm.total / 1e9, f0.total / 1e9))
end
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, method = "infer", concurrency = 0 } end,
  "concurrency must be a whole number 1..16777216 (got 0)", "infer concurrency 0 refused", true)
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, method = "infer", ctx = 0 } end,
  "ctx must be a whole number of tokens, 1..16777216 (got 0)", "infer ctx 0 refused", true)
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, method = "infer", kv = 0 } end,
  "kv: 0 bytes per element is out of (0, 8]", "kv 0 bytes refused", true)
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, method = "infer", kv = 1 / 0 } end,
  "kv: inf bytes per element is out of (0, 8]", "kv inf bytes refused", true)
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, fsdp = "yes" } end,
  "fsdp must be full_shard, shard_grad_op or hybrid_shard (got string 'yes')", "fsdp checked: a strategy", true)
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, gpus = 0 / 0 } end,
  "gpus must be a whole number 1..16777216 (got NaN)", "NaN gpus named, one spelling", true)
-- (text that is a plain number is that number, gpuplan.options normal:
-- gpus = "8" is 8; text that is none is refused as text)
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, gpus = "8x" } end,
  "gpus must be a whole number 1..16777216 (got string '8x')", "string gpus says it is a string", true)

-- Encoder-decoder: enc_seq is the encoder's length (seq the decoder's); T5's
-- position-bias attention runs unfused unless flash is asked for.
local r = gp.memory { model = "t0-3b", gpu = "a100-sxm-80gb", method = "lora", seq = 8, enc_seq = 64 }
local d = table.concat(r.defaults, ", ")
t.ok(d:find("flash=false (T5 position-bias attention runs unfused)", 1, true),
  "t5: flash defaults off, said")
local r2 = gp.memory { model = "t0-3b", gpu = "a100-sxm-80gb", method = "lora", seq = 8, enc_seq = 128 }
local function act(x)
  for _, c in ipairs(x.components) do if c.name == "activations" then return c.bytes end end
end
t.ok(act(r2) > act(r), "t5: a longer input saves more")
-- T5 v1.1's gated GeLU is transformers' gelu_new, an eager chain of
-- elementwise ops (engine/memory_act.c): besides its input it keeps tanh's
-- result and both operands of its last product, 3 x d_ff more per token
-- and layer than the same shape with a gated SiLU (nn.SiLU keeps its input
-- only).  By hand: 3 x 5120 (d_ff) x 2 B (bf16) x (64 encoder tokens x 24
-- layers + 8 decoder tokens x 24 layers) = 53,084,160 B, exact (the same
-- layers otherwise); none without the eager modules (eager_swiglu false).
local silu = {}
for k, x in pairs(gp.catalog():get("models", "t0-3b")) do silu[k] = x end
silu.id, silu.ffn_act = "t0-3b-silu", "silu"
for _, eager in ipairs { true, false } do
  local function t5(model)
    return act(gp.memory { model = model, gpu = "a100-sxm-80gb", method = "lora", seq = 8,
                           enc_seq = 64, batch = 1, eager_swiglu = eager })
  end
  t.is(t5("t0-3b") - t5(silu), eager and 3 * 5120 * 2 * (64 * 24 + 8 * 24) or 0,
    "t5: gelu_new keeps tanh, 0.5 x and 1 + tanh" .. (eager and "" or " (not when fused)"))
end
t.ok(table.concat(gp.memory { model = "t0-3b", gpu = "a100-sxm-80gb", seq = 8 }.defaults, ", ")
  :find("enc_seq=8", 1, true), "t5: enc_seq defaults to seq, said")
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, enc_seq = 64 } end,
  "enc_seq applies to encoder%-decoder models; llama2%-7b is decoder%-only", "enc_seq on a decoder-only model")
t.raises(function() gp.memory { model = "t0-3b", capacity = 80e9, method = "infer" } end,
  "inference of an encoder%-decoder model is not modelled", "t5 inference refused")
-- gp.infer refuses it in the same words (engine/memory_infer.c
-- mem_infer_model_ok, one place for gp.memory's and gp.infer's paths).
t.raises(function() gp.infer { model = "t0-3b", gpu = "a100-sxm-80gb" } end,
  "infer: inference of an encoder%-decoder model is not modelled %(its training memory is%)",
  "t5 refused by gp.infer, the same words")

-- Offload: host memory by kind; ZeRO carrying the offload is no zero_dp1.
r = gp.memory { model = "llama2-7b", gpu = "a100-sxm-80gb", zero = 3, offload = "params+optimizer" }
-- 6,738,415,616 params on one GPU: host bf16 2 + grads 4 + 2 + master 4 +
-- Adam 8 = 20 B/param = 134,768,312,320 B (tests/c/t_memory.c derives the
-- per-kind terms).
t.is(r.cpu_bytes, 134768312320, "offload: 20 B/param on the host")
t.is(r.host.weights + r.host.grads + r.host.master + r.host.optimizer, r.cpu_bytes,
  "offload: host kinds add up")
t.is(#r.warnings, 0, "ZeRO-3 at dp 1 carrying the offload: no warning")
t.raises(function() gp.memory { model = "llama2-7b", capacity = 80e9, offload = "optimizer" } end,
  "offload needs a ZeRO stage", "offload without ZeRO refused")

-- Warnings (the codes gp.train reports): ZeRO over one rank; TP wider than
-- the node (the DGX A100 system: 8 GPUs).
r = gp.memory { model = "llama2-7b", gpu = "a100-sxm-80gb", zero = 1 }
t.is(table.concat(r.warnings, ","), "zero_dp1", "ZeRO-1 at dp 1: zero_dp1")
r = gp.memory { model = "llama2-70b", gpu = "a100-sxm-80gb", gpus = 64, tp = 64 }
t.is(table.concat(r.warnings, ","), "tp_leaves_node", "tp 64 over 8-GPU nodes: tp_leaves_node")
t.is(memory.warning_line(r.warnings, r.job),
  "warnings: tp_leaves_node (tp 64 spans 8 nodes, 8 ranks on each: every layer's TP "
  .. "collectives cross the NICs)", "the warning says how far it spans")
-- A TP group the node does not divide: GPT-3 175B (96 heads) at TP 12, PP 2
-- on 24 GPUs of 8-GPU nodes.  TP innermost, the launcher puts ranks 0-11
-- on nodes 0 (0-7) and 1 (8-11) and ranks 12-23 on nodes 1 (12-15) and 2
-- (16-23): each group spans 2 nodes, 4 ranks on its poorer one (8 + 4,
-- 4 + 8), as gp.train places the same layout (engine/layout_fill.c).  It
-- said "8 ranks on each" (min(tp, 8)).
r = gp.memory { model = "gpt3-175b", gpu = "h100-sxm", gpus = 24, tp = 12, pp = 2 }
t.is(memory.warning_line(r.warnings, r.job),
  "warnings: tp_leaves_node (tp 12 spans 2 nodes, at least 4 ranks on each: every layer's "
  .. "TP collectives cross the NICs)", "tp 12 on 8-GPU nodes: 8 + 4, at least 4 on each")
local tr = gp.train { model = "gpt3-175b", gpu = "h100-sxm", gpus = 24, tp = 12, pp = 2 }
t.ok(tr.groups.tp.per_node == r.job.tp_per_node and tr.groups.tp.nodes == r.job.tp_nodes,
  "... the share and span gp.train prices the same layout on")
t.is(#gp.memory { model = "llama2-70b", gpu = "a100-sxm-80gb", gpus = 16, tp = 8, zero = 1 }.warnings,
  0, "tp 8 on 8-GPU nodes, ZeRO over dp 2: no warning")

-- fp8 needs fp8 tensor cores: an error on A100, as gp.train's.
t.raises(function() gp.memory { model = "llama2-7b", gpu = "a100-sxm-80gb", precision = "fp8" } end,
  "fp8 training needs fp8 tensor cores; gpu a100%-sxm%-80gb has none", "fp8 on A100 refused")
t.ok(pcall(gp.memory, { model = "llama2-7b", gpu = "h100-sxm", precision = "fp8" }), "fp8 on H100 fine")

-- Hugging Face's eager attention (memory_act.c core, eager_softmax, on by
-- default on the hf stack): softmax(dtype=float32).to(bf16) keeps the fp32
-- softmax output for its backward and the bf16 copy for PV, 4 + 2 bytes a
-- score instead of 2.  Llama-3 8B, seq 1024, one sequence: per layer
-- 32 heads x 1024 x 1024 scores x 4 more bytes = 134,217,728 B, exactly
-- (a sum of whole numbers of bytes).
do
  local o = { model = "llama3-8b", gpu = "h100-sxm", gpus = 1, method = "full", seq = 1024,
              flash = false, stack = "hf" }
  local eager = gp.memory(o)
  o.eager_softmax = false
  local fused = gp.memory(o)
  t.is(eager.act_layer - fused.act_layer, 32 * 1024 * 1024 * 4,
    "eager attention: the fp32 softmax output is kept beside its bf16 copy")
  o.flash, o.eager_softmax = true, nil
  local fl = gp.memory(o)
  o.eager_softmax = false
  t.is(gp.memory(o).act_layer, fl.act_layer, "with flash attention eager_softmax changes nothing")
end

t.done_testing()
