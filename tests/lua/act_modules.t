-- DeepSeek-V3's memory savings as options (engine/act.c): Megatron-Core's
-- recompute_modules (layernorm, mla_up_proj, moe_act) and fp8 caching of the
-- linears' inputs (fp8_activations), on DeepSeek-V3's own layout (report
-- arXiv:2412.19437 sec. 3.2: PP16, EP64 over 8 nodes, ZeRO-1, 2048 H800).
-- Run with ./gpuplan run tests/lua/act_modules.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(48)

-- The router weights at the combine (moe_probs combine), which every
-- derivation below starts from; the megatron stack's own default is the
-- activation (checked after them).
local base0 = { model = "deepseek-v3", gpu = "h800-sxm", gpus = 2048, tp = 1, pp = 16,
                ep = 64, zero = 1, precision = "fp8", seq = 4096, global_batch = 15360,
                method = "pretrain" }
local base = t.with(base0, { moe_probs = "combine" })
local r0 = gp.train(base)
local function dact(o) return r0.memory.act_layer - gp.train(t.with(base, o)).memory.act_layer end

-- memory.act_layer is the saved bytes of one layer and micro-batch averaged
-- over the 3 dense and 58 MoE layers; 4096 tokens, 16-bit activations but
-- for what Transformer Engine's fp8 linears keep (the megatron stack under
-- fp8, engine/memory_act.c): each linear's input in 1 B, the attention
-- output 2 B plus the projection's 1 B copy, the SwiGLU input 2 B.
-- mla_up_proj drops q, k (128 heads x 192) and v (128 x 128) in every layer:
-- 65536 x 2 B x 4096 = 536870912 B.  Exact (1e-9: the same sums).
t.near(dact { recompute_modules = "mla_up_proj" }, 536870912, 1e-9,
       "mla_up_proj: q, k, v of every layer")
-- layernorm drops each norm's output: the QKV input (7168), the normed q and
-- kv latents (1536 + 512) and the MLP input (7168), each a linear's fp8
-- input (1 B), but in a MoE layer the MLP input also feeds the router,
-- which keeps it in 16 bits (2 B): dense 16384 B, MoE 7168 x 2 + 9216 B a
-- token, 4096 tokens, 3 and 58 of 61 layers.
t.near(dact { recompute_modules = "layernorm" },
       4096 * (3 * 16384 + 58 * (7168 * 2 + 9216)) / 61, 1e-9,
       "layernorm: the norms' outputs")
-- moe_act drops the SwiGLU output of the 8 routed copies and the shared
-- expert, the down-projection's fp8 input: (8 + 1) x 2048 x 1 B x 4096 per
-- MoE layer, 58 of 61 layers.
t.near(dact { recompute_modules = "moe_act" }, 58 / 61 * 150994944 / 2, 1e-9,
       "moe_act: the experts' down-projection inputs")
-- fp8_activations replaces TE's caching by the report's: a linear input from
-- 1 B to 1 + 4/128 (an fp32 scale per 1x128 tile), +0.03125 B; the attention
-- output from 2 + 1 to E5M6 1.5 + 4/128, -1.46875 B; a MoE SwiGLU input from
-- 2 B to 1 + 4/128, -0.96875 B.  Dense layer: QKV input 7168, normed
-- latents 2048, MLP input 7168, down input 18432 (34816 x -0.03125) + o
-- input 16384 x 1.46875 = 22976 B a token (its SwiGLU input stays 16-bit).
-- MoE layer: QKV input, latents, the 8 dispatched copies (57344) and the 9
-- experts' down inputs (18432): 84992 x -0.03125; their SwiGLU inputs
-- (9 x 4096 = 36864) x 0.96875; the o input 24064: 57120 B; the router's
-- input stays 16-bit.
t.near(dact { fp8_activations = true }, 4096 * (3 * 22976 + 58 * 57120) / 61, 1e-9,
       "fp8_activations: linear inputs in fp8, the o input in E5M6")
