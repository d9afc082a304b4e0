package redisdriver

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Many script calls at once, as ScheduleMany sends them: one pipeline
// waits for Redis to run every call before it reads the first reply, and
// Redis waits for the client to write the whole pipeline, so a large
// batch is split into a few pipelines sent at once on their own
// connections. Redis runs the first while the client writes the next, and
// the client reads the first's replies while Redis runs the next.

// maxPipelines is the most pipelines a batch is split into.
const maxPipelines = 4

// minCallsPerPipeline is the fewest calls a pipeline of a split batch
// carries: below it, one more round trip costs more than it overlaps.
const minCallsPerPipeline = 8

// evalConcurrently runs sc once per call as evalEach does, in up to
// maxPipelines pipelines of consecutive calls sent at once, and gives
// each call's reply to done with its index in calls (and the error of
// loading the script, if that failed), from the pipeline's goroutine; it
// returns once every call has been answered.
func evalConcurrently(ctx context.Context, rdb redis.UniversalClient, sc *redis.Script, calls []scriptCall, done func(i int, cmd *redis.Cmd, loadErr error)) {
	n := min(maxPipelines, len(calls)/minCallsPerPipeline)
	if n <= 1 {
		cmds, loadErr := evalEach(ctx, rdb, sc, calls)
		for i, cmd := range cmds {
			done(i, cmd, loadErr)
		}
		return
	}
	var wg sync.WaitGroup
	size := (len(calls) + n - 1) / n
	for lo := 0; lo < len(calls); lo += size {
		hi := min(lo+size, len(calls))
		wg.Go(func() {
			cmds, loadErr := evalEach(ctx, rdb, sc, calls[lo:hi])
			for i, cmd := range cmds {
				done(lo+i, cmd, loadErr)
			}
		})
	}
	wg.Wait()
}
