-- Fuzz target: what `gpuplan merge` reads.  Two true shards of one plan
-- (JSON lines), then generated damage: a field of a line set to a value
-- from the fuzz pools, removed or added (fuzz.lua mutate_table), the text
-- of a file cut, spliced or its bytes changed (mutate_text), lines dropped,
-- repeated, moved between the shards or swapped, a shard given twice, a
-- third file.  Properties: those of every command line (fuzz.lua
-- cli_check: exit 0, 1 or 2, one clean "gpuplan: ..." line -- never a
-- line of merge.lua, plan.lua or sweep.lua -- no nan or inf in an
-- answer); an error names the shard (its file, and for a line's fault its
-- file:line); where the damage only moved, dropped or repeated whole lines
-- or files, what merge accepts prints rows of the true shards' results
-- only.
local t = require "tap"
local fz = require "fuzz"
local cjson = require("cjson").new()
cjson.decode_invalid_numbers(true)

local scratch = t.scratch()

-- merge's checks cover the fields a plan row declares (gpuplan.results),
-- no fewer: a field added there and not to merge's list would be read
-- unchecked (by its unit only); one in merge's list not declared would be
-- refused in every true shard.
do
  local merge = require "gpuplan.cmd.merge"
  local declared = {}
  for _, f in ipairs(require("gpuplan.results").FIELDS) do
    if f.results.plan then declared[f.name] = true end
  end
  local missing = {}
  for _, k in ipairs(fz.keys(merge.RESULT)) do
    if not declared[k] then missing[#missing + 1] = k end
  end
  t.is(table.concat(missing, " "), "", "merge checks only fields gpuplan.results declares for plan")
end

-- The true shards.
local shards = {}
for k = 1, 2 do
  local code, so, se = fz.cli_run({ "plan", "llama3-8b", "--gpu", "h100-sxm,b200", "--gpus", "8,16",
                                    "--tokens", "1e10", "--top", "3", "--shard", k .. "/2",
                                    "--format", "json" }, scratch)
  assert(code == 0, se)
  local lines = {}
  for line in so:gmatch("[^\n]+") do lines[#lines + 1] = line end
  shards[k] = lines
end
-- The rows of every true result (the three of each shard).  merge prints
-- at most the --top each shard kept (more would not be the search's
-- best), so each shard's rows come from a merge of it with the other
-- shard's plan line alone (a shard of no results).
local rows = {}
for k = 1, 2 do
  local files = {}
  for j = 1, 2 do
    local lines = j == k and shards[j] or { shards[j][1] }
    files[j] = scratch.put("rows" .. k .. j, table.concat(lines, "\n") .. "\n")
  end
  local code, so, se = fz.cli_run({ "merge", files[1], files[2], "--top", "3" }, scratch)
  assert(code == 0, se)
  local n = 0
  for line in so:gmatch("[^\n]+") do
    -- the words of a row (its padding follows the widest row shown)
    if line:find("^[%w-]+ +%d+ +TP") then rows[line:gsub("%s+", " ")] = true; n = n + 1 end
  end
  assert(n == 3, "shard " .. k .. ": " .. n .. " rows, not its 3")
end

-- Damage to a list of lines (a copy); the second value is true when a
-- line's content changed (not only its place).
local function damage(lines, other)
  local l = {}
  for i, x in ipairs(lines) do l[i] = x end
  local op = math.random(8)
  local i = math.random(#l)
  if op <= 3 then
    local ok, v = pcall(cjson.decode, l[i])
    if ok and type(v) == "table" then
      l[i] = fz.json(fz.mutate_table(v, cjson.null, { "kind", "gpus", "score", "shard", "x",
                                                      "fingerprint", "top", "stats" }), cjson.null)
    end
    return l, true
  elseif op == 4 then
    l[i] = fz.mutate_text(l[i])
    return l, true
  elseif op == 5 then
    table.remove(l, i)
  elseif op == 6 then
    table.insert(l, i, l[math.random(#l)])
  elseif op == 7 then
    l[i] = other[math.random(#other)]
  else
    local j = math.random(#l)
    l[i], l[j] = l[j], l[i]
  end
  return l, false
end

local n = fz.start("merge", 300)
local answered = 0
for _ = 1, n do
  local a, b, changed = shards[1], shards[2], false
  for _ = 1, math.random(2) do
    local c
    if math.random(2) == 1 then a, c = damage(a, shards[2]) else b, c = damage(b, shards[1]) end
    changed = changed or c
  end
  local files = { scratch.put("s1.jsonl", table.concat(a, "\n") .. "\n"),
                  scratch.put("s2.jsonl", table.concat(b, "\n") .. "\n") }
  local r = math.random(12)
  if r == 1 then files[2] = files[1]
  elseif r == 2 then files[3] = scratch.put("s3.jsonl", fz.mutate_text(table.concat(a, "\n")))
    changed = true
  elseif r == 3 then files[1] = scratch.put("s1.jsonl", fz.mutate_text(table.concat(a, "\n")))
    changed = true
  elseif r == 4 then table.remove(files) end
  local argv = { "merge", table.unpack(files) }
  if math.random(4) == 1 then argv[#argv + 1] = "--format"; argv[#argv + 1] = "json" end
  local shown = table.concat(a, "\n") .. "\n---\n" .. table.concat(b, "\n")
  local code, so, se = fz.cli_run(argv, scratch)
  fz.cli_check(shown, code, so, se)
  if code == 1 and not (se:find("^gpuplan: merge: [^\n]*s%d%.jsonl") or
                        se:find("^gpuplan: merge: shards? [%d/, ]+")) then
    fz.finding("an error that names no shard: " .. se, shown)
  end
  if code == 0 then
    answered = answered + 1
    if argv[#argv] ~= "json" and not changed then
      for line in so:gmatch("[^\n]+") do
        if line:find("^[%w-]+ +%d+ +TP") and not rows[line:gsub("%s+", " ")] then
          fz.finding("a row no true shard had: " .. line, shown)
        end
      end
    end
  end
end
t.diag(string.format("%d of %d damaged shard pairs merged (exit 0)", answered, n))
scratch.remove()
fz.finish()
t.done_testing()
