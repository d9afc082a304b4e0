
local action, state, filter, channel = ARGV[1], ARGV[2], ARGV[3], ARGV[5]
local before = tonumber(ARGV[4])
local t = now()
local changed, skipped, strays, kept = 0, 0, 0, 0
for j = 6, #ARGV do
  local done = false
  local id = ARGV[j]
  local key, ix = task_keys(j - 5)
  local kind = redis.call('HGET', key, 'kind')
  if not kind then
    -- an entry left without its task: only the sets hold it
    strays = strays + redis.call('ZREM', STATE[state], id) + redis.call('ZREM', ix[state], id)
  elseif not names_kind(ix, kind) then
    skipped = skipped + 1
  elseif (filter == '' or kind == filter) and task_state(key, ix, id) == state then
    local score = tonumber(redis.call('ZSCORE', ix[state], id))
    if score and (not before or score < before) then
      if action == 'retry' then
        index_rem(ix, 'dead', id)
        redis.call('HSET', key, 'attempt', '0', 'lost', '0')
        make_pending(ix, channel, kind, t, id)
        done = true
      elseif action == 'delete' then
        index_rem(ix, state, id)
        redis.call('DEL', key)
        done = true
      elseif action == 'runnow' and score > tonumber(t) then
        make_pending(ix, channel, kind, t, id)
        done = true
      end
    end
  end
  if done then
    changed = changed + 1
  elseif kind and names_kind(ix, kind) then
    local score = tonumber(redis.call('ZSCORE', ix[state], id) or redis.call('ZSCORE', STATE[state], id))
    -- a task due already is past the next read of a run now
    local due = action == 'runnow' and score and score <= tonumber(t)
    if score and (not before or score < before) and not due then kept = kept + 1 end
  end
end
return {changed, skipped, strays, t, kept}
