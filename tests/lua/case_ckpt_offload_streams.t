-- A case states where checkpoint_offload's copies run
-- (validation/SCHEMA.md parallel.checkpoint_offload_streams): gp.train's
-- checkpoint_offload_streams, which the train predictor hands on before
-- the stack profile, so a case can say what its source says against the
-- profile's default (torchtune's OffloadActivations() with
-- "use_streams: bool = True", torchtune@1814feb17
-- torchtune/training/_activation_offloading.py).  A time-only option:
-- the memory kind refuses it, and gpuplan fit does not take it (as it
-- takes no other option that sets only the step's time).
-- Run with ./gpuplan run tests/lua/case_ckpt_offload_streams.t.
local t = require "tap"
local gp = require "gpuplan"
local cjson = require "cjson"
local validate = require "gpuplan.validate"
local predict = require "gpuplan.predict.train"

t.plan(9)

local cat = gp.catalog()
local shipped = t.shipped_case
-- The torchtune flags row "+ Activation Offloading": Llama 3.2 3B on one
-- A100 80 GB, micro-batch 2 of 4096 tokens, one micro-batch a step, full
-- recompute with the checkpoints offloaded.
local ID = "torchtune-flags-a100-llama32-3b-act-offload-tps"
local function run(streams)
  local c = shipped(ID)
  c.parallel.checkpoint_offload_streams = streams
  local r = assert(predict(c, cat))
  return gp.train(r.job).step_s, r
end

-- 1. Unstated, the torchtune profile's true (said in the defaults);
-- stated true, the same step and no profile default said.
local s_prof, r_prof = run(nil)
local s_true, r_true = run(true)
local said = table.concat(r_prof.defaults, "; ")
t.ok(said:find("checkpoint_offload_streams=true", 1, true), "unstated: the torchtune profile's, said")
t.ok(s_true == s_prof and not table.concat(r_true.defaults, "; "):find("checkpoint_offload_streams=", 1, true),
     "stated true: the same step, no profile default said")

-- 2. Stated false (the copies on the compute stream, checkpoint_wrapper's
-- and DeepSpeed's): each layer's 2 x 4096 x 3072 x 2 B = 50,331,648 B
-- checkpoint goes out and back over the A100's PCIe Gen4 x16 link,
-- 16 x 0.985 GB/s x 2 x 0.8 = 25.216 GB/s a direction (gpuplan.comm
-- host_link_bw, tests/lua/ckpt_offload.t): t = 1.996 ms, 2 L t = 2 x 28 x
-- 1.996 = 111.8 ms on the step's path.  With the side stream each copy
-- hides under its layer's compute (a 3B layer's forward over 8192
-- tokens, about 2 x 100M x 8192 = 1.6 TFLOP, over 5 ms at 312 TFLOP/s:
-- tests/lua/ckpt_offload_streams.t prices the excess), so the
-- difference is the whole 2 L t; 1e-9: the same sums.
local s_false = run(false)
local tc = 2 * 4096 * 3072 * 2 / (16 * 0.985e9 * 2 * 0.8)
t.near(s_false - s_true, 2 * 28 * tc, 1e-9,
       string.format("stated false: + 2 L t = %.1f ms on the step", 2 * 28 * tc * 1e3))

-- 3. The case file reader: a non-boolean is refused naming the file, the
-- line of the field and the field; a memory case that states it is
-- refused as a field its kind does not read.
local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p " .. dir))
local function read_text(text)
  local path = dir .. "/c.json"
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
  local ok, err = pcall(validate.read, path)
  return ok, tostring(err), path
end
-- the shipped case, written one field a line: the field's line is found
-- by its text
local function lines_of(c, field, value)
  c.parallel[field] = "@@MARK@@"
  local text = cjson.encode { c }:gsub(",\"", ",\n\"")
  -- the newlines before the mark, plus one
  local n = select(2, text:sub(1, text:find("@@MARK@@", 1, true)):gsub("\n", "")) + 1
  return text:gsub("\"@@MARK@@\"", value), n
end
local text, line = lines_of(shipped(ID), "checkpoint_offload_streams", "\"yes\"")
local ok, err, path = read_text(text)
t.ok(not ok and err:find(path .. ":" .. line .. ":", 1, true)
     and err:find("parallel.checkpoint_offload_streams", 1, true),
     "'yes' refused naming file:" .. line .. " and the field (" .. err:gsub("^.-: ", "") .. ")")
text = lines_of(shipped(ID), "checkpoint_offload_streams", "true")
ok, err = read_text(text)
t.ok(ok, "true is read")
local mem = shipped("torchtune-flags-a100-llama32-3b-act-offload-mem")
mem.parallel.checkpoint_offload_streams = true
ok, err = read_text(cjson.encode { mem })
t.ok(not ok and err:find("field 'parallel.checkpoint_offload_streams': memory cases do not use it "
     .. "(only train cases do)", 1, true), "a memory case stating it is refused: " .. err:gsub("^.-: ", ""))
os.execute("rm -rf " .. dir)

-- 4. Stated without checkpoint_offload: gp.train's refusal, as the case's
-- reason (not a silent no-op).
local c = shipped(ID)
c.parallel.checkpoint_offload = nil
c.parallel.checkpoint_offload_streams = true
local r_no, why = predict(c, cat)
t.ok(r_no == nil and tostring(why):find("needs checkpoint_offload = true", 1, true),
     "without checkpoint_offload: refused, naming it (" .. tostring(why) .. ")")

-- 5. fit (gp.memory) sizes the step's bytes, which the option leaves as
-- they are: refused as an option of gp.train, as overlap_grad_reduce is.
local okm, merr = pcall(gp.memory, { model = "llama3-8b", gpu = "a100-sxm-80gb", recompute = "full",
                                    checkpoint_offload = true, checkpoint_offload_streams = true })
t.ok(not okm and tostring(merr):find("unknown option 'checkpoint_offload_streams' (an option of gp.train)",
     1, true), "gp.memory refuses it: " .. tostring(merr):gsub("^.-: ", ""))
local okm2, merr2 = pcall(gp.memory, { model = "llama3-8b", gpu = "a100-sxm-80gb", overlap_grad_reduce = true })
t.ok(not okm2 and tostring(merr2):find("unknown option 'overlap_grad_reduce'", 1, true),
     "as it refuses another time-only option")
