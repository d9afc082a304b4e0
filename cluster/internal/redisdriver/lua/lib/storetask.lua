
local function store_task(task, mark, ix, id, kind, payload, due, maxr, fixed, meta)
  local sum = redis.sha1hex(kind .. '\0' .. due .. '\0' .. payload)
  if fixed == '1' then
    local d = redis.call('GET', mark)
    if d then
      if d == sum then return 'done' end
      return 'conflict'
    end
    local f = redis.call('HMGET', task, 'sum', 'fin', 'kind')
    if f[1] then
      if not f[2] then
        if f[1] == sum then return 'exists' end
        return 'conflict'
      end
      if f[3] ~= kind then return 'conflict' end
      index_rem(ix, 'done', id)
      redis.call('DEL', task)
    end
  end
  if meta == '' then
    redis.call('HSET', task, 'kind', kind, 'payload', payload, 'due', due,
      'max', maxr, 'attempt', '0', 'lost', '0', 'sum', sum, 'fixed', fixed)
  else
    redis.call('HSET', task, 'kind', kind, 'payload', payload, 'due', due,
      'max', maxr, 'attempt', '0', 'lost', '0', 'sum', sum, 'fixed', fixed, 'meta', meta)
  end
  return 'created'
end
