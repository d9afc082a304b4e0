package cluster_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runLog records the runs of a node's handlers, in order.
type runLog struct {
	mu   sync.Mutex // guards runs
	runs []cluster.Task
	ran  chan cluster.Task // every run, as it starts
}

func newRunLog() *runLog { return &runLog{ran: make(chan cluster.Task, 1000)} }

func (l *runLog) handler(_ context.Context, task cluster.Task) error {
	l.mu.Lock()
	l.runs = append(l.runs, task)
	l.mu.Unlock()
	l.ran <- task
	return nil
}

// ofKind returns how many runs of kind were logged, and the count of each
// ID.
func (l *runLog) ofKind(kind string) (int, map[string]int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, byID := 0, map[string]int{}
	for _, r := range l.runs {
		if r.Kind == kind {
			n++
			byID[r.ID]++
		}
	}
	return n, byID
}

func TestPausedKindWaitsWithItsDueTimesWhileOthersRunAndAllRunAfterResume(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	log := newRunLog()
	holding := make(chan struct{})
	holdStarted := make(chan struct{})
	w := newNode(t, srv, map[string]cluster.Handler{
		"a": log.handler,
		"b": log.handler,
		"hold": func(ctx context.Context, task cluster.Task) error {
			close(holdStarted)
			<-holding
			return nil
		},
	}, cluster.WithConcurrency(4))
	start(t, w)
	ops := newNode(t, srv, nil) // a producer: never started, no handlers

	// A task of the kind to pause is running when the pause comes: it
	// finishes.
	held, err := ops.Schedule(ctx, "hold", nil, time.Now())
	require.NoError(t, err)
	<-holdStarted
	require.NoError(t, ops.Pause(ctx, "hold"))
	require.NoError(t, ops.Pause(ctx, "a"))
	require.NoError(t, ops.Pause(ctx, "a"), "pausing twice is a no-op")
	kinds, err := w.PausedKinds(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "hold"}, kinds, "the pause is visible to every node")
	close(holding)
	waitFor(t, 10*time.Second, "the held run to finish", func() bool {
		_, ok, err := ops.Get(ctx, held)
		return err == nil && !ok
	})

	// Tasks of "a" fall due while paused, among tasks of "b"; a last "b"
	// task falls due after every "a" task.
	now := time.Now()
	due := map[string]time.Time{}
	for i := range 20 {
		d := now.Add(time.Duration(i-10) * 10 * time.Millisecond).Truncate(time.Microsecond)
		id, err := ops.Schedule(ctx, "a", nil, d, cluster.WithID(fmt.Sprintf("a%02d", i)))
		require.NoError(t, err)
		due[id] = d
		_, err = ops.Schedule(ctx, "b", nil, d)
		require.NoError(t, err)
	}
	_, err = ops.Schedule(ctx, "b", nil, now.Add(300*time.Millisecond), cluster.WithID("last-b"))
	require.NoError(t, err)
	for range 21 {
		task := recv(t, log.ran, 10*time.Second, "the runs of b")
		require.Equal(t, "b", task.Kind, "a task of the paused kind ran")
	}
	nA, _ := log.ofKind("a")
	require.Zero(t, nA, "a task of the paused kind ran")
	// The log sees a run start; its task leaves the store only once the
	// handler has returned and the node has recorded it.
	waitFor(t, 10*time.Second, "the runs of b to complete", func() bool {
		return counts(t, ops) == cluster.Counts{Pending: 20}
	})

	info := get(t, ops, "a03")
	assert.Equal(t, cluster.Pending, info.State)
	assert.True(t, info.Paused)
	assert.Equal(t, due["a03"], info.Due)
	total, byKind, err := ops.CountsByKind(ctx)
	require.NoError(t, err)
	assert.Equal(t, cluster.Counts{Pending: 20}, total, "paused tasks count as pending")
	assert.Equal(t, []cluster.KindCounts{
		{Kind: "a", Counts: cluster.Counts{Pending: 20}, Paused: true},
		{Kind: "hold", Paused: true},
	}, byKind)
	page, err := ops.List(ctx, cluster.ListQuery{State: cluster.Pending, Limit: 100})
	require.NoError(t, err)
	require.Len(t, page.Tasks, 20, "listing every pending task shows the paused ones")
	for i, info := range page.Tasks {
		assert.Equal(t, fmt.Sprintf("a%02d", i), info.ID)
		assert.True(t, info.Paused)
	}

	require.NoError(t, ops.Resume(ctx, "a"))
	require.NoError(t, ops.Resume(ctx, "a"), "resuming a kind not paused is a no-op")
	require.NoError(t, ops.Resume(ctx, "hold"))
	for range 20 {
		task := recv(t, log.ran, 10*time.Second, "the runs of a after the resume")
		require.Equal(t, "a", task.Kind)
		assert.Equal(t, due[task.ID], task.Due, "the due time is kept")
	}
	waitFor(t, 10*time.Second, "the store to empty", func() bool { return counts(t, ops) == cluster.Counts{} })
	_, byID := log.ofKind("a")
	assert.Len(t, byID, 20)
	for id, k := range byID {
		assert.Equal(t, 1, k, "task %s ran %d times", id, k)
	}
	kinds, err = ops.PausedKinds(ctx)
	require.NoError(t, err)
	assert.Empty(t, kinds)
}

func TestPausedKindRetryWaitsForTheResume(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	failed := make(chan struct{}, 1)
	ran := make(chan cluster.Task, 1)
	release := make(chan struct{})
	w := newNode(t, srv, map[string]cluster.Handler{"a": func(ctx context.Context, task cluster.Task) error {
		if task.Attempt == 0 {
			<-release
			failed <- struct{}{}
			return fmt.Errorf("first run fails")
		}
		ran <- task
		return nil
	}})
	start(t, w)
	id, err := w.Schedule(ctx, "a", nil, time.Now())
	require.NoError(t, err)
	waitFor(t, 10*time.Second, "the first run", func() bool {
		info, ok, err := w.Get(ctx, id)
		return err == nil && ok && info.State == cluster.Running
	})
	require.NoError(t, w.Pause(ctx, "a"))
	close(release)
	<-failed
	waitFor(t, 10*time.Second, "the failure recorded", func() bool {
		info, ok, err := w.Get(ctx, id)
		return err == nil && ok && info.State == cluster.Pending && info.Retrying && info.Paused
	})
	// The retry is due 5 ms after the failure, and paused; a task of the
	// same kind stored with RunNow stays waiting too.
	require.NoError(t, w.RunNow(ctx, id))
	page, err := w.List(ctx, cluster.ListQuery{State: cluster.Pending, Kind: "a", Limit: 10})
	require.NoError(t, err)
	require.Len(t, page.Tasks, 1)
	assert.True(t, page.Tasks[0].Paused)
	select {
	case <-ran:
		t.Fatal("the retry of a paused kind ran")
	default:
	}
	require.NoError(t, w.Resume(ctx, "a"))
	task := recv(t, ran, 10*time.Second, "the retry after the resume")
	assert.Equal(t, 1, task.Attempt)
}
