package cluster_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPeriodicRunsOncePerDueTimeAcrossThreeNodesWithSkewedClocks(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	const period = 100 * time.Millisecond
	var mu sync.Mutex // guards runs
	runs := map[time.Time][]int{}
	var nodes []*cluster.Node
	for i, skew := range []time.Duration{-40 * time.Millisecond, 0, 45 * time.Millisecond} {
		// A lease well above the skew and above the stalls of a
		// busy CI box, which would otherwise expire a live run's lease
		// and make a second run legitimate (delivery is at least once).
		n := newNode(t, srv, nil, cluster.WithClock(skewedClock{scheduler.SystemClock(), skew}), cluster.WithLease(20*time.Second))
		// Each occurrence runs (MisfireRunEach): on a busy machine a
		// claim a period late would coalesce.
		require.NoError(t, n.Periodic("report", everyTick(period), func(_ context.Context, task cluster.Task) error {
			mu.Lock()
			runs[task.Due] = append(runs[task.Due], i)
			mu.Unlock()
			return nil
		}, cluster.WithMisfire(cluster.MisfireRunEach)))
		nodes = append(nodes, n)
	}
	for _, n := range nodes {
		start(t, n)
	}
	// The 20 occurrences checked start a second after every node is up;
	// earlier ones may be skipped (stored by no node yet) and later ones
	// cut short by the stop, but none of these.
	from := firstChecked(time.Now(), period)
	waitFor(t, 60*time.Second, "20 consecutive occurrences to run", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for k := range 20 {
			if len(runs[from.Add(time.Duration(k)*period)]) == 0 {
				return false
			}
		}
		return true
	})
	for _, n := range nodes {
		require.NoError(t, n.Stop(context.Background()))
	}

	mu.Lock()
	defer mu.Unlock()
	by := map[int]int{}
	for due, who := range runs {
		assert.Len(t, who, 1, "occurrence %v ran on nodes %v", due, who)
		by[who[0]]++
	}
	t.Logf("%d occurrences; runs per node (skew -40ms, 0, +45ms): %v", len(runs), by)
}

// firstChecked is the first occurrence of a period-tick trigger that a
// test checks: a second after now, when every node has swept once.
func firstChecked(now time.Time, period time.Duration) time.Time {
	return now.Add(time.Second).Truncate(period).Add(period)
}

func TestPeriodicOccurrenceLostWithItsNodeRunsElsewhere(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	due := time.Now().Add(200 * time.Millisecond).Truncate(time.Millisecond)
	once := scheduler.TriggerFunc(func(t time.Time) time.Time {
		if t.Before(due) {
			return due
		}
		return time.Time{}
	})
	startedA := make(chan cluster.Task, 1)
	a := newNode(t, srv, nil)
	require.NoError(t, a.Periodic("nightly", once, blocking(startedA)))
	start(t, a)
	got := recv(t, startedA, 10*time.Second, "the occurrence on A")
	assert.Equal(t, cluster.OccurrenceID("nightly", due), got.ID)

	ranB := make(chan cluster.Task, 1)
	b := newNode(t, srv, nil)
	require.NoError(t, b.Periodic("nightly", once, func(_ context.Context, task cluster.Task) error {
		ranB <- task
		return nil
	}))
	start(t, b)
	a.StopNow() // A dies mid-run
	again := recv(t, ranB, 10*time.Second, "the occurrence on B")
	assert.Equal(t, got.ID, again.ID)
	assert.Equal(t, 0, again.Attempt)
	assert.Equal(t, 1, again.Lost)
	waitFor(t, 5*time.Second, "the occurrence to complete", func() bool { return counts(t, b) == cluster.Counts{} })
}
