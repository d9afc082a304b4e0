package cluster_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// get reads task id through n, failing t if it is not stored.
func get(t *testing.T, n *cluster.Node, id string) cluster.Info {
	t.Helper()
	info, ok, err := n.Get(context.Background(), id)
	require.NoError(t, err)
	require.True(t, ok, "task %s not stored", id)
	return info
}

// outcomes lists the outcomes of a history, oldest first.
func outcomes(h []cluster.RunRecord) []cluster.Outcome {
	var out []cluster.Outcome
	for _, r := range h {
		out = append(out, r.Outcome)
	}
	return out
}

// checkRecords checks what every record of a history must hold: a node
// (but for a cancellation of a task not running), and a start no later
// than its end, both recent by Redis's clock.
func checkRecords(t *testing.T, h []cluster.RunRecord) {
	t.Helper()
	for i, r := range h {
		if r.Node == "" && r.Outcome != cluster.OutcomeCanceled {
			t.Errorf("record %d has no node: %+v", i, r)
		}
		if r.End.Before(r.Start) || time.Since(r.Start) > time.Minute || time.Since(r.End) > time.Minute {
			t.Errorf("record %d times: %+v", i, r)
		}
	}
}

func TestHistoryRecordsAFailedRunThenTheRetryThatSucceeded(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	ran := make(chan cluster.Task, 2)
	w := newNode(t, srv, map[string]cluster.Handler{"k": func(_ context.Context, task cluster.Task) error {
		ran <- task
		if task.Attempt == 0 {
			return errors.New("boom")
		}
		return nil
	}}, cluster.WithKeepDone(time.Hour, 100))
	start(t, w)
	id, err := w.Schedule(ctx, "k", []byte("p"), time.Now())
	require.NoError(t, err)
	recv(t, ran, 10*time.Second, "the first run")
	recv(t, ran, 10*time.Second, "the retry")
	waitFor(t, 10*time.Second, "the done record", func() bool {
		info, ok, err := w.Get(ctx, id)
		return err == nil && ok && info.State == cluster.Done
	})

	info := get(t, w, id)
	assert.Equal(t, []cluster.Outcome{cluster.OutcomeFailed, cluster.OutcomeSucceeded}, outcomes(info.History))
	checkRecords(t, info.History)
	assert.Equal(t, "boom", info.History[0].Error)
	assert.Equal(t, "", info.History[1].Error)
	for _, r := range info.History {
		assert.Equal(t, w.Name(), r.Node)
	}
	assert.False(t, info.History[1].Start.Before(info.History[0].End), "the retry started after the failed run ended")
	assert.Equal(t, info.History[1].End, info.Finished)
	assert.Equal(t, "p", string(info.Payload))
	assert.Equal(t, 1, info.Attempt)
	assert.Equal(t, "boom", info.LastError)
	assert.False(t, info.Retrying)
	assert.Equal(t, cluster.Counts{Done: 1}, counts(t, w))
}

func TestHistoryOfADeadTaskHoldsEveryFailedRun(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	w := newNode(t, srv, map[string]cluster.Handler{"k": func(context.Context, cluster.Task) error {
		return errors.New("always")
	}}, cluster.WithMaxRetries(2))
	start(t, w)
	id, err := w.Schedule(ctx, "k", nil, time.Now())
	require.NoError(t, err)
	waitFor(t, 10*time.Second, "the task dead", func() bool {
		info, ok, err := w.Get(ctx, id)
		return err == nil && ok && info.State == cluster.Dead
	})
	info := get(t, w, id)
	assert.Equal(t, []cluster.Outcome{cluster.OutcomeFailed, cluster.OutcomeFailed, cluster.OutcomeFailed}, outcomes(info.History))
	checkRecords(t, info.History)
	for _, r := range info.History {
		assert.Equal(t, "always", r.Error)
	}
	assert.False(t, info.Retrying, "a dead task is not retrying")
}

func TestAPendingTaskAfterAFailureIsRetryingAndARunningOneNamesItsOwner(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	started := make(chan cluster.Task, 1)
	release := make(chan struct{})
	w := newNode(t, srv, map[string]cluster.Handler{
		"fail": func(context.Context, cluster.Task) error { return errors.New("boom") },
		"hold": func(ctx context.Context, task cluster.Task) error {
			started <- task
			<-release
			return nil
		},
	}, cluster.WithBackoff(func(int) time.Duration { return time.Hour }))
	start(t, w)
	failing, err := w.Schedule(ctx, "fail", nil, time.Now())
	require.NoError(t, err)
	waitFor(t, 10*time.Second, "the failed run recorded", func() bool {
		info, ok, err := w.Get(ctx, failing)
		return err == nil && ok && len(info.History) == 1
	})
	info := get(t, w, failing)
	assert.Equal(t, cluster.Pending, info.State)
	assert.True(t, info.Retrying, "pending after a failed run")
	assert.Equal(t, cluster.OutcomeFailed, info.History[0].Outcome)
	assert.Empty(t, info.Owner)

	held, err := w.Schedule(ctx, "hold", nil, time.Now())
	require.NoError(t, err)
	recv(t, started, 10*time.Second, "the held run")
	info = get(t, w, held)
	assert.Equal(t, cluster.Running, info.State)
	assert.Equal(t, w.Name(), info.Owner)
	assert.False(t, info.Started.IsZero())
	assert.Empty(t, info.History, "no run ended yet")
	close(release)
}

