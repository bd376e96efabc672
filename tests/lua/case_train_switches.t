-- A case states its run's training switches (validation/SCHEMA.md
-- workload.dropout, workload.unfused_loss): gp.train's options of those
-- names, which the train predictor hands on before the stack profile, so
-- a source that turns dropout off and fuses the loss (the DeepSeek-V3
-- GB200 guide's launch script: "--attention-dropout 0.0",
-- "--hidden-dropout 0.0", "--cross-entropy-loss-fusion") is priced so
-- under the megatron-core profile, which assumes both the other way.
-- Run with ./gpuplan run tests/lua/case_train_switches.t.
local t = require "tap"
local gp = require "gpuplan"
local cjson = require "cjson"
local validate = require "gpuplan.validate"
local predict = require "gpuplan.predict.train"

t.plan(12)

local cat = gp.catalog()
-- GPT 1.7B (24 layers, hidden 2048, vocabulary 131072) on one H100 SXM,
-- one sequence of 4096 tokens a micro-batch, under the megatron-core
-- profile (the source names Megatron-Core): bf16, no recompute, nothing
-- to overlap on one GPU.
local function case(wl, gb)
  local c = {
    id = "t", kind = "train",
    model = { name = "GPT-1.7B", positions = "learned", layers = 24, hidden = 2048, heads = 16,
              kv_heads = 16, ffn_hidden = 8192, ffn_gated = false, vocab = 131072,
              tied_embeddings = false, params_b = 1.7 },
    hardware = { gpu = "h100-sxm", gpus = 1, gpus_per_node = 8 },
    parallel = { tp = 1, pp = 1, dp = 1, micro_batch = 1, global_batch = gb or 1 },
    workload = { seq_len = 4096, precision = "bf16", method = "pretrain",
                 framework = "megatron-core" },
    measured = { metric = "step_time_s", value = 1 },
    source = { title = "NVIDIA Megatron-LM README (Megatron-Core r0.8.0 on H100)" },
  }
  for k, x in pairs(wl or {}) do c.workload[k] = x end
  return c
end
local function step(wl, gb)
  local r = assert(predict(case(wl, gb), cat))
  return r.value, table.concat(r.defaults, "; ")
end

-- 1. Unstated, the profile's: dropout 0.1 and the unfused loss, said in
-- the defaults; stated as the profile has them, the same step exactly
-- and no default said (the case's value, not the profile's).
local plain, said = step()
t.ok(said:find("dropout=true", 1, true) and said:find("unfused_loss=true", 1, true),
     "unstated: the megatron-core profile's dropout and unfused loss, said")
local stated, said2 = step { dropout = true, unfused_loss = true }
t.ok(stated == plain and not said2:find("dropout=", 1, true)
     and not said2:find("unfused_loss=", 1, true),
     "stated as the profile has them: the same step, no profile default said")

-- 2. The fused loss (unfused_loss false, the guide's
-- --cross-entropy-loss-fusion): the unfused loss moves A + 36 = 38 B a
-- logit forward and A + 12 = 14 B back (gp.train's unfused_loss,
-- tests/lua/unfused_loss.t); the fused one is the profile's mcore_loss,
-- Megatron-Core's native fused_cross_entropy.py (cross_entropy_fusion_impl
-- 'native', the default), A + 20 and A + 8 (tests/lua/mcore_loss.t): 20 B
-- more a logit, over T V = 4096 x 131072 = 536.9M logits, 10.74 GB a
-- micro-batch, at H100's 3.35 TB/s x 0.84 (the catalog's hbm fraction) =
-- 2.814 TB/s: 3.82 ms.  Each pass is one kernel either way, so the
-- fills and launches cancel; tolerance 2% for the rate's rounding.
local fused = step { dropout = true, unfused_loss = false }
local want = 20 * 4096 * 131072 / (3.35e12 * 0.84)
t.near(stated - fused, want, 0.02, "fused loss: 20 B a logit less, 3.82 ms a micro-batch")
-- two micro-batches of one sequence: the loss runs twice
local s2 = step({ dropout = true, unfused_loss = true }, 2)
local f2 = step({ dropout = true, unfused_loss = false }, 2)
t.near(s2 - f2, 2 * want, 0.02, "paid per micro-batch")

