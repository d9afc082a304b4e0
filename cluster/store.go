package cluster

import (
	"context"
	"errors"
	"fmt"
	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
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

// keys names the cluster-wide keys of the prefix.
func (s store) keys() redisdriver.Keys { return redisdriver.Keys{Prefix: s.prefix} }

// nodes is the sorted set of the live claimers, scored by membership
// expiry.
func (s store) nodes() string { return s.keys().Nodes() }

// nodeKinds is the hash of the kinds each live claimer handles, and
// periodicIndex the index of the periodic declarations (knownkind.go).
func (s store) nodeKinds() string     { return s.keys().NodeKinds() }
func (s store) periodicIndex() string { return s.keys().Periodic() }

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
		c := &scriptCall{keys: p.FixedKeys(), args: lead(p)}
		for _, id := range list {
			c.keys = append(append(c.keys, p.Task(id)), p.KindKeys(kinds[id])...)
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
			reads = append(reads, read{id, pipe.HGet(ctx, s.parts[pi].Task(id), "kind")})
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
