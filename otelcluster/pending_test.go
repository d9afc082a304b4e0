package otelcluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/otelcluster/internal/redisserver"
)

// TestPendingGaugesReportTheSampleOfTheReapedPartitions stores tasks due
// in an hour and overdue ones of a kind nobody handles, starts the node,
// which samples at its start, and finds the true pending counts by kind
// and the oldest overdue task's age in the gauges.
func TestPendingGaugesReportTheSampleOfTheReapedPartitions(t *testing.T) {
	e := newEnv(t, map[string]cluster.Handler{"later": ok}, nil)
	ctx := context.Background()
	before := e.collect(t)
	assert.NotContains(t, before, "scheduler.cluster.task.pending", "no sample yet")
	for range 3 {
		_, err := e.n.Schedule(ctx, "later", nil, time.Now().Add(time.Hour))
		require.NoError(t, err)
	}
	overdueSince := time.Now().Add(-5 * time.Second)
	for range 2 {
		_, err := e.n.Schedule(ctx, "nobody", nil, overdueSince)
		require.NoError(t, err)
	}
	e.start(t)
	select {
	case <-e.sampled:
	case <-time.After(20 * time.Second):
		t.Fatal("timed out waiting for the sample at start")
	}

	m := e.collect(t)
	pending := sums(t, m["scheduler.cluster.task.pending"])
	assert.Equal(t, map[string]int64{
		"scheduler.cluster.task.kind=later":  3,
		"scheduler.cluster.task.kind=nobody": 2,
	}, pending)
	c, err := e.n.Counts(ctx)
	require.NoError(t, err)
	assert.Equal(t, c.Pending, pending["scheduler.cluster.task.kind=later"]+pending["scheduler.cluster.task.kind=nobody"])
	overdue := gauges(t, m["scheduler.cluster.task.oldest_overdue"])
	assert.Zero(t, overdue["scheduler.cluster.task.kind=later"])
	assert.GreaterOrEqual(t, overdue["scheduler.cluster.task.kind=nobody"], 4.0)
	assert.Less(t, overdue["scheduler.cluster.task.kind=nobody"], 60.0)
}

// TestARunLostWithItsNodeIsCountedOnceByTheReaper runs a task twice on a
// node that dies (StopNow) while running it. The surviving node's reaper
// returns the task to pending, then, past its limit of one lost run,
// makes it dead: its runs counter counts two lost runs and its dead
// counter the task. The dying nodes time their lost runs but do not count
// them, so that the sum over the nodes counts each lost run once.
func TestARunLostWithItsNodeIsCountedOnceByTheReaper(t *testing.T) {
	addr := redisserver.Start(t)
	reaper := newEnvOn(t, addr, map[string]cluster.Handler{"other": ok}, nil, cluster.WithMaxLostRuns(1))
	reaper.start(t)
	id, err := reaper.n.Schedule(context.Background(), "k", nil, time.Now())
	require.NoError(t, err)
	for i, dead := range []bool{false, true} {
		started := make(chan struct{}, 1)
		dying := newEnvOn(t, addr, map[string]cluster.Handler{"k": func(ctx context.Context, _ cluster.Task) error {
			started <- struct{}{}
			<-ctx.Done()
			return ctx.Err()
		}}, nil)
		dying.start(t)
		select {
		case <-started:
		case <-time.After(20 * time.Second):
			t.Fatalf("timed out waiting for run %d", i+1)
		}
		dying.n.StopNow() // the run is left to its lease
		end := dying.waitEnded(t, 1)[0]
		assert.Equal(t, cluster.OutcomeLost, end.Outcome)
		select {
		case l := <-reaper.lost:
			assert.Equal(t, cluster.LostRun{ID: id, Kind: "k", Dead: dead}, l)
		case <-time.After(20 * time.Second):
			t.Fatalf("timed out waiting for the reaper to find run %d lost", i+1)
		}
		m := dying.collect(t)
		assert.NotContains(t, m, "scheduler.cluster.task.runs", "the dying node counts no run")
		assert.Equal(t, map[string]uint64{"scheduler.cluster.run.outcome=lost,scheduler.cluster.task.kind=k": 1},
			counts(t, m["scheduler.cluster.task.run.duration"]))
	}
	m := reaper.collect(t)
	assert.Equal(t, map[string]int64{"scheduler.cluster.run.outcome=lost,scheduler.cluster.task.kind=k": 2},
		sums(t, m["scheduler.cluster.task.runs"]))
	assert.Equal(t, map[string]int64{"scheduler.cluster.task.kind=k": 1}, sums(t, m["scheduler.cluster.task.dead"]))
}
