package redisdriver

import (
	"context"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
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

// countedClient is a client of a fresh redis-server whose pipelines of
// scripts are counted.
func countedClient(t *testing.T) (*redis.Client, *pipelineCounter) {
	t.Helper()
	rdb := redistest.Start(t, redistest.Options{}).Client()
	t.Cleanup(func() { rdb.Close() })
	counter := &pipelineCounter{}
	rdb.AddHook(counter)
	return rdb, counter
}

// incrScript counts its runs in KEYS[1] and answers ARGV[1].
var incrScript = redis.NewScript(`redis.call('INCR', KEYS[1]) return ARGV[1]`)

// TestCallsMadeWhileOneIsUnderWayGoOutTogether: the calls queued while a
// call is under way go out in one pipeline once it is answered, each with
// its own reply; a queued call whose ctx ended is not sent.
func TestCallsMadeWhileOneIsUnderWayGoOutTogether(t *testing.T) {
	rdb, counter := countedClient(t)
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
	rdb, counter := countedClient(t)
	var c coalescer
	got, err := c.run(context.Background(), rdb, incrScript, []string{"runs"}, "alone").Text()
	require.NoError(t, err)
	assert.Equal(t, "alone", got)
	assert.Zero(t, counter.pipelines.Load(), "no pipeline for a lone call")
	assert.False(t, c.busy)
}

// TestConcurrentClaimsEachWinOnce: many workers claiming the same due
// tasks at once, their calls batched, win each task exactly once, on one
// server and on a Redis Cluster (batched by master).
func TestConcurrentClaimsEachWinOnce(t *testing.T) {
	for _, setup := range []struct {
		name   string
		client func(t *testing.T) redis.UniversalClient
	}{
		{"one server", func(t *testing.T) redis.UniversalClient {
			return redistest.Start(t, redistest.Options{}).Client()
		}},
		{"Redis Cluster", func(t *testing.T) redis.UniversalClient {
			return redistest.StartCluster(t, redistest.ClusterOptions{}).Client()
		}},
	} {
		t.Run(setup.name, func(t *testing.T) {
			ctx := context.Background()
			rdb := setup.client(t)
			t.Cleanup(func() { rdb.Close() })
			d := New(rdb, Options{Prefix: "{cw}", Partitions: 16})
			const tasks, workers = 100, 16
			due := time.Now().Add(-time.Second)
			batch := make([]driver.NewTask, tasks)
			for i := range batch {
				batch[i] = driver.NewTask{ID: "t" + strconv.Itoa(i), Kind: "k", Payload: []byte("p"), Due: due, MaxRetries: 1}
			}
			for _, r := range d.ScheduleMany(ctx, batch) {
				require.NoError(t, r.Err)
			}
			var won [tasks]atomic.Int32
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					owner := "node:" + strconv.Itoa(w)
					for i := range tasks {
						c, err := d.Claim(ctx, batch[i].ID, "k", due, time.Minute, owner)
						if !assert.NoError(t, err) {
							return
						}
						if c.Outcome == driver.ClaimWon {
							won[i].Add(1)
							_, err := d.Complete(ctx, batch[i].ID, "k", owner, time.Hour, driver.KeepDone{}, driver.Timeline{})
							assert.NoError(t, err)
						}
					}
				})
			}
			wg.Wait()
			for i := range won {
				assert.Equal(t, int32(1), won[i].Load(), "task %d won once", i)
			}
		})
	}
}

// TestSchedulesMadeMeanwhileShareAPipeline: stores made while one is
// under way go out together in one pipeline, each its own script with
// its own answer: a fresh ID is created, a second store of one ID finds
// the first (exists, or a conflict for a different task).
func TestSchedulesMadeMeanwhileShareAPipeline(t *testing.T) {
	rdb, counter := countedClient(t)
	ctx := context.Background()
	d := New(rdb, Options{Prefix: "{sp}", Partitions: 4})
	due := time.Now().Add(time.Hour)
	task := func(id, payload string) driver.NewTask {
		return driver.NewTask{ID: id, Kind: "k", Payload: []byte(payload), Due: due, MaxRetries: 1, FixedID: true}
	}
	// Each script must be in the server's cache for the pipeline to
	// hold it at once; a lone store loads it.
	_, err := d.Schedule(ctx, task("warm", "w"))
	require.NoError(t, err)
	before := counter.pipelines.Load()

	d.batches.one.mu.Lock()
	d.batches.one.busy = true // as if a lone store were under way
	d.batches.one.mu.Unlock()
	tasks := []driver.NewTask{task("a", "1"), task("b", "1"), task("a", "1"), task("b", "2")}
	stored := make([]driver.Stored, len(tasks))
	errs := make([]error, len(tasks))
	var wg sync.WaitGroup
	var answered atomic.Int32
	for i := range tasks {
		wg.Go(func() {
			stored[i], errs[i] = d.Schedule(ctx, tasks[i])
			answered.Add(1)
		})
		for queued := 0; queued <= i; runtime.Gosched() { // queued in this order
			if answered.Load() > 0 {
				wg.Wait()
				t.Fatalf("a store went out alone while one was under way: %v %v", stored, errs)
			}
			d.batches.one.mu.Lock()
			queued = len(d.batches.one.queue)
			d.batches.one.mu.Unlock()
		}
	}
	d.batches.one.sendQueued(rdb)
	wg.Wait()

	assert.Equal(t, int64(1), counter.pipelines.Load()-before, "one pipeline")
	for i, want := range []driver.Stored{driver.Created, driver.Created, driver.Exists} {
		require.NoError(t, errs[i], "store %d", i)
		assert.Equal(t, want, stored[i], "store %d", i)
	}
	require.ErrorIs(t, errs[3], driver.ErrIDConflict)
}
