-- A tenth new-user walk (an inference platform lead: dense and MoE
-- serving on H100/H200/B200/H20/L40S/RTX 4090, LoRA/QLoRA and GRPO on the
-- 8B, collectives, prices), the Lua half: each block a defect it found,
-- now answered or refused as the CLI does.
-- Run with ./gpuplan run tests/lua/newuser10.t.
local t = require "tap"
local gp = require "gpuplan"

-- 1. A model table with a field it does not take listed the names it
-- takes with repeats: the reader notes head_dim, norm, moe, mla ... once
-- when it reads them and again when the model's check reads them, and the
-- refusal printed the notes as they were ("..., vision, id, name, ...,
-- head_dim, head_dim, ffn_act, positions, norm, sliding_window, moe, mla,
-- vision").  Each name is listed once.
do
  local ok, e = pcall(gp.infer, { model = { id = "tiny", layers = 2, hidden = 512, heads = 8,
    kv_heads = 8, ffn = 2048, vocab = 32000, params_b = 0.05 }, gpu = "h100-sxm" })
  t.ok(not ok and tostring(e):find("unknown field 'ffn'", 1, true), "model: unknown field 'ffn' refused")
  local list = tostring(e):match("unknown field 'ffn' %((.-)%)$") or ""
  local seen, twice = {}, {}
  for n in list:gmatch("[%w_]+") do
    if seen[n] then twice[#twice + 1] = n end
    seen[n] = true
  end
  t.ok(seen.ffn_hidden and seen.head_dim, "the list names the fields (ffn_hidden, head_dim)")
  t.is(table.concat(twice, ", "), "", "no field listed twice")
end

-- 2. gp.infer on the MoE serving model with batch and itl_max: itl_max
-- (which picks the batch) was dropped, and the result's ITL (55.6 ms at
-- batch 100 on 8 x H200, EP8) was over the 20 ms given.  Refused, as
-- concurrency with itl_max is.
t.raises_here(function() gp.infer { model = "qwen3-30b-a3b", gpu = "h200-sxm", gpus = 8, ep = 8, batch = 100, itl_max = 0.02 } end,
  "infer: batch fixes the batch; itl_max searches it: give one of them", "infer: batch with itl_max refused")

-- 3. An adapter's base in mxfp4 or fp6 (qlora or lora --weights mxfp4):
-- gp.train, gp.sweep, gp.rl and gp.memory were refused "bad argument #4
-- to 'gpuplan.core.train' (base: unknown field 'fixed_group')" --
-- gpuplan.memory's mark of a format with its own group size reached the
-- training binding's reader, which did not know it.  mxfp4 is 4-bit
-- elements with an 8-bit scale per 32 (OCP MX spec; memory.lua's
-- weight_formats), so each is priced as that table written out: the
-- same step and memory to the byte (exact: one format, one path).
do
  local spelled = { bits = 4, group = 32, group_bits = 8 }
  local job = { model = "llama3-8b", gpu = "h100-sxm", method = "qlora" }
  local function with(w) local o = {} for k, v in pairs(job) do o[k] = v end o.weights = w return o end
  local ok, r = pcall(gp.train, with("mxfp4"))
  t.ok(ok, "train: qlora on an mxfp4 base prices" .. (ok and "" or (": " .. tostring(r))))
  if ok then
    local u = gp.train(with(spelled))
    t.is(r.step_s, u.step_s, "train: mxfp4 base's step = {bits 4, group 32, group_bits 8}'s")
    t.is(r.memory.total, u.memory.total, "train: and its memory")
  end
  t.ok(pcall(gp.memory, with("mxfp4")), "memory: qlora on an mxfp4 base")
  t.ok(pcall(gp.rl, { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, method = "qlora", weights = "mxfp4" }),
    "rl: qlora on an mxfp4 base")
  t.ok(pcall(gp.sweep, { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, method = "qlora", weights = "mxfp4", tokens = 1e8 }),
    "sweep: qlora on an mxfp4 base")
  t.ok(pcall(gp.train, { model = "llama3-8b", gpu = "h100-sxm", method = "lora", weights = "fp6" }),
    "train: lora on an fp6 base")
end

-- 4. gp.infer's kv_seqs: the sequences the KV budget holds before the
-- engine's max_batch.  ExLlamaV2 batches one sequence by default
-- (max_batch_size 1), and max_batch_kv is 1; the CLI's text then said
-- "KV budget per GPU 19.03 GB (1 sequence)" beside a 0.302 GB sequence.
-- Hand derivation: llama3-8b's KV per token in bf16 is 32 layers x 8 kv
-- heads x 128 x 2 (K, V) x 2 B = 131072 B; a running sequence holds on
-- average input + output / 2 = 2048 + 128 = 2176 tokens (paged KV), so
-- the budget holds floor(kv_budget / (2176 x 131072)) sequences (exact:
-- the engine's own floor).
do
  local r = gp.infer { model = "llama3-8b", gpu = "rtx-4090", runtime = "exllamav2", weights = 4.0 }
  t.is(r.max_batch_kv, 1, "exllamav2: max_batch_kv is the engine's cap, 1")
  t.is(r.kv_seqs, math.floor(r.kv_budget / (2176 * 131072)), "exllamav2: kv_seqs = budget / mean KV per sequence")
  t.ok(r.kv_seqs > 60, "exllamav2: the 19 GB budget holds more than 60 sequences (" .. tostring(r.kv_seqs) .. ")")
  local h = gp.infer { model = "llama3-8b", gpu = "h100-sxm" }
  t.is(h.kv_seqs, h.max_batch_kv, "h100-sxm: no cap below the KV's 205: kv_seqs = max_batch_kv")
end

-- 5. gp.infer_plan's help (docs/lua.md, the API's declaration) said "The
-- cheapest MoE serving deployment (decode and prefill pools)", and the
-- result table "the cheapest MoE serving deployment for a target"; it
-- plans a dense model too, as TP replicas (the CLI's infer --target on a
-- dense model is the same function).  The help names both, and a dense
-- plan answers.
do
  local help
  for _, e in ipairs(require("gpuplan.api").FUNCTIONS) do
    if type(e) == "table" and e.name == "gp.infer_plan" then help = e.help end
  end
  t.like(help, "a dense model's replicas", "infer_plan's help names the dense plan", true)
  t.ok(help and not help:find("^The cheapest MoE"), "infer_plan's help is not MoE's alone")
  local p = gp.infer_plan { model = "llama3-8b", gpu = "h100-sxm", target = 5000 }
  t.is(p.layout, "TP1", "a dense plan: TP replicas (llama3-8b on H100: TP1)")
end

t.done_testing()
