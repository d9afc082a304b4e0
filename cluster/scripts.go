package cluster

import "github.com/redis/go-redis/v9"

// The Lua scripts below are every state change of the store; each runs
// atomically in Redis, so no two replicas ever see a half-made change.
//
// Times are microseconds since the Unix epoch, written as integer strings.
// A task's hash keeps the due time it was scheduled for; its score in the
// pending set is when it is to run next (later after a failure).
// Due times come from the scheduling replica's clock; lease expiries and the
// times the scripts stamp themselves come from Redis's own clock (TIME), so
// the lease of a task never depends on whose clock is right.
//
// Every key a script touches shares the store's prefix, whose hash tag keeps
// them in one Redis Cluster slot. Scripts that work on many tasks build the
// task keys from the prefix they are given.

// now is the Redis server's time in microseconds, as an integer string.
const luaNow = `
local function now()
  local t = redis.call('TIME')
  return string.format('%.0f', tonumber(t[1]) * 1000000 + tonumber(t[2]))
end
`

// scheduleScript stores a task unless its ID is taken.
// KEYS: pending, task, done. ARGV: id, kind, payload, due, max retries,
// fixed ("1" when the caller chose the ID), channel.
// Returns "created", "exists" (the same task is stored), "done" (the same
// task already ran) or "conflict" (the ID holds a different task).
var scheduleScript = redis.NewScript(`
local sum = redis.sha1hex(ARGV[2] .. '\0' .. ARGV[4] .. '\0' .. ARGV[3])
local d = redis.call('GET', KEYS[3])
if d then
  if d == sum then return 'done' end
  return 'conflict'
end
local s = redis.call('HGET', KEYS[2], 'sum')
if s then
  if s == sum then return 'exists' end
  return 'conflict'
end
redis.call('HSET', KEYS[2], 'kind', ARGV[2], 'payload', ARGV[3], 'due', ARGV[4],
  'max', ARGV[5], 'attempt', '0', 'sum', sum, 'fixed', ARGV[6])
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
redis.call('PUBLISH', ARGV[7], ARGV[4] .. ' ' .. ARGV[2] .. ' ' .. ARGV[1])
return 'created'
`)

// loadScript lists pending tasks due by a time, with their kinds.
// KEYS: pending. ARGV: max due, limit, task key prefix.
// Returns id, due, kind triples in due order.
var loadScript = redis.NewScript(`
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for i = 1, #ids, 2 do
  local kind = redis.call('HGET', ARGV[3] .. ids[i], 'kind')
  out[#out + 1] = ids[i]
  out[#out + 1] = ids[i + 1]
  out[#out + 1] = kind or ''
end
return out
`)

// claimScript moves a due task from pending to leased, for one owner.
// KEYS: pending, lease, task. ARGV: id, expected due, lease (µs), owner
// token, channel. A won claim publishes "claimed <id>", so that the other
// nodes drop the task from their windows without claiming it in vain.
// Returns {0} if the task is not pending (claimed elsewhere, canceled or
// done), {2, due, kind} if it is pending for a later due time than expected, or
// {1, kind, payload, due, attempt} once claimed.
var claimScript = redis.NewScript(luaNow + `
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not s then return {0} end
if tonumber(s) > tonumber(ARGV[2]) then return {2, s, redis.call('HGET', KEYS[3], 'kind') or ''} end
local f = redis.call('HMGET', KEYS[3], 'kind', 'payload', 'due', 'attempt')
redis.call('ZREM', KEYS[1], ARGV[1])
if not f[1] then return {0} end
redis.call('ZADD', KEYS[2], string.format('%.0f', tonumber(now()) + tonumber(ARGV[3])), ARGV[1])
redis.call('HSET', KEYS[3], 'owner', ARGV[4])
redis.call('PUBLISH', ARGV[5], 'claimed ' .. ARGV[1])
return {1, f[1], f[2], f[3], f[4]}
`)

// extendScript pushes back the lease of the tasks an owner still holds.
// KEYS: lease. ARGV: lease (µs), task key prefix, then id, token pairs.
// Returns the IDs whose lease is lost.
var extendScript = redis.NewScript(luaNow + `
local exp = string.format('%.0f', tonumber(now()) + tonumber(ARGV[1]))
local lost = {}
for i = 3, #ARGV, 2 do
  local id = ARGV[i]
  if redis.call('HGET', ARGV[2] .. id, 'owner') == ARGV[i + 1] and redis.call('ZSCORE', KEYS[1], id) then
    redis.call('ZADD', KEYS[1], 'XX', exp, id)
  else
    lost[#lost + 1] = id
  end
end
return lost
`)

