-- The capabilities issues 22 and 25 name, each under one name: the
-- command line's flag (--grad-sync), the Lua key (grad_sync) of every
-- command that takes it, the case field a validation case states it in,
-- its line in docs/cli.md (what --help prints, from the same
-- declaration) and a mention in the README.  An audit of both issues'
-- "Done when" items found the option paths whole and the README silent
-- on half of them (the serving and collective items, the offloaded
-- optimizer's host step, eager attention, vision towers); this keeps each
-- said.  Where a case field's name differs from the option's (the
-- schema's dtype and hardware fields), the row says the case's own.
-- Run with ./gpuplan run tests/lua/issue_capabilities.t.
local t = require "tap"
local options = require "gpuplan.options"
local validate = require "gpuplan.validate"

local function slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end
local readme, cli, schema = slurp("README.md"), slurp("docs/cli.md"), slurp("validation/SCHEMA.md")
local flat = readme:gsub("%s+", " ")

-- { what the issue asks, option (nil: none), commands, case field,
--   the README's words }
local ROWS = {
  -- issue 25
  { "FSDP's strategies", "fsdp", "train plan fit", "parallel.fsdp",
    "--fsdp full_shard|shard_grad_op|hybrid_shard" },
  { "gradients reduced per micro-batch or once a step", "grad_sync", "train plan fit",
    "parallel.grad_sync", "--grad-sync" },
  { "the plan searches the three strategies", "fsdp", "plan", nil,
    "--fsdp full_shard,shard_grad_op,hybrid_shard" },
  { "MoE parallel folding", "etp", "train plan fit", "parallel.etp", "--etp tp,1" },
  { "RMSNorm and MLA up-projection recompute", "recompute_modules", "train plan fit",
    "parallel.recompute_modules", "--recompute-modules layernorm,mla_up_proj" },
  { "fp8 activation caching", "fp8_activations", "train plan fit", "workload.fp8_activations",
    "--fp8-activations" },
  { "DualPipe", "schedule", "train plan", "parallel.schedule", "--schedule dualpipe" },
  { "EMA in host memory (no GPU cost: no option)", nil, nil, nil, "The report's EMA" },
  { "the optimizer offloaded", "offload", "train plan fit", "parallel.offload",
    "the optimizer's host step" },
  { "the host step's threads", "host_threads", "train plan", "parallel.host_threads",
    "--host-threads" },
  { "ZeRO-Offload's delayed update", "delayed_update", "train plan", "parallel.delayed_update",
    "--delayed-update" },
  { "eager attention", "flash", "train plan fit infer", "workload.flash", "--no-flash" },
  { "eager kernels", "kernels", "train plan fit", "workload.kernels", "--kernels eager" },
  { "images per sample", "images", "train plan fit", "workload.images", "--images" },
  { "the vision tower trained", "train_vision", "train plan fit", "workload.train_vision",
    "--train-vision" },
  -- issue 22
  { "two-batch overlap where it pays", "two_batch_overlap", "infer",
    "workload.two_batch_overlap", "--[no-]two-batch-overlap" },
  { "NVFP4 experts", "expert_weights", "infer", "workload.expert_weight_dtype",
    "--expert-weights" },
  { "layers offloaded to the host", "offload", "infer", "workload.offload", "--offload" },
  { "their layer count", "offload_layers", "infer", "workload.offload_layers", nil },
  { "host bandwidth", "host_bw", "infer train", "hardware.host_mem_bw", "--host-bw" },
  { "MTP drafts", "mtp", "infer", "workload.mtp", "--mtp" },
  { "NICs shared by GPUs", "nics", "comm train infer", "hardware.nics_per_node", "--nics" },
  { "NCCL's protocol by size", nil, nil, nil, "LL128" },
  { "PCIe through the CPU or a switch", nil, nil, nil, "PCIe through the CPU or a switch" },
}

local n = 0
for _, r in ipairs(ROWS) do
  if r[2] then
    for _ in r[3]:gmatch("%S+") do n = n + 1 end
    n = n + 1
  end
  if r[4] then n = n + 1 end
  if r[5] then n = n + 1 end
end
t.plan(n)

for _, r in ipairs(ROWS) do
  local what, name, cmds, field, said = r[1], r[2], r[3], r[4], r[5]
  if name then
    -- one name: the flag is the key with - for _ (options.flag), taken
    -- on the command line and in Lua by each command alike
    for cmd in cmds:gmatch("%S+") do
      t.ok(options.takes(cmd, name, "cli") and options.takes(cmd, name, "lua"),
        string.format("%s: %s takes %s and Lua's %s", what, cmd, options.flag(name), name))
    end
    local base = options.flag(name):sub(3)
    t.ok(cli:find("--" .. base, 1, true) or cli:find("--[no-]" .. base, 1, true)
      or cli:find("--no-" .. base, 1, true),
      string.format("%s: docs/cli.md lists %s", what, options.flag(name)))
  end
  if field then
    local sec, key = field:match("^(%w+)%.([%w_]+)$")
    local rec = validate.case_schema.fields[sec]
    t.ok(rec ~= nil and rec.fields[key] ~= nil and (schema:find("`" .. field .. "`", 1, true)
      or schema:find('"' .. key .. '"', 1, true)) ~= nil,
      string.format("%s: the case field %s, in SCHEMA.md", what, field))
  end
  if said then
    t.ok(flat:find(said, 1, true) ~= nil, string.format("%s: the README says '%s'", what, said))
  end
end
