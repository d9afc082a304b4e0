
local t = now()
local id = ARGV[1]
if ARGV[2] == '0' then
  local left = redis.call('ZREM', KEYS[1], id)
  redis.call('ZREM', KEYS[2], id)
  redis.call('HDEL', KEYS[4], id)
  redis.call('DEL', KEYS[5])
  return {t, tostring(left)}
end
local exp = string.format('%.0f', tonumber(t) + tonumber(ARGV[2]))
local ms = math.ceil(tonumber(ARGV[2]) / 1000)
local changed = 0
if ARGV[3] == '1' then
  changed = redis.call('ZADD', KEYS[1], exp, id)
  redis.call('HSET', KEYS[4], id, ARGV[4])
else
  changed = redis.call('ZREM', KEYS[1], id)
  redis.call('HDEL', KEYS[4], id)
end
local nf = tonumber(ARGV[5])
local fields = {'heartbeat', t, 'expires', exp}
for i = 6, 5 + nf do fields[#fields + 1] = ARGV[i] end
redis.call('HSET', KEYS[5], unpack(fields))
redis.call('PEXPIRE', KEYS[5], ms)
redis.call('ZADD', KEYS[2], exp, id)
local j = 6
for i = 6 + nf, #ARGV, 3 do
  local pkey = KEYS[j]
  j = j + 1
  redis.call('HSET', pkey, 'trigger', ARGV[i + 1], 'next', ARGV[i + 2])
  if redis.call('PTTL', pkey) < ms then redis.call('PEXPIRE', pkey, ms) end
  redis.call('ZADD', KEYS[3], 'GT', exp, ARGV[i])
end
local gone = redis.call('ZRANGE', KEYS[1], '-inf', t, 'BYSCORE')
if #gone > 0 then
  redis.call('HDEL', KEYS[4], unpack(gone))
  changed = 1
end
for i = 1, 3 do redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', t) end
local out = {t, tostring(changed)}
local live = redis.call('ZRANGE', KEYS[1], 0, -1)
if #live == 0 then return out end
local kinds = redis.call('HMGET', KEYS[4], unpack(live))
for i, m in ipairs(live) do
  out[#out + 1] = m
  out[#out + 1] = kinds[i] or ''
end
return out
