
local want, before, filter = ARGV[6], tonumber(ARGV[7]), ARGV[8]
local stored = redis.call('HGET', TASK, 'kind')
if not stored then
  return {0, 0, redis.call('ZREM', STATE[want], ARGV[1]) + redis.call('ZREM', INDEX[want], ARGV[1]), 0}
end
if wrong_kind(stored) then return redis.error_reply('KIND ' .. stored) end
if filter ~= '' and stored ~= filter then return {0, 0, 0, 0} end
local score = tonumber(redis.call('ZSCORE', INDEX[want], ARGV[1]) or redis.call('ZSCORE', STATE[want], ARGV[1]))
local selected = score and (not before or score < before)
if not selected then return {0, 0, 0, 0} end
if task_state(TASK, INDEX, ARGV[1]) ~= want then return {0, 0, 0, 1} end
