package pgdriver_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/pgdriver/internal/pgtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A cluster node on Postgres: the lifecycle a node runs on Redis, end to
// end, through cluster.NewWithDriver.

func TestNodeOnPostgresRunsATaskAtItsDueTimeThenRetriesIt(t *testing.T) {
	runs := make(chan cluster.Task, 4)
	n, _ := nodeOn(t, pgtest.Database(t), map[string]cluster.Handler{
		"flaky": func(_ context.Context, task cluster.Task) error {
			runs <- task
			if task.Attempt == 0 {
				return errors.New("try again")
			}
			return nil
		},
	})
	startNode(t, n)

	due := time.Now().Add(time.Second)
	id, err := n.Schedule(context.Background(), "flaky", []byte("to: ada"), due)
	require.NoError(t, err)
	info, ok, err := n.Get(context.Background(), id)
	require.NoError(t, err)
	require.True(t, ok, "stored once Schedule returned")
	if time.Now().Before(due) { // read before its due time (a loaded machine may take longer)
		assert.Equal(t, cluster.Pending, info.State)
	}

	first := within(t, runs, 10*time.Second, "the first run")
	assert.Equal(t, id, first.ID)
	assert.Equal(t, []byte("to: ada"), first.Payload)
	assert.Equal(t, due.UnixMicro(), first.Due.UnixMicro())
	assert.False(t, time.Now().Before(due), "ran before its due time")
	assert.Equal(t, 1, within(t, runs, 10*time.Second, "the retry").Attempt)
	eventually(t, 10*time.Second, "the completed task to leave the store", func() bool {
		return nodeCounts(t, n) == cluster.Counts{}
	})
}

func TestNodeOnPostgresKeepsATaskDeadPastItsRetries(t *testing.T) {
	n, _ := nodeOn(t, pgtest.Database(t), map[string]cluster.Handler{
		"broken": func(context.Context, cluster.Task) error { return errors.New("no luck") },
	})
	startNode(t, n)
	id, err := n.Schedule(context.Background(), "broken", nil, time.Now(), cluster.WithTaskMaxRetries(1))
	require.NoError(t, err)
	eventually(t, 10*time.Second, "the task to be dead", func() bool {
		info, ok, err := n.Get(context.Background(), id)
		require.NoError(t, err)
		return ok && info.State == cluster.Dead
	})
	info, _, err := n.Get(context.Background(), id)
	require.NoError(t, err)
	assert.Contains(t, info.LastError, "no luck")
}

func TestNodeOnPostgresCancelReachesTheRunOnAnotherNode(t *testing.T) {
	url := pgtest.Database(t)
	// A lease of a minute: without Cancel's notice the run would hold on
	// for far longer than the third of a lease the test waits.
	const lease = time.Minute
	started := make(chan cluster.Task, 2)
	causes := make(chan error, 1)
	a, _ := nodeOn(t, url, map[string]cluster.Handler{"k": func(ctx context.Context, task cluster.Task) error {
		started <- task
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return errors.New("canceled run's error, to be dropped")
	}}, cluster.WithLease(lease))
	startNode(t, a)
	b, _ := nodeOn(t, url, nil, cluster.WithLease(lease))

	id, err := b.Schedule(context.Background(), "k", nil, time.Now())
	require.NoError(t, err)
	within(t, started, 10*time.Second, "the run on A")
	c, err := b.Cancel(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, cluster.Cancellation{Removed: true, WasRunning: true}, c)
	within(t, causes, lease/3, "the run's ctx to be canceled")

	later, err := b.Schedule(context.Background(), "k", nil, time.Now().Add(time.Hour))
	require.NoError(t, err)
	c, err = b.Cancel(context.Background(), later)
	require.NoError(t, err)
	assert.Equal(t, cluster.Cancellation{Removed: true}, c, "a pending task is removed")
	require.NoError(t, a.Stop(context.Background()))
	assert.Equal(t, cluster.Counts{}, nodeCounts(t, b), "nothing left: no retry of the canceled run")
	assert.Empty(t, started, "claimed again after Cancel")
}

func TestNodesOnPostgresRunEachPeriodicOccurrenceOnce(t *testing.T) {
	url := pgtest.Database(t)
	const period = 200 * time.Millisecond
	every := scheduler.TriggerFunc(func(t time.Time) time.Time { return t.Truncate(period).Add(period) })
	var mu sync.Mutex // guards runs
	runs := map[time.Time][]int{}
	var nodes []*cluster.Node
	for i := range 2 {
		// A lease far above the stalls of a busy box, which would expire
		// a live run's lease and make a second run legitimate.
		n, _ := nodeOn(t, url, nil, cluster.WithLease(20*time.Second))
		require.NoError(t, n.Periodic("report", every, func(_ context.Context, task cluster.Task) error {
			mu.Lock()
			runs[task.Due] = append(runs[task.Due], i)
			mu.Unlock()
			return nil
		}, cluster.WithMisfire(cluster.MisfireRunEach)))
		nodes = append(nodes, n)
	}
	for _, n := range nodes {
		startNode(t, n)
	}
	// The occurrences checked start a second after both nodes are up:
	// earlier ones may be skipped (stored by no node yet).
	from := time.Now().Add(time.Second).Truncate(period).Add(period)
	const checked = 10
	eventually(t, 60*time.Second, fmt.Sprintf("%d consecutive occurrences to run", checked), func() bool {
		mu.Lock()
		defer mu.Unlock()
		for k := range checked {
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
	for due, who := range runs {
		assert.Len(t, who, 1, "occurrence %v ran on nodes %v", due, who)
	}
}

func TestTwoNodesOnPostgresShareThePartitions(t *testing.T) {
	url := pgtest.Database(t)
	type ran struct {
		node int
		id   string
	}
	runs := make(chan ran, 64)
	var nodes []*cluster.Node
	for i := range 2 {
		n, _ := nodeOn(t, url, map[string]cluster.Handler{"k": func(_ context.Context, task cluster.Task) error {
			runs <- ran{i, task.ID}
			return nil
		}})
		nodes = append(nodes, n)
	}
	for _, n := range nodes {
		startNode(t, n)
	}
	// Each owns half the partitions once both see each other.
	eventually(t, 20*time.Second, "the nodes to split the partitions", func() bool {
		return nodes[0].Stats().Owned == nodePartitions/2 && nodes[1].Stats().Owned == nodePartitions/2
	})
	const tasks = 40
	want := map[string]bool{}
	for range tasks {
		id, err := nodes[0].Schedule(context.Background(), "k", nil, time.Now())
		require.NoError(t, err)
		want[id] = true
	}
	got := map[string]int{}
	by := map[int]int{}
	for range tasks {
		r := within(t, runs, 20*time.Second, "a run")
		got[r.id]++
		by[r.node]++
	}
	for _, n := range nodes {
		require.NoError(t, n.Stop(context.Background()))
	}
	assert.Empty(t, runs, "a task ran twice")
	for id := range want {
		assert.Equal(t, 1, got[id], "task %s", id)
	}
	assert.Positive(t, by[0], "node 0 ran none of its partitions' tasks")
	assert.Positive(t, by[1], "node 1 ran none of its partitions' tasks")
	t.Logf("runs per node: %v", by)
}
