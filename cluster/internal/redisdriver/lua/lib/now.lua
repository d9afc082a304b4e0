
local function now()
  local t = redis.call('TIME')
  return string.format('%.0f', tonumber(t[1]) * 1000000 + tonumber(t[2]))
end
