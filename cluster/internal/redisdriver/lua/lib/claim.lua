
local s = redis.call('ZSCORE', STATE.pending, ARGV[1])
if not s then return {0} end
if tonumber(s) > tonumber(ARGV[2]) then return {2, s, redis.call('HGET', TASK, 'kind') or ''} end
local t = now()
if tonumber(s) > tonumber(t) then return {3, s, redis.call('HGET', TASK, 'kind') or '', t} end
local f = redis.call('HMGET', TASK, 'kind', 'payload', 'due', 'attempt', 'lost', 'meta')
if f[1] and wrong_kind(f[1]) then return redis.error_reply('KIND ' .. f[1]) end
redis.call('ZREM', STATE.pending, ARGV[1])
if not f[1] then return {0} end
if redis.call('SISMEMBER', PAUSED, f[1]) == 1 then
  -- left waiting in its kind's index, as Pause leaves it
  redis.call('ZADD', INDEX.pending, s, ARGV[1])
  redis.call('SADD', KINDS, f[1])
  return {0}
end
redis.call('ZREM', INDEX.pending, ARGV[1])
index_add(INDEX, 'running', f[1], string.format('%.0f', tonumber(t) + tonumber(ARGV[3])), ARGV[1])
redis.call('HSET', TASK, 'owner', ARGV[4], 'next', s, 'start', t)
-- "claimed" makes the other nodes that hear the channel drop the task
-- from their windows. The last argument is 1 if the claimer hears the
-- channel itself: if it is then the channel's one listener on this
-- server, no other node has a use for the notice, and none is sent
if ARGV[#ARGV] ~= '1' or redis.call('PUBSUB', 'SHARDNUMSUB', ARGV[5])[2] ~= 1 then
  publish_claimed(ARGV[5], ARGV[1])
end
return {1, f[1], f[2], f[3], f[4], f[5] or '0', f[6] or ''}
