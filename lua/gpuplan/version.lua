-- A runtime's or library's release as written, "X.Y" or "X.Y.Z", with an
-- optional leading "v" ("v0.5.0", as a git tag names it) and an optional
-- release candidate "rcN" after it ("0.11.0rc2", "1.0.0rc4", as PyPI and
-- the tags name them); one reader for every release rule (gpuplan.predict.
-- infer's vLLM, SGLang and TensorRT-LLM rules, gpuplan.infer's vllm_version,
-- gpuplan.comm's NCCL releases, the case reader's source.version), which
-- each held a pattern of its own.
local M = {}

-- The parts of release s: { major, minor, patch (0 where absent), parts
-- (2 for "X.Y", 3 for "X.Y.Z"), rc (nil, or the candidate's number),
-- series = "X.Y" as written, release = "X.Y" or "X.Y.Z" as written
-- (without a "v" or what follows), plain = true when s is exactly "X.Y"
-- or "X.Y.Z" (no "v", no rc, nothing after) }; nil where s does not begin
-- with MAJOR.MINOR.  Text after the release (".post1", "+cu121") is left
-- out of the numbers, and plain says it was there.
function M.parse(s)
  if type(s) ~= "string" then return nil end
  local v, maj, min, dot, pat, rest = s:match("^(v?)(%d+)%.(%d+)(%.?)(%d*)(.*)$")
  if not maj then return nil end
  -- "0.4." has no patch: its dot is text after the release
  if dot == "." and pat == "" then rest = "." .. rest end
  local rc = rest:match("^rc(%d+)")
  return { major = tonumber(maj), minor = tonumber(min), patch = tonumber(pat) or 0,
           parts = pat == "" and 2 or 3, rc = rc and tonumber(rc), series = maj .. "." .. min,
           release = maj .. "." .. min .. (pat ~= "" and "." .. pat or ""),
           plain = v == "" and rest == "" }
end

-- Whether s is a release written plain, exactly "X.Y" or "X.Y.Z" (no
-- "v", no rc, nothing after): the form a case's source.version and a
-- user's --vllm-version (X.Y.Z only) and --nccl take.
function M.plain(s)
  local p = M.parse(s)
  return p ~= nil and p.plain
end

-- Release s as one number, MAJOR x 10000 + MINOR x 100 + PATCH ("0.4.2" ->
-- 402, NCCL's NCCL_VERSION_CODE form), nil where s is no release.  A
-- candidate's number is its release's, and a minor or patch of 100 or
-- more runs into the part above (gpuplan.comm refuses such an NCCL
-- release): order releases with M.compare.
function M.number(s)
  local p = type(s) == "table" and s or M.parse(s)
  return p and p.major * 10000 + p.minor * 100 + p.patch
end

-- -1, 0 or 1 as release a is before, the same as or after release b
-- (strings or M.parse's tables); a release candidate comes before its
-- release ("0.11.0rc1" < "0.11.0") and after the one before it.  nil
-- where either is no release.  (No input reaches a rule with a
-- candidate today: the case reader and --vllm-version take M.plain's
-- forms only.  Were one let in, note that a rule "before X" keyed on a
-- change that shipped in X would call X's candidates, cut from the
-- branch that already holds the change, "before".)
function M.compare(a, b)
  local p = type(a) == "table" and a or M.parse(a)
  local q = type(b) == "table" and b or M.parse(b)
  if not p or not q then return nil end
  -- part by part, not by M.number: its 100s carry a patch of 100 into
  -- the minor ("0.4.100" would equal "0.5.0") and a minor of 100 into
  -- the major
  for _, k in ipairs { "major", "minor", "patch" } do
    if p[k] ~= q[k] then return p[k] < q[k] and -1 or 1 end
  end
  -- a final release ranks above every candidate of it
  local rx, ry = p.rc or math.huge, q.rc or math.huge
  if rx == ry then return 0 end
  return rx < ry and -1 or 1
end

-- Whether release s came before release ref ("0.8.0"): true or false, nil
-- where s is no release.
function M.before(s, ref)
  local c = M.compare(s, ref)
  if c == nil then return nil end
  return c < 0
end

return M
