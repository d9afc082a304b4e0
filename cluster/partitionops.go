package cluster

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Operations over every partition (List, Counts, CountsByKind, Pause,
// Resume): one script per partition, all sent in one pipeline, which
// go-redis splits by node on a cluster client, so an operation stays one
// round trip (or two) however many partitions there are. The bulk actions
// (bulk.go) and Purge do the same in rounds of a batch per partition.

// evalEach runs sc once per call, by its SHA-1, in one pipeline, and runs
// again, after loading the script, only the calls that found it missing (a
// server restarted or promoted without it): unlike store.runPipelined, it
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

// errPausedChanging is the cause of the error of an operation that kept
// finding another set of paused kinds than the one it read just before.
var errPausedChanging = errors.New("the paused kinds kept changing")

// pausedRounds is how many times pausedCalls runs a partition's script
// with the paused kinds it found before it gives up.
const pausedRounds = 4

// pausedCalls runs sc once for each of parts, in one pipeline, built by
// call for the kinds believed paused in the partition (paused[i], nil for
// none), and runs it again for the partitions whose script answered
// {"paused", kinds} with those kinds, which it leaves in paused. It
// returns the other answers' second element, by partition.
func pausedCalls(ctx context.Context, rdb redis.UniversalClient, sc *redis.Script, parts []partition,
	paused [][]string, call func(p partition, paused []string) scriptCall) ([]any, error) {
	if paused == nil {
		paused = make([][]string, len(parts))
	}
	out := make([]any, len(parts))
	todo := make([]int, len(parts))
	for i := range todo {
		todo[i] = i
	}
	for round := 0; len(todo) > 0; round++ {
		if round == pausedRounds {
			return nil, errPausedChanging
		}
		calls := make([]scriptCall, len(todo))
		for j, i := range todo {
			calls[j] = call(parts[i], paused[i])
		}
		cmds, err := evalEach(ctx, rdb, sc, calls)
		if err != nil {
			return nil, err
		}
		var again []int
		for j, i := range todo {
			reply, err := cmds[j].Slice()
			if err != nil {
				return nil, err
			}
			if len(reply) != 2 {
				return nil, fmt.Errorf("%w: %d values", errShortReply, len(reply))
			}
			if tag, _ := reply[0].(string); tag == "paused" {
				paused[i] = stringsOf(reply[1])
				again = append(again, i)
				continue
			}
			out[i] = reply[1]
		}
		todo = again
	}
	return out, nil
}

// stringsOf reads a Redis array of strings; anything else gives nil.
func stringsOf(v any) []string {
	vals, _ := v.([]any)
	out := make([]string, 0, len(vals))
	for _, x := range vals {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// pausedSets reads the set of paused kinds of every partition, in one
// pipeline, by partition.
func (s store) pausedSets(ctx context.Context) ([]map[string]struct{}, error) {
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.StringStructMapCmd, len(s.parts))
	for i, p := range s.parts {
		cmds[i] = pipe.SMembersMap(ctx, p.Paused())
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, err
	}
	out := make([]map[string]struct{}, len(cmds))
	for i, c := range cmds {
		out[i] = c.Val()
	}
	return out, nil
}
