package cluster

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Running a script on many partitions in one pipeline, for the code of
// package cluster not yet behind driver.Driver (store.runPipelined); the
// operations over every partition (List, Counts, Pause, the bulk actions)
// are the driver's.

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
