-- Megatron-Core's 1F1B (no vpp) overlaps no pipeline send: its
-- forward_backward_pipelining_without_interleaving raises on
-- overlap_p2p_comm ("Non-interleaved pipeline parallelism does not support
-- overlapping p2p communication", pipeline_parallel/schedules.py) and
-- Megatron-LM's arguments.py turns the flag off without virtual stages.
-- So on the megatron stack the sends of a 1F1B step are exposed, the
-- interleaved schedule still hides them, and an explicit overlap_p2p at
-- 1F1B is refused as Megatron-Core refuses it.
local t = require "tap"
local gp = require "gpuplan"

local function part(r, name)
  for _, p in ipairs(r.parts) do if p.name == name then return p end end
end

-- llama3-8b, pp 2 over two DGX H100 nodes (one stage a node), 8
-- micro-batches of one 4096-token sequence.
local base = { model = "llama3-8b", gpu = "h100-sxm", system = "dgx-h100", gpus = 16, stack = "megatron",
  tp = 1, pp = 2, global_batch = 64, seq = 4096 }
local r = gp.train(base)
t.is(r.overlaps.overlap_p2p, false, "megatron 1F1B: overlap_p2p reads off")
local said = false
for _, d in ipairs(r.defaults) do
  if d:find("overlap_p2p=false", 1, true) then said = true end
end
t.ok(said, "and the defaults say why")

-- By hand: each micro-batch's stage sends its activation forward and its
-- gradient back, one batched exchange each (send_forward_recv_backward,
-- send_backward_recv_forward): 2 transfers of seq x hidden x 2 B =
-- 4096 x 4096 x 2 = 32 MiB across the node boundary, each gp.comm's
-- send_recv between the two nodes; 8 micro-batches (64 / dp 8 / 1), all
-- on the path.  Tolerance 1e-9: the same engine price summed in another
-- order.
local sr = gp.comm { system = "dgx-h100", nodes = 2, gpus = 2, op = "send_recv",
  bytes = 4096 * 4096 * 2 }.time
t.is(r.microbatches, 8, "8 micro-batches")
t.near(part(r, "pp_comm").seconds, 8 * 2 * sr, 1e-9, "pp_comm = micro-batches x 2 sends, exposed")
t.is(part(r, "pp_comm").hidden, 0, "none hidden")

-- Interleaved (vpp 2): the stack's default stands and hides some of it.
local rv = gp.train(t.with(base, { vpp = 2 }))
t.is(rv.overlaps.overlap_p2p, true, "megatron interleaved: overlap_p2p on")
t.ok(part(rv, "pp_comm").hidden > 0, "interleaved: sends hidden under the chunks")

-- Asked for at 1F1B: refused, naming the argument.
t.raises(function() gp.train(t.with(base, { overlap_p2p = true })) end,
  "overlap_p2p with pp 2 and no vpp on the megatron stack", "explicit overlap_p2p at 1F1B", true)

-- Off by hand at 1F1B stays off, same figure.
local off = gp.train(t.with(base, { overlap_p2p = false }))
t.is(part(off, "pp_comm").seconds, part(r, "pp_comm").seconds, "overlap_p2p false: the same")

-- A job's 1F1B step prices what gp.train does (the engine's rule,
-- train_stage.c), though the job resolved at pp 1 with the stack's
-- default on.
local job = gp.train_job { model = "llama3-8b", gpu = "h100-sxm", system = "dgx-h100", gpus = 16,
  stack = "megatron", global_batch = 64, seq = 4096 }
local js = job:step { tp = 1, pp = 2 }
t.is(js.step_s, r.step_s, "job:step at 1F1B == gp.train's")

-- The hf stack keeps its own default (off) with no Megatron note.
local hf = gp.train(t.with(base, { stack = "hf" }))
t.is(hf.overlaps.overlap_p2p, false, "hf: its own default")
t.done_testing()