// completeScript removes a task that ran, leaving a done marker when the
// caller chose its ID. KEYS: lease, task, done. ARGV: id, owner token,
// retention (ms). Returns 1, or 0 if the owner no longer holds the task.
var completeScript = redis.NewScript(`
if redis.call('HGET', KEYS[2], 'owner') ~= ARGV[2] then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
local f = redis.call('HMGET', KEYS[2], 'fixed', 'sum')
if f[1] == '1' then redis.call('SET', KEYS[3], f[2], 'PX', ARGV[3]) end
redis.call('DEL', KEYS[2])
return 1
`)

// failScript records a failed run: back to pending for a retry, or dead.
// KEYS: lease, pending, dead, task. ARGV: id, owner token, error, retry due,
// channel. Returns "retry", "dead", or "lost" if the owner no longer holds
// the task.
var failScript = redis.NewScript(luaNow + `
if redis.call('HGET', KEYS[4], 'owner') ~= ARGV[2] then return 'lost' end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[4], 'owner')
local a = redis.call('HINCRBY', KEYS[4], 'attempt', 1)
redis.call('HSET', KEYS[4], 'err', ARGV[3])
local f = redis.call('HMGET', KEYS[4], 'max', 'kind')
if a > tonumber(f[1]) then
  redis.call('ZADD', KEYS[3], now(), ARGV[1])
  return 'dead'
end
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
redis.call('PUBLISH', ARGV[5], ARGV[4] .. ' ' .. f[2] .. ' ' .. ARGV[1])
return 'retry'
`)

// releaseScript hands a claimed task back to pending, due now (Redis
// time: it was due when claimed), without counting an attempt.
// KEYS: lease, pending, task. ARGV: id, owner token, channel. Returns 1, or
// 0 if the owner no longer holds the task.
var releaseScript = redis.NewScript(luaNow + `
if redis.call('HGET', KEYS[3], 'owner') ~= ARGV[2] then return 0 end
local t = now()
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[3], 'owner')
redis.call('ZADD', KEYS[2], t, ARGV[1])
redis.call('PUBLISH', ARGV[3], t .. ' ' .. redis.call('HGET', KEYS[3], 'kind') .. ' ' .. ARGV[1])
return 1
`)

// reapScript returns tasks whose lease expired to pending, due now (Redis
// time), counting the lost run as a failed attempt; past the retry limit they
// go dead. KEYS: lease, pending, dead. ARGV: task key prefix, limit, channel.
// Returns how many leases it found expired.
var reapScript = redis.NewScript(luaNow + `
local t = now()
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', t, 'LIMIT', 0, tonumber(ARGV[2]))
for _, id in ipairs(ids) do
  local k = ARGV[1] .. id
  redis.call('ZREM', KEYS[1], id)
  if redis.call('EXISTS', k) == 1 then
    redis.call('HDEL', k, 'owner')
    local a = redis.call('HINCRBY', k, 'attempt', 1)
    redis.call('HSET', k, 'err', 'cluster: lease expired: the replica running the task stopped or lost Redis')
    local f = redis.call('HMGET', k, 'max', 'kind')
    if a > tonumber(f[1]) then
      redis.call('ZADD', KEYS[3], t, id)
    else
      redis.call('ZADD', KEYS[2], t, id)
      redis.call('PUBLISH', ARGV[3], t .. ' ' .. f[2] .. ' ' .. id)
    end
  end
end
return #ids
`)

// cancelScript removes a task in any state. KEYS: pending, lease, dead, task.
// ARGV: id. Returns 1 if a task was removed.
var cancelScript = redis.NewScript(`
local n = redis.call('DEL', KEYS[4])
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
return n
`)

// membersScript renews a node's membership and returns the live nodes, or,
// with a zero time to live, removes it. KEYS: nodes. ARGV: name, time to
// live (µs).
var membersScript = redis.NewScript(luaNow + `
local t = tonumber(now())
if ARGV[2] == '0' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return {}
end
redis.call('ZADD', KEYS[1], string.format('%.0f', t + tonumber(ARGV[2])), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%.0f', t))
return redis.call('ZRANGE', KEYS[1], 0, -1)
`)
