
local f = redis.call('HMGET', TASK, 'owner', 'max', 'kind', 'next', 'start')
if f[1] ~= ARGV[2] then return 'lost' end
if wrong_kind(f[3]) then return redis.error_reply('KIND ' .. f[3]) end
local t = now()
index_rem(INDEX, 'running', ARGV[1])
if KEYS[13] then count_run(KEYS[13], ARGV[8], f[3], f[4], f[5], 'f') end
add_run(TASK, ARGV[7], t, ARGV[3])
redis.call('HDEL', TASK, 'owner', 'next', 'start')
local a = redis.call('HINCRBY', TASK, 'attempt', 1)
redis.call('HSET', TASK, 'err', ARGV[3])
if ARGV[6] == '1' or a > tonumber(f[2]) then
  index_add(INDEX, 'dead', f[3], t, ARGV[1])
  return 'dead'
end
make_pending(INDEX, ARGV[5], f[3], string.format('%.0f', tonumber(t) + tonumber(ARGV[4])), ARGV[1])
return 'retry'
