
local ok, paused = paused_given(KEYS[5], 1, #ARGV)
if not ok then return {'paused', paused} end
local is_paused = {}
for _, kind in ipairs(paused) do is_paused[kind] = true end
local out = {}
for s = 1, 4 do out[s] = redis.call('ZCARD', KEYS[s]) end
-- the pending tasks of the paused kinds are in their indexes only
local paused_count = {}
for i = 1, #ARGV do
  if is_paused[ARGV[i]] then
    paused_count[i] = redis.call('ZCARD', KEYS[5 + 4 * (i - 1) + 1])
    out[1] = out[1] + paused_count[i]
  end
end
local left = {out[1], out[2], out[3], out[4]}
for i = 1, #ARGV do
  local b = 5 + 4 * (i - 1)
  for s = 1, 4 do
    local c = 0
    if s == 1 and paused_count[i] then
      c = paused_count[i]
    elseif left[s] > 0 then
      c = redis.call('ZCARD', KEYS[b + s])
    end
    left[s] = left[s] - c
    out[#out + 1] = c
  end
  if is_paused[ARGV[i]] then out[#out + 1] = 1 else out[#out + 1] = 0 end
end
return {'ok', out}
