package scheduler_test

// Bad inputs and misuse, one table over every public function and method of
// the contract: nil arguments, zero, negative and extreme
// durations, use after shutdown, double shutdown, cancel after done, a ctx
// that has already ended, panics in a task, a hook, the decorator and the
// rejection policy, tasks that block forever or call back into their own
// scheduler. Each row asserts the documented outcome (errors.Is with the
// sentinel, or the exact documented result) and runs inside NotPanics;
// afterwards the scheduler must still work: a follow-up task runs, or, if
// the row shut the scheduler down, is rejected with ErrRejected.
//
// Time is a schedulertest.ManualClock, so "due now" tasks run without moving
// time and far ones never run unless the row advances the clock. The
// real-time timeouts below (shortDeadline, waitLimit) only bound calls that must
// return ctx.Err() or must not hang; no row sleeps.
//
// The rows are grouped by what they call, one badinput_*_test.go file each;
// this file holds the table's driver and the helpers the rows share.

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/schedulertest"
	"github.com/stretchr/testify/require"
)

// shortDeadline is the deadline of a call that must give up with ctx.Err().
const shortDeadline = 20 * time.Millisecond

// badEnv is what a row works on: a fresh scheduler on a manual clock.
type badEnv struct {
	s   *scheduler.Scheduler
	clk *schedulertest.ManualClock
	log *logBuffer
	ctx context.Context // ends after waitLimit
}

// settle moves the clock by d and waits for what came due.
func (e *badEnv) settle(t *testing.T, d time.Duration) {
	t.Helper()
	e.clk.Advance(d)
	require.NoError(t, e.s.AwaitIdle(e.ctx))
}

// clear removes every queued task, making room in a bounded queue for
// the follow-up task.
func (e *badEnv) clear() {
	for _, f := range e.s.Queue() {
		e.s.Remove(f)
	}
}

// fromInside runs call in a task of e.s, a call back into the scheduler
// from one of its own workers, and returns what call returned once the task
// has completed normally.
func (e *badEnv) fromInside(t *testing.T, call func(ctx context.Context) error) error {
	t.Helper()
	got := make(chan error, 1)
	f, err := e.s.Submit(func(ctx context.Context) error {
		got <- call(ctx)
		return nil
	})
	require.NoError(t, err)
	res := <-got
	require.NoError(t, f.Wait(e.ctx))
	return res
}

// overflow fills a queue bounded at one with a task, then returns what
// scheduling a second one returns.
func (e *badEnv) overflow(t *testing.T) (scheduler.ScheduledFuture, error) {
	t.Helper()
	_, err := e.s.Schedule(nop, time.Hour)
	require.NoError(t, err)
	return e.s.Schedule(nop, time.Hour)
}

// requireAnswer submits return42 and requires its future to return 42: the
// scheduler still runs callables and reports their results.
func (e *badEnv) requireAnswer(t *testing.T) {
	t.Helper()
	f, err := scheduler.SubmitCallable(e.s, return42)
	require.NoError(t, err)
	v, err := f.Get(e.ctx)
	require.NoError(t, err)
	require.Equal(t, 42, v)
}

// nothingQueued asserts that a failed call left no trace in the queue.
func (e *badEnv) nothingQueued(t *testing.T) {
	t.Helper()
	st := e.s.Stats()
	require.Zero(t, st.Queued, "%+v", st)
	require.Zero(t, st.TaskCount, "%+v", st)
	require.Empty(t, e.s.Queue())
}

// badCase is one row: a call with bad input and what must come of it.
type badCase struct {
	name string
	pool int                // 0 means 1
	opts []scheduler.Option // after the clock and the logger, so they may replace them
	run  func(t *testing.T, e *badEnv)
}

// shortCtx returns a context that ends after shortDeadline.
func shortCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), shortDeadline)
	t.Cleanup(cancel)
	return ctx
}

// return42 is a callable that succeeds with 42.
func return42(context.Context) (int, error) { return 42, nil }

// blockUntilCanceled returns a task that blocks until its ctx is canceled,
// then returns nil; started is closed when it first runs.
func blockUntilCanceled(started chan struct{}) scheduler.Task {
	var once sync.Once
	return func(ctx context.Context) error {
		once.Do(func() { close(started) })
		<-ctx.Done()
		return nil
	}
}

// badRows returns the table. Row names are "Function/input: outcome".
func badRows() []badCase {
	var rows []badCase
	add := func(c ...badCase) { rows = append(rows, c...) }
	addBadNewRows(add)
	addBadSubmitRows(add)
	addBadCallableRows(add)
	addBadFutureRows(add)
	addBadShutdownRows(add)
	addBadPolicyRows(add)
	addBadQueueRows(add)
	addBadPanicRows(add)
	return rows
}

// TestBadInput runs the table: every public function with bad input or
// misuse, then a follow-up task to show the scheduler still works.
func TestBadInput(t *testing.T) {
	for _, c := range badRows() {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			logger, log := newLogger()
			clk := schedulertest.NewManualClock(epoch)
			opts := append([]scheduler.Option{
				scheduler.WithClock(clk),
				scheduler.WithLogger(logger),
			}, c.opts...)
			s, err := scheduler.New(max(c.pool, 1), opts...)
			require.NoError(t, err)
			defer func() {
				s.ShutdownNow()
				require.NoError(t, s.AwaitTermination(ctx), "the scheduler did not terminate")
			}()
			e := &badEnv{s: s, clk: clk, log: log, ctx: ctx}

			require.NotPanics(t, func() { c.run(t, e) })
			if t.Failed() {
				return
			}

			// Follow-up: the scheduler still works, or still rejects.
			var ran atomic.Int32
			f, err := s.Submit(countRuns(&ran))
			if s.IsShutdown() {
				if err == nil { // a discarding policy: the future comes back canceled
					require.True(t, f.IsCanceled(), "follow-up after shutdown")
				} else {
					require.ErrorIs(t, err, scheduler.ErrRejected, "follow-up after shutdown")
				}
				require.Zero(t, ran.Load(), "follow-up after shutdown ran")
				require.NoError(t, s.AwaitTermination(ctx), "follow-up: the shut down scheduler terminates")
				return
			}
			require.NoError(t, err, "follow-up submission")
			require.NoError(t, f.Wait(ctx), "follow-up task")
			require.Equal(t, int32(1), ran.Load())
		})
	}
}
