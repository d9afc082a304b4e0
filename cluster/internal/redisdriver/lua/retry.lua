
local kind, stored = stored_kind()
if kind == nil then return 'missing' end
if kind == false then return redis.error_reply('KIND ' .. stored) end
local st = task_state(TASK, INDEX, ARGV[1])
if st ~= 'dead' then return st end
index_rem(INDEX, 'dead', ARGV[1])
redis.call('HSET', TASK, 'attempt', '0', 'lost', '0')
make_pending(INDEX, ARGV[2], kind, now(), ARGV[1])
return 'ok'