-- moe_probs activation: the router weights scale the SwiGLU output (Megatron-
-- Core's activation_func_with_probs), so no copy's h-wide output is kept
-- for the combine: 8 x 7168 x 2 B x 4096 per MoE layer, 58 of 61.
t.near(dact { moe_probs = "activation" }, 58 / 61 * 469762048, 1e-9,
       "moe_probs activation: the experts' outputs not kept")
t.near(dact { moe_probs = "combine" }, 0, 1e-9, "moe_probs combine: as before")
-- Left unsaid, where the weights multiply follows the stack: Megatron-Core's
-- grouped experts apply them in the activation (experts.py, TEGroupedMLP's
-- "intermediate_parallel * permuted_probs"), so the megatron stack (the
-- pre-training default) keeps what moe_probs activation keeps and says so;
-- the hf stack weights at the combine (1e-12: the same job).
local function said(r, text)
  for _, d in ipairs(r.defaults) do if d == text then return true end end
  return false
end
local rd = gp.train(base0)
t.near(rd.memory.act_layer, gp.train(t.with(base, { moe_probs = "activation" })).memory.act_layer,
       1e-12, "megatron stack: the weights in the activation by default")
t.ok(said(rd, "moe_probs=activation"), "megatron stack: 'moe_probs=activation' assumed")
t.near(gp.train(t.with(base0, { stack = "hf" })).memory.act_layer,
       gp.train(t.with(base, { stack = "hf" })).memory.act_layer, 1e-12,
       "hf stack: at the combine by default")
-- Lua takes the list as a table too: the same job.
t.near(gp.train(t.with(base, { recompute_modules = { "layernorm", "moe_act" } })).memory.total,
       gp.train(t.with(base, { recompute_modules = "layernorm,moe_act" })).memory.total, 1e-12,
       "a list or the names joined by commas")

-- The re-run: mla_up_proj executes the up-projections again, 2 FLOPs per
-- weight per token: (1536 x 128 x 192 + 512 x 128 x 256) = 54525952
-- weights x 61 layers x 15360 x 4096 tokens x 2.  The norms and the
-- activation are element-wise: time (recompute), no GEMM FLOPs.
local rm = gp.train(t.with(base, { recompute_modules = "mla_up_proj" }))
t.near(rm.hw_flops - r0.hw_flops, 15360 * 4096 * 2 * 61 * 54525952, 1e-9,
       "mla_up_proj: the up-projections' FLOPs again")
local rl = gp.train(t.with(base, { recompute_modules = "layernorm,moe_act" }))
local function part(r, n) for _, p in ipairs(r.parts) do if p.name == n then return p.seconds end end return 0 end
t.ok(part(rl, "recompute") > 0 and part(r0, "recompute") == 0,
     "layernorm, moe_act: their forward re-runs as recompute time")

-- DeepSeek-V3's layout as the report describes it (sec. 3.2.1-3.3): 136 GiB
-- per GPU as 1F1B on Megatron-Core with TE's fp8 linears, on stage 1 (4 MoE
-- layers x 15 micro-batches in flight; stage 0's 3 of 4 layers are the dense
-- ones, which keep no expert copies).  With the recomputation, the report's
-- fp8 caching, the 14 B/param recipe (bf16 moments, no fp8 weight copy) and
-- DualPipe (two chunks a rank, pp - s micro-batches of stage s in flight) it
-- falls to about 98 GiB, 0.72 of it: each expert copy's output is still kept
-- for the combine.
-- With the router weights applied inside the activation (moe_probs
-- activation, as Megatron-Core's grouped experts do; the report does not say
-- where DeepSeek applies them) it holds within the card's 79.1 GiB.
local dsj = t.with(base, { recompute_modules = "layernorm,mla_up_proj,moe_act",
                           fp8_activations = true, recipe = "deepseek-fp8",
                           schedule = "dualpipe" })
