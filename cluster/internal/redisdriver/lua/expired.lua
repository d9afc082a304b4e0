
return redis.call('ZRANGE', KEYS[1], '-inf', now(), 'BYSCORE', 'LIMIT', 0, tonumber(ARGV[1]))
