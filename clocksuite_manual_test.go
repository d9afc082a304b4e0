package scheduler_test

// The clock suite's manual clock driver: a schedulertest.ManualClock moved
// with AdvanceAndSettle, with work that is exact on a pool of one.

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/schedulertest"
)

// suiteManualDriver runs a case on a schedulertest.ManualClock (see
// suiteManualClock).
type suiteManualDriver struct{}

func (suiteManualDriver) name() string { return "manual" }

func (suiteManualDriver) run(t *testing.T, body func(t *testing.T, c suiteClock)) {
	m := &suiteManualClock{clk: schedulertest.NewManualClock(suiteEpoch), changed: make(chan struct{})}
	body(t, m)
}

// suiteManualClock moves a ManualClock with schedulertest.AdvanceAndSettle,
// which steps from timer to timer and calls AwaitIdle at each one. It is
// itself the idler it passes: its AwaitIdle is the scheduler's, except while
// a task is inside work.
//
// A task in work waits on a timer of the manual clock, so the step to its end
// is one more timer for AdvanceAndSettle. But that task is running, and the
// scheduler's AwaitIdle would wait for it forever: the clock only moves when
// AwaitIdle returns. So AwaitIdle here returns as soon as a task is blocked
// in work with its end still ahead. That is exact when the pool has one
// worker: with the only worker inside the task, nothing else can happen in
// the scheduler until the clock moves. With more workers another one could
// still be busy at that instant, so work needs a pool of one (checked).
type suiteManualClock struct {
	clk *schedulertest.ManualClock

	mu   sync.Mutex // guards the fields below
	s    *scheduler.Scheduler
	pool int
	// works holds the tasks blocked in work.
	works []*suiteWork
	// changed is closed, and replaced, whenever works changes.
	changed chan struct{}
}

// suiteWork is one task blocked in work until the clock reads until.
type suiteWork struct {
	ctx   context.Context
	until time.Time
}

func (m *suiteManualClock) newScheduler(t *testing.T, pool int, opts ...scheduler.Option) *scheduler.Scheduler {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	require.Nil(t, m.s, "a case makes one scheduler")
	// WithClock last, so that it wins.
	s, err := scheduler.New(pool, append(opts, scheduler.WithClock(m.clk))...)
	require.NoError(t, err)
	m.s, m.pool = s, pool
	shutdownAtEnd(t, s)
	return s
}

func (m *suiteManualClock) elapsed() time.Duration { return m.clk.Now().Sub(suiteEpoch) }

func (m *suiteManualClock) advance(t *testing.T, d time.Duration) {
	t.Helper()
	ctx := m.ctx(t)
	// AdvanceAndSettle settles first, so a worker that has not armed its
	// timer yet is seen (TestAdvanceAndSettleSettlesBeforeFirstStep).
	require.NoError(t, schedulertest.AdvanceAndSettle(ctx, m.clk, m, d))
}

func (m *suiteManualClock) ctx(t *testing.T) context.Context { return testCtx(t) }

func (m *suiteManualClock) work(ctx context.Context, d time.Duration) error {
	tm := m.clk.NewTimer(d)
	w := &suiteWork{ctx: ctx, until: m.clk.Now().Add(d)}
	m.mu.Lock()
	m.works = append(m.works, w)
	m.notifyLocked()
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.works = slices.DeleteFunc(m.works, func(x *suiteWork) bool { return x == w })
		m.notifyLocked()
		m.mu.Unlock()
	}()
	select {
	case <-tm.C():
		return nil
	case <-ctx.Done():
		tm.Stop()
		return ctx.Err()
	}
}

func (m *suiteManualClock) notifyLocked() {
	close(m.changed)
	m.changed = make(chan struct{})
}

// inWorkLocked reports whether a task is blocked in work, neither
// interrupted nor at its end: then only a move of the clock can make
// anything happen.
func (m *suiteManualClock) inWorkLocked() bool {
	now := m.clk.Now()
	for _, w := range m.works {
		if w.ctx.Err() == nil && now.Before(w.until) {
			return true
		}
	}
	return false
}

// AwaitIdle returns once the scheduler is idle or its task is in work; it
// is what AdvanceAndSettle calls at each step.
func (m *suiteManualClock) AwaitIdle(ctx context.Context) error {
	m.mu.Lock()
	s := m.s
	m.mu.Unlock()
	if s == nil {
		return nil
	}
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	var idle chan error // the scheduler's AwaitIdle, started on first need
	for {
		m.mu.Lock()
		inWork, pool, changed := m.inWorkLocked(), m.pool, m.changed
		m.mu.Unlock()
		if inWork {
			if idle != nil {
				cancel()
				<-idle
			}
			if pool != 1 {
				return fmt.Errorf("suite: work needs a pool of one on the manual clock, not %d", pool)
			}
			return nil
		}
		if idle == nil {
			idle = make(chan error, 1)
			go func() { idle <- s.AwaitIdle(ictx) }()
		}
		select {
		case err := <-idle:
			return err
		case <-changed:
		}
	}
}
