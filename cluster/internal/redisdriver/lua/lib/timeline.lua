
local function late_bucket(us)
  us = math.floor(us)
  if us < 1 then return 0 end
  -- us = m * 2^e with m in [0.5, 1): us is in [2^(e-1), 2^e), and the
  -- quarter of that range it falls in is floor(m * 8) - 4
  local m, e = math.frexp(us)
  return math.min(1 + (e - 1) * 4 + math.floor(m * 8) - 4, 96)
end
local function count_run(tl, ttl, kind, due, start, extra)
  local late = 0
  if due and start then late = tonumber(start) - tonumber(due) end
  if redis.call('HINCRBY', tl, kind .. '|' .. late_bucket(late), 1) == 1 then
    redis.call('PEXPIRE', tl, ttl)
  end
  if extra then redis.call('HINCRBY', tl, kind .. '|' .. extra, 1) end
end
