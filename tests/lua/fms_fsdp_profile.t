-- The PyTorch blog "Maximizing training throughput using PyTorch FSDP"
-- (IBM and Meta) and the fms-fsdp README report runs of fms-fsdp:
-- PyTorch's FullyShardedDataParallel over the Foundation Model Stack's
-- modules.  The blog's title names PyTorch FSDP and no framework, and
-- fms-fsdp appears only in its cases' source id (the code link): the
-- cases state workload.framework fms-fsdp, and take its profile; a run
-- of PyTorch FSDP with no framework states pytorch-fsdp (stack hf); a
-- title naming PyTorch FSDP does not outweigh the field.
-- Run with ./gpuplan run tests/lua/fms_fsdp_profile.t.
local t = require "tap"
local gp = require "gpuplan"
local validate = require "gpuplan.validate"

t.plan(7)

local cat = gp.catalog()
local rows = {}
for _, c in ipairs(validate.read("validation/cases.json")) do rows[c.id] = c end
local b7 = rows["ibm-fsdp-blog-llama2-7b-a100-128"]
local b34 = rows["ibm-fsdp-blog-llama2-34b-a100-128"]
local r13 = rows["fms-fsdp-readme-llama2-13b-a100-128"]
t.ok(b7 and b34 and r13, "the blog's and the README's rows ship")

local p7, p34, p13 = validate.predict(b7, cat), validate.predict(b34, cat), validate.predict(r13, cat)
local function has(p, s) return p.defaults:find(s, 1, true) ~= nil end
t.ok(p7.predicted and has(p7, "stack profile=fms-fsdp") and has(p34, "stack profile=fms-fsdp")
  and has(p13, "stack profile=fms-fsdp"),
  "the blog's rows (fms-fsdp only in the source id) and the README's get the fms-fsdp profile")
t.ok(has(p7, "stack=hf (main_training.py") and not has(p7, "stack=megatron")
  and has(p7, "fsdp_version=1 (") and has(p7, "split_proj=true (FMS modules")
  and has(p7, "overlap_grad_reduce=true (FSDP1 default backward_prefetch=BACKWARD_PRE"),
  "FSDP1 on the hf stack, FMS's split projections, the backward prefetched")
-- Llama 2 7B is MHA (32 KV heads of 32): no expand; the 34B row is GQA 8
-- with activation checkpointing inside each FSDP unit.
t.ok(not has(p7, "kv_repeat=") and has(p34, "kv_repeat=true (")
  and has(p34, "ckpt_outside_fsdp=false (ac_handler.py") and not has(p7, "ckpt_outside_fsdp"),
  "K/V expanded only under GQA; the checkpoint inside the unit only where AC is on")

-- A copy of a run on PyTorch FSDP and nothing else.
local copy = t.copy
local plain = copy(b7)
plain.source = { title = "A run on PyTorch FSDP", id = "example.org/run" }
plain.notes = "bf16 mixed precision, FULL_SHARD"
plain.workload.framework = "pytorch-fsdp"
local pp = validate.predict(plain, cat)
t.ok(pp.predicted and has(pp, "stack profile=pytorch-fsdp") and has(pp, "stack=hf (PyTorch FSDP"),
  "a run of PyTorch FSDP alone (pytorch-fsdp) is priced on stack hf")
t.ok(not has(pp, "split_proj=true (FMS"), "and gets none of fms-fsdp's module settings")
-- The title names PyTorch FSDP, the field torchtitan: the field decides.
local named = copy(plain)
named.workload.framework = "torchtitan"
local pn = validate.predict(named, cat)
t.ok(pn.predicted and has(pn, "stack profile=torchtitan"),
  "the field, not the title's words, picks the profile")
