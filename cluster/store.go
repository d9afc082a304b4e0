package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// The store: the Redis keys of one prefix, the time unit the scripts write,
// and the script cache. Every change of state is a Lua script, kept beside
// the Go function that runs it (schedule.go, window.go, claim.go,
// outcome.go, lease.go, cancel.go, members.go); each runs atomically in
// Redis, so no two replicas ever see a half-made change.
//
// Times are microseconds since the Unix epoch, written as integer strings.
// A task's hash keeps the due time it was scheduled for; its score in the
// pending set is when it is to run next (later after a failure). Due times
// come from the scheduling replica's clock (or the trigger); whether a task
// is due, lease expiries, retry times and the times the scripts stamp come
// from Redis's own clock (TIME), so none of them depends on whose clock is
// right.
//
// The tasks' keys are spread over the partitions (partitions.go), the
// cluster-wide records' keys stay under the prefix; every script works on
// one partition, or on the cluster-wide records, and is given every key it
// touches (luaPart).

// store names the keys of one prefix and runs the scripts on them.
type store struct {
	rdb    redis.UniversalClient
	prefix string      // the cluster-wide records' keys
	parts  []partition // the tasks' keys, by partition
}

// newStore makes the store of prefix with n partitions.
func newStore(rdb redis.UniversalClient, prefix string, n int) store {
	return store{rdb: rdb, prefix: prefix, parts: partitionsOf(prefix, n)}
}

// partOf is the partition of task id.
func (s store) partOf(id string) partition { return s.parts[partitionIndex(id, len(s.parts))] }

// nodes is the sorted set of the live claimers, scored by membership
// expiry.
func (s store) nodes() string { return s.prefix + ":nodes" }

// luaNow defines now(): the Redis server's time in microseconds, as an
// integer string.
const luaNow = `
local function now()
  local t = redis.call('TIME')
  return string.format('%.0f', tonumber(t[1]) * 1000000 + tonumber(t[2]))
end
`

// parseMicros converts the store's unit back; Redis may write a score as
// "1.7e+15" style only for non-integers, which the store never writes.
func parseMicros(s string) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("cluster: read the store: bad time %q: %w", s, err)
	}
	return int64(f), nil
}

// loadScripts puts every script in Redis's script cache, so that the first
// call of each is one round trip (EVALSHA) like every later one.
func (s store) loadScripts(ctx context.Context) error {
	for _, sc := range []*redis.Script{scheduleScript, claimScript, extendScript,
		completeScript, failScript, releaseScript, expiredScript, reapScript, cancelScript, membersScript, removeDoneScript} {
		if err := sc.Load(ctx, s.rdb).Err(); err != nil {
			return err
		}
	}
	return nil
}

// luaPart defines the key names and index functions of the scripts that
// work on one partition. Every key such a script touches comes in KEYS,
// as Redis Cluster requires: first the partition's six fixed keys
// (partition.fixedKeys: the pending, lease, dead and done sets, the set of
// kinds with stored tasks and the set of paused kinds), then, for a script
// on one task, the four indexes of the task's kind, the task's hash and
// its done marker (partition.taskKeys). A script on many tasks is given,
// after the fixed keys, five keys per task: its hash and its kind's four
// indexes (task_keys reads them).
//
// The caller names the kind it believes a task to be of; a script that
// finds another kind stored answers the error "KIND <kind>" before it
// changes anything (wrong_kind), and the caller runs it again with that
// kind (withKind).
//
// A task of a paused kind that is pending sits in its kind's pending index
// only, not in the partition's pending set, so no node loads or claims it;
// Resume puts it back. The scripts that include luaPart include luaPublish
// before it.
const luaPart = `
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
`

// kindError is the kind a script found stored when the caller named
// another ("KIND <kind>"), and ok if err is such an answer.
func kindError(err error) (kind string, ok bool) {
	if err == nil {
		return "", false
	}
	return strings.CutPrefix(err.Error(), "KIND ")
}

