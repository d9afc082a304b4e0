package cluster_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gauge counts the runs going on at once and remembers the most.
type gauge struct {
	mu        sync.Mutex // guards now and peak
	now, peak int
}

func (g *gauge) enter() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.now++
	g.peak = max(g.peak, g.now)
}

func (g *gauge) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.now--
}

func (g *gauge) most() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.peak
}

func TestKindConcurrencyLimitsRunsOfAKindAndHoldsUpNoOtherKind(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	var slow gauge
	startedSlow := make(chan string, 4)
	release := make(chan struct{})
	ranFast := make(chan string, 1)
	n, err := cluster.New(client(t, srv), append(testOptions(), cluster.WithConcurrency(4))...)
	require.NoError(t, err)
	t.Cleanup(n.StopNow)
	require.NoError(t, n.Handle("slow", func(ctx context.Context, task cluster.Task) error {
		slow.enter()
		defer slow.leave()
		startedSlow <- task.ID
		select {
		case <-release:
			return nil
		case <-ctx.Done(): // StopNow, once the test has failed
			return ctx.Err()
		}
	}, cluster.WithKindConcurrency(2)))
	require.NoError(t, n.Handle("fast", func(_ context.Context, task cluster.Task) error {
		ranFast <- task.ID
		return nil
	}))
	start(t, n)
	ctx := context.Background()
	for range 4 {
		_, err := n.Schedule(ctx, "slow", nil, time.Now())
		require.NoError(t, err)
	}
	recv(t, startedSlow, 10*time.Second, "the first slow run")
	recv(t, startedSlow, 10*time.Second, "the second slow run")
	waitFor(t, 10*time.Second, "the two other slow tasks to wait at the limit", func() bool {
		ms := members(t, n)
		return len(ms) == 1 && ms[0].Waiting == 2 && ms[0].Running == 2
	})

	// Two workers are free: a task of another kind runs at once.
	fast, err := n.Schedule(ctx, "fast", nil, time.Now())
	require.NoError(t, err)
	assert.Equal(t, fast, recv(t, ranFast, 10*time.Second, "the fast run while slow is at its limit"))
	select {
	case id := <-startedSlow:
		t.Fatalf("a third slow run %s started past the limit", id)
	default:
	}

	close(release)
	recv(t, startedSlow, 10*time.Second, "the third slow run")
	recv(t, startedSlow, 10*time.Second, "the fourth slow run")
	waitFor(t, 10*time.Second, "every task to complete", func() bool { return counts(t, n) == cluster.Counts{} })
	assert.Equal(t, 2, slow.most(), "at most two slow runs at once")
}

func TestKindAtItsLimitGoesToAnotherNodeThroughTheBackupClaim(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	type start struct{ node, id string }
	started := make(chan start, 2)
	release := make(chan struct{})
	var nodes []*cluster.Node
	for range 2 {
		n, err := cluster.New(client(t, srv), append(testOptions(), cluster.WithConcurrency(4))...)
		require.NoError(t, err)
		t.Cleanup(n.StopNow)
		name := n.Name()
		require.NoError(t, n.Handle("slow", func(_ context.Context, task cluster.Task) error {
			started <- start{name, task.ID}
			<-release
			return nil
		}, cluster.WithKindConcurrency(1)))
		nodes = append(nodes, n)
	}
	for _, n := range nodes {
		require.NoError(t, n.Start(context.Background()))
	}
	for range 2 {
		_, err := nodes[0].Schedule(context.Background(), "slow", nil, time.Now())
		require.NoError(t, err)
	}
	a := recv(t, started, 10*time.Second, "the first run")
	b := recv(t, started, 10*time.Second, "the second run")
	close(release)
	assert.NotEqual(t, a.node, b.node, "each node runs one: its limit is 1")
	assert.NotEqual(t, a.id, b.id)
	waitFor(t, 10*time.Second, "both tasks to complete", func() bool { return counts(t, nodes[0]) == cluster.Counts{} })
}

func TestKindOptionsRefuseBadValues(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	n := newNode(t, srv, nil)
	ok := func(context.Context, cluster.Task) error { return nil }
	for name, opt := range map[string]cluster.HandleOption{
		"concurrency 0":  cluster.WithKindConcurrency(0),
		"concurrency -1": cluster.WithKindConcurrency(-1),
		"priority 0":     cluster.WithKindPriority(0),
	} {
		err := n.Handle("k", ok, opt)
		assert.ErrorIs(t, err, scheduler.ErrInvalidArgument, name)
		assert.ErrorContains(t, err, "cluster: handle k: ", name)
		err = n.Periodic("p", everyTick(time.Hour), ok, opt)
		assert.ErrorIs(t, err, scheduler.ErrInvalidArgument, name)
	}
	_, err := cluster.New(client(t, srv), cluster.WithUnhandledKindWarning(0))
	assert.True(t, errors.Is(err, scheduler.ErrInvalidArgument), "%v", err)
}