-- 3. Dropout off (the guide's --attention-dropout 0.0 --hidden-dropout
-- 0.0) saves two things a layer.
-- (a) The two residual adds (Megatron's fused bias-dropout-add,
-- engine/train_layer.c layer_extras) no longer write a 1-byte mask
-- forward (el = T h = 4096 x 2048 = 8.39M elements, 1 B each, two adds)
-- and no longer run the backward through it: two kernels reading the
-- gradient and the mask and writing the gradient, el (2 A + 1) = 5 B
-- each, plus each kernel's fill 3.9 us (engine/roofline.c ROOF_MEM_FILL)
-- and launch 1 us (catalog/archs.lua hopper graph_launch_overhead), as
-- roof_mem_time prices a memory op: (2 + 2 x 5) x 8.39M = 100.7 MB at
-- 2.814 TB/s = 35.8 us, plus 2 x 4.9 us = 9.8 us: 45.6 us a layer.
-- (b) The fused attention kernel with dropout on the probabilities runs
-- 1.034 x slower (catalog/archs.lua hopper cudnn dropout, TE issue #3312's
-- H200 "0.594 ms | 0.614 ms"; engine/train_price.c train_attn_time: the
-- factor on the kernel's time, not on its 1 us launch): 0.034 x the
-- dropout-free kernel's forward and backward, read from that run's ops
-- (the kernel's own time is priced by other tests).
-- Tolerance 2% for the rate's rounding.
local r_off = assert(predict(case { dropout = false, unfused_loss = true }, cat))
local off = r_off.value
local attn
for _, op in ipairs(gp.train(r_off.job).ops) do
  if op.name == "attention" then attn = op end
end
local el = 4096 * 2048
local resid = (2 + 2 * 5) * el / (3.35e12 * 0.84) + 2 * (3.9e-6 + 1e-6)
local attn_d = 0.034 * ((attn.fwd - 1e-6) + (attn.bwd - 1e-6))
local layer = resid + attn_d
t.near(stated - off, 24 * layer, 0.02,
       string.format("dropout off: no masks, no Philox in attention (%.3f ms)",
                     1e3 * 24 * layer))
-- both as the guide's script sets them: the two savings add (they touch
-- different kernels)
local both = step { dropout = false, unfused_loss = false }
t.near(stated - both, 24 * layer + want, 0.02, "both switches: the two savings add")

-- 4. The case file reader: the fields take the option's values only, and
-- a kind whose predictor does not read a switch refuses it by name.
local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p " .. dir))
local function read_with(c)
  local path = dir .. "/c.json"
  local f = assert(io.open(path, "w"))
  f:write(cjson.encode { c })
  f:close()
  local ok, err = pcall(validate.read, path)
  return ok, tostring(err)
end
local c = case { dropout = 0.1 }
local ok, err = read_with(c)
t.ok(not ok and err:find("workload.dropout", 1, true) and err:find("expected", 1, true),
     "a probability for dropout is refused naming the field (" .. err:gsub("^.-: ", "") .. ")")
local raw = cjson.decode(assert(io.open("validation/cases.json")):read("a"))
local function first(kind, method)
  for _, x in ipairs(raw) do
    if x.kind == kind and (not method or (x.workload or {}).method == method) then return x end
  end
end
local rl = first("rl")
rl.workload.unfused_loss = false
ok, err = read_with(rl)
t.ok(not ok and err:find("field 'workload.unfused_loss': rl cases do not use it (only train "
     .. "cases do)", 1, true), "an rl case stating the loss is refused: " .. err:gsub("^.-: ", ""))
local serve = first("memory", "infer")
serve.workload.dropout = false
ok, err = read_with(serve)
t.ok(not ok and err:find("field 'workload.dropout': memory (method infer) cases do not use it",
     1, true), "a serving memory case stating dropout is refused")
-- workload.flash (a model's code without fused attention; a runtime run
-- with FlashAttention off, llama.cpp's flash_attn) is read by the train,
-- memory and infer predictors: an rl case's would be priced without it
local rl2 = first("rl")
rl2.workload.flash = false
ok, err = read_with(rl2)
t.ok(not ok and err:find("field 'workload.flash': rl cases do not use it", 1, true),
     "an rl case stating flash is refused: " .. tostring(err):gsub("^.-: ", ""))
-- a training memory case takes dropout and hands it to gp.memory as its
-- option (the masks it keeps): not a number derived here (the peak's
-- moment moves with what is held; engine/memory_act.c sizes the masks),
-- only that the stated value is the job's and the peak grows with it
local mem = first("memory", "full") or first("memory", "pretrain")
local pm = require "gpuplan.predict.memory"
mem.workload.dropout = false
local lo = assert(pm(mem, cat))
mem.workload.dropout = true
local hi = assert(pm(mem, cat))
t.ok(lo.job.dropout == false and hi.job.dropout == true and hi.value > lo.value,
     string.format("a memory case's dropout is gp.memory's (%.2f -> %.2f)", lo.value, hi.value))
os.execute("rm -rf " .. dir)

-- 5. A case's model.mtp_layers (NeMo's DeepSeek-V3 recipe: "use_mtp: bool =
-- True" -> mtp_num_layers=1) is gp.train's mtp_layers: the model table
-- itself prices nothing with it, so before it reached the job the stated
-- module was silently left out.  The module is one more layer of the
-- model's kind, its 2h x h eh_proj and the head's logits and loss once
-- more (tests/lua/train_mtp.t prices it).  Per token forward, GPT-1.7B:
-- a layer 24 h^2 + 4 s h = 100.7M + 33.6M = 134M FLOPs, the head 2 h V =
-- 537M, eh_proj 4 h^2 = 16.8M: the model 24 x 134 + 537 = 3753M, the
-- module 688M more, +18.3%.  Bounds: at least one layer's share (1/25,
-- 4%), at most +30% (the loss passes are memory-bound and priced apart
-- from the FLOPs).
local function with_mtp(n)
  local c0 = case()
  c0.model.mtp_layers = n
  return assert(predict(c0, cat))
end
local r0, r1 = assert(predict(case(), cat)), with_mtp(1)
local grow = r1.value / r0.value - 1
t.ok(r1.job.mtp_layers == 1 and (r0.job.mtp_layers or 0) == 0 and grow > 1 / 25 and grow < 0.30,
     string.format("model.mtp_layers 1 is the job's mtp_layers: the step +%.1f%%", 100 * grow))
