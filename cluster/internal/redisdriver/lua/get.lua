
local kind = redis.call('HGET', KEYS[6], 'kind')
if not kind then return {} end
local st = 'pending'
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then st = 'running'
elseif redis.call('ZSCORE', KEYS[3], ARGV[1]) then st = 'dead'
elseif redis.call('ZSCORE', KEYS[4], ARGV[1]) then st = 'done' end
local next = ''
if st == 'pending' then next = redis.call('ZSCORE', KEYS[1], ARGV[1]) or '' end
local out = {st, tostring(redis.call('SISMEMBER', KEYS[5], kind)), next}
for _, v in ipairs(redis.call('HGETALL', KEYS[6])) do out[#out + 1] = v end
return out
