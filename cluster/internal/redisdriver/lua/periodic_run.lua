
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'last_node', ARGV[1], 'last_due', ARGV[2], 'last_started', ARGV[3],
  'last_ended', ARGV[4], 'last_outcome', ARGV[5], 'last_error', ARGV[6])
return 1
