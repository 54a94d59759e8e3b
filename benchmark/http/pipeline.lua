-- wrk script: HTTP/1.1 pipelining. Every write carries `depth` GET requests
-- (default 16); wrk counts each response. Usage:
--   wrk -t1 -c100 -d5s -s pipeline.lua http://127.0.0.1:PORT/ -- 16
local depth = 16

init = function(args)
  depth = tonumber(args[1]) or depth
  local r = {}
  for i = 1, depth do
    r[i] = wrk.format("GET", wrk.path)
  end
  req = table.concat(r)
end

request = function()
  return req
end
