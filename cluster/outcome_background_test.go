package cluster_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// heldCompletions is the Redis driver with its completions held until
// release is closed: each Complete says on entered that it was called,
// then waits.
type heldCompletions struct {
	*redisdriver.Driver
	entered chan string   // the ID of each completion called
	release chan struct{} // closed: completions go through
	once    sync.Once     // guards the close of release
}

func (h *heldCompletions) Complete(ctx context.Context, id, kind, owner string, retention time.Duration, keep driver.KeepDone, tl driver.Timeline) (driver.Recorded, error) {
	h.entered <- id
	<-h.release
	return h.Driver.Complete(ctx, id, kind, owner, retention, keep, tl)
}

func (h *heldCompletions) let() { h.once.Do(func() { close(h.release) }) }

// TestAWorkerIsFreeWhenItsHandlerReturns: a node of one worker starts its
// next due task while the completion of the one before is still being
// written, and both completions then go through: the outcome is written
// in the background, not on the worker.
func TestAWorkerIsFreeWhenItsHandlerReturns(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	h := &heldCompletions{
		Driver:  redisdriver.New(client(t, srv), redisdriver.Options{Prefix: cluster.DefaultPrefix, Partitions: 8}),
		entered: make(chan string, 4),
		release: make(chan struct{}),
	}
	// A lease far longer than the waits below: a completion held past
	// its deadline (derived from the lease) would free the worker too.
	n, err := cluster.NewWithDriver(h, append(testOptions(), cluster.WithConcurrency(1), cluster.WithLease(time.Minute))...)
	require.NoError(t, err)
	t.Cleanup(n.StopNow)
	t.Cleanup(h.let) // before StopNow: it waits for the held completions
	started := make(chan string, 4)
	require.NoError(t, n.Handle("quick", func(_ context.Context, task cluster.Task) error {
		started <- task.ID
		return nil
	}))
	start(t, n)

	first, err := n.Schedule(context.Background(), "quick", nil, time.Now())
	require.NoError(t, err)
	assert.Equal(t, first, recv(t, started, 10*time.Second, "the first run"))
	assert.Equal(t, first, recv(t, h.entered, 10*time.Second, "the first completion, held"))

	second, err := n.Schedule(context.Background(), "quick", nil, time.Now())
	require.NoError(t, err)
	assert.Equal(t, second, recv(t, started, 10*time.Second, "the second run, while the first completion is held"))
	assert.Equal(t, second, recv(t, h.entered, 10*time.Second, "the second completion, held"))

	h.let()
	waitFor(t, 10*time.Second, "both tasks to be completed", func() bool {
		return counts(t, n) == cluster.Counts{}
	})
}
