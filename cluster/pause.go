package cluster

import (
	"context"
	"slices"

	"github.com/redis/go-redis/v9"
)

// Pausing a kind across the cluster: Node.Pause, Node.Resume and
// Node.PausedKinds (asynq's Inspector.PauseQueue and UnpauseQueue; River
// pauses a queue with Client.QueuePause).
//
// The paused kinds are the set prefix:paused, which every node reads
// through the scripts. A pending task of a paused kind keeps its due time
// in its kind's pending index but leaves the pending set that the nodes
// load their windows from and claim from, so no node loads or claims it,
// and the tasks of other kinds due later are not held up behind it. Every
// script that makes a task pending (schedule, retry, hand-back, reap, the
// actions) checks the set, and the claim checks it again. Resume puts the
// kind's tasks back into the pending set and publishes "resumed <kind>",
// on which every node sweeps at once.

// pauseScript pauses a kind: it takes the kind's pending tasks out of the
// pending set, a chunk of ids per command. KEYS: pending, paused. ARGV:
// prefix, kind. Returns 1, or 0 if the kind was paused already.
var pauseScript = redis.NewScript(luaPublish + luaIndex + `
if redis.call('SADD', KEYS[2], ARGV[2]) == 0 then return 0 end
local key = kind_key(ARGV[1], 'pending', ARGV[2])
local n = redis.call('ZCARD', key)
for i = 0, n - 1, 1000 do
  local ids = redis.call('ZRANGE', key, i, i + 999)
  if #ids > 0 then redis.call('ZREM', KEYS[1], unpack(ids)) end
end
return 1
`)

// resumeScript resumes a kind: it puts the kind's pending tasks back into
// the pending set, at the times they are pending for, and publishes
// "resumed <kind>". KEYS: pending, paused. ARGV: prefix, kind, channel.
// Returns 1, or 0 if the kind was not paused.
var resumeScript = redis.NewScript(luaPublish + luaIndex + `
if redis.call('SREM', KEYS[2], ARGV[2]) == 0 then return 0 end
local key = kind_key(ARGV[1], 'pending', ARGV[2])
local n = redis.call('ZCARD', key)
for i = 0, n - 1, 1000 do
  local r = redis.call('ZRANGE', key, i, i + 999, 'WITHSCORES')
  local args = {}
  for j = 1, #r, 2 do
    args[#args + 1] = r[j + 1]
    args[#args + 1] = r[j]
  end
  if #args > 0 then redis.call('ZADD', KEYS[1], unpack(args)) end
end
redis.call('PUBLISH', ARGV[3], 'resumed ' .. ARGV[2])
return 1
`)

// Pause stops every node of the prefix from starting tasks of kind until
// Resume. Its pending tasks, and those that become pending meanwhile
// (scheduled, retried, handed back), stay pending with their due times;
// running ones finish (a failed one waits for its retry in the same way).
// A node that has one in its window drops it when its claim is refused.
// Pausing a paused kind does nothing. Any node may pause, started or not;
// the kind need not have a handler or tasks. The script moves the kind's
// pending tasks in one step: O(m log n) for m of them among n pending. An
// invalid kind (see Node.Handle; "@" + name pauses a periodic task) is an
// error wrapping scheduler.ErrInvalidArgument.
func (n *Node) Pause(ctx context.Context, kind string) error {
	if err := validKind(kind); err != nil {
		return err
	}
	if err := pauseScript.Run(ctx, n.st.rdb, []string{n.st.pending(), n.st.paused()}, n.st.prefix, kind).Err(); err != nil {
		return failed("pause "+kind, err)
	}
	return nil
}

// Resume lets the nodes start the tasks of a paused kind again: each runs
// at its due time, at once if that has passed, and every started node
// reloads its window at once. Resuming a kind that is not paused does
// nothing. Its cost and errors are Pause's.
func (n *Node) Resume(ctx context.Context, kind string) error {
	if err := validKind(kind); err != nil {
		return err
	}
	if err := resumeScript.Run(ctx, n.st.rdb, []string{n.st.pending(), n.st.paused()},
		n.st.prefix, kind, n.st.channel()).Err(); err != nil {
		return failed("resume "+kind, err)
	}
	return nil
}

// PausedKinds returns the paused kinds of the prefix, sorted.
func (n *Node) PausedKinds(ctx context.Context) ([]string, error) {
	kinds, err := n.st.rdb.SMembers(ctx, n.st.paused()).Result()
	if err != nil {
		return nil, failed("paused kinds", err)
	}
	slices.Sort(kinds)
	return kinds, nil
}
