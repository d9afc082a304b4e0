package redisdriver

import (
	"context"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pipelineCounter counts the pipelines of scripts a client sends and the
// scripts they hold (not the connection's set-up, which go-redis sends as
// a pipeline too).
type pipelineCounter struct{ pipelines, cmds atomic.Int64 }

func (*pipelineCounter) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (*pipelineCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (p *pipelineCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		scripts := 0
		for _, c := range cmds {
			if c.Name() == "evalsha" {
				scripts++
			}
		}
		if scripts > 0 {
			p.pipelines.Add(1)
			p.cmds.Add(int64(scripts))
		}
		return next(ctx, cmds)
	}
}

// incrScript counts its runs in KEYS[1] and answers ARGV[1].
var incrScript = redis.NewScript(`redis.call('INCR', KEYS[1]) return ARGV[1]`)

// TestCallsMadeWhileOneIsUnderWayGoOutTogether: the calls queued while a
// call is under way go out in one pipeline once it is answered, each with
// its own reply; a queued call whose ctx ended is not sent.
func TestCallsMadeWhileOneIsUnderWayGoOutTogether(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client()
	t.Cleanup(func() { rdb.Close() })
	counter := &pipelineCounter{}
	rdb.AddHook(counter)
	ctx := context.Background()
	require.NoError(t, incrScript.Load(ctx, rdb).Err())

	var c coalescer
	c.busy = true // as if a lone call were under way
	const callers = 8
	canceled, cancel := context.WithCancel(ctx)
	replies := make([]string, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		callCtx := ctx
		if i == 0 {
			callCtx = canceled
		}
		wg.Go(func() {
			replies[i], errs[i] = c.run(callCtx, rdb, incrScript, []string{"runs"}, strconv.Itoa(i)).Text()
		})
	}
	for queued := 0; queued < callers; runtime.Gosched() {
		c.mu.Lock()
		queued = len(c.queue)
		c.mu.Unlock()
	}
	cancel()
	c.sendQueued(rdb) // the lone call was answered
	wg.Wait()

	require.ErrorIs(t, errs[0], context.Canceled)
	for i := 1; i < callers; i++ {
		require.NoError(t, errs[i])
		assert.Equal(t, strconv.Itoa(i), replies[i], "each call gets its own reply")
	}
	runs, err := rdb.Get(ctx, "runs").Int()
	require.NoError(t, err)
	assert.Equal(t, callers-1, runs, "the canceled call was not sent")
	assert.Equal(t, int64(1), counter.pipelines.Load(), "one pipeline")
	assert.Equal(t, int64(callers-1), counter.cmds.Load())
	// The sending goroutine finds the queue empty after the last
	// batch and ends; no call is under way then.
	for busy := true; busy; runtime.Gosched() {
		c.mu.Lock()
		busy = c.busy
		c.mu.Unlock()
	}
}

// TestALoneCallGoesOutAtOnce: with no call under way a call is sent at
// once, alone, and runs a script missing from the server's cache too.
func TestALoneCallGoesOutAtOnce(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client()
	t.Cleanup(func() { rdb.Close() })
	counter := &pipelineCounter{}
	rdb.AddHook(counter)
	var c coalescer
	got, err := c.run(context.Background(), rdb, incrScript, []string{"runs"}, "alone").Text()
	require.NoError(t, err)
	assert.Equal(t, "alone", got)
	assert.Zero(t, counter.pipelines.Load(), "no pipeline for a lone call")
	assert.False(t, c.busy)
}
