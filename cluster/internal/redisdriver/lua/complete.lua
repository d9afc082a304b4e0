
local f = redis.call('HMGET', TASK, 'owner', 'fixed', 'sum', 'kind', 'next', 'start')
if f[1] ~= ARGV[2] then return 'lost' end
if wrong_kind(f[4]) then return redis.error_reply('KIND ' .. f[4]) end
index_rem(INDEX, 'running', ARGV[1])
if KEYS[13] then count_run(KEYS[13], ARGV[6], f[4], f[5], f[6]) end
if f[2] == '1' then redis.call('SET', MARK, f[3], 'PX', ARGV[3]) end
if tonumber(ARGV[5]) < 1 then
  -- no done record is kept: the task goes, and its run history with it
  redis.call('DEL', TASK)
  return 'done'
end
local t = now()
add_run(TASK, 'succeeded', t, '')
keep_done(TASK, ARGV[1], f[4], t, ARGV[5])
return 'done'
