package cluster_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// queued is a task of runOrder: its kind and how many ms after a base time
// in the past it is due.
type queued struct {
	kind string
	at   int
}

// runOrder runs tasks on a node of one worker and returns the kinds in the
// order the node ran them. The worker is held by a "gate" task until every
// task is due and waits for it (as the node's record shows), so the order
// is the priority rule's alone, not the timing's: no clock or sleep
// decides it.
func runOrder(t *testing.T, tasks []queued, kindOpts map[string][]cluster.HandleOption, opts ...cluster.Option) []string {
	t.Helper()
	srv := redistest.Start(t, redistest.Options{})
	var mu sync.Mutex // guards order
	var order []string
	gateStarted := make(chan struct{}, 1)
	release := make(chan struct{})
	n, err := cluster.New(client(t, srv), append(append(testOptions(), cluster.WithConcurrency(1)), opts...)...)
	require.NoError(t, err)
	t.Cleanup(n.StopNow)
	require.NoError(t, n.Handle("gate", func(context.Context, cluster.Task) error {
		gateStarted <- struct{}{}
		<-release
		return nil
	}))
	for kind, ko := range kindOpts {
		require.NoError(t, n.Handle(kind, func(_ context.Context, task cluster.Task) error {
			mu.Lock()
			order = append(order, task.Kind)
			mu.Unlock()
			return nil
		}, ko...))
	}
	start(t, n)
	ctx := context.Background()
	_, err = n.Schedule(ctx, "gate", nil, time.Now())
	require.NoError(t, err)
	recv(t, gateStarted, 10*time.Second, "the gate")

	base := time.Now().Add(-time.Minute)
	for _, q := range tasks {
		_, err := n.Schedule(ctx, q.kind, nil, base.Add(time.Duration(q.at)*time.Millisecond))
		require.NoError(t, err)
	}
	waitFor(t, 10*time.Second, "every task to wait for the worker", func() bool {
		ms := members(t, n)
		return len(ms) == 1 && ms[0].Waiting == len(tasks)
	})
	close(release)
	waitFor(t, 30*time.Second, "every task to run", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(order) == len(tasks)
	})
	mu.Lock()
	defer mu.Unlock()
	return append([]string(nil), order...)
}

// tasksOf returns count tasks of kind, due at first, first+1 ... ms.
func tasksOf(kind string, count, first int) []queued {
	out := make([]queued, count)
	for i := range out {
		out[i] = queued{kind, first + i}
	}
	return out
}

func TestWeightedPriorityGivesScarceWorkersInProportionToTheWeights(t *testing.T) {
	// 60 tasks of a (weight 3) and 20 of b (weight 1), every b due
	// before every a: the weights decide, not the due times.
	tasks := append(tasksOf("b", 20, 0), tasksOf("a", 60, 100)...)
	order := runOrder(t, tasks, map[string][]cluster.HandleOption{
		"a": {cluster.WithKindPriority(3)},
		"b": {},
	})
	// The smooth weighted round robin: a, a, b, a in every four picks.
	want := strings.Repeat("aaba", 20)
	assert.Equal(t, want, strings.Join(order, ""))
}

func TestWeightedPriorityServesTheOtherKindsAloneOnceOneRunsOut(t *testing.T) {
	tasks := append(tasksOf("a", 4, 0), tasksOf("b", 10, 0)...)
	order := runOrder(t, tasks, map[string][]cluster.HandleOption{
		"a": {cluster.WithKindPriority(1)},
		"b": {cluster.WithKindPriority(1)},
	})
	// Equal weights alternate while both wait; then b runs alone.
	assert.Equal(t, "ababababbbbbbb", strings.Join(order, ""))
}

func TestStrictPriorityRunsAHigherKindFirst(t *testing.T) {
	// The low kind's tasks are due first, and still wait.
	tasks := append(tasksOf("low", 5, 0), append(tasksOf("mid", 5, 10), tasksOf("high", 5, 20)...)...)
	order := runOrder(t, tasks, map[string][]cluster.HandleOption{
		"high": {cluster.WithKindPriority(10)},
		"mid":  {cluster.WithKindPriority(5)},
		"low":  {},
	}, cluster.WithStrictPriority())
	var want []string
	for _, kind := range []string{"high", "mid", "low"} {
		for range 5 {
			want = append(want, kind)
		}
	}
	assert.Equal(t, want, order)
}

func TestWithoutPrioritiesScarceWorkersTakeTasksInDueOrder(t *testing.T) {
	var tasks []queued
	for i := range 12 {
		kind := []string{"x", "y", "z"}[i*7%3]
		tasks = append(tasks, queued{kind, 12 - i})
	}
	order := runOrder(t, tasks, map[string][]cluster.HandleOption{"x": nil, "y": nil, "z": nil})
	var want []string
	for i := 11; i >= 0; i-- {
		want = append(want, tasks[i].kind)
	}
	assert.Equal(t, want, order, "soonest due first, whatever the kind")
}

func TestStrictPriorityLetsALowerKindRunWhileAHigherOneIsAtItsLimit(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	highStarted := make(chan string, 2)
	release := make(chan struct{})
	lowRan := make(chan string, 1)
	n, err := cluster.New(client(t, srv), append(testOptions(), cluster.WithConcurrency(2), cluster.WithStrictPriority())...)
	require.NoError(t, err)
	t.Cleanup(n.StopNow)
	require.NoError(t, n.Handle("high", func(_ context.Context, task cluster.Task) error {
		highStarted <- task.ID
		<-release
		return nil
	}, cluster.WithKindPriority(10), cluster.WithKindConcurrency(1)))
	require.NoError(t, n.Handle("low", func(_ context.Context, task cluster.Task) error {
		lowRan <- task.ID
		return nil
	}))
	start(t, n)
	ctx := context.Background()
	for range 2 {
		_, err := n.Schedule(ctx, "high", nil, time.Now())
		require.NoError(t, err)
	}
	low, err := n.Schedule(ctx, "low", nil, time.Now())
	require.NoError(t, err)
	recv(t, highStarted, 10*time.Second, "the first high run")
	assert.Equal(t, low, recv(t, lowRan, 10*time.Second, "the low run while high is at its limit"))
	select {
	case id := <-highStarted:
		t.Fatalf("a second high run %s started past the limit", id)
	default:
	}
	close(release)
	recv(t, highStarted, 10*time.Second, "the second high run")
}
