package redisdriver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// How the driver runs its scripts: one call, or many in one pipeline
// (which a cluster client splits by shard, one round trip to each), with
// the keys a script on many tasks is given. Times are microseconds since
// the Unix epoch, written as integer strings.

// parseMicros converts the store's unit back; Redis may write a score as
// "1.7e+15" style only for non-integers, which the store never writes.
func parseMicros(s string) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("read the store: bad time %q: %w", s, err)
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

// evalEach runs sc once per call, by its SHA-1, in one pipeline, and runs
// again, after loading the script, only the calls that found it missing (a
// server restarted or promoted without it): unlike runPipelined, it
// never runs a call twice, so the replies of scripts that are not
// idempotent (Purge counts what it removed) are the ones that did the work.
// The node's Observer.RedisCall hears of each call through the observed
// client's pipeline (observer.go). The replies and their errors
// are in the commands returned, in the calls' order; err is set only when
// the script could not be loaded.
func evalEach(ctx context.Context, rdb redis.UniversalClient, sc *redis.Script, calls []scriptCall) ([]*redis.Cmd, error) {
	cmds := make([]*redis.Cmd, len(calls))
	todo := make([]int, len(calls))
	for i := range todo {
		todo[i] = i
	}
	for round := 0; len(todo) > 0; round++ {
		if round > 0 {
			if err := sc.Load(ctx, rdb).Err(); err != nil {
				return cmds, err
			}
		}
		pipe := rdb.Pipeline()
		for _, i := range todo {
			cmds[i] = pipe.EvalSha(ctx, sc.Hash(), calls[i].keys, calls[i].args...)
		}
		_, _ = pipe.Exec(ctx) // each command holds its own error
		var missing []int
		for _, i := range todo {
			if err := cmds[i].Err(); err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") && round == 0 {
				missing = append(missing, i)
			}
		}
		todo = missing
	}
	return cmds, nil
}

// runPipelined runs sc once per call in one pipeline (a cluster client
// splits it by shard, one round trip to each), as evalEach does.
func (d *Driver) runPipelined(ctx context.Context, sc *redis.Script, calls []*scriptCall) ([]*redis.Cmd, error) {
	plain := make([]scriptCall, len(calls))
	for i, c := range calls {
		plain[i] = *c
	}
	return evalEach(ctx, d.rdb, sc, plain)
}

// eachPartition runs sc once in each of parts, with the keys and arguments
// call gives it, in one pipeline; the replies are in the order of parts.
func (d *Driver) eachPartition(ctx context.Context, sc *redis.Script, parts []Partition, call func(Partition) *scriptCall) ([]*redis.Cmd, error) {
	calls := make([]*scriptCall, len(parts))
	for i, p := range parts {
		calls[i] = call(p)
	}
	return d.runPipelined(ctx, sc, calls)
}

// runOnTasks runs sc, a script on many tasks (lua/lib/part.lua), once in each
// partition of ids (by partition index), in one pipeline: it is given the
// partition's fixed keys and five keys per task, of the task's kind in
// kinds, then the keys tail gives (nil: none), and the arguments lead
// gives followed by the tasks' IDs. It returns the first call's error.
func (d *Driver) runOnTasks(ctx context.Context, sc *redis.Script, ids map[int][]string, kinds map[string]string, lead func(Partition) []any, tail func(Partition) []string) error {
	_, err := d.runOnTasksReplies(ctx, sc, ids, kinds, lead, tail)
	return err
}

// runOnTasksReplies is runOnTasks that also returns the calls' replies,
// those of the calls that succeeded too when one failed.
func (d *Driver) runOnTasksReplies(ctx context.Context, sc *redis.Script, ids map[int][]string, kinds map[string]string, lead func(Partition) []any, tail func(Partition) []string) ([]*redis.Cmd, error) {
	calls := make([]*scriptCall, 0, len(ids))
	for pi, list := range ids {
		p := d.parts[pi]
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
	cmds, err := d.runPipelined(ctx, sc, calls)
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
func (d *Driver) kindsOf(ctx context.Context, ids map[int][]string) (map[string]string, error) {
	pipe := d.rdb.Pipeline()
	type read struct {
		id  string
		cmd *redis.StringCmd
	}
	var reads []read
	for pi, list := range ids {
		for _, id := range list {
			reads = append(reads, read{id, pipe.HGet(ctx, d.parts[pi].Task(id), "kind")})
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
