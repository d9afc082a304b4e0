
local n = 0
for j = 1, #ARGV do
  local k, ix = task_keys(j)
  if redis.call('ZSCORE', STATE.done, ARGV[j]) then
    local kind = redis.call('HGET', k, 'kind')
    if not kind or names_kind(ix, kind) then
      index_rem(ix, 'done', ARGV[j])
      redis.call('DEL', k)
      n = n + 1
    end
  end
end
return n
