package scheduler

// The model FuzzDelayQueue checks a Scheduler against, and the harness that
// runs the Scheduler and compares: which tasks must have run, in which
// order, and what Queue, Stats and the futures must say.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// fzUnit is the time unit of FuzzDelayQueue's delays and steps.
const fzUnit = time.Millisecond

// fzTaskState is the model's view of one submitted task.
type fzTaskState int

const (
	fzQueued     fzTaskState = iota // in the queue, not canceled
	fzCanceled                      // canceled by Cancel or by Shutdown
	fzDone                          // a one-shot that ran, or a periodic task that failed
	fzRemoved                       // removed by Remove: never runs again, not done
	fzHandedBack                    // returned by ShutdownNow
)

// fzTask is one submitted task in the model.
type fzTask struct {
	id     int
	f      ScheduledFuture
	value  *Future[int] // a callable's future, or nil
	period time.Duration
	fixed  bool // fixed rate (else fixed delay) when period > 0
	failOn int  // a periodic task fails on this run (1-based); 0 never
	when   int64
	seq    int // submission order
	queued bool
	state  fzTaskState
	runs   int
}

// fzModel is what FuzzDelayQueue expects the scheduler to have done.
type fzModel struct {
	now       int64 // ns since the scheduler's origin
	tasks     []*fzTask
	log       []int // ids in run order
	failed    int
	canceled  int
	shutdown  bool
	removeOnC bool
}

func (m *fzModel) queue() []*fzTask {
	var q []*fzTask
	for _, x := range m.tasks {
		if x.queued {
			q = append(q, x)
		}
	}
	slices.SortFunc(q, func(a, b *fzTask) int {
		if d := a.when - b.when; d != 0 {
			if d < 0 {
				return -1
			}
			return 1
		}
		return a.seq - b.seq
	})
	return q
}

// settle runs what is due at m.now, in (due, submission) order, as a pool
// of one does.
func (m *fzModel) settle() {
	for {
		q := m.queue()
		if len(q) == 0 || q[0].when-m.now > 0 {
			return
		}
		x := q[0]
		x.queued = false
		if x.state != fzQueued {
			continue // canceled while queued: discarded without a run
		}
		if m.shutdown && x.period != 0 {
			panic("model: a periodic task queued after shutdown")
		}
		x.runs++
		m.log = append(m.log, x.id)
		switch {
		case x.period == 0:
			x.state = fzDone
		case x.failOn == x.runs:
			x.state = fzDone
			m.failed++
		case x.fixed:
			x.when += int64(x.period)
			x.queued = true
		default:
			x.when = m.now + int64(x.period)
			x.queued = true
		}
	}
}

// errFzRun is the error a failing periodic task returns.
var errFzRun = errors.New("fz: periodic run failed")

// fzHarness is the scheduler under test, its clock and the run log.
type fzHarness struct {
	t   *testing.T
	clk *fakeClock
	s   *Scheduler
	ctx context.Context

	mu  sync.Mutex // guards log
	log []int
}

func (h *fzHarness) record(id int) {
	h.mu.Lock()
	h.log = append(h.log, id)
	h.mu.Unlock()
}

// settle waits until the scheduler has done everything due; a scheduler
// that never settles is a wedge.
func (h *fzHarness) settle(step int, op string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.ctx, 20*time.Second)
	defer cancel()
	if err := h.s.AwaitIdle(ctx); err != nil {
		h.t.Fatalf("step %d (%s): AwaitIdle: %v (wedged)", step, op, err)
	}
}

// check compares the scheduler with the model.
func (h *fzHarness) check(step int, op string, m *fzModel) {
	t := h.t
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("step %d (%s): %s", step, op, fmt.Sprintf(format, args...))
	}
	h.mu.Lock()
	log := slices.Clone(h.log)
	h.mu.Unlock()
	if !slices.Equal(log, m.log) {
		fail("runs\n got %v\nwant %v", log, m.log)
	}
	if now := h.s.q.now(); now != m.now {
		fail("scheduler reads %d, model %d", now, m.now)
	}
	q := m.queue()
	got := h.s.Queue()
	if len(got) != len(q) {
		fail("Queue() has %d tasks, model %d", len(got), len(q))
	}
	for i, x := range q {
		if got[i] != x.f {
			fail("Queue()[%d] is not task %d", i, x.id)
		}
		if d := x.f.Delay(); d != time.Duration(x.when-m.now) {
			fail("task %d: Delay() = %v, want %v", x.id, d, time.Duration(x.when-m.now))
		}
	}
	completed, canceled := 0, m.canceled
	for _, x := range m.tasks {
		completed += x.runs
		done := x.state == fzDone || x.state == fzCanceled
		if x.f.IsDone() != done {
			fail("task %d: IsDone() = %v, model state %d", x.id, x.f.IsDone(), x.state)
		}
		if x.f.IsCanceled() != (x.state == fzCanceled) {
			fail("task %d: IsCanceled() = %v, model state %d", x.id, x.f.IsCanceled(), x.state)
		}
		select {
		case <-x.f.Done():
			if !done {
				fail("task %d: Done() closed but the task is not done", x.id)
			}
		default:
			if done {
				fail("task %d: done, but Done() is not closed", x.id)
			}
		}
		if !done {
			continue
		}
		err := x.f.Wait(h.ctx)
		switch {
		case x.state == fzCanceled:
			if !errors.Is(err, ErrCanceled) {
				fail("task %d: Wait() = %v, want ErrCanceled", x.id, err)
			}
		case x.period != 0:
			if !errors.Is(err, errFzRun) {
				fail("task %d: Wait() = %v, want the run's error", x.id, err)
			}
		case err != nil:
			fail("task %d: Wait() = %v, want nil", x.id, err)
		case x.value != nil:
			if v, err := x.value.Get(h.ctx); err != nil || v != x.id {
				fail("task %d: Get() = %d, %v; want %d, nil", x.id, v, err, x.id)
			}
		}
	}
	st := h.s.Stats()
	want := Stats{
		PoolSize:        st.PoolSize,
		CorePoolSize:    1,
		LargestPoolSize: st.LargestPoolSize,
		Queued:          len(q),
		TaskCount:       uint64(completed + len(q)),
		Completed:       uint64(completed),
		Failed:          uint64(m.failed),
		Canceled:        uint64(canceled),
	}
	if st != want {
		fail("Stats()\n got %+v\nwant %+v", st, want)
	}
	if st.PoolSize > 1 || st.LargestPoolSize > 1 {
		fail("a pool of one has %d workers (largest %d)", st.PoolSize, st.LargestPoolSize)
	}
}
