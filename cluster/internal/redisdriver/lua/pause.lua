
if redis.call('SADD', KEYS[2], ARGV[1]) == 0 then return 0 end
local n = redis.call('ZCARD', KEYS[3])
for i = 0, n - 1, 1000 do
  local ids = redis.call('ZRANGE', KEYS[3], i, i + 999)
  if #ids > 0 then redis.call('ZREM', KEYS[1], unpack(ids)) end
end
return 1
