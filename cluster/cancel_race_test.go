package cluster_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
)

// cancelRaceLog is what the cancel race saw of each task, each step
// numbered in one order (seq) and timed. A task runs at most once: each is
// canceled and none is stored again.
type cancelRaceLog struct {
	mu       sync.Mutex // guards every field
	seq      int
	heard    map[string]step          // the worker heard and applied the task's cancel
	heardCh  map[string]chan struct{} // closed once heard
	deciding map[string]step          // the worker's run was about to decide whether to call the handler
	called   map[string]step          // the handler was called
	canceled map[string]step          // Cancel returned Removed and WasRunning
	results  map[string]cluster.Cancellation
}

// step is one step of a task: its number in the log's order and its time.
type step struct {
	seq int
	at  time.Time
}

func newCancelRaceLog(ids []string) *cancelRaceLog {
	l := &cancelRaceLog{
		heard: map[string]step{}, heardCh: map[string]chan struct{}{}, deciding: map[string]step{},
		called: map[string]step{}, canceled: map[string]step{}, results: map[string]cluster.Cancellation{},
	}
	for _, id := range ids {
		l.heardCh[id] = make(chan struct{})
	}
	return l
}

// note records a step of id in m, once; first says it was the first.
func (l *cancelRaceLog) note(m map[string]step, id string) (first bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	if _, ok := m[id]; ok {
		return false
	}
	m[id] = step{seq: l.seq, at: time.Now()}
	return true
}

// cancel cancels id through ops and records the answer.
func (l *cancelRaceLog) cancel(t *testing.T, ops *cluster.Node, id string) {
	c, err := ops.Cancel(context.Background(), id)
	if err != nil {
		t.Errorf("cancel %s: %v", id, err)
		return
	}
	if c.Removed && c.WasRunning {
		l.note(l.canceled, id)
	}
	l.mu.Lock()
	l.results[id] = c
	l.mu.Unlock()
}

// TestNoHandlerIsCalledForATaskWhoseCancelTheNodeHeard races Cancel against
// the claims of another node for 1,500 tasks due one every millisecond,
// each canceled once. A tenth are canceled right after the worker won
// their claim, and the worker's run is held until it heard the cancel's
// notice; the others are canceled at their due time, so that the cancel
// and the claim race. No handler may be called once the worker heard the
// cancel of its task: the notice, or its own renewal's answer, is applied
// before the run decides to call the handler. What remains is a notice
// still in flight when the run decided: the test counts those handler
// calls that started after Cancel returned Removed and WasRunning, and how
// long each ran before the notice reached the worker.
func TestNoHandlerIsCalledForATaskWhoseCancelTheNodeHeard(t *testing.T) {
	const tasks, heldEvery = 1500, 10
	srv := redistest.Start(t, redistest.Options{})
	ids := make([]string, tasks)
	held := map[string]bool{}
	for i := range ids {
		ids[i] = fmt.Sprintf("c%04d", i)
		held[ids[i]] = i%heldEvery == 0
	}
	l := newCancelRaceLog(ids)
	ops := newNode(t, srv, nil)
	worker := newNode(t, srv, map[string]cluster.Handler{"k": func(ctx context.Context, task cluster.Task) error {
		l.note(l.called, task.ID)
		<-ctx.Done() // every task is canceled
		return nil
	}}, cluster.WithConcurrency(32))
	cluster.SetRunHooks(worker,
		func(id string) {
			if !held[id] {
				return
			}
			l.cancel(t, ops, id)
			select {
			case <-l.heardCh[id]:
			case <-time.After(10 * time.Second):
				t.Errorf("task %s: the worker did not hear its cancel", id)
			}
		},
		func(id string) {
			if l.note(l.heard, id) {
				close(l.heardCh[id])
			}
		},
		func(id string) { l.note(l.deciding, id) })
	start(t, worker)

	ctx := context.Background()
	first := time.Now().Add(2 * time.Second)
	due := func(i int) time.Time { return first.Add(time.Duration(i) * time.Millisecond) }
	var stored sync.WaitGroup
	for w := range 8 {
		stored.Go(func() {
			for i := w; i < tasks; i += 8 {
				if _, err := ops.Schedule(ctx, "k", nil, due(i), cluster.WithID(ids[i])); err != nil {
					t.Error(err)
				}
			}
		})
	}
	stored.Wait()
	if late := time.Since(first); late > 0 {
		t.Logf("the tasks were stored %v after the first was due", late)
	}
	var cancels sync.WaitGroup
	for i, id := range ids {
		if held[id] {
			continue
		}
		cancels.Add(1)
		time.AfterFunc(time.Until(due(i)), func() {
			defer cancels.Done()
			l.cancel(t, ops, id)
		})
	}
	cancels.Wait()
	waitFor(t, 30*time.Second, "the held tasks' cancels", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.results) == tasks
	})
	// Stop waits for the handlers; every run's ctx is canceled by its
	// notice, or by a renewal within a quarter lease if the notice was
	// lost.
	stopCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := worker.Stop(stopCtx); err != nil {
		t.Fatal(err)
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	var afterHeard, inFlight int
	var untold []time.Duration // how long a handler ran before the worker heard
	for _, id := range ids {
		call, ok := l.called[id]
		if !ok {
			continue
		}
		if !l.results[id].WasRunning {
			t.Errorf("task %s: run after Cancel said no run was in flight: %+v", id, l.results[id])
		}
		if h, ok := l.heard[id]; ok && h.seq < l.deciding[id].seq {
			afterHeard++
			continue
		}
		if c, ok := l.canceled[id]; ok && c.seq < call.seq {
			inFlight++
			if h, ok := l.heard[id]; ok {
				untold = append(untold, h.at.Sub(call.at))
			}
		}
	}
	if afterHeard > 0 {
		t.Errorf("%d of %d handler calls started after the worker heard their task's cancel", afterHeard, len(l.called))
	}
	slices.Sort(untold)
	wasRunning := 0
	for _, c := range l.results {
		if c.WasRunning {
			wasRunning++
		}
	}
	var median, longest time.Duration
	if len(untold) > 0 {
		median, longest = untold[len(untold)/2], untold[len(untold)-1]
	}
	t.Logf("%d tasks, %d canceled while running, %d handler calls; %d started after Cancel returned "+
		"Removed and WasRunning while the notice was in flight, running %v (median) and %v (longest) before the worker heard it",
		tasks, wasRunning, len(l.called), inFlight, median, longest)
}
