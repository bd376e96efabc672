-- DeepSpeed-Ulysses sequence parallelism (the ulysses option: verl's
-- ulysses_sequence_parallel_size on its FSDP workers; gpuplan.memory
-- ulysses, engine/train_layer.c ulysses_comm).
-- Run with ./gpuplan run tests/lua/ulysses.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(49)

local MiB = 2 ^ 20
local job = { model = "llama3-8b", gpu = "h100-sxm", gpus = 4, ulysses = 4, stack = "hf",
              seq = 8192, global_batch = 1 }

-- The exchange, by hand.  llama3-8b: 32 layers, hidden 4096, 32 heads and
-- 8 kv heads of 128, so a token's q and attention output are 4096 wide,
-- its k and v 1024 each.  seq 8192 over ulysses 4: a rank holds T = 2048
-- tokens of its sequence outside attention.  verl's forward all-to-alls
-- (verl/models/transformers/monkey_patch.py): q, k, v each by
-- gather_seq_scatter_heads, the output back by gather_heads_scatter_seq;
-- a buffer is a rank's whole local tensor in bf16 (2 B):
--   q, out: 2048 x 4096 x 2 = 16 MiB each;  k, v: 2048 x 1024 x 2 = 4 MiB
--   each (8 kv heads, 8 / 4 a rank: no repeat, repeats = max(4 // 8, 1)).
-- Backward (SeqAllToAll.backward) sends the four gradients back: the same
-- buffers.  Synchronous (async_op False): none hidden, so the step's
-- cp_comm is layers x passes x (2 a2a(16 MiB) + 2 a2a(4 MiB)) = 32 x 2 x
-- ..., each all-to-all what gp.comm prices over the 4 GPUs of a DGX H100
-- (the group is one node's 4 ranks, on NVLink).  One micro-batch, no
-- recompute (the default).  Tolerance 1e-9: the same arithmetic.
local r = gp.train(job)
local big = gp.comm { op = "all_to_all", bytes = 16 * MiB, gpus = 4, system = "dgx-h100" }
local small = gp.comm { op = "all_to_all", bytes = 4 * MiB, gpus = 4, system = "dgx-h100" }
local cpc = t.step_part(r, "cp_comm")
t.near(cpc.seconds, 32 * 2 * (2 * big.time + 2 * small.time), 1e-9,
  "cp_comm = 32 layers x 2 passes x (2 a2a of 16 MiB + 2 of 4 MiB)")
t.is(cpc.hidden, 0.0, "verl's all-to-alls are synchronous: none hidden")
t.is(r.ulysses, 4, "result: ulysses 4")
t.is(r.cp, 1, "result: cp 1 beside it (the group is Ulysses', no ring)")

-- A group larger than a node pays the fabric it crosses: the CP group's
-- placement (engine/layout.c layout_place: the group's ranks and those of
-- a node) is what ulysses_comm's all-to-alls are priced on, as EP's are.
-- (a) ulysses 16 on 16 GPUs of two DGX H100s, seq 32768: T = 2048 a rank;
-- q, out 2048 x 4096 x 2 B = 16 MiB; 8 kv heads repeated to 16 (repeats
-- = 16 // 8 = 2): k, v 2048 x 16 x 128 x 2 B = 8 MiB.  The group is
-- the 16 GPUs' own, 8 a node: gp.comm's 16 GPUs on dgx-h100.
-- (b) tp 2 x ulysses 8 on the same 16 GPUs, on stack deepspeed
-- (Megatron-DeepSpeed's groups hold TP beside its Ulysses; verl's FSDP
-- mesh holds none, so stack hf refuses it): T = 4096; q, out 4096 x 4096
-- / 2 x 2 B = 16 MiB; a TP rank's 4 kv heads repeated to 8 (8 // 4 = 2):
-- k, v 4096 x 8 x 128 x 2 B = 8 MiB.  The group's 8
-- ranks stride 2, 4 a node: gp.comm's 8 GPUs over 2 nodes.
-- Both 32 layers x 2 passes x (2 a2a(16 MiB) + 2 a2a(8 MiB)); tolerance
-- 1e-9: the same arithmetic.  And below by the network alone (fails if
-- priced in one node): half of each rank's buffer S leaves the node
-- through the GPU's 400 Gb/s NIC (50e9 B/s, dgx-h100's 8 ConnectX-7 for 8
-- GPUs), 0.5 S / 50e9 an all-to-all at least: 64 x (2 x 0.5 x 16 MiB + 2
-- x 0.5 x 8 MiB) / 50e9 = 32.2 ms.
do
  local long = t.with(job, { gpus = 16, seq = 32768 })
  local a = t.step_part(gp.train(t.with(long, { ulysses = 16 })), "cp_comm").seconds
  local b = t.step_part(gp.train(t.with(long, { tp = 2, ulysses = 8, stack = "deepspeed" })),
    "cp_comm").seconds
  local function a2a(bytes, o)
    return gp.comm(t.with({ op = "all_to_all", bytes = bytes, system = "dgx-h100" }, o)).time
  end
  local g16, g8x2 = { gpus = 16 }, { gpus = 8, nodes = 2 }
  t.near(a, 32 * 2 * (2 * a2a(16 * MiB, g16) + 2 * a2a(8 * MiB, g16)), 1e-9,
    "ulysses 16 over 2 nodes: its all-to-alls priced on the 16 GPUs' two nodes")
  t.near(b, 32 * 2 * (2 * a2a(16 * MiB, g8x2) + 2 * a2a(8 * MiB, g8x2)), 1e-9,
    "tp 2 x ulysses 8: its group's 8 ranks, 4 a node, priced over 2 nodes")
  local nic = 64 * (2 * 0.5 * 16 * MiB + 2 * 0.5 * 8 * MiB) / 50e9
  t.ok(a >= nic and b >= nic, string.format("both at least the NIC's %.1f ms (%.1f, %.1f)",
    nic * 1e3, a * 1e3, b * 1e3))
end

-- Data parallelism is what the sequence groups leave: dp = gpus / (tp x
-- pp x ulysses) = 16 / 4 = 4.
t.is(gp.train(t.with(job, { gpus = 16, global_batch = 4 })).dp, 4, "dp = 16 / ulysses 4 = 4")

-- Full recompute runs the forward again, its four all-to-alls with it
-- (train_stage.c: cp_fwd x (1 + rec)): 32 x 3 x the layer's set.
local rf = gp.train(t.with(job, { recompute = "full" }))
t.near(t.step_part(rf, "cp_comm").seconds, 32 * 3 * (2 * big.time + 2 * small.time), 1e-9,
  "full recompute: 3 passes of the four all-to-alls")

-- GQA below the group: kv heads repeated to the group first ("repeats =
-- max(ulysses_sp_size // key_states.size(2), 1)"; verl's own example
-- "nheads_k=4, sp=8, repeats=2").  llama3-8b rebuilt with 2 kv heads at
-- ulysses 4 repeats them twice: its k and v buffers are 2 x 2 heads x 128
-- x 2048 x 2 B = 2 MiB, those of 4 kv heads (no repeat) alike -- so the
-- two price the same exchange, and 8 kv heads (4 MiB each) more.
local base = gp.catalog().models["llama3-8b"]
local function kv(n)
  local m = t.with(base, { kv_heads = n, id = "llama3-8b-kv" .. n })
  return t.step_part(gp.train(t.with(job, { model = m })), "cp_comm").seconds
end
local kv2, kv4 = kv(2), kv(4)
local mid = gp.comm { op = "all_to_all", bytes = 2 * MiB, gpus = 4, system = "dgx-h100" }
t.near(kv2, 32 * 2 * (2 * big.time + 2 * mid.time), 1e-9,
  "2 kv heads at ulysses 4: repeated to 4, k and v 2 MiB each")
t.near(kv2, kv4, 1e-12, "2 kv heads repeated x2 price as 4 kv heads")
t.ok(cpc.seconds > kv4, "8 kv heads move more than 4")

-- Outside attention a rank holds seq / ulysses tokens, inside it the
-- whole sequence of heads / ulysses: the same elements as a CP rank's
-- q, k and v.  Beyond a CP rank's (Transformer Engine's p2p ring, whose
-- buffers are unpriced), each layer keeps the attention output twice:
-- flash's O, saved for its backward in the heads-split layout, and
-- gather_heads_scatter_seq's new tensor ("torch.cat(output_list,
-- dim=gather_dim).contiguous()", verl/utils/ulysses.py) that o_proj
-- keeps: 2048 tokens x 4096 x 2 B = 16 MiB a layer, 32 layers x 1
-- micro-batch = 512 MiB more.  Tolerance 1e-9: exact sums of the same
-- terms.
local act = function(o) return t.part(gp.train(t.with(job, o)).memory, "activations") end
local a_u = act {}
local a_cp = act { ulysses = 1, cp = 4, stack = "hf" }
t.near(a_u - a_cp, 32 * 16 * MiB, 1e-9, "activations: cp 4's + 32 layers x the 16 MiB output copy")
t.ok(a_u < act { ulysses = 1, gpus = 1 }, "activations: below one GPU's whole sequence")

-- Ulysses' own memory on stack deepspeed (Megatron-DeepSpeed's
-- ds_sequence_parallel_size; no pipeline beside it on any stack:
-- tests/lua/ulysses_stack.t), 4 GPUs, one micro-batch of the global
-- batch's 2 in flight over 32 layers: 32 layer-copies, the logits the
-- same under ulysses 4 and cp 4 (both hold seq / 4 tokens).  llama3-8b at
-- 8 kv heads: the output copy alone, 32 x 16 MiB = 512 MiB.  Rebuilt with 2 kv heads, verl's
-- repeat_kv to the group ("repeats = max(ulysses_sp_size //
-- key_states.size(2), 1)" = 2) hands flash K and V of 4 heads, one a
-- rank over all 8192 tokens: 2048 x 4 x 128 x 2 B = 2 MiB each where the
-- kv-wide pair is 2048 x 2 x 128 x 2 B = 1 MiB each -- 2 MiB more a
-- layer, 32 x (16 + 2) = 576 MiB in all.  The exchange's buffers
-- (all_to_all_tensor: the N contiguous send chunks and the N receive
-- buffers, two copies of the tensor sent beside its result) live while
-- one layer runs, the largest tensor exchanged setting them: q and the
-- output, 16 MiB, 2 x 16 = 32 MiB, where a CP rank of TE's ring holds
-- none; they never meet the logits (freed before the last layer's
-- backward: engine/memory_train.c), so the stage holds the larger.  Every
-- stage Ulysses runs on holds the logits (no pipeline beside it), here
-- over 32 MiB, so the recompute part shows none of them.  (A pipeline
-- stage without the logits showed the 32 MiB, before pp beside ulysses
-- was refused on every stack.)  The ranks all hold the same; tolerance
-- 1e-9: exact sums.
local pjob = t.with(job, { gpus = 4, global_batch = 2, stack = "deepspeed" })
local function mem(o)
  local m = gp.train(t.with(pjob, o)).memory
  return t.part(m, "activations"), t.part(m, "recompute") or 0, t.part(m, "logits")
end
local kv2m = t.with(base, { kv_heads = 2, id = "llama3-8b-kv2" })
local pa_u, pr_u, pl_u = mem {}
local pa_cp, pr_cp = mem { ulysses = 1, cp = 4 }
local ka_u, kr_u = mem { model = kv2m }
local ka_cp = mem { ulysses = 1, cp = 4, model = kv2m }
t.near(pa_u - pa_cp, 32 * 16 * MiB, 1e-9, "stack deepspeed: 32 layer-copies x the 16 MiB output copy")
t.near(ka_u - ka_cp, 32 * (16 + 2) * MiB, 1e-9,
  "2 kv heads repeated to 4: K and V 1 MiB wider each a layer-copy, beside the output copy")
t.ok(pl_u > 2 * 16 * MiB and pr_u == 0 and pr_cp == 0,
  string.format("the all-to-all's 2 x 16 MiB of buffers under the stage's %.0f MiB of logits", pl_u / MiB))
t.is(kr_u, pr_u, "... the repeated K (2 MiB) below q's 16 MiB: the same")

-- No chunks to balance: verl pads the tokens to a multiple of the group
-- (verl/utils/ulysses.py ulysses_pad), so seq 8190 is priced, where CP
-- refuses it (2 x cp must divide seq).
t.ok(gp.train(t.with(job, { seq = 8190 })).step_s > 0, "seq 8190 at ulysses 4: priced")

-- Bad input, each naming the option (usage: exit 2 on the CLI; a rule of
-- the model's heads: exit 1 -- tests/cli/ulysses.t).
t.raises(function() gp.train(t.with(job, { gpus = 6 })) end,
  "gpus 6 is not a multiple of tp*pp*ulysses = 4", "gpus not a multiple of ulysses", true)
-- qwen2.5-7b: 28 heads, 4 kv heads; 8 divides neither 28 nor is 28 a
-- multiple of it
t.raises(function() gp.train(t.with(job, { model = "qwen2.5-7b", gpus = 8, ulysses = 8 })) end,
  "ulysses 8 must divide the 28 attention heads", "heads % ulysses != 0 refused", true)
-- ulysses 7 divides 28 heads, but 4 kv heads and 7: neither divides the other
t.raises(function() gp.train(t.with(job, { model = "qwen2.5-7b", gpus = 7, ulysses = 7 })) end,
  "ulysses 7 and the 4 kv heads: one must divide the other", "kv heads vs ulysses refused",
  true)
-- with TP the heads are a TP rank's: 32 / 2 = 16, not a multiple of 32
t.raises(function() gp.train(t.with(job, { gpus = 64, tp = 2, ulysses = 32, stack = "deepspeed" })) end,
  "ulysses 32 must divide the 16 attention heads of a TP rank", "heads of a TP rank", true)
t.raises(function() gp.train(t.with(job, { cp = 2, gpus = 8 })) end,
  "ulysses 4 and cp 2", "ulysses and cp together refused", true)
t.raises(function() gp.train(t.with(job, { cp_rotate = "allgather" })) end,
  "cp_rotate moves a CP ring's K and V", "cp_rotate beside ulysses refused", true)

-- gp.rl: the actor trains (and the log-prob forwards run) under the same
-- group, dp = train GPUs / ulysses (verl/workers/fsdp_workers.py: "dp =
-- world_size // self.ulysses_sequence_parallel_size", and the mini-batch
-- "ppo_mini_batch_size //= self.device_mesh.size() //
-- self.ulysses_sequence_parallel_size").  qwen2.5-7b at ulysses 4 on 8 GPUs:
-- dp 2.
local rl = gp.rl { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, ulysses = 4,
                   fsdp = "full_shard" }
t.ok(rl.ulysses == 4 and rl.cp == 1 and rl.dp == 2, "gp.rl: ulysses 4, cp 1, dp 2")
local rl1 = gp.rl { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, fsdp = "full_shard" }
t.ok(rl.step_s ~= rl1.step_s, "gp.rl: ulysses 4 prices a different step than none")
t.raises(function()
  gp.rl { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 6, ulysses = 4 }
end, "gpus 6 is not a multiple of tp*pp*ulysses = 4", "gp.rl: gpus not a multiple", true)
t.raises(function()
  gp.rl { model = "qwen2.5-7b", gpu = "h100-sxm", gpus = 8, ulysses = 8 }
end, "ulysses 8 must divide the 28 attention heads", "gp.rl: heads rule", true)

-- A sequence shorter than the group is refused by its own name: the
-- engine's CP check said "cp 4 is larger than seq 1", an option the user
-- did not give.
t.raises(function() gp.train(t.with(job, { seq = 1 })) end,
  "ulysses 4 is larger than seq 1 (each rank holds seq / ulysses tokens)",
  "seq under ulysses: named ulysses", true)

-- gp.train_job: a Ulysses job's step cp is its Ulysses group, checked by
-- Ulysses' rules (engine/layout.c layout_check_ulysses).  A step's cp 3 of
-- llama3-8b's 32 heads on 24 GPUs was priced, each rank attending 32 / 3
-- heads; it is refused as gp.train refuses ulysses 3.  A valid step prices
-- what gp.train prices for the same layout: exactly, the same config
-- through the same engine call (tolerance 0).
local uj = gp.train_job(t.with(job, { gpus = 24, seq = 2048, global_batch = 24 }))
t.raises(function() uj:step { cp = 3 } end,
  "step: ulysses 3 must divide the 32 attention heads", "train_job step: cp 3 refused", true)
-- stack hf: verl's Ulysses has no TP, so a step's tp 8 is refused by that
-- rule first, as gp.train refuses ulysses 4 with tp 8 on hf; on stack
-- deepspeed (Ulysses beside TP) the GPU count names ulysses
t.raises(function() uj:step { tp = 8 } end,
  "step: ulysses 4 with tp = 8 and stack = hf: verl's Ulysses", "train_job step: hf's no-TP rule", true)
local ujd = gp.train_job(t.with(job, { gpus = 24, seq = 2048, global_batch = 24, stack = "deepspeed" }))
t.raises(function() ujd:step { tp = 8 } end,
  "step: gpus 24 is not a multiple of tp*pp*ulysses = 32", "train_job step: named ulysses", true)
t.is(uj:step { cp = 2 }.step_s,
  gp.train(t.with(job, { gpus = 24, seq = 2048, global_batch = 24, ulysses = 2 })).step_s,
  "train_job step cp 2 = gp.train ulysses 2")
-- The heads are a TP rank's (stack deepspeed: verl's FSDP mesh holds no
-- TP): on 64 GPUs a step's tp 2 x cp 8 stands
-- (16 heads a rank, divided by 8; 4 kv heads, which divide 8: repeated),
-- tp 8 x cp 8 does not (4 heads a rank).
local uj64 = gp.train_job(t.with(job, { gpus = 64, seq = 2048, global_batch = 64,
                                        stack = "deepspeed" }))
t.ok(pcall(function() return uj64:step { tp = 2, cp = 8 } end), "train_job step: tp 2 x cp 8 stands")
t.raises(function() uj64:step { tp = 8, cp = 8 } end,
  "step: ulysses 8 must divide the 4 attention heads of a TP rank",
  "train_job step: tp 8 x cp 8 refused (4 heads a TP rank)", true)

-- One heads rule (engine/layout.h layout_check_ulysses_heads): gp.train's
-- refusal of a job and a train_job step's are its words, the same after
-- each one's prefix.  qwen2.5-7b (28 heads, 4 kv): ulysses 8 does not
-- divide 28; a step's cp 8 on a Ulysses job of 8 GPUs the same.
local function after(f, head)
  local ok, e = pcall(f)
  return not ok and tostring(e):match(head .. "(.*)$") or nil
end
local qj = { model = "qwen2.5-7b", gpu = "h100-sxm", stack = "hf", seq = 2048, global_batch = 8 }
local job_says = after(function() gp.train(t.with(qj, { gpus = 8, ulysses = 8 })) end, "train: ")
local step_says = after(function()
  gp.train_job(t.with(qj, { gpus = 8, ulysses = 4 })):step { cp = 8 } end, "step: ")
t.is(step_says, job_says, "a step's heads refusal is gp.train's, word for word")
t.is(job_says, "ulysses 8 must divide the 28 attention heads (each rank attends heads / "
  .. "ulysses of the whole sequence)", "... in the engine's words")
-- core.ulysses_refusal is that rule: nil where it holds (28 heads, 4 kv:
-- ulysses 4 divides 28, 4 kv heads equal it; ulysses 2 at tp 2: 14 heads
-- and 2 kv heads a rank), the kv half's words where only it fails (96
-- heads, 12 kv, ulysses 8: 8 divides 96, neither 8 nor 12 the other).
local core = require "gpuplan.core"
t.ok(core.ulysses_refusal(28, 4, 1, 4) == nil and core.ulysses_refusal(28, 4, 2, 2) == nil,
  "core.ulysses_refusal: nil where the rule holds")
t.is(core.ulysses_refusal(96, 12, 1, 8), "ulysses 8 and the 12 kv heads: one must divide the "
  .. "other (verl repeats the kv heads to ulysses when they are fewer)", "the kv half's words")

-- A whole cp given as a float (a case file's JSON 2 reads 2.0) is named
-- as the integer it is: validate's reason said "ulysses 4 and cp 2.0".
t.raises(function() gp.train(t.with(job, { cp = 2.0, gpus = 8 })) end,
  "ulysses 4 and cp 2: Ulysses is the sequence split", "cp 2.0 beside ulysses named cp 2", true)

-- verl's Ulysses replaces the flash-attention forward alone
-- (apply_monkey_patch: _flash_attention_forward): unfused attention on the
-- Hugging Face modules runs no all-to-all, so it is refused -- a usage
-- error where flash = false was given, the model's own where it is the
-- default (T5's relative bias runs unfused).  DeepSpeed's
-- DistributedAttention wraps any local attention: its stack stands.
t.raises(function() gp.train(t.with(job, { flash = false })) end,
  "ulysses 4 is verl's replacement of the flash-attention forward", "flash = false: refused", true)
t.raises(function() gp.train { model = "t5-3b", gpu = "h100-sxm", gpus = 8, ulysses = 2 } end,
  "unfused (flash = false, t5-3b's default)", "T5's unfused default: refused, naming it", true)
t.ok(pcall(gp.train, t.with(job, { flash = false, stack = "deepspeed", zero = 1 })),
  "stack deepspeed, flash = false: priced")

-- zero_group's divisor names the Ulysses group, not a cp never given:
-- 12 GPUs at ulysses 4 are dp 3, and dp x ulysses = 12 is not a multiple
-- of 8.
t.raises(function() gp.train(t.with(job, { gpus = 12, global_batch = 3, zero = 3, zero_group = 8 })) end,
  "zero_group 8 must divide the data-parallel group dp x ulysses = 12", "zero_group: dp x ulysses", true)

-- A model table's heads that are no count reach the model's own check,
-- which names the field: 3.5 was asked of the heads rule as "must divide
-- the 0 attention heads", 2^31 and -8 raised the binding's "bad argument
-- #1 to 'ulysses_refusal'", a kv_heads of 2^40 its "#2".
do
  local m = {}
  for k, v in pairs(gp.catalog():get("models", "llama3-8b")) do m[k] = v end
  m.id, m.name = nil, "table"
  for _, h in ipairs { 3.5, 2 ^ 31, -8 } do
    m.heads = h
    t.raises(function() gp.train(t.with(job, { model = m })) end,
      "model.heads must be an integer in 1..2147483647", "heads " .. tostring(h) .. ": the model's words", true)
  end
  m.heads, m.kv_heads = 32, 2 ^ 40
  t.raises(function() gp.train(t.with(job, { model = m })) end,
    "model.kv_heads must be an integer in 1..2147483647", "kv_heads 2^40: the model's words", true)
end
