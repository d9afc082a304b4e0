
local kind, stored = stored_kind()
if kind == nil then return 'missing' end
if kind == false then return redis.error_reply('KIND ' .. stored) end
local st = task_state(TASK, INDEX, ARGV[1])
if st ~= 'dead' and st ~= 'done' then return st end
index_rem(INDEX, st, ARGV[1])
redis.call('DEL', TASK)
return 'ok'
