
local f = redis.call('HMGET', TASK, 'kind', 'sum', 'fin')
local kind = f[1]
if kind and wrong_kind(kind) then return redis.error_reply('KIND ' .. kind) end
local leased = redis.call('ZREM', STATE.running, ARGV[1])
redis.call('ZREM', STATE.pending, ARGV[1])
redis.call('ZREM', STATE.dead, ARGV[1])
if not kind then return {0, leased} end
for _, st in ipairs({'pending', 'running', 'dead'}) do
  redis.call('ZREM', INDEX[st], ARGV[1])
end
if f[3] then
  index_rem(INDEX, 'done', ARGV[1])
  redis.call('DEL', TASK)
  return {1, 0}
end
if string.sub(kind, 1, 1) == '@' then
  redis.call('SET', MARK, f[2], 'PX', ARGV[2])
end
local t = now()
if tonumber(ARGV[5]) > 0 then add_run(TASK, 'canceled', t, '') end
keep_done(TASK, ARGV[1], kind, t, ARGV[5])
publish_canceled(ARGV[3], ARGV[1])
return {1, leased}
