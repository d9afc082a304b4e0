package cluster_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// traceKey is the ctx key under which the tests carry a "trace ID" from a
// Schedule call to the run, through the observer's metadata.
type traceKey struct{}

// recorder is an Observer that keeps what it was told.
type recorder struct {
	claimed chan claim
	ended   chan cluster.RunEnd
	// runCtx receives the trace ID the handler's ctx carried at Ended.
	runCtx chan string

	mu        sync.Mutex // guards scheduled and scripts
	scheduled []string
	scripts   map[string]int // script name → calls
}

type claim struct {
	kind     string
	lateness time.Duration
}

func newRecorder() *recorder {
	return &recorder{
		claimed: make(chan claim, 16),
		ended:   make(chan cluster.RunEnd, 16),
		runCtx:  make(chan string, 16),
		scripts: map[string]int{},
	}
}

// observer returns the Observer: metadata carries the ctx's trace ID, and
// Run puts it back in the handler's ctx.
func (r *recorder) observer() cluster.Observer {
	return cluster.Observer{
		Metadata: func(ctx context.Context, kind string) map[string]string {
			id, _ := ctx.Value(traceKey{}).(string)
			if id == "" {
				return nil
			}
			return map[string]string{"trace": id, "kind": kind}
		},
		Scheduled: func(_ context.Context, kind string) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.scheduled = append(r.scheduled, kind)
		},
		Claimed: func(kind string, lateness time.Duration) { r.claimed <- claim{kind, lateness} },
		Run: func(ctx context.Context, _ cluster.Task, meta map[string]string) context.Context {
			return context.WithValue(ctx, traceKey{}, meta["trace"])
		},
		Ended: func(ctx context.Context, e cluster.RunEnd) {
			id, _ := ctx.Value(traceKey{}).(string)
			r.runCtx <- id
			r.ended <- e
		},
		RedisCall: func(c cluster.RedisCall) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.scripts[c.Script]++
		},
	}
}

func (r *recorder) scriptCalls(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.scripts[name]
}

func (r *recorder) scheduledKinds() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.scheduled...)
}

func TestObserverFollowsATaskFromScheduleToSuccessWithItsMetadata(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rec := newRecorder()
	seen := make(chan string, 1)
	n := newNode(t, srv, map[string]cluster.Handler{"mail": func(ctx context.Context, _ cluster.Task) error {
		id, _ := ctx.Value(traceKey{}).(string)
		seen <- id
		return nil
	}}, cluster.WithObserver(rec.observer()))
	start(t, n)

	ctx := context.WithValue(context.Background(), traceKey{}, "trace-1")
	due := time.Now()
	id, err := n.Schedule(ctx, "mail", []byte("x"), due, cluster.WithID("mail-1"))
	require.NoError(t, err)
	// The same task again is no new task: not reported.
	_, err = n.Schedule(ctx, "mail", []byte("x"), due, cluster.WithID("mail-1"))
	require.NoError(t, err)

	assert.Equal(t, "trace-1", recv(t, seen, 10*time.Second, "the run"), "the handler's ctx is Run's")
	c := recv(t, rec.claimed, 10*time.Second, "the claim")
	assert.Equal(t, "mail", c.kind)
	assert.GreaterOrEqual(t, c.lateness, time.Duration(0))
	assert.Equal(t, "trace-1", recv(t, rec.runCtx, 10*time.Second, "Ended"), "Ended gets Run's ctx")
	e := recv(t, rec.ended, time.Second, "the run's end")
	assert.Equal(t, cluster.OutcomeSucceeded, e.Outcome)
	assert.Equal(t, id, e.Task.ID)
	assert.Equal(t, "mail", e.Task.Kind)
	assert.False(t, e.Dead)
	assert.NoError(t, e.Err)
	assert.Positive(t, e.Duration)
	assert.Equal(t, []string{"mail"}, rec.scheduledKinds())
	for _, script := range []string{"schedule", "claim", "complete", "members"} {
		assert.Positive(t, rec.scriptCalls(script), "calls of the %s script", script)
	}
	assert.Zero(t, rec.scriptCalls("script"), "every script the node ran has a name")
}