// withKind runs f with the kind the caller believes the task to be of and,
// if the script found another kind stored, once more with that one (a
// task's kind never changes, but the caller may not know it: Cancel by ID
// alone).
func withKind[T any](kind string, f func(kind string) (T, error)) (T, error) {
	v, err := f(kind)
	if stored, ok := kindError(err); ok {
		return f(stored)
	}
	return v, err
}

// scriptCall is one run of a script: its keys and arguments.
type scriptCall struct {
	keys []string
	args []any
}

// runPipelined runs sc once per call in one pipeline (a cluster client
// splits it by shard, one round trip to each), as evalEach does.
func (s store) runPipelined(ctx context.Context, sc *redis.Script, calls []*scriptCall) ([]*redis.Cmd, error) {
	plain := make([]scriptCall, len(calls))
	for i, c := range calls {
		plain[i] = *c
	}
	return evalEach(ctx, s.rdb, sc, plain)
}

// eachPartition runs sc once in each of parts, with the keys and arguments
// call gives it, in one pipeline; the replies are in the order of parts.
func (s store) eachPartition(ctx context.Context, sc *redis.Script, parts []partition, call func(partition) *scriptCall) ([]*redis.Cmd, error) {
	calls := make([]*scriptCall, len(parts))
	for i, p := range parts {
		calls[i] = call(p)
	}
	return s.runPipelined(ctx, sc, calls)
}

// runOnTasks runs sc, a script on many tasks (luaPart), once in each
// partition of ids (by partition index), in one pipeline: it is given the
// partition's fixed keys and five keys per task, of the task's kind in
// kinds, then the keys tail gives (nil: none), and the arguments lead
// gives followed by the tasks' IDs. It returns the first call's error.
func (s store) runOnTasks(ctx context.Context, sc *redis.Script, ids map[int][]string, kinds map[string]string, lead func(partition) []any, tail func(partition) []string) error {
	_, err := s.runOnTasksReplies(ctx, sc, ids, kinds, lead, tail)
	return err
}

// runOnTasksReplies is runOnTasks that also returns the calls' replies,
// those of the calls that succeeded too when one failed.
func (s store) runOnTasksReplies(ctx context.Context, sc *redis.Script, ids map[int][]string, kinds map[string]string, lead func(partition) []any, tail func(partition) []string) ([]*redis.Cmd, error) {
	calls := make([]*scriptCall, 0, len(ids))
	for pi, list := range ids {
		p := s.parts[pi]
		c := &scriptCall{keys: p.fixedKeys(), args: lead(p)}
		for _, id := range list {
			c.keys = append(append(c.keys, p.task(id)), p.kindKeys(kinds[id])...)
			c.args = append(c.args, id)
		}
		if tail != nil {
			c.keys = append(c.keys, tail(p)...)
		}
		calls = append(calls, c)
	}
	cmds, err := s.runPipelined(ctx, sc, calls)
	if err != nil {
		return nil, err
	}
	for _, cmd := range cmds {
		if err := cmd.Err(); err != nil && !errors.Is(err, redis.Nil) {
			return cmds, err
		}
	}
	return cmds, nil
}

// kindsOf reads the kind of each task of ids (by partition index) in one
// pipeline; a task that is gone has the kind "".
func (s store) kindsOf(ctx context.Context, ids map[int][]string) (map[string]string, error) {
	pipe := s.rdb.Pipeline()
	type read struct {
		id  string
		cmd *redis.StringCmd
	}
	var reads []read
	for pi, list := range ids {
		for _, id := range list {
			reads = append(reads, read{id, pipe.HGet(ctx, s.parts[pi].task(id), "kind")})
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	kinds := make(map[string]string, len(reads))
	for _, r := range reads {
		kinds[r.id] = r.cmd.Val()
	}
	return kinds, nil
}
