-- gp.infer with the MoE serving options and gp.infer_plan: the weights a
-- GPU holds by part, DP vs TP attention, the all-to-all bytes, a one-node
-- EP group, the plan meeting its target, and the argument errors.
local t = require "tap"
local gp = require "gpuplan"

local base = { model = "deepseek-v3", gpu = "h20", weights = "fp8", input = 4096,
               output = 1536 }
local function with(x)
  local a = {}
  for k, v in pairs(base) do a[k] = v end
  for k, v in pairs(x) do a[k] = v end
  return a
end

-- DeepSeek-V3 on 16 H20, EP16, DP attention, batch 32 per GPU, with
-- DeepSeek's own 32 redundant experts (day 6), given.
-- Routed experts: (256 + 32 redundant) / 16 = 18 slots, each 58 MoE layers
-- x 3 x 7168 x 2048 fp8 weights = 2,554,331,136 B; 18 of them =
-- 45,977,960,448 B.  Attention whole (DP): 61 x 187,105,280 B.  Exact.
local r = gp.infer(with { gpus = 16, ep = 16, dp_attention = true, batch = 32,
                          two_batch_overlap = true, redundant_experts = 32 })
t.ok(r.moe and r.fits, "EP16 DP attention on 16 H20 fits at batch 32")
t.is(r.layout, "EP16, DP attention, two-batch overlap", "the layout, named")
t.near(r.memory.expert_slots, 18, 0, "18 expert slots per GPU (288 / 16)")
t.near(r.memory.experts, 18 * 58 * 3 * 7168 * 2048, 1e-12, "routed experts per GPU")
t.near(r.memory.shared, 58 * 3 * 7168 * 2048, 1e-12, "the shared expert whole")
t.near(r.memory.attention, 61 * 187105280, 1e-12, "attention whole under DP attention")

-- Without redundant_experts the slots are what SGLang, vLLM and
-- TensorRT-LLM ship: none where ep divides the experts (SGLang's
-- --ep-num-redundant-experts 0), else the fewest that start (SGLang
-- asserts (experts + redundant) % ep == 0).  Hand counts:
--   EP16 on 256 experts: 256 / 16 = 16 slots, 16 x 2,554,331,136 B;
--   EP72: ceil(256 / 72) = 4 slots a GPU, 288 - 256 = 32 redundant;
--   EP8 on Mixtral's 8 experts: 1 slot.  Slot counts exact (integers).
local function said(res, key)
  for _, d in ipairs(res.defaults or {}) do
    -- "key=value", or "key: ..." for a default no value states
    -- (imbalance: per step)
    if d:find("^" .. key .. "[=:]") then return d end
  end
end
local r0 = gp.infer(with { gpus = 16, ep = 16, dp_attention = true, batch = 32,
                           two_batch_overlap = true })
t.near(r0.memory.expert_slots, 16, 0, "default: 16 slots per GPU at EP16 (256 / 16, none redundant)")
t.near(r0.memory.experts, 16 * 58 * 3 * 7168 * 2048, 1e-12, "default: routed experts per GPU")
t.like(said(r0, "redundant_experts") or "", "^redundant_experts=0 %(the runtimes' default",
       "the defaults line says 0 and the rule")
local r72 = gp.infer(with { gpu = "h800-sxm", gpus = 72, ep = 72, dp_attention = true,
                            batch = 32 })
t.near(r72.memory.expert_slots, 4, 0, "default at EP72: 4 slots a GPU (288 / 72)")
t.like(said(r72, "redundant_experts") or "", "^redundant_experts=32 ",
       "EP72: the fewest that fill every GPU alike, 32, said")
t.raises(function()
  gp.infer(with { gpu = "h800-sxm", gpus = 72, ep = 72, dp_attention = true, batch = 32,
                  redundant_experts = 0 })
end, "give redundant_experts 32, or that plus a multiple of 72", "EP72 with 0: refused, naming the count", true)
local rm = gp.infer { model = "mixtral-8x7b", gpu = "h100-sxm", gpus = 8, ep = 8 }
t.near(rm.memory.expert_slots, 1, 0, "Mixtral EP8: one expert a GPU by default")
-- Dispatch: 32 tokens x top-8 x 7168 x (1 + 4/128) B = 1,892,352 B;
-- combine at 2 B = 3,670,016 B; EP16 on 8-GPU nodes: half leaves the node.
t.near(r.dispatch_bytes, 32 * 8 * 7168 * (1 + 4 / 128), 1e-12, "dispatch bytes")
t.near(r.combine_bytes, 32 * 8 * 7168 * 2, 1e-12, "combine bytes")
t.near(r.remote_bytes, r.dispatch_bytes / 2, 1e-12, "EP16: half of it over the NICs")
t.is(r.batch_per_gpu, 32, "batch per GPU as given")
-- batch is a replica's (results.lua): 32 a GPU x the instance's tp GPUs
t.is(r.batch, 32 * r.tp, "batch per replica: 32 x tp")
t.ok(r.instances == 1 and r.decode_gpus == 16, "one instance of 16")

-- The attention core runs at the catalog's fused-attention fraction of the
-- peak: FA3's on Hopper (SGLang's default backend there), on the H20 its
-- own 0.862 forward (107.8 of 148 TFLOP/s measured on a 2048-token causal
-- prompt, 0.728, over that shape's term against the arch's 8192-token
-- reference, 0.845: the h20 entry in catalog/gpus/nvidia-hopper.lua; the
-- hopper arch's H100 figure is 0.60); the row's rate / (148 TFLOPS bf16 x
-- its shape term) recovers it.  An
-- arch without an FA3 measurement keeps its default kernel: Ampere's FA2,
-- 0.61 of 312 TFLOPS.
local function attn_frac(res, peak)
  for _, o in ipairs(res.ops) do
    if o.name == "attention" then return o.flop / o.t_compute / peak / o.shape_eff end
  end
end
t.near(attn_frac(r, 148e12), 0.862, 1e-9, "Hopper: the attention at FA3's fraction (the H20's own)")

-- MLA decode's rope row also packs the query for the latent-form kernel
-- (serve_step.c mla_attention): per token, the rope on q_pe and k_pe read
-- and written at 2 B, 2 x (128 + 1) x 64 x 2 = 33,024 B; the latent and
-- k_pe written to the cache, (512 + 64) x kv bytes; the absorbed q_nope
-- read again, 128 x 512 x 2 = 131,072 B, and the packed query written in
-- the cache's format, 128 x 576 x kv bytes.  Batch 32 per GPU, one token
-- each, without two-batch overlap (which prices each half apart).  Exact
-- (bytes, not time).
local function rope_bytes(res)
  for _, o in ipairs(res.ops) do if o.name == "rope_kv" then return o.bytes end end
end
local r16 = gp.infer(with { gpus = 16, ep = 16, dp_attention = true, batch = 32,
                            two_batch_overlap = false })
t.near(rope_bytes(r16), 32 * (33024 + 576 * 2 + 131072 + 128 * 576 * 2), 1e-12,
       "rope_kv packs the query: bf16 cache, a bf16 query")
local r8 = gp.infer(with { gpus = 16, ep = 16, dp_attention = true, batch = 32, kv = "fp8",
                           two_batch_overlap = false })
t.near(rope_bytes(r8), 32 * (33024 + 576 + 131072 + 128 * 576), 1e-12,
       "rope_kv packs the query: fp8 cache, an fp8 query")
t.ok(t.said(r, "^attn_kernel=fa3"), "and says so among the assumptions")
local amp = gp.infer { model = "qwen3-235b-a22b", gpu = "a100-sxm-80gb", gpus = 8, ep = 8,
                       dp_attention = true, weights = "fp8", input = 4096, output = 1536,
                       batch = 8 }
t.near(attn_frac(amp, 312e12), 0.61, 1e-9, "Ampere: FA2, the arch's kernel")

-- TP attention instead: the MLA latent is the heads' shared cache, so each
-- TP rank holds the whole group's -- 16 x the KV per GPU's sequence.
local tp = gp.infer(with { gpus = 16, ep = 16, batch = 1 })
t.near(tp.kv_per_seq, 16 * r.kv_per_seq, 1e-12, "TP16 attention: 16 latents per sequence")
t.ok(tp.max_batch_kv_per_gpu < r.max_batch_kv_per_gpu, "DP attention holds more sequences per GPU")

-- One node: EP8 on H200 (141 GB holds 36 slots) never leaves NVLink.
local one = gp.infer(with { gpu = "h200-sxm", gpus = 8, ep = 8, dp_attention = true, batch = 16 })
t.ok(one.fits, "EP8 fits one H200 node")
t.is(one.remote_bytes, 0, "a one-node EP group sends nothing over the NICs")
local nonic = gp.infer(with { gpu = "h200-sxm", gpus = 8, ep = 8, dp_attention = true,
                              batch = 16, nics = 0 })
t.is(nonic.dispatch_ms, one.dispatch_ms, "and prices the same without NICs")

-- MTP: 1 draft at 0.85 -> 1.85 tokens per step (DeepSeek-V3 sec. 5.4.3).
local m = gp.infer(with { gpus = 16, ep = 16, dp_attention = true, batch = 32, mtp = 1 })
t.near(m.accept, 1.85, 1e-12, "accept length 1 + 0.85")
-- Colocated, the GPU's prefills over the output, and with DP attention the
-- other ranks' prompt chunks its instance waits for (prefill_stall: 1 -
-- (1 - p)^16 over p, p = 32 x 1.85 / 1535 x 4096 / 16384 a step) -- on
-- the rank-own part of each prompt; the routed experts' part
-- (prefill_experts_s) runs every rank's tokens together and keeps its own
-- time; and the steps that carry a chunk on some rank, 1 - (1 - p)^16 of
-- them (eager_steps), run off the CUDA graph, eager_s a step on average
-- (per token: / 1.85).  A user waits for all of the instance's prompts
-- but its own (its TTFT): of its 32 x 16 = 512 sequences, 511 / 512 of
-- that time (infer_itl_loaded).  Exact but for rounding (1e-12).
local pst = 32 * 1.85 / 1535 * 4096 / 16384
t.near(m.prefill_stall, (1 - (1 - pst)^16) / pst, 1e-12, "16 DP ranks: each waits for the others' prompts")
t.ok(m.prefill_experts_s > 0 and m.prefill_experts_s < m.prefill_share_s,
     "the routed experts are part of a prompt's prefill")