func TestHistoryRecordsALeaseLostWithItsNodeAndTheRunThatFollowed(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	startedA := make(chan cluster.Task, 1)
	a := newNode(t, srv, map[string]cluster.Handler{"k": blocking(startedA)})
	start(t, a)
	id, err := a.Schedule(ctx, "k", nil, time.Now())
	require.NoError(t, err)
	recv(t, startedA, 10*time.Second, "the run on A")
	a.StopNow()

	ranB := make(chan cluster.Task, 1)
	b := newNode(t, srv, map[string]cluster.Handler{
		"k": func(_ context.Context, task cluster.Task) error { ranB <- task; return nil },
	}, cluster.WithKeepDone(time.Hour, 10))
	start(t, b)
	recv(t, ranB, 10*time.Second, "the run on B after A's lease expired")
	waitFor(t, 10*time.Second, "the done record", func() bool {
		info, ok, err := b.Get(ctx, id)
		return err == nil && ok && info.State == cluster.Done
	})
	info := get(t, b, id)
	assert.Equal(t, []cluster.Outcome{cluster.OutcomeLost, cluster.OutcomeSucceeded}, outcomes(info.History))
	checkRecords(t, info.History)
	assert.Equal(t, a.Name(), info.History[0].Node)
	assert.Contains(t, info.History[0].Error, "lease expired")
	assert.Equal(t, b.Name(), info.History[1].Node)
	assert.Equal(t, 1, info.Lost)
}

func TestHistoryRecordsATimeoutAndAHandBack(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	started := make(chan cluster.Task, 2)
	a := newNode(t, srv, map[string]cluster.Handler{"k": blocking(started)},
		cluster.WithTaskTimeout(50*time.Millisecond), cluster.WithBackoff(func(int) time.Duration { return time.Hour }))
	start(t, a)
	id, err := a.Schedule(ctx, "k", nil, time.Now())
	require.NoError(t, err)
	recv(t, started, 10*time.Second, "the run")
	waitFor(t, 10*time.Second, "the timed-out run recorded", func() bool {
		info, ok, err := a.Get(ctx, id)
		return err == nil && ok && len(info.History) == 1
	})
	info := get(t, a, id)
	assert.Equal(t, cluster.OutcomeTimedOut, info.History[0].Outcome)
	assert.Contains(t, info.History[0].Error, "time limit")

	// Run it again at once on another node, and stop that node before the
	// handler returns: Stop hands the task back.
	a.StopNow()
	b := newNode(t, srv, map[string]cluster.Handler{"k": blocking(started)})
	start(t, b)
	require.NoError(t, b.RunNow(ctx, id))
	recv(t, started, 10*time.Second, "the second run")
	stopCtx, cancel := context.WithCancel(ctx)
	cancel()
	assert.ErrorIs(t, b.Stop(stopCtx), context.Canceled)
	info = get(t, b, id)
	assert.Equal(t, cluster.Pending, info.State)
	assert.Equal(t, []cluster.Outcome{cluster.OutcomeTimedOut, cluster.OutcomeHandedBack}, outcomes(info.History))
	assert.Equal(t, []string{a.Name(), b.Name()}, []string{info.History[0].Node, info.History[1].Node})
	checkRecords(t, info.History)
	assert.True(t, info.Retrying, "pending after a timed-out run")
}

func TestCancelWithKeepDoneKeepsACanceledRecord(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	started := make(chan cluster.Task, 1)
	w := newNode(t, srv, map[string]cluster.Handler{"k": blocking(started)}, cluster.WithKeepDone(time.Hour, 10))
	start(t, w)
	running, err := w.Schedule(ctx, "k", nil, time.Now())
	require.NoError(t, err)
	recv(t, started, 10*time.Second, "the run")
	waiting, err := w.Schedule(ctx, "k", nil, time.Now().Add(time.Hour))
	require.NoError(t, err)

	c, err := w.Cancel(ctx, running)
	require.NoError(t, err)
	assert.Equal(t, cluster.Cancellation{Removed: true, WasRunning: true}, c)
	c, err = w.Cancel(ctx, waiting)
	require.NoError(t, err)
	assert.Equal(t, cluster.Cancellation{Removed: true}, c)

	info := get(t, w, running)
	assert.Equal(t, cluster.Done, info.State)
	assert.Equal(t, []cluster.Outcome{cluster.OutcomeCanceled}, outcomes(info.History))
	assert.Equal(t, w.Name(), info.History[0].Node)
	info = get(t, w, waiting)
	assert.Equal(t, cluster.Done, info.State)
	assert.Equal(t, []cluster.Outcome{cluster.OutcomeCanceled}, outcomes(info.History))
	assert.Equal(t, "", info.History[0].Node)
	checkRecords(t, info.History)

	// Canceling a done record removes it.
	c, err = w.Cancel(ctx, waiting)
	require.NoError(t, err)
	assert.True(t, c.Removed)
	_, ok, err := w.Get(ctx, waiting)
	require.NoError(t, err)
	assert.False(t, ok)
}

func TestHistoryKeepsTheLastRuns(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	const runs = cluster.MaxHistory + 3
	w := newNode(t, srv, map[string]cluster.Handler{"k": func(_ context.Context, task cluster.Task) error {
		return errors.New("run " + string(rune('a'+task.Attempt)))
	}}, cluster.WithMaxRetries(runs-1))
	start(t, w)
	id, err := w.Schedule(ctx, "k", nil, time.Now())
	require.NoError(t, err)
	waitFor(t, 20*time.Second, "the task dead", func() bool {
		info, ok, err := w.Get(ctx, id)
		return err == nil && ok && info.State == cluster.Dead
	})
	info := get(t, w, id)
	require.Len(t, info.History, cluster.MaxHistory)
	assert.Equal(t, "run "+string(rune('a'+runs-cluster.MaxHistory)), info.History[0].Error, "the oldest runs were dropped")
	assert.Equal(t, "run "+string(rune('a'+runs-1)), info.History[cluster.MaxHistory-1].Error)
}
