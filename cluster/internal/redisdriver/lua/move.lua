
local kind, stored = stored_kind()
if kind == nil then return 'missing' end
if kind == false then return redis.error_reply('KIND ' .. stored) end
local st = task_state(TASK, INDEX, ARGV[1])
if st ~= 'pending' then return st end
local t = ARGV[2]
if t == 'now' then t = now() end
if ARGV[3] == '1' then redis.call('HSET', TASK, 'due', t) end
make_pending(INDEX, ARGV[4], kind, t, ARGV[1])
return 'ok'
