
local function paused_given(key, first, n)
  local given = {}
  for i = first, first + n - 1 do given[ARGV[i]] = true end
  local paused = redis.call('SMEMBERS', key)
  for _, kind in ipairs(paused) do
    if not given[kind] then return false, paused end
  end
  return true, paused
end
