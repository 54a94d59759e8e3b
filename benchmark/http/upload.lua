-- wrk script: POST an upload body on every request (keep-alive).
-- The body is read from a file when UPLOAD_FILE (env) or the first script
-- argument names one; otherwise it is built here, UPLOAD_SIZE bytes
-- (env, or the second script argument; default 1 MiB). Usage:
--   wrk -t1 -c50 -d10s -s upload.lua http://127.0.0.1:PORT/upload -- '' 1048576
local function read_file(name)
  local f = assert(io.open(name, "rb"))
  local data = f:read("*a")
  f:close()
  return data
end

local function build(size)
  -- 1 KiB pattern repeated: cheap to build, not all one byte.
  local pattern = {}
  for i = 0, 1023 do
    pattern[#pattern + 1] = string.char(97 + (i % 26))
  end
  local kib = table.concat(pattern)
  local body = string.rep(kib, math.floor(size / 1024))
  return body .. string.sub(kib, 1, size % 1024)
end

init = function(args)
  local file = args[1]
  if file == nil or file == "" then file = os.getenv("UPLOAD_FILE") end
  local body
  if file ~= nil and file ~= "" then
    body = read_file(file)
  else
    local size = tonumber(args[2]) or tonumber(os.getenv("UPLOAD_SIZE") or "") or 1048576
    body = build(size)
  end
  req = wrk.format("POST", wrk.path, { ["Content-Type"] = "application/octet-stream" }, body)
end

request = function()
  return req
end
