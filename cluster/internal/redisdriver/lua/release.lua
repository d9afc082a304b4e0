
local f = redis.call('HMGET', TASK, 'owner', 'next', 'kind')
if f[1] ~= ARGV[2] then return 'lost' end
if wrong_kind(f[3]) then return redis.error_reply('KIND ' .. f[3]) end
local t = now()
index_rem(INDEX, 'running', ARGV[1])
add_run(TASK, 'handed_back', t, '')
redis.call('HDEL', TASK, 'owner', 'next', 'start')
make_pending(INDEX, ARGV[3], f[3], f[2] or t, ARGV[1])
return 'released'
