
if redis.call('SREM', KEYS[2], ARGV[1]) == 0 then return 0 end
local n = redis.call('ZCARD', KEYS[3])
for i = 0, n - 1, 1000 do
  local r = redis.call('ZRANGE', KEYS[3], i, i + 999, 'WITHSCORES')
  local args = {}
  for j = 1, #r, 2 do
    args[#args + 1] = r[j + 1]
    args[#args + 1] = r[j]
  end
  if #args > 0 then redis.call('ZADD', KEYS[1], unpack(args)) end
end
redis.call('SPUBLISH', ARGV[2], 'resumed ' .. ARGV[1])
return 1
