
local exp = string.format('%.0f', tonumber(now()) + tonumber(ARGV[1]))
local lost = {}
for j = 1, (#ARGV - 1) / 2 do
  local id, tok = ARGV[2 * j], ARGV[2 * j + 1]
  local key, ix = KEYS[2 * j], KEYS[2 * j + 1]
  if redis.call('HGET', key, 'owner') == tok and redis.call('ZSCORE', KEYS[1], id) then
    redis.call('ZADD', KEYS[1], 'XX', exp, id)
    redis.call('ZADD', ix, 'XX', exp, id)
  else
    lost[#lost + 1] = id
  end
end
return lost
