-- pad_share: the share of each micro-batch's tokens that are padding of
-- one pad id (a tokenizer padding every row to max_length).  A MoE router
-- sends them all to the same top-k experts ("all padding tokens are
-- routed to a singular expert", PrimeIntellect-ai/prime-rl issue #1331).
-- The Hugging Face modules' expert loop waits for each expert's row count
-- (torch.where) and runs each expert's stretch as the longer of its host
-- launches and its GPU work (engine/train_layer.c hf_expert_stretches):
-- the pads move GPU work onto K experts and leave the other E - K with
-- their launches and less to hide them.  The backward waits nowhere, and
-- the fused kernels and dense models have no such loop.
-- Run with ./gpuplan run tests/lua/pad_share.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(15)

local tau = 24.84e-6   -- common.h GP_EAGER_OP_TIME: an x86 host's launch
local op = t.op
local fwd = t.fwd_total

-- Mixtral 8x7B (E = 8 experts, top K = 2) under DeepSpeed stage 3 on 8
-- H100s, the eager kernels (tests/lua/hf_moe_loop.t's job): before w1's
-- launch each expert waits lead = 3 + 2 + 7 = 12 launches after its
-- sync, and its host work is he = 10 launches (HF_EXPERT_OPS 5 and the
-- MLP's w1, w3, SiLU, product, w2) and its modules' hooks, 36 launches
-- (ds_hook_ops: w1, w3, w2 at DS_Z3_PARAM_HOOK_OPS 10, the block and
-- act_fn at DS_Z3_MODULE_HOOK_OPS 3): 46.
local job = { model = "mixtral-8x7b", gpu = "h100-sxm", gpus = 8, zero = 3, method = "full",
              stack = "deepspeed", kernels = "eager", margin = 0 }
local big = t.with(job, { seq = 4096, batch = 4, global_batch = 32 })
local even = gp.train(big)

-- pad_share 0 is no padding: the same step as without the option.
t.near(gp.train(t.with(big, { pad_share = 0 })).step_s, even.step_s, 0,
  "pad_share 0: the unpadded step")

-- Four sequences of 4096 tokens: balanced, every expert's GEMMs (4096
-- rows) outlast its launches, so the forward waits 8 x 12 launches (1e-9).
t.near(op(even, "host_wait").fwd, 8 * 12 * tau, 1e-9, "balanced: twelve launches an expert")

-- 97% padding: two experts take 0.97 x 16384 rows more, the six others
-- 0.03 x 4096 rows each.  The GPU's work is the same in all (the rows'
-- part moves, the weights' read and kernel fills stay with each expert),
-- so the forward grows only where a cold expert's stretch turns
-- host-bound: by at most (E - K) (he - lead) = 6 x (46 - 12) launches.
local pad = gp.train(t.with(big, { pad_share = 0.97 }))
local grow = op(pad, "host_wait").fwd - op(even, "host_wait").fwd
t.ok(grow > 0 and grow <= 6 * 34 * tau * (1 + 1e-9),
  string.format("97%% padding: the wait grows by 0 to 204 launches (got %.1f)", grow / tau))
t.ok(pad.step_s > even.step_s, "97% padding: a longer step")

-- The backward needs no row count on the host, and the forward's
-- operators keep their GPU time: only the host wait moves.
local same = true
for i, o in ipairs(even.ops) do
  local q = pad.ops[i]
  if q.name ~= o.name or q.bwd ~= o.bwd or (o.name ~= "host_wait" and q.fwd ~= o.fwd) then
    same = false
  end
end
t.ok(same, "the operators' GPU time does not move")

-- Nine in ten padding moves less than 97% (more rows stay on the cold
-- experts, so fewer of their stretches or less of each is host-bound).
local nine = op(gp.train(t.with(big, { pad_share = 0.9 })), "host_wait").fwd
t.ok(nine - op(even, "host_wait").fwd <= grow, "90% padding: no more than 97%")

-- One sequence of 16 tokens: every stretch is host-bound (an expert's
-- 46 launches against its weights' read and fills), and moving rows
-- between experts moves no launch.
local tiny = t.with(job, { seq = 16, batch = 1, global_batch = 8 })
t.near(fwd(gp.train(t.with(tiny, { pad_share = 0.97 }))), fwd(gp.train(tiny)), 1e-12,
  "host-bound: padding changes nothing")

-- No expert loop: the fused kernels (one grouped GEMM call) keep their
-- step.  A dense model has no router for the pads to crowd: the share
-- would change nothing, in silence, so it is refused, as moe_balance's
-- none is there (newuser11).
local fused = t.with(big, { kernels = "fused" })
t.near(gp.train(t.with(fused, { pad_share = 1 })).step_s, gp.train(fused).step_s, 0,
  "fused kernels: no loop to unbalance")
local dense = t.with(big, { model = "llama2-7b" })
t.raises(function() gp.train(t.with(dense, { pad_share = 1 })) end,
  "train: pad_share is the padding a MoE router sends to the same experts; llama2-7b has no "
  .. "experts", "a dense model: no router, refused", true)

t.raises(function() gp.train(t.with(big, { pad_share = 1.5 })) end,
  "pad_share", "above 1 refused", true)
-- Not a share: named, never priced (options.lua's range 0 to 1).
t.raises(function() gp.train(t.with(big, { pad_share = 0 / 0 })) end,
  "train: pad_share must be a finite number (got NaN)", "NaN refused", true)
-- (text that is a plain number is that number, gpuplan.options normal:
-- "0.5" is 0.5; other text is refused)
t.raises(function() gp.train(t.with(big, { pad_share = "half" })) end,
  "train: pad_share must be a finite number (got string 'half')", "a string refused", true)

-- Experts spread over ranks (ep > 1): the pads' top-k experts sit on at
-- most K ranks, a load the expert loop's one-rank pricing does not see --
-- refused by name (engine/train_prep.c check_pad_share), where before it
-- priced the balanced split in silence.  Stage 2: ep 2 on 8 H100s.
t.raises(function() gp.train(t.with(big, { zero = 2, ep = 2, pad_share = 0.5 })) end,
  "pad_share 0.5 with ep 2", "ep 2 refused", true)
t.ok(pcall(gp.train, t.with(big, { zero = 2, ep = 2 })), "... the same job without padding runs")
-- gp.sweep skips such layouts rather than failing: none listed has ep > 1,
-- where the same search without padding lists some.
local sw = { model = "qwen3-30b-a3b", gpu = "h100-sxm", gpus = 16, seq = 4096,
             method = "pretrain", ep_max = 8, top = 1000, scaling = false }
local function spread(res)
  local n = 0
  for _, c in ipairs(res.results) do if c.ep > 1 then n = n + 1 end end
  return n, #res.results
end
local n_plain = spread(gp.sweep(sw))
local n_pad, all_pad = spread(gp.sweep(t.with(sw, { pad_share = 0.5 })))
t.ok(n_plain > 0 and n_pad == 0 and all_pad > 0,
  string.format("sweep with pad_share: ep 1 layouts only (%d with ep > 1 without padding, "
    .. "%d with, of %d)", n_plain, n_pad, all_pad))