func TestObserverSeesAFailureTheRetryAndTheDeath(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rec := newRecorder()
	boom := errors.New("boom")
	n := newNode(t, srv, map[string]cluster.Handler{"flaky": func(context.Context, cluster.Task) error {
		return boom
	}}, cluster.WithObserver(rec.observer()))
	start(t, n)
	_, err := n.Schedule(context.Background(), "flaky", nil, time.Now(), cluster.WithTaskMaxRetries(1))
	require.NoError(t, err)

	first := recv(t, rec.ended, 10*time.Second, "the first run's end")
	assert.Equal(t, cluster.OutcomeFailed, first.Outcome)
	assert.False(t, first.Dead, "one retry left")
	assert.ErrorIs(t, first.Err, boom)
	second := recv(t, rec.ended, 10*time.Second, "the retry's end")
	assert.Equal(t, cluster.OutcomeFailed, second.Outcome)
	assert.True(t, second.Dead, "no retry left")
	assert.Equal(t, 1, second.Task.Attempt)
	assert.Equal(t, "", recv(t, rec.runCtx, time.Second, "Ended"), "no metadata without a trace in Schedule's ctx")
}

func TestObserverSeesAPanicAsAFailureWithItsPanicError(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rec := newRecorder()
	n := newNode(t, srv, map[string]cluster.Handler{"p": func(context.Context, cluster.Task) error {
		panic("kaput")
	}}, cluster.WithObserver(rec.observer()))
	start(t, n)
	_, err := n.Schedule(context.Background(), "p", nil, time.Now(), cluster.WithTaskMaxRetries(0))
	require.NoError(t, err)
	e := recv(t, rec.ended, 10*time.Second, "the run's end")
	assert.Equal(t, cluster.OutcomeFailed, e.Outcome)
	assert.True(t, e.Dead)
	var pe *scheduler.PanicError
	assert.ErrorAs(t, e.Err, &pe)
}

func TestObserverSeesATimeout(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rec := newRecorder()
	n := newNode(t, srv, map[string]cluster.Handler{"slow": func(ctx context.Context, _ cluster.Task) error {
		<-ctx.Done()
		return ctx.Err()
	}}, cluster.WithObserver(rec.observer()), cluster.WithTaskTimeout(50*time.Millisecond))
	start(t, n)
	_, err := n.Schedule(context.Background(), "slow", nil, time.Now(), cluster.WithTaskMaxRetries(0))
	require.NoError(t, err)
	e := recv(t, rec.ended, 10*time.Second, "the run's end")
	assert.Equal(t, cluster.OutcomeTimedOut, e.Outcome)
	assert.True(t, e.Dead)
	assert.ErrorIs(t, e.Err, cluster.ErrTaskTimeout)
	assert.GreaterOrEqual(t, e.Duration, 50*time.Millisecond)
}

func TestObserverSeesAHandlerAbandonedPastItsTimeLimitOnce(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rec := newRecorder()
	hang := make(chan struct{})
	n := newNode(t, srv, nil, cluster.WithObserver(rec.observer()))
	require.NoError(t, n.Handle("hangs", func(context.Context, cluster.Task) error {
		<-hang
		return nil
	}, cluster.WithTaskTimeout(50*time.Millisecond)))
	start(t, n)
	_, err := n.Schedule(context.Background(), "hangs", nil, time.Now(), cluster.WithTaskMaxRetries(0))
	require.NoError(t, err)
	e := recv(t, rec.ended, 10*time.Second, "the watchdog's report")
	assert.Equal(t, cluster.OutcomeTimedOut, e.Outcome)
	assert.True(t, e.Dead)
	assert.GreaterOrEqual(t, e.Duration, 50*time.Millisecond+testLease/10, "the limit and the grace")

	close(hang) // the handler returns now; its late result is dropped
	require.NoError(t, n.Stop(context.Background()), "Stop waits for the handler")
	assert.Empty(t, rec.ended, "the abandoned run is reported once")
}

