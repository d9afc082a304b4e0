
-- occ_key orders occurrence IDs (name@RFC 3339 UTC) by due time
local function occ_key(id)
  local ts = string.match(id, '@([^@]*)$')
  if not ts then return nil end
  local sec, frac = string.match(ts, '^(%d+%-%d%d%-%d%dT%d%d:%d%d:%d%d)%.?(%d*)Z$')
  if not sec then return nil end
  return sec .. frac .. string.rep('0', 9 - #frac)
end
local function periodic_rules()
  local s = redis.call('ZSCORE', STATE.pending, ARGV[1])
  if not s or tonumber(s) > tonumber(ARGV[2]) then return nil end
  local t = now()
  if tonumber(s) > tonumber(t) then return nil end
  local f = redis.call('HMGET', TASK, 'kind', 'attempt', 'sum')
  if not f[1] or wrong_kind(f[1]) then return nil end
  if f[2] == '0' then
    if ARGV[6] == 'each' then
      local mine = occ_key(ARGV[1])
      local due = redis.call('ZRANGE', INDEX.pending, '-inf', t, 'BYSCORE', 'LIMIT', 0, 1000)
      for _, other in ipairs(due) do
        local k = occ_key(other)
        if mine and k and k < mine then return {5, '0', t} end
      end
    else
      local missed = ARGV[8] ~= '' and tonumber(ARGV[8]) <= tonumber(t)
      if ARGV[6] == 'skip' and tonumber(t) - tonumber(ARGV[11]) > tonumber(ARGV[9]) then missed = true end
      if missed then
        index_rem(INDEX, 'pending', ARGV[1])
        if f[3] then redis.call('SET', MARK, f[3], 'PX', ARGV[10]) end
        redis.call('DEL', TASK)
        publish_claimed(ARGV[5], ARGV[1])
        return {4}
      end
    end
  end
  if ARGV[7] ~= '1' then
    local r = redis.call('ZRANGE', INDEX.running, 0, 0, 'WITHSCORES')
    if #r > 0 then return {5, r[2], t} end
  end
  return nil
end
local verdict = periodic_rules()
if verdict then return verdict end
