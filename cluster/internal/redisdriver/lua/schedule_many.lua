
local nkinds = tonumber(ARGV[2])
local kinds = {}
for i = 1, nkinds do
  local k = 6 + 4 * (i - 1)
  kinds[i] = {name = ARGV[2 + i], paused = nil, zadd = {},
    ix = {pending = KEYS[k + 1], running = KEYS[k + 2], dead = KEYS[k + 3], done = KEYS[k + 4]}}
end
local k, base = 6 + 4 * nkinds, 2 + nkinds
local res, notice, pending = {}, {}, {}
for j = 1, (#ARGV - base) / 7 do
  local a = base + 7 * (j - 1)
  local id, kind, due, fixed = ARGV[a + 1], kinds[tonumber(ARGV[a + 2])], ARGV[a + 4], ARGV[a + 6]
  local task, mark = KEYS[k + 1], nil
  k = k + 1
  if fixed == '1' then
    mark = KEYS[k + 1]
    k = k + 1
  end
  local r = store_task(task, mark, kind.ix, id, kind.name, ARGV[a + 3], due, ARGV[a + 5], fixed, ARGV[a + 7])
  if r == 'created' then
    if kind.paused == nil then
      kind.paused = redis.call('SISMEMBER', PAUSED, kind.name) == 1
      redis.call('SADD', KINDS, kind.name)
    end
    kind.zadd[#kind.zadd + 1] = due
    kind.zadd[#kind.zadd + 1] = id
    if kind.paused then
      redis.call('ZREM', STATE.pending, id)
    else
      pending[#pending + 1] = due
      pending[#pending + 1] = id
      notice[#notice + 1] = due .. ' ' .. kind.name .. ' ' .. #id .. ' ' .. id
    end
  end
  res[j] = r
end
for _, kind in ipairs(kinds) do
  if #kind.zadd > 0 then redis.call('ZADD', kind.ix.pending, unpack(kind.zadd)) end
end
if #pending > 0 then redis.call('ZADD', STATE.pending, unpack(pending)) end
if #notice > 0 then publish_many(ARGV[1], notice) end
return res
