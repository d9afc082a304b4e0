
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then return 0 end
for i = 3, 6 do
  if redis.call('EXISTS', KEYS[i]) == 1 then return 0 end
end
return redis.call('SREM', KEYS[1], ARGV[1])
