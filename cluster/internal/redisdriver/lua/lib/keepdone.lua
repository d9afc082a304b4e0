
local function keep_done(key, id, kind, t, max)
  if tonumber(max) < 1 then
    redis.call('DEL', key)
    return
  end
  redis.call('HDEL', key, 'owner', 'next', 'start')
  redis.call('HSET', key, 'fin', t)
  index_add(INDEX, 'done', kind, t, id)
end
