
local function add_run(key, outcome, t, err)
  local f = redis.call('HMGET', key, 'owner', 'start', 'hist')
  local node = ''
  if f[1] then node = string.match(f[1], '^(.*):[^:]*$') or f[1] end
  local h = {}
  if f[3] then h = cjson.decode(f[3]) end
  h[#h + 1] = {n = node, s = f[2] or t, e = t, o = outcome, x = string.sub(err, 1, 2048)}
  while #h > 10 do table.remove(h, 1) end
  redis.call('HSET', key, 'hist', cjson.encode(h))
end
