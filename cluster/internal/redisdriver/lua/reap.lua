
local t = now()
local why = 'cluster: lease expired: the node running the task stopped, stalled or lost Redis'
local out = {}
local tl = KEYS[6 + 5 * (#ARGV - 3) + 1]
for j = 4, #ARGV do
  local id = ARGV[j]
  local k, ix = task_keys(j - 3)
  local s = redis.call('ZSCORE', STATE.running, id)
  local kind = redis.call('HGET', k, 'kind')
  if s and tonumber(s) <= tonumber(t) and not kind then
    redis.call('ZREM', STATE.running, id)
  elseif s and tonumber(s) <= tonumber(t) and names_kind(ix, kind) then
    index_rem(ix, 'running', id)
    if tl then
      local r = redis.call('HMGET', k, 'next', 'start')
      count_run(tl, ARGV[3], kind, r[1], r[2], 'l')
    end
    add_run(k, 'lost', t, why)
    redis.call('HDEL', k, 'owner', 'next', 'start')
    local lost = redis.call('HINCRBY', k, 'lost', 1)
    redis.call('HSET', k, 'err', why)
    if lost > tonumber(ARGV[2]) then
      index_add(ix, 'dead', kind, t, id)
      out[#out + 1] = id
      out[#out + 1] = 'dead'
    else
      make_pending(ix, ARGV[1], kind, t, id)
      out[#out + 1] = id
      out[#out + 1] = 'pending'
    end
  end
end
return out
