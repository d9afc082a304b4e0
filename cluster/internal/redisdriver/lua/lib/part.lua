
local STATE = {pending = KEYS[1], running = KEYS[2], dead = KEYS[3], done = KEYS[4]}
local KINDS, PAUSED = KEYS[5], KEYS[6]
local INDEX = {pending = KEYS[7], running = KEYS[8], dead = KEYS[9], done = KEYS[10]}
local TASK, MARK = KEYS[11], KEYS[12]
local PART = string.sub(KEYS[1], 1, -9)
-- wrong_kind tells whether INDEX holds the indexes of another kind
local function wrong_kind(kind)
  return KEYS[7] ~= PART .. ':k:pending:' .. kind
end
-- task_keys are the hash and the kind's indexes of the j-th task of a
-- script on many tasks, and whether they name kind
local function task_keys(j)
  local b = 6 + 5 * (j - 1)
  return KEYS[b + 1], {pending = KEYS[b + 2], running = KEYS[b + 3], dead = KEYS[b + 4], done = KEYS[b + 5]}
end
local function names_kind(ix, kind)
  return ix.pending == PART .. ':k:pending:' .. kind
end
-- index_add puts id in state (not pending: see make_pending) at score, in
-- the partition's set and in the kind's index ix
local function index_add(ix, state, kind, score, id)
  redis.call('ZADD', STATE[state], score, id)
  redis.call('ZADD', ix[state], score, id)
  redis.call('SADD', KINDS, kind)
end
local function index_rem(ix, state, id)
  redis.call('ZREM', STATE[state], id)
  redis.call('ZREM', ix[state], id)
end
-- make_pending makes id pending, to run at score: claimable and announced
-- on channel unless its kind is paused
local function make_pending(ix, channel, kind, score, id)
  redis.call('ZADD', ix.pending, score, id)
  redis.call('SADD', KINDS, kind)
  if redis.call('SISMEMBER', PAUSED, kind) == 1 then
    redis.call('ZREM', STATE.pending, id)
    return
  end
  redis.call('ZADD', STATE.pending, score, id)
  publish_pending(channel, score, kind, id)
end
-- the state of task id, stored under key with its kind's indexes ix;
-- 'missing' if none
local function task_state(key, ix, id)
  if redis.call('EXISTS', key) == 0 then return 'missing' end
  if redis.call('ZSCORE', STATE.running, id) then return 'running' end
  if redis.call('ZSCORE', STATE.dead, id) then return 'dead' end
  if redis.call('ZSCORE', STATE.done, id) then return 'done' end
  if redis.call('ZSCORE', ix.pending, id) or redis.call('ZSCORE', STATE.pending, id) then
    return 'pending'
  end
  return 'missing'
end