t.near(m.eager_steps, 1 - (1 - pst)^16, 1e-12, "steps with a chunk somewhere: off the graph")
t.ok(m.eager_s > 0, "... which launch their kernels one by one")
t.near(m.itl_s, m.tpot_s + (m.batch_per_gpu * ((m.prefill_share_s - m.prefill_experts_s) * m.prefill_stall
         + m.prefill_experts_s) / (1536 - 1) + m.eager_s / 1.85) * 511 / 512, 1e-12,
       "colocated ITL = decode step / accept + the instance's prefills over the output")
local mk = gp.infer(with { gpus = 16, ep = 16, dp_attention = true, batch = 32, mtp = 1,
                           runtime = "kernels" })
t.is(mk.eager_s, 0, "runtime kernels: every step launches kernel by kernel already")
t.ok(m.memory.mtp > 0, "the MTP module's weights are held")
-- SGLang leaves its host work serial while it speculates (serve.lua
-- SPEC_HOST, PR 11398): 2.99 / 246.80 - 3.01 / 273.43 s = 1.107 ms a step
-- on one GPU; with DP attention (this layout) what the overlap hides there,
-- SPEC_HOST_DP (Eigen AI's A/B, LMSYS 2025-07-17): 2 / 51.0 - 2 / 60.4 s =
-- 6.1031 ms, in the step as it is; none without drafts, none for a runtime
-- it is not measured for (TensorRT-LLM's overlap scheduler runs with MTP).
-- Exact up to rounding: 1e-4 relative on the hand figures.
t.near(m.spec_host_ms, 6.10310, 1e-4, "SGLang's host work a speculative step, DP attention")
local mtp_tp = gp.infer(with { gpus = 16, ep = 16, batch = 4, mtp = 1 })
t.near(mtp_tp.spec_host_ms, 1.10677, 1e-4, "TP attention: the single-GPU figure")
local mt = gp.infer(with { gpus = 16, ep = 16, dp_attention = true, batch = 32, mtp = 1,
                           runtime = "trtllm", two_batch_overlap = m.two_batch_overlap })
t.is(mt.spec_host_ms, 0, "none for TensorRT-LLM")
t.near(m.step_ms - mt.step_ms, m.spec_host_ms, 1e-9, "the host's part adds to the step")
t.is(r.spec_host_ms, 0, "none without drafts")
-- Colocated under TensorRT-LLM a prompt chunk rides in the decodes' step
-- (in-flight batching: serve.lua sets the engine's `mixed`); under SGLang,
-- without --enable-mixed-chunk, it is a prefill step of its own.  The same
-- captured config both ways (core.serve), here one H200 node, EP8, DP
-- attention, 64 decodes a rank, 1024-token prompts in 1024-token chunks
-- (the shape of the TensorRT-LLM ADP rows): mixed, a chunk costs what it
-- adds to the step of 64 decodes (serve_plan.c prompt_share), so a
-- prompt's GPU-seconds are fewer than in prefill steps that read every
-- weight again, and its routed experts' part fewer too (their weights are
-- read for the decodes anyway); the decode step is the same, and the ITL
-- keeps its form.  The comparisons fail if the flag is not read (equal
-- shares); the identity is exact but for rounding (1e-12).
do
  local core = require "gpuplan.core"
  local real, cap = core.serve, {}
  local one = { model = "deepseek-v3", gpu = "h200-sxm", weights = "fp8", input = 1024,
                output = 2048, gpus = 8, ep = 8, dp_attention = true, batch = 64,
                prefill_tokens = 1024 }
  local function node(x)
    local a = {}
    for k, v in pairs(one) do a[k] = v end
    for k, v in pairs(x) do a[k] = v end
    return a
  end
  core.serve = function(m, d, s) cap[#cap + 1] = { m, d, s }; return real(m, d, s) end
  local mx = gp.infer(node { runtime = "trtllm", two_batch_overlap = false })
  local sg = gp.infer(node { runtime = "sglang", two_batch_overlap = false })
  local dg = gp.infer(node { runtime = "trtllm", gpus = 16, disagg = true,
                             two_batch_overlap = false })
  -- vLLM V1 mixes too, by the same table gp.infer reads (M.mixes).
  local nv = #cap + 1
  local vl = gp.infer(node { runtime = "vllm", two_batch_overlap = false })
  core.serve = real
  t.ok(mx.fits and sg.fits and dg.fits, "the three fit")
  t.is(cap[1][3].mixed, true, "TensorRT-LLM colocated: mixed steps")
  t.ok(t.said(mx, "^mixed steps"), "... and says so")
  -- gp.infer's own mixing (its chunked_prefill and max_num_tokens) is
  -- the one-model engine's: the serving model mixes by its own rule and
  -- reads no step budget, so its defaults line names neither.
  t.ok(not t.said(mx, "^chunked_prefill") and not t.said(mx, "^max_num_tokens"),
       "... not gp.infer's chunked_prefill or max_num_tokens")
  t.ok(not cap[2][3].mixed and not t.said(sg, "^mixed steps"), "SGLang: a prefill step apart")
  t.ok(not cap[3][3].mixed, "disaggregated: no decodes to mix with")
  t.ok(cap[nv][3].mixed == true and t.said(vl, "^mixed steps %(vLLM V1"),
       "vLLM V1 colocated: mixed steps, said")
  local c = {}
  for k, v in pairs(cap[1][3]) do c[k] = v end
  c.mixed = false
  local add, mix = real(cap[1][1], cap[1][2], c), real(cap[1][1], cap[1][2], cap[1][3])
  t.is(mix.decode.step.time, add.decode.step.time, "the decode step is the same")
  t.ok(mix.prefill_share < add.prefill_share,
       "a prompt's chunks cost less in the decodes' step than in steps of their own")
  t.ok(mix.prefill_experts > 0 and mix.prefill_experts < add.prefill_experts,
       "... the routed experts' part too")
  -- (64 x 8 = 512 sequences in the instance: 511 / 512 of the prompts'
  -- time between a user's tokens, infer_itl_loaded)
  t.near(mx.itl_s, mx.tpot_s + (mx.batch_per_gpu * ((mx.prefill_share_s - mx.prefill_experts_s)
           * mx.prefill_stall + mx.prefill_experts_s) / (2048 - 1) + mx.eager_s) * 511 / 512,
         1e-12,
         "mixed: ITL = decode step + the instance's prompt chunks over the output")
end

-- Disaggregated: the pools split, the ratio that balances them.
local dg = gp.infer(with { gpu = "h800-sxm", gpus = 96, ep = 64, dp_attention = true,
                           disagg = true, prefill_gpus = 32, prefill_ep = 16,
                           prefill_tp = 16, itl_max = "50ms" })
t.ok(dg.fits and dg.itl_s <= 0.050, "disaggregated H800 meets 50 ms")
t.near(dg.tokens_per_s, math.min(64 * dg.decode_per_gpu / 1536,
                                 32 * dg.prefill_per_gpu / 4096) * 1536, 1e-12,
       "system tokens/s = the slower pool's")
t.is(dg.prefill_layout, "EP16, DP attention, two-batch overlap", "prefill layout named")
-- Colocated, the same bound leaves a smaller batch: a user also waits for
-- the prefills of its GPU (ITL = tpot + batch x share / (output - 1)).
t.ok(dg.coloc and dg.coloc.itl_s <= 0.050 and dg.coloc.batch < dg.batch,
     "colocated under the same bound: a smaller batch")

-- The plan: the fewest GPUs for 100k tok/s within 50 ms.
local p = gp.infer_plan(with { gpu = "h800-sxm", target = 1e5, itl_max = "50ms" })
t.ok(p.tokens_per_s >= 1e5 and p.itl_s <= 0.050, "plan meets target and bound")
t.is(p.gpus, p.decode_gpus + p.prefill_gpus, "GPUs = decode + prefill pools")
local pf = gp.infer_plan(with { gpu = "h800-sxm", target = 1e5, itl_max = 0.05, ep = 32,
                                dp_attention = true })
t.is(pf.result.ep, 32, "a given ep stays fixed")
local pd = gp.infer_plan { model = "llama3.1-8b", gpu = "h100-sxm", target = 2e4, itl_max = 0.05,
                           weights = "fp8" }
t.ok(pd.gpus >= 1 and pd.tokens_per_s >= 2e4, "a dense model plans TP replicas")

-- Two-batch overlap left open: both are run and the faster kept.  DeepSeek-V3
-- on 16 H800, EP16, within 50 ms: two micro-batches each read every weight
-- (each op's count doubles), so the bound leaves a batch of a few per GPU;
-- one micro-batch does more within it (batch 3 against 2, 60 vs 41 tok/s
-- per GPU at the time of writing: colocated, every step also waits for the
-- prompt chunks of all 16 DP ranks, which keeps both batches small).  On
-- EP32 (half the all-to-all crosses nodes) at batch 128 the overlap hides
-- it and stays (input 2048: one micro-batch's 128 sequences of the base's
-- 4096-token prompt no longer fit the 80 GB beside the fixed reserve,
-- 0.5 GiB + 64 MiB + 0.5 GiB of NCCL buffers; 125 do).
local h8 = { gpu = "h800-sxm", gpus = 16, ep = 16, dp_attention = true, kv = "fp8" }
local function h8w(x)
  local a = with(h8)
  for k, v in pairs(x) do a[k] = v end
  return a
end
local auto = gp.infer(h8w { itl_max = 0.05 })
local on = gp.infer(h8w { itl_max = 0.05, two_batch_overlap = true })
local off = gp.infer(h8w { itl_max = 0.05, two_batch_overlap = false })
t.ok(off.per_gpu > on.per_gpu, "small batches: one micro-batch is faster")
t.is(auto.two_batch_overlap, false, "left open, the search turns the overlap off")
t.near(auto.per_gpu, off.per_gpu, 0, "and delivers what one micro-batch does")
t.ok(t.said(auto, "^two_batch_overlap=false"), "and says so among the assumptions")
local big = gp.infer(h8w { gpus = 32, ep = 32, batch = 128, input = 2048 })
local big_off = gp.infer(h8w { gpus = 32, ep = 32, batch = 128, two_batch_overlap = false,
                               input = 2048 })
t.ok(big.two_batch_overlap and big_off.fits and big.per_gpu > big_off.per_gpu,
     "EP32 at batch 128: the overlap is faster and kept")

-- The plan with the EP layout fixed and the overlap open runs both: the
-- fewer GPUs of the two, and the overlap it took said among the assumptions.
local pl = { gpu = "h800-sxm", ep = 16, dp_attention = true, kv = "fp8", target = 2e4,
             itl_max = 0.05 }
local function plan(x)
  local a = with(pl)
  for k, v in pairs(x) do a[k] = v end
  return gp.infer_plan(a)
end
local p_auto, p_on, p_off = plan {}, plan { two_batch_overlap = true },
  plan { two_batch_overlap = false }
t.is(p_auto.gpus, math.min(p_on.gpus, p_off.gpus), "plan: the fewer GPUs of the two")
t.ok(t.said(p_auto.result, "^two_batch_overlap="),
     "plan: the overlap it took among the assumptions")

-- A single stream on a cut-compute card: DeepGEMM runs the fp8 GEMMs of a
-- one-token step on 64-row tiles, 128 FLOP per fp8 weight byte.  The H20's
-- fp8 ridge is 296e12 x 0.91 / (4e12 x 0.84) = 80 FLOP/B (its catalog
-- fraction, DeepGEMM's H20 table), so its weight GEMMs turn compute-bound,
-- where swapAB's 32-row blocks (64 FLOP/B) stay under the ridge: the
-- experts' two GEMMs take 58 x (121 + 62) us against 58 x (94 + 44) us, 2.6
-- ms of a 30 ms step, so more than 5% (with the H100's fraction, 0.71,
-- it was 11%); the H100's ridge, 1979e12 x 0.58 / (3.35e12 x 0.84) = 408
-- FLOP/B, keeps them memory-bound and the step within 1%.  swap_ab (Ant
-- Group's DeepGEMM swapAB, DeepGEMM PR 192) swaps only the routed experts'
-- masked grouped GEMM, onto 32-row token blocks: the dense linears keep
-- their 64-row time.
local function one(gpu, swap)
  return gp.infer(with { gpu = gpu, gpus = 32, tp = 16, ep = 16, dp_attention = true,
                         kv = "fp8", input = 1000, output = 1000, batch = 1, disagg = true,
                         prefill_gpus = 16, two_batch_overlap = false, swap_ab = swap })
end
local h20, h20s = one("h20"), one("h20", true)
local h100, h100s = one("h100-sxm"), one("h100-sxm", true)
t.ok(h20.step_ms > 1.05 * h20s.step_ms, "H20 batch 1: the experts' 64-row tiles cost over 5% more")
t.near(h100.step_ms, h100s.step_ms, 0.01, "H100 batch 1: within 1%")
local row = t.op
-- o_proj, a dense fp8 linear, runs DeepGEMM's normal GEMM either way.
t.near(row(h20, "o_proj").time, row(h20s, "o_proj").time, 1e-9,
       "swap_ab leaves the dense linears on 64-row tiles")
-- The experts' up GEMM (N 4096, K 7168) at about three rows a touched
-- expert.  The row gives the experts touched: bytes = touched x 7168 x
-- 4096 (fp8 weights) + recv x (7168 + 4096) x 2, recv = flop / (2 x 7168
-- x 4096) -- 6.3 of them.  DeepGEMM's blocks (roofline.c deepgemm_eff):
-- swapAB runs 4096 / 256 = 16 blocks an expert of 32 token rows, 101 in
-- ceil(101 / 78) = 2 waves; the plain kernel's block_n is 192, 22 blocks
-- an expert, 139 in 2 waves (160 and under cut 26 or more, 164 blocks
-- and 3 waves), of 64 rows.  Both waves hold while touched is in
-- (78 / 16, 156 / 22] = (4.875, 7.09].  One M block an expert either way
-- (a count over 32 rows has Poisson odds below 1e-20 at 3 rows), so the
-- padded compute is (2 x 64 x 192) / (2 x 32 x 256) = 1.5 times the
-- swapped.  Tolerance 1e-9: the same arithmetic, the odds aside.
do
  local o = row(h20, "experts_up")
  local recv = o.flop / (2 * 7168 * 4096)
  local touched = (o.bytes - recv * (7168 + 4096) * 2) / (7168 * 4096)
  t.ok(touched > 4.875 and touched <= 156 / 22,
       string.format("%.2f experts touched: the waves above hold", touched))
end
t.near(row(h20, "experts_up").t_compute / row(h20s, "experts_up").t_compute, 1.5, 1e-9,
       "the masked grouped GEMM on 32-row blocks: 2 waves of 32 x 256 against 2 of 64 x 192")
t.ok(t.said(h20, "^swap_ab=false"), "the tile is among the assumptions")

-- The routed experts in a format of their own (expert_weights): DeepSeek-V3
-- on 48 GB200 at EP48, DP attention, batch 64.  Slots (256 + 32) / 48 = 6;
-- NVFP4 stores 4.5 bits a weight (4 + an fp8 scale per 16), so the experts
-- hold 6 x 58 x 3 x 7168 x 2048 x 4.5 / 8 B, the shared expert and
-- attention stay at fp8's 1 B.  The expert GEMMs run on the FP4 tensor
-- cores (the rows' precision), the rest on fp8's, and the tokens dispatch
-- in NVFP4: 64 x 8 x 7168 x (0.5 + 1/16) B.  Exact arithmetic.
do
  local nv = { model = "deepseek-v3", gpu = "gb200", gpus = 48, ep = 48, dp_attention = true,
               weights = "fp8", kv = "fp8", batch = 64, input = 2000, output = 100,
               two_batch_overlap = false }
  local one = gp.infer(nv)
  nv.expert_weights = "fp4"
  local fp4 = gp.infer(nv)
  t.near(fp4.memory.experts, 6 * 58 * 3 * 7168 * 2048 * 4.5 / 8, 1e-12,
         "fp4 experts: 4.5 bits a weight")
  t.near(fp4.memory.shared, one.memory.shared, 1e-12, "the shared expert stays fp8")
  t.near(fp4.memory.attention, one.memory.attention, 1e-12, "attention stays fp8")
  t.near(fp4.dispatch_bytes, 64 * 8 * 7168 * (0.5 + 1 / 16), 1e-12, "NVFP4 dispatch bytes")
  t.near(one.dispatch_bytes, 64 * 8 * 7168 * (1 + 4 / 128), 1e-12, "fp8 dispatch bytes")
  t.is(fp4.expert_weights, "fp4", "the experts' format in the result")
  local prec = {}
  for _, o in ipairs(fp4.ops) do prec[o.name] = o end
  -- The experts' rows run at FP4's rate: the same GEMM shape (the same
  -- rows an expert, so the same tile and wave terms) as the fp8 experts,
  -- at (10000 TFLOPS x 0.60) / (5000 x 0.72) = 5/3 of their compute rate
  -- (catalog, GB200); q_b stays within fp8's achievable peak.
  local up = prec.experts_up
  local up8
  for _, o in ipairs(one.ops) do if o.name == "experts_up" then up8 = o end end
  t.near(up and up8 and (up.flop / up.t_compute) / (up8.flop / up8.t_compute) or 0,
         10000 * 0.60 / (5000 * 0.72), 1e-9, "experts_up at the FP4 tensor cores' rate")
  local qb = prec.q_b
  t.ok(qb and qb.flop / qb.t_compute <= 3.6e15, "q_b stays within fp8's achievable peak")
  -- Single-batch overlap (SGLang single_batch_overlap.py): on Blackwell
  -- the combine sends on 32 of the 148 SMs while the down GEMM (the CuTe
  -- DSL fp4 kernel signals it) and the shared experts run on the other
  -- 116, f = 148 / 116 slower; per MoE layer the combine C costs
  -- max(0, C - f W) + (f - 1) W instead of C, W = down GEMM + shared
  -- experts (their rows, per layer).  58 MoE layers; the rows and the
  -- dispatch are the same either way.  Float sums of ~100 rows: 1e-9.
  nv.batch = 1408
  local off = gp.infer(nv)
  nv.single_batch_overlap = true
  local on = gp.infer(nv)
  local W = 0
  for _, o in ipairs(on.ops) do
    if o.name == "experts_down" or o.name:match("^shared_") then W = W + o.time end
  end
  local C, f = on.combine_ms / 1e3, 148 / (148 - 32)
  local want = off.step_ms / 1e3 - 58 * C + 58 * (math.max(0, C - f * W) + (f - 1) * W)
  t.near(on.step_ms / 1e3, want, 1e-9, "single-batch overlap: the combine beside down + shared")
  -- Exposed: the dispatch whole, the combine past the slowed window.
  t.near(on.a2a_exposed_ms / 1e3, 58 * (on.dispatch_ms / 1e3 + math.max(0, C - f * W)), 1e-9,
         "exposed: dispatch + the combine beyond f x (down + shared)")
  t.ok(on.step_ms < off.step_ms, "and the step is shorter")
  t.raises(function() gp.infer { model = "deepseek-v3", gpu = "gb200", gpus = 48, ep = 48,
                                 two_batch_overlap = true, single_batch_overlap = true } end,
           "single_batch_overlap is the overlap of a step without two_batch_overlap",
           "sbo and tbo exclude each other")
  nv.single_batch_overlap = nil
  -- Left open in two pools, the overlap is each pool's own choice (two
  -- servers): on NVL72 the decode pool's all-to-all is all NVLink, which
  -- the kernels copy with the SMs, so one micro-batch is faster there,
  -- while the prefill pool keeps it.  Each pool's rate is the one the
  -- fixed choice gives it.
  local pools = { model = "deepseek-v3", gpu = "gb200", gpus = 96, prefill_gpus = 48,
                  disagg = true, tp = 48, ep = 48, dp_attention = true, weights = "fp8",
                  expert_weights = "fp4", kv = "fp8", batch = 1408, input = 2000,
                  output = 100 }
  local auto = gp.infer(pools)
  pools.two_batch_overlap = false
  local no = gp.infer(pools)
  pools.two_batch_overlap = true
  local yes = gp.infer(pools)
  t.ok(yes.decode_per_gpu < no.decode_per_gpu and yes.prefill_per_gpu > no.prefill_per_gpu,
       "NVL72: overlap slows the decode pool and speeds the prefill pool")
  t.near(auto.decode_per_gpu, no.decode_per_gpu, 1e-12, "auto: the decode pool without it")
  t.near(auto.prefill_per_gpu, yes.prefill_per_gpu, 1e-12, "auto: the prefill pool with it")
  t.ok(t.said(auto, "^two_batch_overlap=false in decode, true in prefill"),
       "and it says so among the assumptions")
  t.raises(function() nv.expert_weights = "fp5"; gp.infer(nv) end,
           "expert_weights: ", "unknown expert format")
  t.raises(function() nv.expert_weights = 4.5; gp.infer(nv) end,
           "expert_weights must be a format name", "bits are not a format")
  t.raises(function() gp.infer { model = "llama3-8b", gpu = "h100-sxm", expert_weights = "fp8" } end,
           "has no routed experts", "a dense model has no experts")
end

-- Errors name the argument.
t.raises(function() gp.infer(with { gpus = 16, ep = 6, tp = 16 }) end,
         "ep 6: the experts are split over the whole instance", "ep must be tp, 1 or divide tp")
t.raises(function() gp.infer(with { gpus = 16, ep = 8, tp = 16, dp_attention = true }) end,
         "ep 8: the experts are split over the whole instance", "ep inside tp needs TP attention")

-- ep dividing tp (TP attention): ep groups of experts, each sliced over
-- tp / ep GPUs (TensorRT-LLM's --tp 8 --ep 4).  The same expert bytes per
-- GPU as slicing every expert over the 8 (256 / 8 = 32 experts' worth); a
-- single stream's 4 tokens (3 MTP drafts) x top-8 touch ~30 experts, which
-- fall unevenly on the four groups, so every GPU of the hottest reads more
-- than 1/8 of them (tests/c/t_serve.c checks the share by hand): a slower
-- step, no all-to-all.
do
  local h = { model = "deepseek-v3", gpu = "h200-sxm", weights = "fp8", gpus = 8, tp = 8,
              concurrency = 1, input = 1024, output = 2048, mtp = 3 }
  local sl = gp.infer(h)
  h.ep = 4
  local g4 = gp.infer(h)
  t.is(g4.layout, "TP8, experts EP4 x TP2", "the layout names the experts' split")
  t.near(g4.memory.experts, sl.memory.experts, 1e-12, "the same expert bytes per GPU")
  t.ok(g4.step_ms > sl.step_ms and g4.a2a_ms == 0, "the hottest group's reads: a slower step, "
       .. "no all-to-all")
end
t.raises(function() gp.infer { model = "qwen3-235b-a22b", gpu = "h200-sxm", gpus = 8, ep = 8,
                               mtp = 1 } end,
         "has no MTP module", "MTP needs the model's module")
-- A model table that leaves mtp_layers out takes its architecture's MTP
-- module, as a case's inline model does: DeepSeek-V3's shape without the
-- field prices what the catalog's deepseek-v3 (mtp_layers 1) prices, to the
-- byte and the millisecond (the same engine inputs: equal up to 1e-12), and
-- says it assumed it; the caller's table keeps no mtp_layers.  A shape no
-- catalog model shares is still refused.
do
  local shape = {}
  for k, v in pairs(gp.catalog():get("models", "deepseek-v3")) do shape[k] = v end
  shape.mtp_layers, shape.id = nil, nil
  local a = with { gpus = 16, ep = 16, dp_attention = true, batch = 32, mtp = 1 }
  local want = gp.infer(a)
  a.model = shape
  local got = gp.infer(a)
  t.near(got.step_ms, want.step_ms, 1e-12, "inline DeepSeek-V3 without mtp_layers: V3's MTP step")
  t.near(got.memory.mtp, want.memory.mtp, 1e-12, "and its MTP module's weights")
  local said = false
  for _, d in ipairs(got.defaults) do
    -- deepseek-r1 shares V3's architecture (the same config.json shape) and
    -- sorts first among the catalog's ids, so either may be the one named.
    for _, id in ipairs { "deepseek-r1", "deepseek-v3" } do
      if d == "mtp=1, drafted by the MTP module of " .. id .. "'s architecture (1 layer: "
           .. "the model gives no mtp_layers)" then said = true end
    end
  end
  t.ok(said, "the assumed module is named")
  t.is(shape.mtp_layers, nil, "the caller's table is left as it was")
  shape.layers = 60
  t.raises(function() gp.infer(a) end, "has no MTP module", "no catalog model of that shape")
end
t.raises(function() gp.infer(with { gpus = 16, ep = 16, a2a = "mpi" }) end,
         "a2a must be 'deepep', 'nccl' or 'none'", "unknown all-to-all")
-- concurrency: requests in flight, each decoded by its attention group.
-- One stream on a TP8 instance (TensorRT-LLM's min-latency runs) is 1/8 of
-- a sequence per GPU: the instance steps one sequence, so no other
-- prompt falls between its tokens: its ITL is the decode step (tpot,
-- infer_itl_loaded with one sequence; exact), and the system's tokens/s
-- is the one user's, its output over its prompt and its (output - 1)
-- ITLs, so less than output / ((output - 1) ITL); and its step is
-- shorter than batch 1 per GPU's 8 sequences.  With DP attention
-- 64 requests on 16 GPUs are 4 per GPU, the same as batch = 4 (exact).
do
  local one = gp.infer(with { gpu = "h200-sxm", gpus = 8, tp = 8, mtp = 1, concurrency = 1 })
  t.ok(one.fits and one.batch_per_gpu == 0.125 and one.batch == 1, "concurrency 1 on TP8: 1/8 of a sequence per GPU")
  t.near(one.itl_s, one.tpot_s, 1e-12, "one stream: no other prompt between its tokens")
  t.ok(one.tokens_per_s < base.output / ((base.output - 1) * one.itl_s),
       "system tokens/s is the one user's: its prompt besides its ITLs")
  local eight = gp.infer(with { gpu = "h200-sxm", gpus = 8, tp = 8, mtp = 1, batch = 1 })
  t.ok(one.step_ms < eight.step_ms, "one stream steps faster than 8 sequences")
  local c64 = gp.infer(with { gpus = 16, ep = 16, dp_attention = true, concurrency = 64,
                              two_batch_overlap = false })
  local b4 = gp.infer(with { gpus = 16, ep = 16, dp_attention = true, batch = 4,
                             two_batch_overlap = false })
  t.ok(c64.batch_per_gpu == 4, "concurrency 64 over 16 DP-attention GPUs: 4 per GPU")
  -- batch per replica (results.lua): the instances' batches together are
  -- the concurrency, 64 = instances x batch (exact integers)
  t.is(c64.instances * c64.batch, 64, "concurrency 64: instances x batch per replica")
  t.near(c64.tokens_per_s, b4.tokens_per_s, 1e-12, "the same as batch = 4")
end
-- Drafts past the first (serve.ACCEPT_DECAY): DeepSeek's one MTP module
-- applied again.  The constant's source: TensorRT-LLM tech blog 1 measured
-- 1.92, 2.58, 2.82, 2.99, 3.01 tokens a step for 1 to 5 drafts; a first
-- draft kept at 0.925 and each deeper one at 0.73 of the rate before gives
-- 1.925, 2.550, 2.857, 2.968, 2.997 (within 1.5%; one rate, 0.85, would
-- give 3.19 at 3 drafts).  By default 3 drafts yield 1 + 0.85 + 0.527425
-- + 0.238905 = 2.616330 (t_serve.c); an acceptance given keeps every draft
-- at it: 1 + 0.85 + 0.85^2 + 0.85^3 = 3.187250.  One draft is not decayed.
do
  local serve = require "gpuplan.serve"
  local core = require "gpuplan.core"
  t.near(serve.ACCEPT_DECAY, 0.73, 0, "the decay the fit gives")
  local blog = { 1.92, 2.58, 2.82, 2.99, 3.01 }
  for k, v in ipairs(blog) do
    t.near(core.serve_accept(k, 0.925, serve.ACCEPT_DECAY), v, 0.015,
           string.format("TensorRT-LLM's %d-draft accept length within 1.5%%", k))
  end
  local a = with { gpu = "h200-sxm", gpus = 8, tp = 8, concurrency = 1, mtp = 3 }
  local d = gp.infer(a)
  t.near(d.accept, 2.616330065, 1e-9, "3 drafts by default: the decayed chain")
  t.like(table.concat(d.defaults, "; "), "x0%.73 a draft deeper", "the defaults line says so")
  a.acceptance = 0.85
  t.near(gp.infer(a).accept, 1 + 0.85 + 0.85 ^ 2 + 0.85 ^ 3, 1e-12,
         "an acceptance given: every draft at it")
  a.acceptance, a.mtp = nil, 1
  t.near(gp.infer(a).accept, 1.85, 1e-12, "one draft: 0.85, not decayed")
end
t.raises(function() gp.infer(with { gpus = 16, ep = 16, dp_attention = true, concurrency = 8 }) end,
         "concurrency 8 over 16 GPUs with DP attention: each runs whole requests",
         "concurrency below one a DP-attention GPU")
t.raises(function() gp.infer(with { gpus = 16, ep = 16, concurrency = 16, batch = 1 }) end,
         "give batch = N or concurrency = N, not both", "concurrency and batch")
t.raises(function() gp.infer(with { gpus = 24, ep = 16, disagg = true, concurrency = 16 }) end,
         "concurrency with disagg", "concurrency with two pools")
t.raises(function() gp.infer_plan(with { target = 1e4, concurrency = 8 }) end,
         "infer_plan: concurrency does not go with target", "the plan picks the batch")
t.raises(function() gp.infer(with { gpus = 16, ep = 16, prefill_gpus = 8 }) end,
         "prefill_gpus needs disagg = true", "prefill pool needs disagg")
t.raises(function() gp.infer(with { gpus = 16, ep = 16, itl_max = -1 }) end,
         "itl_max must be a positive time, at most an hour %(got %-1%)", "bad itl_max")
t.raises(function() gp.infer(with { gpus = 16, ep = 16, imbalance = 0.5 }) end,
         "imbalance must be a number in %[1, 64%]", "imbalance below 1")
t.raises(function() gp.infer(with { gpus = 20, ep = 20, dp_attention = true }) end,
         "does not fill whole nodes", "EP20 on 8-GPU nodes")
t.raises(function() gp.infer_plan(with { target = 0 }) end,
         "target must be a positive number", "plan target")
-- The serving config as the binding reads it (core.serve, after gp.infer's
-- own checks): the layouts and the serve scalars through their field
-- descriptions, a bad value named by its path, an unknown key refused.
do
  local core = require "gpuplan.core"
  local real, cap = core.serve, nil
  core.serve = function(m, d, s) cap = cap or { m, d, s }; return real(m, d, s) end
  gp.infer(with { gpus = 16, ep = 16, dp_attention = true, batch = 32 })
  core.serve = real
  local function serve_with(x, sub)
    local c = {}
    for k, v in pairs(cap[3]) do c[k] = v end
    if sub then
      local l = {}
      for k, v in pairs(c[sub]) do l[k] = v end
      for k, v in pairs(x) do l[k] = v end
      c[sub] = l
    else
      for k, v in pairs(x) do c[k] = v end
    end
    return function() return real(cap[1], cap[2], c) end
  end
  t.ok(pcall(serve_with {}), "the captured config reads back")
  t.raises(serve_with({ tp = 0 }, "decode"), "decode.tp must be an integer in 1..", "decode tp",
           true)
  t.raises(serve_with({ tbo = 1 }, "prefill"), "prefill.tbo must be a boolean", "prefill tbo",
           true)
  t.raises(serve_with({ tpp = 2 }, "decode"), "decode: unknown field 'tpp'", "layout key",
           true)
  t.raises(serve_with { a2a = "x" }, "serve.a2a must be one of deepep, nccl", "a2a", true)
  t.raises(serve_with { mtp = -1 }, "serve.mtp must be an integer in 0..", "mtp", true)
  t.raises(serve_with { redundant = -2 }, "serve.redundant must be an integer in -1..",
           "redundant", true)
  t.raises(serve_with { dispatch_bytes = 0 / 0 }, "serve.dispatch_bytes must be finite",
           "dispatch bytes", true)
  -- The fixed reserve's NCCL buffers (serve.c fixed_reserve): a comm the
  -- caller states is placed as given, 0 included (it fell back to the
  -- default 0.5 GiB, a stated 0 read as none stated; t_serve.c prices the
  -- unstated case on one GPU).  0.5 GiB context 536,870,912 + 64 MiB
  -- cuBLAS 67,108,864 = 603,979,776 B (memory.c mem_reserve_default) on
  -- each of the EP16 instance's GPUs.  Exact: integers.
  local r0 = serve_with { comm = 0 }()
  t.near(r0.decode.memory.reserve, 603979776, 0, "core.serve: a stated comm 0 is placed as 0")
end
-- The expert-parallel options without expert parallelism, and swap_ab on
-- a dense model, priced nothing (Llama 3 8B's step was the same with any
-- of them): refused, naming the option.
for k, v in pairs { a2a = "nccl", imbalance = 2, redundant_experts = 8 } do
  t.raises(function() gp.infer { model = "llama3-8b", gpu = "h100-sxm", [k] = v } end,
    "infer: " .. k .. " applies with expert parallelism (ep > 1)", k .. " without EP refused", true)
end
-- ep inside tp (ep 4 groups of experts sliced over tp 8 / 4 GPUs) runs no
-- all-to-all either: the same options refused, the error naming that split
-- (the user gave ep 4, so "ep > 1" alone would read as satisfied).
for k, v in pairs { a2a = "nccl", imbalance = 2, two_batch_overlap = true } do
  t.raises(function() gp.infer { model = "deepseek-v3", gpu = "h200-sxm", gpus = 8, tp = 8,
                                 ep = 4, weights = "fp8", [k] = v } end,
    "infer: " .. k .. " applies with the experts split over the whole instance (ep equal to tp): "
      .. "ep 4 inside tp 8 slices them in groups with no all-to-all", k .. " with ep inside tp refused",
    true)
end
t.raises(function() gp.infer { model = "llama3-8b", gpu = "h100-sxm", swap_ab = true } end,
  "infer: swap_ab is the routed experts' grouped GEMM: model 'llama3-8b' has no routed experts",
  "swap_ab on a dense model refused", true)
-- With EP they are the step's (DeepSeek-V3 on 16 H20 takes each).
t.ok(pcall(gp.infer, with { gpus = 16, ep = 16, dp_attention = true, batch = 32, a2a = "nccl",
  imbalance = 1.2, redundant_experts = 16, swap_ab = true }), "with EP 16: taken")
-- The lm_head at embed_bits (16) multiplies at the 16-bit rate in the MoE
-- serving model too (serve_row.c sx_gemm).  DeepSeek-V3 on 16 H200, EP16
-- with DP attention, batch 256 a rank run as two-batch overlap's two
-- passes of 128 rows: the logits GEMM is 2 x 128 x 129280 x 7168 = 237.2
-- GFLOP a pass over the whole vocabulary (DP attention); its compute time
-- is that over 989e12 x 0.80 x 0.82 (the hopper GEMM and sustained-load
-- fractions) x the op's shape term (0.962), 380.1 us, where the fp8 rate
-- gave half.  Exact arithmetic: 1e-12.  Margin 0: with bf16 weights the
-- default 10% margin leaves KV for 215 of the 256 a GPU (moe_margin.t).
do
  local function logits(w)
    local r = gp.infer { model = "deepseek-v3", gpu = "h200-sxm", gpus = 16, ep = 16,
                         dp_attention = true, weights = w, kv = "fp8", batch = 256,
                         input = 1024, output = 1024, margin = 0 }
    return t.op(r, "logits")
  end
  local q, b = logits("fp8"), logits("bf16")
  t.near(q.flop, 2 * 128 * 129280 * 7168, 1e-12, "MoE serving logits: 2 x 128 x 129280 x 7168 FLOP a pass")
  t.near(q.t_compute, q.flop / (989e12 * 0.80 * 0.82 * q.shape_eff), 1e-12,
         "MoE serving, fp8 weights: the 16-bit lm_head's logits GEMM at the bf16 rate")
  t.near(q.time, b.time, 1e-12, "... the same op as a bf16 run's")
end
-- --output 1: the one token is the prefill's, no decode step runs, so the
-- MoE serving result has no ITL, time per output token or per-user rate
-- (Mixtral on 8 H200, EP8: were 65.79 ms and 15.2 tok/s of a step that
-- never runs), and an ITL bound binds nothing: 1 ms was refused "no batch
-- meets ITL 1 ms (one sequence alone takes 9.55 ms)"; it now takes the
-- KV's batch, as with no bound, and the same tokens/s.  Output 2 has a
-- decode step: its figures, and 1 ms refused.
do
  local a = { model = "mixtral-8x7b", gpu = "h200-sxm", ep = 8, gpus = 8, output = 1 }
  local one = gp.infer(a)
  t.ok(one.fits and one.ttft_s > 0 and one.tokens_per_s > 0, "MoE output 1: TTFT and tokens/s")
  t.is(tostring(one.itl_s) .. tostring(one.tpot_s) .. tostring(one.stream_tokens_per_s),
    "nilnilnil", "MoE output 1: no ITL, no time per output token, no per-user rate")
  local bound = gp.infer(t.with(a, { itl_max = "1ms" }))
  t.ok(bound.fits and bound.batch_per_gpu == one.max_batch_kv_per_gpu and bound.batch == one.batch
    and bound.tokens_per_s == one.tokens_per_s, "MoE output 1: a 1 ms bound binds nothing")
  local p1 = gp.infer_plan({ model = "mixtral-8x7b", gpu = "h200-sxm", ep = 8, output = 1,
    target = 1000, itl_max = "1ms" })
  t.ok(p1.gpus > 0 and p1.itl_s == nil, "MoE output 1: the target search under 1 ms, no ITL")
  local two = gp.infer(t.with(a, { output = 2 }))
  t.ok(two.itl_s > 0 and two.tpot_s > 0 and two.stream_tokens_per_s > 0,
    "MoE output 2: the decode step's figures")
  local b2 = gp.infer(t.with(a, { output = 2, itl_max = "1ms" }))
  t.ok(not b2.fits and b2.why:find("no batch meets ITL 1 ms", 1, true),
    "MoE output 2: the 1 ms bound refused")
end
-- The defaults line's redundant count is the engine's rule itself
-- (serve.c serve_redundant, through core.serve_redundant), not a copy:
-- ceil(E / ep) x ep - E where ep = tp > 1, else 0.  By hand, E = 256
-- (DeepSeek-V3's routed experts): ep 72 -> ceil(3.56) = 4 slots a GPU,
-- 288 - 256 = 32; ep 24 -> 11 a GPU, 264 - 256 = 8; ep 16 divides
-- them -> 0; ep 72 over tp 8 (experts not split by the instance's
-- GPUs) -> 0; ep 1 -> 0.  Exact integers.
do
  local core = require "gpuplan.core"
  t.is(core.serve_redundant(256, 72, 72), 32, "EP72 on 256 experts: 32 slots")
  t.is(core.serve_redundant(256, 24, 24), 8, "EP24 on 256 experts: 8 slots")
  t.is(core.serve_redundant(256, 16, 16), 0, "EP16 divides 256 experts: none")
  t.is(core.serve_redundant(256, 72, 8), 0, "ep not tp: none")
  t.is(core.serve_redundant(256, 1, 1), 0, "ep 1: none")
  local ok, msg = pcall(core.serve_redundant, 256, 0, 1)
  t.ok(not ok and tostring(msg):find("ep must be >= 1", 1, true), "ep 0 refused, named")
  local r24 = gp.infer(with { gpu = "h800-sxm", gpus = 24, ep = 24, dp_attention = true,
                              batch = 24 })
  t.like(said(r24, "redundant_experts") or "", "^redundant_experts=8 ",
         "EP24: the defaults line says the engine's 8")
end
-- EPLB: off unless given (SGLang's and vLLM's enable_eplb False,
-- TensorRT-LLM without a load_balancer), and the imbalance modelled from
-- the placement the runtime has.  DeepSeek-V3 on 32 H800, EP32 (8 experts
-- a GPU), batch 128 a GPU, one token each: 1024 picks a GPU, the load of
-- TensorRT-LLM tech blog 4's Table 1.  Without EPLB its "No EPLB" row:
-- 1 + (1.564 / 0.480078) sqrt(0.480078^2 - 1/1024 + 1/1024) = 2.564
-- exactly, so the decode step is the one imbalance = 2.564 gives (1e-12:
-- the same step).  With EPLB: 1 + z_32 sqrt(0.04236^2 + 1/1024), z_32 =
-- 2.10279, = 1.1107 (1e-4: z quoted to 6 digits, the step less than
-- proportional to it).  The buffers are sized for the placement's skew
-- alone: 1 + 3.257803 x 0.4790600 = 2.560683 without EPLB (1e-6: digits).
do
  -- input 2048: 128 sequences of the base's 4096-token prompt (0.171 GB
  -- of KV each) no longer fit an 80 GB H800 beside the fixed reserve
  -- (125 do); the imbalance is the batch's and the picks', not the lengths'
  local a = with { gpu = "h800-sxm", kv = "fp8", gpus = 32, ep = 32, dp_attention = true,
                   batch = 128, two_batch_overlap = false, input = 2048 }
  local off = gp.infer(a)
  t.like(said(off, "eplb") or "", "^eplb=false %(the runtimes' default: SGLang's and vLLM's "
    .. "enable_eplb False", "the defaults line: EPLB off, as the runtimes ship")
  t.like(said(off, "imbalance") or "", "no%-EPLB measurement", "and the imbalance it implies")
  t.near(off.step_ms, gp.infer(t.with(a, { imbalance = 2.564 })).step_ms, 1e-12,
    "no EPLB, EP32 at 1024 picks a GPU: TensorRT-LLM's measured 2.564")
  t.near(off.memory.workspace, gp.infer(t.with(a, { imbalance = 2.560683 })).memory.workspace,
    1e-6, "no EPLB: the buffers sized for the placement's 2.5607")
  local on = gp.infer(t.with(a, { eplb = true }))
  t.is(said(on, "eplb"), nil, "eplb given: not assumed")
  t.near(on.step_ms, gp.infer(t.with(a, { imbalance = 1.1107 })).step_ms, 1e-4,
    "EPLB, EP32 at 1024 picks a GPU: 1.1107")
  t.ok(on.step_ms < 0.8 * off.step_ms, string.format(
    "EPLB shortens the step: %.1f ms against %.1f", on.step_ms, off.step_ms))
  -- SGLang's placement (runtime sglang): the LMSYS large-scale EP blog's
  -- balancedness figure, max / mean - 1 = 0.2500 at 32 GPUs and 0.1086
  -- at 16 (serve_step.c sglang_eplb_excess), with the step's chance:
  -- 1 + sqrt(0.25^2 + z_32^2 / 1024) = 1 + sqrt(0.0625 + 2.10279^2 /
  -- 1024) = 1.25849; EP24, linear in ln N between 16 and 32: 0.1086 +
  -- 0.1414 ln 1.5 / ln 2 = 0.19131, z_24 = 1.98956, 1 + sqrt(0.19131^2
  -- + 1.98956^2 / 1024) = 1.20116 (1e-4 as above: z to 6 digits).
  local sg = t.with(a, { runtime = "sglang", eplb = true })
  local s32 = gp.infer(sg)
  t.like(said(s32, "imbalance") or "", "SGLang's EPLB placement spread at the EP width",
    "runtime sglang: the defaults line names SGLang's spread")
  t.near(s32.step_ms, gp.infer(t.with(sg, { eplb = false, imbalance = 1.25849 })).step_ms,
    1e-4, "SGLang's EPLB, EP32 at 1024 picks a GPU: 1.2585")
  t.ok(s32.step_ms > gp.infer(t.with(sg, { eplb = false, imbalance = 1.1107 })).step_ms,
    "SGLang's placement leaves more than TensorRT-LLM's measured one at EP32")
  local sg24 = t.with(sg, { gpus = 24, ep = 24 })
  t.near(gp.infer(sg24).step_ms, gp.infer(t.with(sg24, { eplb = false,
    imbalance = 1.20116 })).step_ms, 1e-4, "SGLang's EPLB, EP24 (between the figure's 16 "
    .. "and 32): 1.2012")
  t.raises(function() gp.infer(with { gpus = 8, tp = 8, eplb = true }) end,
    "eplb applies with expert parallelism", "eplb without EP: refused, named")
  t.raises(function() gp.infer(t.with(a, { eplb = "yes" })) end, "eplb must be true or false",
    "eplb not a boolean: refused, named")
  -- The plan's search prices its EP layouts with the same rule: 100k
  -- tokens/s on B200 needs no more GPUs with EPLB than without, and the
  -- plan says which it assumed.
  local q = { model = "deepseek-v3", gpu = "b200", weights = "fp8", input = 4096,
              output = 1536, target = 1e5, itl_max = "50ms", price = 5 }
  local p0, p1 = gp.infer_plan(q), gp.infer_plan(t.with(q, { eplb = true }))
  t.ok(p1.gpus < p0.gpus, string.format("infer_plan: %d GPUs with EPLB, %d without",
    p1.gpus, p0.gpus))
  t.like(said(p0.result, "eplb") or "", "^eplb=false ", "the plan says EPLB is off")
end
-- Disaggregated at --output 1: the one token is the prefill pool's, the
-- decode pool runs no step a user waits on (no ITL), and the split still
-- gives it one whole instance (serve_plan.c serve_run: k from 1 while
-- k x prefill tp + decode tp <= gpus), never 0 GPUs and no division by
-- output - 1 = 0.  DeepSeek-V3 on 40 B200, EP8 / TP8 attention both pools:
-- the engine charges the decode pool one step for the B first tokens it
-- receives (decode rate B / step, 16 / 42.18 ms = 379 requests/s a GPU;
-- 17 / 42.63 ms = 399 before the fixed reserve took its 1.14 GB a GPU),
-- against 7613 prompt tokens/s a prefill GPU over 2048-token prompts
-- (3.7 requests/s; EPLB off): the prefill pool binds, so the search takes the most
-- of it, 4 instances = 32 GPUs, and the decode pool the 8 left.
-- tokens/s = min(8 x 379, 32 x 7613 / 2048) x 1 = 32 x prefill / 2048;
-- pool_ratio = decode rate x 2048 / prefill rate.  On 16 GPUs: 8 + 8.
-- Exact: the engine's own doubles.
-- Margin 0: bf16 DeepSeek-V3 puts 169.56 GB of weights on each of a decode
-- instance's GPUs, and with 1.91 GB of DeepEP buffers, a sequence's
-- 1.15 GB of KV and the fixed reserve's 1.14 GB needs 173.76 GB; the
-- default margin (0.10 of 191.1 GB) leaves 172.03 GB, so it is refused
-- there (moe_margin.t prices the margin).
do
  local a = { model = "deepseek-v3", gpu = "b200", gpus = 40, ep = 8, disagg = true, output = 1,
              margin = 0 }
  local r = gp.infer(a)
  t.ok(r.fits and r.decode_gpus == 8 and r.prefill_gpus == 32,
       "disagg output 1: decode one instance of 8, prefill 32")
  t.near(r.decode_per_gpu, r.batch_per_gpu / (r.step_ms / 1e3), 1e-9,
         "disagg output 1: the decode pool takes B first tokens a step")
  t.near(r.tokens_per_s, 32 * r.prefill_per_gpu / 2048, 1e-12,
         "disagg output 1: tokens/s = the prefill pool's requests/s")
  t.near(r.pool_ratio, r.decode_per_gpu * 2048 / r.prefill_per_gpu, 1e-12,
         "disagg output 1: a finite pool ratio")
  t.is(tostring(r.itl_s) .. tostring(r.stream_tokens_per_s), "nilnil",
       "disagg output 1: no ITL, no per-user rate")
  local s = gp.infer(t.with(a, { gpus = 16 }))
  t.ok(s.fits and s.decode_gpus == 8 and s.prefill_gpus == 8,
       "disagg output 1 on 16: one instance each")
  t.raises(function() gp.infer(t.with(a, { prefill_gpus = 40 })) end,
    "prefill_gpus 40 must be whole decode instances of 8",
    "disagg output 1: no room left for the decode pool is refused, naming prefill_gpus")
end
-- max_batch_kv is a replica's, as results.lua declares it and as batch is:
-- the budget's sequences a GPU (max_batch_kv_per_gpu) x tp, a decode
-- instance's.  qwen3-30b-a3b (48 layers, 4 KV heads of 128, bf16 KV) on 8
-- H100 SXM, EP8, TP8 attention, in 2048 / out 256, KV policy mean: each
-- rank holds one KV head of each of the instance's 8 x B sequences, so per
-- unit of the GPU's batch 8 x 48 x 2 (K, V) x 128 x 2 B = 196,608 B a
-- token; the budget admits input + output / 2 = 2176 tokens a sequence:
-- 196,608 x 2176 = 427,819,008 B.  The KV budget the run reports (at its
-- batch) over that is 174.91: 174 a GPU, 8 x 174 = 1392 a replica (177.55
-- before the fixed reserve was placed: 0.5 GiB CUDA context + 64 MiB
-- cuBLAS workspace + 0.5 GiB NCCL buffers = 1,140,850,688 B, 2.67
-- sequences, memory.c mem_reserve_default).  Before, max_batch_kv said the
-- GPU's count beside the replica's batch.  Exact: integer counts.  Margin
-- 0, the budget this derivation states (the default 0.10 of the card holds
-- fewer: moe_margin.t).
do
  -- one micro-batch (the faster here, and what the default picks): two-batch
  -- overlap halves the activations and holds one more
  local a = { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 8, ep = 8,
              two_batch_overlap = false, margin = 0 }
  local top = gp.infer(a)
  t.is(top.kv_per_seq, 196608 * 2304, "EP8 TP8 attention: 196,608 B a token x 2304 tokens")
  t.is(math.floor(top.kv_budget / (196608 * 2176)), 174, "... the budget holds 174 a GPU")
  t.is(top.max_batch_kv_per_gpu, 174, "max_batch_kv_per_gpu: 174, the GPU's")
  t.is(top.max_batch_kv, 8 * 174, "max_batch_kv: 8 x 174 = 1392, a replica's")
  -- the reserve the budget lost, in the result as gp.infer's memory table
  -- gives the other parts: 536,870,912 + 67,108,864 + 536,870,912 B on the
  -- instance's 8 GPUs (exact: integers below 2^53)
  t.near(top.memory.reserve, 1140850688, 0, "memory.reserve: context + cuBLAS + NCCL on 8 GPUs")
  t.is(top.batch, top.max_batch_kv, "with no batch given the batch is what the KV holds, both a replica's")
  -- DP attention: each GPU holds its own sequences whole (4 heads): 4 x
  -- 24,576 B a token, and the instance is still 8 GPUs
  local dp = gp.infer(t.with(a, { dp_attention = true }))
  t.is(dp.kv_per_seq, 98304 * 2304, "DP attention: a sequence's whole KV on its GPU")
  t.is(dp.max_batch_kv, 8 * dp.max_batch_kv_per_gpu, "DP attention: a replica's is 8 GPUs' sequences")
  t.is(dp.max_batch_kv_per_gpu, math.floor(dp.kv_budget / (98304 * 2176)),
    "... each GPU's what its budget holds at 98,304 x 2176 B a sequence")
  -- a GPU's batch past it is refused naming the GPU's count
  local over = gp.infer(t.with(a, { batch = 175 }))
  t.ok(not over.fits and over.why:find("holds 174 per GPU", 1, true),
    "batch 175 per GPU does not fit: 'holds 174 per GPU'")
  -- gp.infer_plan: its batch (a replica's) within its result's max_batch_kv
  local p = gp.infer_plan { model = "qwen3-30b-a3b", gpu = "h100-sxm", ep = 8, target = 20000 }
  t.ok(p.batch <= p.result.max_batch_kv and
    p.result.max_batch_kv == p.result.tp * p.result.max_batch_kv_per_gpu,
    "gp.infer_plan: batch within max_batch_kv, both a replica's")
end
-- Single-batch overlap on Hopper: SGLang PR 9660's own A/B point, DeepSeek-R1
-- on 16 H20 (two nodes of 8, four 400G NICs each), EP16, DP attention, batch
-- 32 a GPU, no MTP (single_batch_overlap.py: the combine sends on 3 of the
-- 78 SMs, f = 78 / 75; the shared experts beside the dispatch).  The combine
-- sends a local expert's 64-token block once the down GEMM signals it
-- (DeepEP PR 483), so the last block, its flag and the polling follow the
-- GEMM: 256 / 16 = 16 local experts of 32 x 8 / 16 = 16 tokens each, one
-- block apiece, 16 units: the tail 35 us + (C - 35 us) / 16.  Per MoE layer
-- the exposed all-to-all is max(Hd, D - S) + max(0, C - f down, tail); the
-- dispatch's NVLink copies Hd (7/16 of 1.9 MB over NVLink, a few us) stay
-- under D - S.  58 MoE layers; float sums of ~100 rows: 1e-9.
do
  local a = with { gpus = 32, prefill_gpus = 16, disagg = true, ep = 16, tp = 16,
                   dp_attention = true, batch = 32, eplb = true, nics = 4,
                   nic_fabric = "ib-ndr-400", runtime = "sglang", kv = "fp8",
                   two_batch_overlap = false, single_batch_overlap = true }
  local on = gp.infer(a)
  local S, down = 0, 0
  for _, o in ipairs(on.ops) do
    if o.name == "experts_down" then down = o.time end
    if o.name:match("^shared_") then S = S + o.time end
  end
  local D, C, f = on.dispatch_ms / 1e3, on.combine_ms / 1e3, 78 / 75
  local tail = 35e-6 + (C - 35e-6) / 16
  t.near(on.a2a_exposed_ms / 1e3, 58 * ((D - S) + math.max(0, C - f * down, tail)), 1e-9,
         "SBO on H20: D - S and the combine's tail after the down GEMM exposed")
  t.ok(tail > C - f * down, "... the tail, where the down GEMM outlasts the combine")
end

t.done_testing()
