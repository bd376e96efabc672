-- make docs: write the references generated from the declarations
-- (gpuplan.docgen) -- docs/cli.md, docs/lua.md, man/gpuplan.1,
-- completion/gpuplan.bash -- under DIR (default: the source tree).
--   ./gpuplan run tools/docs.lua [DIR]
local docgen = require "gpuplan.docgen"
local files = require "gpuplan.files"
local lfs = require "lfs"

local dir = arg[1] or "."
for _, f in ipairs(docgen.files()) do
  local path = dir .. "/" .. f[1]
  local sub = path:match("^(.*)/[^/]*$")
  if sub and not lfs.attributes(sub) then assert(lfs.mkdir(sub)) end
  files.write(path, f[2])
  print("wrote " .. path)
end
