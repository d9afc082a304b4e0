
for i = 2, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    if redis.call('EXISTS', KEYS[1]) == 1 then return {'stray', KEYS[i]} end
    return {'old', KEYS[i]}
  end
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'version', ARGV[1], 'partitions', ARGV[2])
  return {'created', ''}
end
local v = redis.call('HMGET', KEYS[1], 'version', 'partitions')
if v[1] ~= ARGV[1] then return {'version', v[1] or ''} end
if v[2] ~= ARGV[2] then return {'partitions', v[2] or ''} end
return {'ok', ''}
