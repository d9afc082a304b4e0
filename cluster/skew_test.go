package cluster_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNodeWhoseClockRunsAheadNeverStartsATaskBeforeItsDueTimeByRedisClock(t *testing.T) {
	// A clock steadily 1.5 s ahead, which the node measures and corrects
	// for, and one that jumps between right and 1.5 s ahead at every
	// reading, which defeats the correction: only the claim's check on
	// Redis's clock keeps its tasks from starting early.
	for name, clk := range map[string]scheduler.Clock{
		"ahead":   skewedClock{scheduler.SystemClock(), 1500 * time.Millisecond},
		"erratic": &erraticClock{Clock: scheduler.SystemClock(), off: 1500 * time.Millisecond},
	} {
		t.Run(name, func(t *testing.T) { neverEarly(t, clk) })
	}
}

// neverEarly runs 20 tasks on a node with clock clk and checks that none
// started before its due time by Redis's clock.
func neverEarly(t *testing.T, clk scheduler.Clock) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := client(t, srv)
	const n = 20
	var mu sync.Mutex // guards early and ran
	var early []time.Duration
	ran := 0
	all := make(chan struct{})
	node := newNode(t, srv, map[string]cluster.Handler{"k": func(ctx context.Context, task cluster.Task) error {
		now, err := rdb.Time(ctx).Result()
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		if now.Before(task.Due) {
			early = append(early, task.Due.Sub(now))
		}
		if ran++; ran == n {
			close(all)
		}
		return nil
	}}, cluster.WithClock(clk))
	start(t, node)
	from := time.Now().Add(500 * time.Millisecond)
	for i := range n {
		_, err := node.Schedule(context.Background(), "k", nil, from.Add(time.Duration(i)*50*time.Millisecond))
		require.NoError(t, err)
	}
	recv(t, all, 30*time.Second, "every task to run")
	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, early, "runs started before their due time by Redis's clock, by these amounts")
}

// erraticClock reads right and off ahead in turn.
type erraticClock struct {
	scheduler.Clock
	off   time.Duration
	calls atomic.Int64
}

func (c *erraticClock) Now() time.Time {
	if c.calls.Add(1)%2 == 0 {
		return c.Clock.Now().Add(c.off)
	}
	return c.Clock.Now()
}

func TestHandBackKeepsTheTasksDueTime(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := client(t, srv)
	started := make(chan cluster.Task, 1)
	a := newNode(t, srv, map[string]cluster.Handler{"k": blocking(started)}, cluster.WithLease(time.Minute))
	start(t, a)
	due := time.Now().Add(-time.Hour).Truncate(time.Microsecond)
	id, err := a.Schedule(context.Background(), "k", nil, due)
	require.NoError(t, err)
	recv(t, started, 10*time.Second, "the run")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, a.Stop(ctx), context.DeadlineExceeded)
	score, err := rdb.ZScore(context.Background(), cluster.PartitionKey("{scheduler}", id, "pending"), id).Result()
	require.NoError(t, err, "handed back to pending")
	assert.Equal(t, float64(due.UnixMicro()), score, "pending again for its own due time, not for the time of the hand-back")
}