local ds = gp.train(dsj)
t.ok(r0.memory.total / 2^30 > 130, "as 1F1B with TE's fp8 inputs: over 130 GiB")
t.ok(ds.memory.total < 0.75 * r0.memory.total, "with the report's savings: under 75% of that")
local dsa = gp.train(t.with(dsj, { moe_probs = "activation" }))
t.ok(dsa.memory.total < dsa.memory.capacity, "and with the weights in the activation: in the card")
-- Published: 2.664M H800 GPU-hours for 14.8T tokens of pre-training (report
-- Table 1, sec. 1): 14.8e12 / (2.664e6 x 3600) = 1543 tokens/s per GPU, so a
-- 15360 x 4096-token step on 2048 GPUs takes 62914560 / (1543.2 x 2048) =
-- 19.9 s.  The model prices 19.8 s under DualPipe (the all-to-all under the
-- paired chunk's compute; exposed where it outlasts it).  Within 10%: the
-- batch-size ramp of the first 469B tokens is not modelled, nor is the MTP
-- module's compute.
local published = 15360 * 4096 / (14.8e12 / (2.664e6 * 3600) * 2048)
t.near(published, 19.91, 1e-3, "published step: 19.9 s")
t.near(ds.step_s, published, 0.10, "modelled step within 10% of the published")

-- A case file states the same (validation/SCHEMA.md): parallel.
-- recompute_modules and workload.fp8_activations reach gp.train.  The
-- case's memory peak is the gp.train job's total (margin 0, the same
-- layout and options), so the two predictions differ by the same bytes.
local v = require "gpuplan.validate"
local cat = gp.catalog()
local function case(par, wl)
  local c = { id = "ds", kind = "memory",
    model = { name = "DeepSeek-V3", layers = 61, hidden = 7168, heads = 128, kv_heads = 128,
      head_dim = 128, ffn_hidden = 18432, ffn_gated = true, vocab = 129280,
      tied_embeddings = false, params_b = 671,
      moe = { experts = 256, top_k = 8, shared_experts = 1, ffn_hidden = 2048,
              dense_layers = 3 },
      mla = { q_lora_rank = 1536, kv_lora_rank = 512, qk_nope_head_dim = 128,
              qk_rope_head_dim = 64, v_head_dim = 128 } },
    hardware = { gpu = "h800-sxm", gpus = 2048, gpus_per_node = 8 },
    parallel = { tp = 1, pp = 16, ep = 64, zero = 1, micro_batch = 1, recompute = "none" },
    workload = { seq_len = 4096, precision = "fp8", method = "pretrain" },
    measured = { metric = "peak_memory_gib", value = 80 } }
  for k, x in pairs(par) do c.parallel[k] = x end
  for k, x in pairs(wl) do c.workload[k] = x end
  return v.predict(c, cat)
end
local c0 = case({}, {})
-- (a list is selective's: Megatron-Core reads it under that granularity
-- alone, and refused with none)
local c1 = case({ recompute = "selective", recompute_modules = { "mla_up_proj" } },
                { fp8_activations = true })
t.ok(c0.predicted and c1.predicted, "the case is predicted with and without the fields")
-- The case reader picks the deepspeed stack (pretrain with a ZeRO stage;
-- its parameter-balanced partition) and predicts torch's peak allocated
-- bytes: the same job through gp.memory must move by the same bytes
-- (1e-9: the same sums).
local mj = { model = "deepseek-v3", gpu = "h800-sxm", gpus = 2048, tp = 1, pp = 16, ep = 64,
             zero = 1, precision = "fp8", seq = 4096, method = "pretrain", batch = 1,
             stack = "deepspeed", margin = 0, recompute = "none" }
local m0 = gp.memory(mj)
local m1 = gp.memory(t.with(mj, { recompute = "selective", recompute_modules = "mla_up_proj",
                                  fp8_activations = true }))
t.near((c0.predicted - c1.predicted) * 2^30, m0.allocated - m1.allocated, 1e-9,
       "case fields: the same savings as gp.memory's options")

-- An empty list names no module (a recipe whose recompute_modules are all
-- modules the model prices otherwise, where a stack profile would add its
-- own list): the same job as without the option, so the same saved bytes
-- and step -- 0 B dropped, the same sums (1e-9).
local e1 = gp.train(t.with(base, { recompute_modules = {} }))
t.near(r0.memory.act_layer - e1.memory.act_layer, 0, 1e-9, "an empty list drops nothing")
t.near(e1.step_s, r0.step_s, 1e-9, "an empty list: the same step")

-- Megatron-Core's rule for a stated list (transformer_config.py:
-- recompute_modules "default: ["core_attn"]", "if self.recompute_modules is
-- None: self.recompute_modules = ["core_attn"]"): a list replaces selective's
-- default, so selective with a list re-runs exactly the listed modules; a
-- list with no policy given is selective's (the only granularity that reads
-- it: TransformerLayer "if self.config.recompute_granularity ==
-- 'selective':").  Each pair below is the same saved bytes and the same
-- step by construction (the engine's same sums: 1e-9).
local function same(a, b, what)
  local ra, rb = gp.train(t.with(base, a)), gp.train(t.with(base, b))
  t.near(ra.memory.act_layer, rb.memory.act_layer, 1e-9, what .. ": the saved bytes")
  t.near(ra.step_s, rb.step_s, 1e-9, what .. ": the step")
end
-- ["core_attn"] is the default list stated: selective alone.
same({ recompute = "selective", recompute_modules = "core_attn" }, { recompute = "selective" },
     "selective with [core_attn] is selective")
-- ["core_attn"] with no policy: selective's list, so selective.
same({ recompute_modules = "core_attn" }, { recompute = "selective" },
     "[core_attn] alone is selective")
-- selective with [layernorm]: the norms alone, the core attention kept;
-- the list alone is the same job.
same({ recompute = "selective", recompute_modules = "layernorm" },
     { recompute_modules = "layernorm" },
     "selective with [layernorm] keeps the core attention")
-- none with a list: Megatron-Core re-runs nothing (every module's flag is
-- read under "recompute_granularity == 'selective'"), so the list would
-- price what the job does not do: refused, naming both keys.
t.raises(function() gp.train(t.with(base, { recompute = "none", recompute_modules = "layernorm" }))
         end, "recompute_modules applies to recompute = selective: Megatron-Core reads the "
           .. "list only under recompute_granularity \"selective\"",
         "none with a list is refused", true)
-- An empty list re-runs nothing under none either: taken.
same({ recompute = "none", recompute_modules = {} }, { recompute = "none" },
     "none with [] is none")
-- An empty list ("if len(self.recompute_modules) > 0" guards the modules):
-- nothing re-run, recompute none's job.
same({ recompute = "selective", recompute_modules = {} }, { recompute = "none" },
     "selective with [] re-runs nothing")
-- [layernorm, core_attn]: both savings, each its own tensors (the norms'
-- outputs and the attention core's saved tensors are disjoint, engine/
-- memory_act.c total = full - core with the norm outputs already out of
-- full): dact(both) = dact(layernorm alone) + (act none - act selective),
-- to 1e-9 relative (sums of the same terms in another order).
local sel = gp.train(t.with(base, { recompute = "selective" })).memory.act_layer
local core = r0.memory.act_layer - sel
t.ok(core > 0, "the base's core attention keeps some bytes (else the next check is empty)")
t.near(dact { recompute = "selective", recompute_modules = "layernorm,core_attn" },
       dact { recompute_modules = "layernorm" } + core, 1e-9,
       "layernorm,core_attn: both savings")

-- gp.memory and gp.sweep read the list by the same rule (the engine's one
-- predicate): on a MoE model a list without core_attn given alone is
-- selective's job (the same sums: equal), and naming core_attn too keeps
-- fewer (the core attention re-run), so the check is not of a list the
-- engine ignores; a search over none and selective with a list keeps
-- selective alone, and one over none alone is refused as gp.train's job.
do
  local mb = { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 16, seq = 4096, tp = 2,
               ep = 8, method = "pretrain" }
  local ms = gp.memory(t.with(mb, { recompute = "selective", recompute_modules = "moe_act" }))
  local mn = gp.memory(t.with(mb, { recompute_modules = "moe_act" }))
  local mc = gp.memory(t.with(mb, { recompute = "selective",
                                    recompute_modules = "moe_act,core_attn" }))
  t.ok(ms.act_layer == mn.act_layer and mc.act_layer < mn.act_layer,
       string.format("gp.memory: selective with [moe_act] %.0f B = the list alone %.0f B > "
         .. "with [moe_act, core_attn] %.0f B", ms.act_layer, mn.act_layer, mc.act_layer))
  -- searched with none alone the list is refused (none re-runs nothing);
  -- searched with none and selective the search keeps selective alone
  -- (sweep.lua recompute_space), the same rows as selective's
  local function sweep(rc)
    return gp.sweep { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 16, seq = 4096,
                      global_batch = 256, method = "pretrain", ep_max = 8, top = 1000,
                      recompute = rc, recompute_modules = "moe_act" }
  end
  local function keyed(sw)
    local by, n = {}, 0
    for _, r in ipairs(sw.results) do
      local k = table.concat({ r.tp, r.pp, r.ep, r.zero, r.micro_batch, tostring(r.vpp),
                               tostring(r.schedule), tostring(r.sp), r.recompute }, " ")
      by[k] = r.step_s
      n = n + 1
    end
    return by, n
  end
  t.raises(function() sweep { "none" } end,
           "sweep: recompute_modules applies to recompute selective",
           "gp.sweep: none alone with [moe_act] is refused", true)
  local bs, ns = keyed(sweep { "selective" })
  local bb, nb = keyed(sweep { "none", "selective" })
  local none_rows, worst = 0, 0
  for k, st in pairs(bb) do
    if k:find("none$") then none_rows = none_rows + 1 end
    if bs[k] then worst = math.max(worst, math.abs(bs[k] / st - 1)) end
  end
  t.ok(none_rows == 0 and nb == ns and ns > 0 and worst < 1e-9,
       string.format("gp.sweep over none and selective with a list: %d none rows, %d rows "
         .. "(selective alone %d)", none_rows, nb, ns))
end

-- The defaults line says how selective was read when its list leaves out
-- core_attn, and says nothing when the list names it.
do
  local function said(o)
    for _, d in ipairs(gp.train(t.with(base, o)).defaults) do
      if d:find("recompute=selective rebuilds recompute_modules' list alone", 1, true) then
        return true
      end
    end
    return false
  end
  t.ok(said { recompute = "selective", recompute_modules = "layernorm" }
       and not said { recompute = "selective", recompute_modules = "layernorm,core_attn" },
       "defaults: selective with a list that leaves out core_attn is said")
end

-- A vision tower follows the decoder's rule (memory_stage_act.c vision_act,
-- train_stage.c tower_costs: mem_core_attn_recomputed): Megatron's vision
-- config is a deepcopy of the language model's, its recompute_modules with
-- it.  So a list is selective's for the tower too (given alone, the job
-- is selective with it):
-- before, the tower re-ran its core attention under selective whatever the
-- list said (Qwen2-VL 7B, 4 images, training tower: 0.3828 s of tower
-- against none's 0.3684 s), and none with core_attn re-ran nothing there.
-- Equalities of the same sums: exact.
do
  local v = { model = "qwen2-vl-7b", gpu = "h100-sxm", gpus = 8, images = 4,
              train_vision = true, stack = "megatron", seq = 4096, global_batch = 64 }
  local function tr(o) return gp.train(t.with(v, o)) end
  local sel, none = tr { recompute = "selective" }, tr { recompute = "none" }
  t.ok(sel.vision_s > none.vision_s, "the tower re-runs its core attention under selective")
  t.is(tr { recompute_modules = "core_attn" }.vision_s, sel.vision_s,
       "tower: [core_attn] alone is selective's default")
  local mv = { model = "qwen2-vl-7b", gpu = "h100-sxm", images = 4, train_vision = true,
               stack = "megatron", seq = 4096, method = "pretrain" }
  local function mem(o) return gp.memory(t.with(mv, o)).total end
  t.is(mem { recompute = "selective", recompute_modules = "layernorm" },
       mem { recompute_modules = "layernorm" },
       "tower memory: a list without core_attn keeps the tower's core attention, given alone too")
end

-- Megatron-Core reads recompute_modules under the selective granularity
-- only (TransformerLayer: "if self.config.recompute_granularity ==
-- 'selective':"), so full with a list -- which auto and a search reach
-- with the job's list -- re-runs a whole layer keeping what it keeps
-- without the list: the same working set as full alone (the step's time
-- already ignored the list under full).  Llama 3 70B at TP8, 16k, batch
-- 2 fits under nothing, so auto ends at full; before, its layer re-run
-- dropped the layernorm outputs: 218.28e9 B against full's 219.41e9.
-- The same sums: exact.
do
  local m = { model = "llama3-70b", gpu = "h100-sxm", method = "pretrain", tp = 8, gpus = 8,
              seq = 16384, batch = 2 }
  local a = gp.memory(t.with(m, { recompute = "auto", recompute_modules = "layernorm" }))
  t.is(a.recompute, "full", "auto with a list ends at full here")
  t.is(a.total, gp.memory(t.with(m, { recompute = "full" })).total,
       "full reached with a list keeps full's working set")
end

-- Refusals, each naming the input.
t.raises(function() gp.train(t.with(base, { model = "llama3-8b", gpus = 8, pp = 1, ep = 1,
                                            recompute_modules = "mla_up_proj" })) end,
         "mla_up_proj needs an MLA model", "mla_up_proj on a model without MLA", true)
t.raises(function() gp.train(t.with(base, { recompute_modules = "attn" })) end,
         "unknown module 'attn' (expected layernorm, mla_up_proj, moe_act, core_attn, moe, mlpwi, mlp_act)",
         "an unknown module named with the four known", true)
t.raises(function() gp.train(t.with(base, { recompute_modules = "layernorm",
                                            recompute = "full" })) end,
         "recompute_modules applies to recompute = selective (full keeps", "not with full", true)
t.raises(function() gp.train(t.with(base, { moe_probs = "experts" })) end,
         "moe_probs must be combine or activation", "moe_probs: the two places", true)
t.raises(function() gp.train(t.with(base, { precision = "bf16", fp8_activations = true })) end,
         "fp8_activations needs precision = fp8", "fp8_activations without fp8", true)