// startObservedRun starts a node with rec as its observer and schedules one
// task of kind "k" whose handler waits for its ctx; it returns when the run
// has started.
func startObservedRun(t *testing.T, rec *recorder) (*cluster.Node, string) {
	t.Helper()
	srv := redistest.Start(t, redistest.Options{})
	started := make(chan struct{}, 1)
	n := newNode(t, srv, map[string]cluster.Handler{"k": func(ctx context.Context, _ cluster.Task) error {
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	}}, cluster.WithObserver(rec.observer()))
	start(t, n)
	id, err := n.Schedule(context.Background(), "k", nil, time.Now())
	require.NoError(t, err)
	recv(t, started, 10*time.Second, "the run")
	return n, id
}

func TestObserverSeesARunCanceledByCancel(t *testing.T) {
	rec := newRecorder()
	n, id := startObservedRun(t, rec)
	_, err := n.Cancel(context.Background(), id)
	require.NoError(t, err)
	e := recv(t, rec.ended, 10*time.Second, "the run's end")
	assert.Equal(t, cluster.OutcomeCanceled, e.Outcome)
	assert.False(t, e.Dead)
}

func TestObserverSeesARunLeftToItsLeaseByStopNowAsLost(t *testing.T) {
	rec := newRecorder()
	n, _ := startObservedRun(t, rec)
	n.StopNow()
	e := recv(t, rec.ended, time.Second, "the run's end")
	assert.Equal(t, cluster.OutcomeLost, e.Outcome)
}

func TestObserverSeesARunHandedBackByStop(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rec := newRecorder()
	started := make(chan struct{}, 1)
	n := newNode(t, srv, map[string]cluster.Handler{"k": func(ctx context.Context, _ cluster.Task) error {
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	}}, cluster.WithObserver(rec.observer()))
	start(t, n)
	_, err := n.Schedule(context.Background(), "k", nil, time.Now())
	require.NoError(t, err)
	recv(t, started, 10*time.Second, "the run")
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Stop's ctx is over at once: the run is handed back
	assert.ErrorIs(t, n.Stop(ctx), context.Canceled)
	e := recv(t, rec.ended, time.Second, "the run's end")
	assert.Equal(t, cluster.OutcomeHandedBack, e.Outcome)
	assert.Equal(t, int64(1), counts(t, n).Pending, "back to pending")
}

func TestObserverMetadataBeyondTheLimitFailsScheduleAndStoresNothing(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	n := newNode(t, srv, nil, cluster.WithObserver(cluster.Observer{
		Metadata: func(context.Context, string) map[string]string {
			return map[string]string{"big": strings.Repeat("x", cluster.MaxMetadata)}
		},
	}))
	_, err := n.Schedule(context.Background(), "k", nil, time.Now())
	require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "cluster: schedule k: observer metadata of")
	assert.Equal(t, cluster.Counts{}, counts(t, n))
}

func TestStatsCountTheWindowAndTheRunning(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	n := newNode(t, srv, map[string]cluster.Handler{"k": func(context.Context, cluster.Task) error {
		started <- struct{}{}
		<-release
		return nil
	}})
	t.Cleanup(func() { close(release) }) // runs before the node's StopNow (cleanups run last first), which waits for the handler
	assert.Equal(t, cluster.Stats{}, n.Stats(), "a node not started holds nothing")
	start(t, n)
	ctx := context.Background()
	_, err := n.Schedule(ctx, "k", nil, time.Now())
	require.NoError(t, err)
	_, err = n.Schedule(ctx, "k", nil, time.Now().Add(time.Hour/2)) // beyond the test window: not loaded
	require.NoError(t, err)
	_, err = n.Schedule(ctx, "k", nil, time.Now().Add(4*time.Second)) // within it
	require.NoError(t, err)
	recv(t, started, 10*time.Second, "the first run")
	assert.Equal(t, cluster.Stats{Running: 1, Windowed: 1, Owned: cluster.DefaultPartitions}, n.Stats(),
		"a node alone owns every partition and backs up none")
}
