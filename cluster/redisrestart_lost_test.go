package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTwoRedisRestartsWhileTheHandlerKeepsSucceedingDoNotMakeTheTaskDead(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{AOF: true})
	started := make(chan cluster.Task, 4)
	lostLease := make(chan struct{}, 4)
	n := newNode(t, srv, map[string]cluster.Handler{"k": func(ctx context.Context, task cluster.Task) error {
		started <- task
		if task.Lost < 2 {
			// Holds until the node gives the lease up as lost
			// (Redis is down), then succeeds all the same.
			<-ctx.Done()
			lostLease <- struct{}{}
		}
		return nil
	}})
	start(t, n)
	// No retry at all: a lost run that counted as a failed attempt would
	// make the task dead at the first restart.
	id, err := n.Schedule(context.Background(), "k", nil, time.Now(), cluster.WithTaskMaxRetries(0))
	require.NoError(t, err)
	for restart := range 2 {
		got := recv(t, started, 30*time.Second, "a run")
		assert.Equal(t, restart, got.Lost)
		srv.Kill()
		recv(t, lostLease, 30*time.Second, "the node to give the lease up while Redis is down")
		require.NoError(t, srv.Restart())
	}
	last := recv(t, started, 30*time.Second, "the run after the second restart")
	assert.Equal(t, 2, last.Lost, "two runs lost to the restarts")
	assert.Equal(t, 0, last.Attempt, "none of them used up a retry")
	waitFor(t, 20*time.Second, "the task to complete", func() bool {
		_, ok, err := n.Get(context.Background(), id)
		return err == nil && !ok
	})
	assert.Equal(t, cluster.Counts{}, counts(t, n))
}
