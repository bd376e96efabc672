-- optim_loop: the Adam step as transformers' AdamW of 2021 runs it
-- (optimizer_impl loop): a Python loop of seven elementwise kernels a
-- tensor, which under DeepSpeed steps its flat fp32 tensors (one a
-- group): 72 B an element against the fused
-- step's 28, 44 B more (engine/train_prep.c optim_loop_bytes).
-- Run with ./gpuplan run tests/lua/optim_loop.t.
local t = require "tap"
local gp = require "gpuplan"

t.plan(14)

-- GPT-2 XL's shape, 16 H100s data parallel, the deepspeed stack in fp16.
local job = {
  model = { id = "gpt2-xl-probe", layers = 48, hidden = 1600, heads = 25, kv_heads = 25,
            head_dim = 64, ffn_hidden = 6400, ffn_gated = false, vocab = 50257,
            tied_embeddings = true, norm = "layer", positions = "learned" },
  gpu = "h100-sxm", gpus = 16, gpus_per_node = 8, batch = 1, seq = 1024, global_batch = 16,
  stack = "deepspeed", precision = "fp16", zero = 1,
}
local function opt(x) return t.step_part(gp.train(t.with(job, x)), "optimizer").seconds end

-- The unit: ZeRO 0 (DeepSpeed's FP16_Optimizer) steps the whole model
-- with the mixed-16 fused Adam alone, 32 B an element (2 x (4 B master + 8
-- B moments) + 3 x 2 B gradient + 2 B weights, engine/train_prep.c
-- opt_bytes_of): a sixteenth of it is that step over one rank's partition
-- (the parameters over the 16 ranks; ZeRO 1 to 3 add their own passes,
-- engine/train.c ds_step_passes).  The loop adds 3m + 3v + 4d + g = 3 x 4 + 3
-- x 4 + 4 x 4 + 4 = 44 B (fp32 moments, denominator and the partition's
-- fp32 gradient) at ZeRO 1, whatever else ZeRO 1's step prices: its
-- optimizer part less the fused one's is 44 / 32 of the unit.  1%: each
-- part also pays the memory pipeline's fill once a pass (a few us) against
-- a ~1 ms pass.
local unit, fused, loop = opt { zero = 0 } / 16, opt {}, opt { optimizer_impl = "loop" }
t.ok(unit > 0 and fused > 0, "the fused step is priced")
t.near((loop - fused) / unit, 44 / 32, 0.01, "loop: 44 B an element over the fused step")
t.is(opt { optimizer_impl = "fused" }, fused, "fused: the deepspeed stack's default")
t.is(opt { zero = 2, optimizer_impl = "loop" } - opt { zero = 2 }, loop - fused,
     "ZeRO 2 steps the same flat partition")

-- foreach is torch.optim.AdamW's foreach path with clip_grad_norm_ (the hf
-- stack's default): 96 B in place of the fused 32 (opt_bytes_of's
-- eager_optim branch), 64 B more (1%: the fill, as above).
t.near((opt { optimizer_impl = "foreach" } - fused) / unit, 64 / 32, 0.01,
       "foreach: torch.optim.AdamW's eight passes and the norm, 96 B")

-- ZeRO 3 hands the client optimizer flat fp32 sub-groups too: the same
-- 44 B over its fused step.
t.near((opt { zero = 3, optimizer_impl = "loop" } - opt { zero = 3 }) / unit, 44 / 32, 0.01,
       "ZeRO 3: the loop's 44 B over the fused 32")

-- Off the deepspeed stack the loop runs over every parameter tensor, seven
-- launches each, which is not priced, and an offloaded step is
-- DeepSpeedCPUAdam's: refused, naming the option.
t.raises(function()
  return gp.train(t.with(job, { zero = 2, offload = "optimizer", optimizer_impl = "loop" }))
end, "optimizer_impl loop", "offload: the loop refused", true)
t.raises(function()
  return gp.train(t.with(job, { stack = "hf", zero = 0, optimizer_impl = "loop" }))
end, "optimizer_impl loop", "stack hf: the loop refused", true)
t.raises(function() return gp.train(t.with(job, { optimizer_impl = "looped" })) end,
         "optimizer_impl", "an unknown implementation refused", true)
-- loop and foreach price AdamW's m and v; SGD's one momentum or Muon's
-- Newton-Schulz step is another optimizer's code: refused, not priced as
-- AdamW's bytes over the wrong states.
t.raises(function() return gp.train(t.with(job, { optimizer = "sgd", optimizer_impl = "loop" })) end,
         "train: optimizer_impl loop is AdamW's step (its m and v); optimizer sgd",
         "sgd: the loop refused", true)
t.raises(function() return gp.train(t.with(job, { optimizer = "muon", optimizer_impl = "foreach" })) end,
         "train: optimizer_impl foreach is AdamW's step (its m and v); optimizer muon",
         "muon: foreach refused", true)
-- optimizer_impl is a Lua key (lua_only): '--optimizer-impl' on the command
-- line says so, not "did you mean '--optimizer'?", another option.
t.is(require("gpuplan.options").hint("train", "optimizer-impl", "cli"),
     " (optimizer_impl is a key of gp.train only, not a flag: docs/lua.md)",
     "the command line's hint names the Lua key")
t.ok(gp.train(t.with(job, { optimizer = "sgd", optimizer_impl = "fused" })).step_s > 0,
     "sgd: fused, the stack's own step, taken")
-- The refusal off the deepspeed stack says what to give, and that the
-- stack was the default one where none was given.
-- (the job less its stack: a full fine-tune's default is hf)
local nostack = t.with(job, { zero = 0, optimizer_impl = "loop" })
nostack.stack = nil
t.raises(function() return gp.train(nostack) end,
         "stack hf (the default stack) loops over every parameter tensor, seven launches each, "
           .. "which is not priced: give stack = deepspeed, or leave optimizer_impl out",
         "the loop off the default stack: the remedy named", true)
