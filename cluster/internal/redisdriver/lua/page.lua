
-- bytewise order, as Redis orders members of one score (Lua's < follows
-- the server's locale)
local function before(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
local asc = ARGV[1] == 'asc'
local limit = tonumber(ARGV[5])
local range = 'ZRANGE'
if not asc then range = 'ZREVRANGE' end
-- the rank in key of the first member after the cursor
local function start_of(key)
  if ARGV[2] == '1' then return 0 end
  local s, m = ARGV[3], ARGV[4]
  local lo, hi
  if asc then
    lo = redis.call('ZCOUNT', key, '-inf', '(' .. s)
    hi = redis.call('ZCOUNT', key, '-inf', s)
  else
    lo = redis.call('ZCOUNT', key, '(' .. s, '+inf')
    hi = redis.call('ZCOUNT', key, s, '+inf')
  end
  -- the first rank in [lo, hi) whose member comes after m in this order
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    local x = redis.call(range, key, mid, mid)[1]
    local after
    if asc then after = before(m, x) else after = before(x, m) end
    if after then hi = mid else lo = mid + 1 end
  end
  return lo
end
local keys = {KEYS[1]}
if ARGV[6] == '1' then
  -- exactly the kinds given: the tasks of another would be missed, and
  -- those of a kind resumed meanwhile listed twice
  local ok, paused = paused_given(KEYS[2], 7, #ARGV - 6)
  if not ok or #paused ~= #ARGV - 6 then return {'paused', paused} end
  for i = 3, #KEYS do keys[#keys + 1] = KEYS[i] end
end
if #keys == 1 then
  local start = start_of(KEYS[1])
  return {'ok', redis.call(range, KEYS[1], start, start + limit - 1, 'WITHSCORES')}
end
local all = {}
for _, key in ipairs(keys) do
  local start = start_of(key)
  local r = redis.call(range, key, start, start + limit - 1, 'WITHSCORES')
  for i = 1, #r, 2 do all[#all + 1] = {r[i], r[i + 1]} end
end
table.sort(all, function(x, y)
  local a, b = tonumber(x[2]), tonumber(y[2])
  if a ~= b then
    if asc then return a < b end
    return a > b
  end
  if asc then return before(x[1], y[1]) end
  return before(y[1], x[1])
end)
local out = {}
for i = 1, math.min(limit, #all) do
  out[#out + 1] = all[i][1]
  out[#out + 1] = all[i][2]
end
return {'ok', out}
