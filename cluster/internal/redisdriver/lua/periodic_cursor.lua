
redis.call('HSET', KEYS[1], 'misfire', ARGV[2], 'overlap', ARGV[3])
if ARGV[1] == '' then return 0 end
local c = redis.call('HGET', KEYS[1], 'stored')
if not c or tonumber(c) < tonumber(ARGV[1]) then redis.call('HSET', KEYS[1], 'stored', ARGV[1]) end
return 1
