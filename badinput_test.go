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

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"math"
	"runtime"
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

// foreignFuture is a ScheduledFuture this package did not make.
type foreignFuture struct{ scheduler.ScheduledFuture }

// panickingPolicy is a rejection policy that panics.
type panickingPolicy struct{}

func (panickingPolicy) Rejected(*scheduler.Scheduler, scheduler.ScheduledFuture) error {
	panic("bad: policy panics")
}

// submittersDueNow lists every way to submit a task due now (periodic ones
// every hour), for the rows that hold for all of them.
var submittersDueNow = entryPointsAt(0, time.Hour)

// badRows returns the table. Row names are "Function/input: outcome".
func badRows() []badCase {
	var rows []badCase
	add := func(c ...badCase) { rows = append(rows, c...) }

	// --- New and its options ---------------------------------------------
	for _, n := range []int{0, -1, math.MinInt} {
		add(badCase{name: fmt.Sprintf("New/poolSize %d: ErrInvalidArgument", n), run: func(t *testing.T, e *badEnv) {
			s, err := scheduler.New(n)
			require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
			require.Nil(t, s)
		}})
	}
	add(badCase{name: "New/huge poolSize: workers still start one per task", run: func(t *testing.T, e *badEnv) {
		s, err := scheduler.New(math.MaxInt, scheduler.WithClock(e.clk))
		require.NoError(t, err)
		f, err := s.Submit(nop)
		require.NoError(t, err)
		require.NoError(t, f.Wait(e.ctx))
		st := s.Stats()
		require.Equal(t, math.MaxInt, st.CorePoolSize)
		require.Equal(t, 1, st.LargestPoolSize)
		s.Shutdown()
		require.NoError(t, s.AwaitTermination(e.ctx))
	}})
	add(badCase{name: "New/nil Option: rejected",
		run: func(t *testing.T, e *badEnv) {
			s, err := scheduler.New(1, scheduler.WithClock(e.clk), nil)
			require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
			require.Nil(t, s)
			require.EqualError(t, err, "scheduler: New: option 1 is nil: invalid argument")
		}})
	add(badCase{name: "Submit/nil TaskOption: rejected, nothing queued",
		run: func(t *testing.T, e *badEnv) {
			f, err := e.s.Submit(nop, scheduler.WithName("named"), nil)
			require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
			require.Nil(t, f)
			require.EqualError(t, err, "scheduler: TaskOption: option 1 is nil: invalid argument")
			require.Zero(t, e.s.Stats().TaskCount)
		}})
	add(badCase{name: "New/WithClock(nil): the system clock",
		opts: []scheduler.Option{scheduler.WithClock(nil)},
		run: func(t *testing.T, e *badEnv) {
			f, err := e.s.Schedule(nop, time.Millisecond)
			require.NoError(t, err)
			require.NoError(t, f.Wait(e.ctx)) // real time: 1ms; the manual clock never moved
		}})
	add(badCase{name: "New/WithLogger(nil): slog.Default at New, a panic still recovered and logged",
		run: func(t *testing.T, e *badEnv) {
			old, oldOut, oldFlags := slog.Default(), log.Writer(), log.Flags()
			defer func() { // SetDefault(old) alone leaves package log writing to e.log
				slog.SetDefault(old)
				log.SetOutput(oldOut)
				log.SetFlags(oldFlags)
			}()
			slog.SetDefault(slog.New(slog.NewJSONHandler(e.log, nil)))
			s, err := scheduler.New(1, scheduler.WithClock(e.clk), scheduler.WithLogger(nil))
			require.NoError(t, err)
			defer func() {
				s.ShutdownNow()
				require.NoError(t, s.AwaitTermination(e.ctx))
			}()
			f, err := s.Submit(func(context.Context) error { panic("to the default logger") }, scheduler.WithName("dflt"))
			require.NoError(t, err)
			var pe *scheduler.PanicError
			require.ErrorAs(t, f.Wait(e.ctx), &pe)
			e.log.requireErrorRecord(t, "dflt", "to the default logger")
		}})
	add(badCase{name: "New/WithRejectionPolicy(nil): AbortPolicy",
		opts: []scheduler.Option{scheduler.WithRejectionPolicy(nil), scheduler.WithMaxQueueSize(1)},
		run: func(t *testing.T, e *badEnv) {
			f, err := e.overflow(t)
			require.ErrorIs(t, err, scheduler.ErrRejected)
			require.Nil(t, f)
			require.Equal(t, uint64(1), e.s.Stats().Rejected)
			e.clear()
		}})
	for _, n := range []int{0, -1, math.MinInt} {
		add(badCase{name: fmt.Sprintf("New/WithMaxQueueSize(%d): unbounded", n),
			opts: []scheduler.Option{scheduler.WithMaxQueueSize(n)},
			run: func(t *testing.T, e *badEnv) {
				for range 100 {
					_, err := e.s.Schedule(nop, time.Hour)
					require.NoError(t, err)
				}
				require.Equal(t, 100, e.s.Stats().Queued)
			}})
	}
	add(badCase{name: "New/WithDecorator(nil) and zero Hooks: no decoration, no hooks",
		opts: []scheduler.Option{scheduler.WithDecorator(nil), scheduler.WithHooks(scheduler.Hooks{})},
		run: func(t *testing.T, e *badEnv) {
			e.requireAnswer(t)
		}})

	// --- every submission: nil task, after Shutdown / ShutdownNow / termination
	for _, sub := range submittersDueNow {
		add(badCase{name: sub.name + "/nil task: ErrInvalidArgument, nothing queued", run: func(t *testing.T, e *badEnv) {
			f, err := sub.submit(e.s, nil)
			require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
			require.Nil(t, f)
			e.nothingQueued(t)
		}})
		for _, stop := range []struct {
			name string
			do   func(t *testing.T, e *badEnv)
		}{
			{"after Shutdown", func(t *testing.T, e *badEnv) { e.s.Shutdown() }},
			{"after ShutdownNow", func(t *testing.T, e *badEnv) { e.s.ShutdownNow() }},
			{"after termination", func(t *testing.T, e *badEnv) {
				e.s.Shutdown()
				require.NoError(t, e.s.AwaitTermination(e.ctx))
			}},
		} {
			add(badCase{name: sub.name + "/" + stop.name + ": ErrRejected", run: func(t *testing.T, e *badEnv) {
				stop.do(t, e)
				var ran atomic.Int32
				f, err := sub.submit(e.s, countRuns(&ran))
				require.ErrorIs(t, err, scheduler.ErrRejected)
				require.Nil(t, f)
				require.NoError(t, e.s.AwaitTermination(e.ctx))
				require.Zero(t, ran.Load())
				st := e.s.Stats()
				require.Equal(t, uint64(1), st.Rejected)
				require.Equal(t, uint64(1), st.Canceled, "the rejected task's future is canceled")
				require.Zero(t, st.Queued)
			}})
		}
	}

	// --- Schedule: delays -------------------------------------------------
	for _, d := range []time.Duration{0, -1, -time.Hour, math.MinInt64} {
		add(badCase{name: fmt.Sprintf("Schedule/delay %v: runs now", d), run: func(t *testing.T, e *badEnv) {
			var ran atomic.Int32
			f, err := e.s.Schedule(countRuns(&ran), d)
			require.NoError(t, err)
			require.Zero(t, f.Delay(), "a delay <= 0 is clamped to 0")
			require.NoError(t, f.Wait(e.ctx))
			require.Equal(t, int32(1), ran.Load())
		}})
	}
	for _, d := range []time.Duration{math.MaxInt64, math.MaxInt64 - 1, math.MaxInt64 >> 1, math.MaxInt64>>1 - 1} {
		add(badCase{name: fmt.Sprintf("Schedule/delay %d: queued far away, near tasks still run first", d), run: func(t *testing.T, e *badEnv) {
			e.settle(t, time.Hour) // the clock is no longer at its origin: now+delay wraps
			var far, near atomic.Int32
			ff, err := e.s.Schedule(countRuns(&far), d)
			require.NoError(t, err)
			require.Equal(t, d, ff.Delay())
			fn, err := e.s.Schedule(countRuns(&near), time.Minute)
			require.NoError(t, err)
			require.Equal(t, []scheduler.ScheduledFuture{fn, ff}, e.s.Queue())
			e.settle(t, 1000*time.Hour)
			require.Equal(t, int32(1), near.Load())
			require.Zero(t, far.Load())
			require.Equal(t, d-1000*time.Hour, ff.Delay())
		}})
	}
	add(badCase{name: "Schedule/delay MaxInt64 while the head is overdue: ordered after it (overflowFree)", run: func(t *testing.T, e *badEnv) {
		started := make(chan struct{})
		blocker, err := e.s.Submit(blockUntilCanceled(started)) // holds the only worker
		require.NoError(t, err)
		<-started
		var order recorder[string]
		rec := func(name string) scheduler.Task {
			return func(context.Context) error { order.add(name); return nil }
		}
		_, err = e.s.Schedule(rec("overdue"), time.Minute)
		require.NoError(t, err)
		e.clk.Advance(time.Hour) // the head is 59m overdue; the worker is busy
		far, err := e.s.Schedule(rec("far"), math.MaxInt64)
		require.NoError(t, err)
		require.Positive(t, far.Delay())
		require.True(t, blocker.Cancel(true))
		require.NoError(t, e.s.AwaitIdle(e.ctx))
		e.settle(t, 1000*time.Hour)
		require.Equal(t, []string{"overdue"}, order.get())
		require.Equal(t, []scheduler.ScheduledFuture{far}, e.s.Queue())
	}})
	add(badCase{name: "Schedule/ContinueOnError on a one-shot: ignored", run: func(t *testing.T, e *badEnv) {
		f, err := e.s.Schedule(func(context.Context) error { return errBoom }, 0, scheduler.ContinueOnError())
		require.NoError(t, err)
		require.ErrorIs(t, f.Wait(e.ctx), errBoom)
		require.True(t, f.IsDone())
		require.False(t, f.IsPeriodic())
	}})
	add(badCase{name: "Schedule/WithName(\"\"): unnamed", run: func(t *testing.T, e *badEnv) {
		f, err := e.s.Schedule(nop, 0, scheduler.WithName(""))
		require.NoError(t, err)
		require.Empty(t, f.Name())
		require.NoError(t, f.Wait(e.ctx))
	}})

	// --- periodic: periods and initial delays -----------------------------
	periodic := []struct {
		name     string
		schedule func(s *scheduler.Scheduler, task scheduler.Task, initial, period time.Duration) (scheduler.ScheduledFuture, error)
	}{
		{"ScheduleAtFixedRate", func(s *scheduler.Scheduler, task scheduler.Task, initial, period time.Duration) (scheduler.ScheduledFuture, error) {
			return s.ScheduleAtFixedRate(task, initial, period)
		}},
		{"ScheduleWithFixedDelay", func(s *scheduler.Scheduler, task scheduler.Task, initial, period time.Duration) (scheduler.ScheduledFuture, error) {
			return s.ScheduleWithFixedDelay(task, initial, period)
		}},
	}
	for _, p := range periodic {
		for _, period := range []time.Duration{0, -1, -time.Hour, math.MinInt64} {
			add(badCase{name: fmt.Sprintf("%s/period or delay %v: ErrInvalidArgument, nothing queued", p.name, period), run: func(t *testing.T, e *badEnv) {
				f, err := p.schedule(e.s, nop, 0, period)
				require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
				require.Nil(t, f)
				e.nothingQueued(t)
			}})
		}
		for _, initial := range []time.Duration{-time.Nanosecond, -10 * time.Hour, math.MinInt64} {
			add(badCase{name: fmt.Sprintf("%s/initial delay %v: one run now, no catch-up burst", p.name, initial), run: func(t *testing.T, e *badEnv) {
				var ran atomic.Int32
				f, err := p.schedule(e.s, countRuns(&ran), initial, time.Hour)
				require.NoError(t, err)
				require.NoError(t, e.s.AwaitIdle(e.ctx))
				require.Equal(t, int32(1), ran.Load())
				require.Equal(t, time.Hour, f.Delay())
				e.settle(t, time.Hour)
				require.Equal(t, int32(2), ran.Load())
			}})
		}
		add(badCase{name: p.name + "/initial delay MaxInt64: never due", run: func(t *testing.T, e *badEnv) {
			var ran atomic.Int32
			f, err := p.schedule(e.s, countRuns(&ran), math.MaxInt64, time.Nanosecond)
			require.NoError(t, err)
			e.settle(t, 1000*time.Hour)
			require.Zero(t, ran.Load())
			require.Positive(t, f.Delay())
		}})
		add(badCase{name: p.name + "/period MaxInt64: runs once, next run far away", run: func(t *testing.T, e *badEnv) {
			e.settle(t, time.Hour) // next run time now+MaxInt64 wraps
			var ran, near atomic.Int32
			f, err := p.schedule(e.s, countRuns(&ran), time.Minute, math.MaxInt64)
			require.NoError(t, err)
			e.settle(t, time.Minute)
			require.Equal(t, int32(1), ran.Load())
			require.Positive(t, f.Delay())
			_, err = e.s.Schedule(countRuns(&near), time.Minute)
			require.NoError(t, err)
			e.settle(t, 1000*time.Hour)
			require.Equal(t, int32(1), ran.Load())
			require.Equal(t, int32(1), near.Load())
			require.Equal(t, []scheduler.ScheduledFuture{f}, e.s.Queue())
		}})
	}

	// --- callables --------------------------------------------------------
	add(badCase{name: "ScheduleCallable/nil scheduler: ErrInvalidArgument", run: func(t *testing.T, e *badEnv) {
		f, err := scheduler.ScheduleCallable(nil, return42, 0)
		require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
		require.Nil(t, f)
	}})
	add(badCase{name: "SubmitCallable/nil scheduler: ErrInvalidArgument", run: func(t *testing.T, e *badEnv) {
		f, err := scheduler.SubmitCallable(nil, return42)
		require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
		require.Nil(t, f)
	}})
	add(badCase{name: "ScheduleCallable/delay MinInt64 and MaxInt64: now, and never", run: func(t *testing.T, e *badEnv) {
		now, err := scheduler.ScheduleCallable(e.s, return42, math.MinInt64)
		require.NoError(t, err)
		never, err := scheduler.ScheduleCallable(e.s, return42, math.MaxInt64)
		require.NoError(t, err)
		v, err := now.Get(e.ctx)
		require.NoError(t, err)
		require.Equal(t, 42, v)
		e.settle(t, 1000*time.Hour)
		_, err = never.Get(doneCtx())
		require.ErrorIs(t, err, context.Canceled)
	}})

	// --- InvokeAll / InvokeAny --------------------------------------------
	add(badCase{name: "InvokeAll/nil scheduler: ErrInvalidArgument", run: func(t *testing.T, e *badEnv) {
		fs, err := scheduler.InvokeAll(e.ctx, nil, []scheduler.Callable[int]{return42})
		require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
		require.Nil(t, fs)
	}})
	add(badCase{name: "InvokeAll/a nil element among good ones: ErrInvalidArgument, nothing scheduled", run: func(t *testing.T, e *badEnv) {
		fs, err := scheduler.InvokeAll(e.ctx, e.s, []scheduler.Callable[int]{return42, nil, return42})
		require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
		require.Nil(t, fs)
		e.nothingQueued(t)
	}})
	for _, c := range []struct {
		name string
		fns  []scheduler.Callable[int]
	}{{"nil", nil}, {"empty", []scheduler.Callable[int]{}}} {
		fns := c.fns
		add(badCase{name: "InvokeAll/" + c.name + " list: empty result, nil", run: func(t *testing.T, e *badEnv) {
			fs, err := scheduler.InvokeAll(e.ctx, e.s, fns)
			require.NoError(t, err)
			require.Empty(t, fs)
		}})
	}
	add(badCase{name: "InvokeAll/ctx already canceled: ctx.Err(), every future done", run: func(t *testing.T, e *badEnv) {
		started := make(chan struct{})
		blocker, err := e.s.Submit(blockUntilCanceled(started)) // the callables stay queued
		require.NoError(t, err)
		<-started
		fs, err := scheduler.InvokeAll(doneCtx(), e.s, []scheduler.Callable[int]{return42, return42})
		require.ErrorIs(t, err, context.Canceled)
		require.Len(t, fs, 2)
		for _, f := range fs {
			require.True(t, f.IsDone())
			require.True(t, f.IsCanceled())
		}
		require.True(t, blocker.Cancel(true))
	}})
	add(badCase{name: "InvokeAll/callables that fail and panic: each future holds its outcome", run: func(t *testing.T, e *badEnv) {
		fs, err := scheduler.InvokeAll(e.ctx, e.s, []scheduler.Callable[int]{
			return42,
			func(context.Context) (int, error) { return 0, errBoom },
			func(context.Context) (int, error) { panic("bad: callable panics") },
		})
		require.NoError(t, err)
		v, err := fs[0].Get(e.ctx)
		require.NoError(t, err)
		require.Equal(t, 42, v)
		_, err = fs[1].Get(e.ctx)
		require.ErrorIs(t, err, errBoom)
		_, err = fs[2].Get(e.ctx)
		var pe *scheduler.PanicError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, "bad: callable panics", pe.Value)
	}})
	add(badCase{name: "InvokeAny/nil scheduler: ErrInvalidArgument", run: func(t *testing.T, e *badEnv) {
		_, err := scheduler.InvokeAny(e.ctx, nil, []scheduler.Callable[int]{return42})
		require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
	}})
	for _, c := range []struct {
		name string
		fns  []scheduler.Callable[int]
	}{
		{"nil list", nil},
		{"empty list", []scheduler.Callable[int]{}},
		{"[nil]", []scheduler.Callable[int]{nil}},
		{"[ok, nil]", []scheduler.Callable[int]{return42, nil}},
	} {
		fns := c.fns
		add(badCase{name: "InvokeAny/" + c.name + ": ErrInvalidArgument, nothing scheduled", run: func(t *testing.T, e *badEnv) {
			v, err := scheduler.InvokeAny(e.ctx, e.s, fns)
			require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
			require.Zero(t, v)
			e.nothingQueued(t)
		}})
	}
	add(badCase{name: "InvokeAny/ctx already canceled: ctx.Err(), the tasks canceled", run: func(t *testing.T, e *badEnv) {
		started := make(chan struct{})
		blocker, err := e.s.Submit(blockUntilCanceled(started))
		require.NoError(t, err)
		<-started
		v, err := scheduler.InvokeAny(doneCtx(), e.s, []scheduler.Callable[int]{return42})
		require.ErrorIs(t, err, context.Canceled)
		require.Zero(t, v)
		require.True(t, blocker.Cancel(true))
		require.NoError(t, e.s.AwaitIdle(e.ctx))
		require.Equal(t, uint64(2), e.s.Stats().Canceled, "the blocker and InvokeAny's task")
	}})
	add(badCase{name: "InvokeAny/all fail or panic: the error wraps one of theirs", run: func(t *testing.T, e *badEnv) {
		_, err := scheduler.InvokeAny(e.ctx, e.s, []scheduler.Callable[int]{
			func(context.Context) (int, error) { return 0, errBoom },
			func(context.Context) (int, error) { panic(errBoom) },
		})
		require.ErrorIs(t, err, errBoom)
	}})

	// --- ScheduledFuture / Future ------------------------------------------
	add(badCase{name: "Cancel/after the run: false, outcome kept", run: func(t *testing.T, e *badEnv) {
		f, err := scheduler.SubmitCallable(e.s, return42)
		require.NoError(t, err)
		_, err = f.Get(e.ctx)
		require.NoError(t, err)
		for _, interrupt := range []bool{false, true} {
			require.False(t, f.Cancel(interrupt))
		}
		require.False(t, f.IsCanceled())
		v, err := f.Get(doneCtx()) // a done future answers even with an ended ctx
		require.NoError(t, err)
		require.Equal(t, 42, v)
	}})
	add(badCase{name: "Cancel/twice: true, then false", run: func(t *testing.T, e *badEnv) {
		f, err := e.s.ScheduleAtFixedRate(nop, time.Hour, time.Hour)
		require.NoError(t, err)
		require.True(t, f.Cancel(true))
		require.False(t, f.Cancel(true))
		require.False(t, f.Cancel(false))
		require.ErrorIs(t, f.Wait(doneCtx()), scheduler.ErrCanceled)
		require.Equal(t, uint64(1), e.s.Stats().Canceled)
	}})
	add(badCase{name: "Cancel/after a failed run: false, the error kept", run: func(t *testing.T, e *badEnv) {
		f, err := e.s.ScheduleWithFixedDelay(func(context.Context) error { return errBoom }, 0, time.Hour)
		require.NoError(t, err)
		require.ErrorIs(t, f.Wait(e.ctx), errBoom)
		require.False(t, f.Cancel(true))
		require.ErrorIs(t, f.Wait(e.ctx), errBoom)
	}})
	add(badCase{name: "Cancel/of a task handed back by ShutdownNow: true", run: func(t *testing.T, e *badEnv) {
		f, err := e.s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		require.Equal(t, []scheduler.ScheduledFuture{f}, e.s.ShutdownNow())
		require.False(t, f.IsDone())
		require.True(t, f.Cancel(false))
		require.ErrorIs(t, f.Wait(e.ctx), scheduler.ErrCanceled)
	}})
	add(badCase{name: "Cancel/from inside its own run: ctx canceled, future canceled", run: func(t *testing.T, e *badEnv) {
		var self atomic.Pointer[scheduler.ScheduledFuture]
		sawCtx := make(chan error, 1)
		ready := make(chan struct{})
		f, err := e.s.Schedule(func(ctx context.Context) error {
			<-ready
			(*self.Load()).Cancel(true)
			sawCtx <- ctx.Err()
			return nil
		}, 0)
		require.NoError(t, err)
		self.Store(&f)
		close(ready)
		require.ErrorIs(t, f.Wait(e.ctx), scheduler.ErrCanceled)
		require.ErrorIs(t, <-sawCtx, context.Canceled)
	}})
	add(badCase{name: "Wait and Get/ctx already canceled on a pending future: ctx.Err()", run: func(t *testing.T, e *badEnv) {
		f, err := scheduler.ScheduleCallable(e.s, return42, time.Hour)
		require.NoError(t, err)
		require.ErrorIs(t, f.Wait(doneCtx()), context.Canceled)
		_, err = f.Get(doneCtx())
		require.ErrorIs(t, err, context.Canceled)
		require.ErrorIs(t, f.Wait(shortCtx(t)), context.DeadlineExceeded)
		require.False(t, f.IsDone())
	}})
	add(badCase{name: "Wait/from inside its own run: ctx.Err(), no deadlock", run: func(t *testing.T, e *badEnv) {
		var self atomic.Pointer[scheduler.ScheduledFuture]
		ready := make(chan struct{})
		got := make(chan error, 1)
		short := shortCtx(t)
		f, err := e.s.Submit(func(context.Context) error {
			<-ready
			got <- (*self.Load()).Wait(short)
			return nil
		})
		require.NoError(t, err)
		self.Store(&f)
		close(ready)
		require.ErrorIs(t, <-got, context.DeadlineExceeded)
		require.NoError(t, f.Wait(e.ctx))
	}})
	add(badCase{name: "Done, Delay, Name, IsPeriodic/on a done and a canceled future: consistent, no panic", run: func(t *testing.T, e *badEnv) {
		done, err := e.s.Submit(nop, scheduler.WithName("d"))
		require.NoError(t, err)
		require.NoError(t, done.Wait(e.ctx))
		canceled, err := e.s.ScheduleAtFixedRate(nop, time.Hour, time.Hour)
		require.NoError(t, err)
		require.True(t, canceled.Cancel(false))
		for _, f := range []scheduler.ScheduledFuture{done, canceled} {
			require.Equal(t, f.Done(), f.Done())
			<-f.Done()
			require.True(t, f.IsDone())
		}
		d0 := canceled.Delay()
		e.settle(t, 2*time.Hour)
		require.Equal(t, d0-2*time.Hour, canceled.Delay(), "Delay keeps decreasing once done")
		require.Equal(t, "d", done.Name())
		require.False(t, done.IsPeriodic())
		require.True(t, canceled.IsPeriodic())
	}})

	// --- Shutdown, ShutdownNow, AwaitTermination, AwaitIdle ----------------
	add(badCase{name: "Shutdown/twice, then ShutdownNow twice: harmless; the second ShutdownNow returns nothing", run: func(t *testing.T, e *badEnv) {
		f, err := e.s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		e.s.Shutdown()
		e.s.Shutdown()
		require.True(t, e.s.IsShutdown())
		require.Equal(t, []scheduler.ScheduledFuture{f}, e.s.ShutdownNow())
		require.Empty(t, e.s.ShutdownNow())
		require.NoError(t, e.s.AwaitTermination(e.ctx))
		e.s.Shutdown()
		require.Empty(t, e.s.ShutdownNow())
		require.True(t, e.s.IsTerminated())
	}})
	add(badCase{name: "ShutdownNow/on a scheduler never used: empty, terminated at once", run: func(t *testing.T, e *badEnv) {
		require.Empty(t, e.s.ShutdownNow())
		require.NoError(t, e.s.AwaitTermination(doneCtx()))
		require.True(t, e.s.IsTerminated())
	}})
	add(badCase{name: "AwaitTermination/before any shutdown: ctx.Err()", run: func(t *testing.T, e *badEnv) {
		require.ErrorIs(t, e.s.AwaitTermination(doneCtx()), context.Canceled)
		require.ErrorIs(t, e.s.AwaitTermination(shortCtx(t)), context.DeadlineExceeded)
		require.False(t, e.s.IsShutdown())
	}})
	add(badCase{name: "AwaitTermination/after termination with an ended ctx: nil", run: func(t *testing.T, e *badEnv) {
		e.s.Shutdown()
		require.NoError(t, e.s.AwaitTermination(e.ctx))
		require.NoError(t, e.s.AwaitTermination(doneCtx()))
	}})
	add(badCase{name: "AwaitTermination/a task that blocks until interrupted: ctx.Err() after Shutdown, nil after ShutdownNow", run: func(t *testing.T, e *badEnv) {
		started := make(chan struct{})
		f, err := e.s.Submit(blockUntilCanceled(started))
		require.NoError(t, err)
		<-started
		e.s.Shutdown()
		require.ErrorIs(t, e.s.AwaitTermination(shortCtx(t)), context.DeadlineExceeded)
		require.True(t, e.s.IsTerminating())
		require.Empty(t, e.s.ShutdownNow()) // cancels the task's ctx: it returns
		require.NoError(t, e.s.AwaitTermination(e.ctx))
		require.NoError(t, f.Wait(e.ctx), "a one-shot that returns nil after its ctx was canceled completes normally")
	}})
	add(badCase{name: "AwaitTermination/from inside a task: ctx.Err(), no deadlock", run: func(t *testing.T, e *badEnv) {
		short := shortCtx(t)
		got := e.fromInside(t, func(context.Context) error {
			e.s.Shutdown()
			return e.s.AwaitTermination(short)
		})
		require.ErrorIs(t, got, context.DeadlineExceeded)
		require.NoError(t, e.s.AwaitTermination(e.ctx))
	}})
	add(badCase{name: "ShutdownNow/from inside a task: its own ctx canceled", run: func(t *testing.T, e *badEnv) {
		got := e.fromInside(t, func(ctx context.Context) error {
			e.s.ShutdownNow()
			return ctx.Err()
		})
		require.ErrorIs(t, got, context.Canceled)
		require.NoError(t, e.s.AwaitTermination(e.ctx))
	}})
	add(badCase{name: "AwaitIdle/ctx already canceled: ctx.Err() at once, even when idle", run: func(t *testing.T, e *badEnv) {
		require.ErrorIs(t, e.s.AwaitIdle(doneCtx()), context.Canceled)
		require.NoError(t, e.s.AwaitIdle(e.ctx))
	}})
	add(badCase{name: "AwaitIdle/from inside a task: ctx.Err(), no deadlock", run: func(t *testing.T, e *badEnv) {
		short := shortCtx(t)
		got := e.fromInside(t, func(context.Context) error { return e.s.AwaitIdle(short) })
		require.ErrorIs(t, got, context.DeadlineExceeded)
	}})
	add(badCase{name: "AwaitIdle/after termination: nil", run: func(t *testing.T, e *badEnv) {
		e.s.ShutdownNow()
		require.NoError(t, e.s.AwaitTermination(e.ctx))
		require.NoError(t, e.s.AwaitIdle(e.ctx))
	}})

	// --- policies and pool size ---------------------------------------------
	add(badCase{name: "SetRejectionPolicy/nil: AbortPolicy", run: func(t *testing.T, e *badEnv) {
		e.s.SetRejectionPolicy(scheduler.DiscardPolicy)
		e.s.SetRejectionPolicy(nil)
		e.s.Shutdown()
		_, err := e.s.Submit(nop)
		require.ErrorIs(t, err, scheduler.ErrRejected)
	}})
	for _, n := range []int{0, -1, math.MinInt} {
		add(badCase{name: fmt.Sprintf("SetCorePoolSize/%d: ErrInvalidArgument, size unchanged", n), pool: 2, run: func(t *testing.T, e *badEnv) {
			require.ErrorIs(t, e.s.SetCorePoolSize(n), scheduler.ErrInvalidArgument)
			require.Equal(t, 2, e.s.Stats().CorePoolSize)
		}})
	}
	add(badCase{name: "SetCorePoolSize/huge: at most one new worker per queued task", run: func(t *testing.T, e *badEnv) {
		_, err := e.s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		require.NoError(t, e.s.SetCorePoolSize(math.MaxInt))
		require.LessOrEqual(t, e.s.Stats().PoolSize, 2)
	}})
	add(badCase{name: "SetCorePoolSize and PrestartAllCoreWorkers/after termination: no worker starts", run: func(t *testing.T, e *badEnv) {
		e.s.Shutdown()
		require.NoError(t, e.s.AwaitTermination(e.ctx))
		require.NoError(t, e.s.SetCorePoolSize(4))
		require.Zero(t, e.s.PrestartAllCoreWorkers())
		require.Zero(t, e.s.Stats().PoolSize)
	}})
	add(badCase{name: "PrestartAllCoreWorkers/twice: the second starts none", pool: 3, run: func(t *testing.T, e *badEnv) {
		require.Equal(t, 3, e.s.PrestartAllCoreWorkers())
		require.Zero(t, e.s.PrestartAllCoreWorkers())
		require.Equal(t, 3, e.s.Stats().PoolSize)
	}})
	add(badCase{name: "Set*Policy/after Shutdown: applied at once, getters agree", run: func(t *testing.T, e *badEnv) {
		one, err := e.s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		e.s.Shutdown()
		e.s.SetRemoveOnCancelPolicy(true)
		require.True(t, e.s.RemoveOnCancelPolicy())
		e.s.SetContinueExistingPeriodicTasksAfterShutdownPolicy(false)
		require.False(t, e.s.ContinueExistingPeriodicTasksAfterShutdownPolicy())
		e.s.SetExecuteExistingDelayedTasksAfterShutdownPolicy(false) // cancels the queued one-shot
		require.False(t, e.s.ExecuteExistingDelayedTasksAfterShutdownPolicy())
		require.True(t, one.IsCanceled())
		require.NoError(t, e.s.AwaitTermination(e.ctx))
		e.s.SetExecuteExistingDelayedTasksAfterShutdownPolicy(true) // too late to matter; harmless
	}})

	for _, pol := range []struct {
		name string
		p    scheduler.RejectionPolicy
	}{{"CallerRunsPolicy", scheduler.CallerRunsPolicy}, {"DiscardPolicy", scheduler.DiscardPolicy}, {"DiscardOldestPolicy", scheduler.DiscardOldestPolicy}} {
		add(badCase{name: pol.name + "/after Shutdown: discards; the future is returned canceled, no error",
			opts: []scheduler.Option{scheduler.WithRejectionPolicy(pol.p)},
			run: func(t *testing.T, e *badEnv) {
				queued, err := e.s.Schedule(nop, time.Hour)
				require.NoError(t, err)
				e.s.Shutdown()
				var ran atomic.Int32
				f, err := e.s.Submit(countRuns(&ran))
				require.NoError(t, err)
				require.True(t, f.IsCanceled())
				require.Zero(t, ran.Load())
				require.False(t, queued.IsDone(), "DiscardOldest does not touch the queue after Shutdown")
				require.Equal(t, []scheduler.ScheduledFuture{queued}, e.s.ShutdownNow())
			}})
	}
	add(badCase{name: "CallerRunsPolicy/queue full, the task panics: recovered in the caller, *PanicError",
		opts: []scheduler.Option{scheduler.WithRejectionPolicy(scheduler.CallerRunsPolicy), scheduler.WithMaxQueueSize(1)},
		run: func(t *testing.T, e *badEnv) {
			_, err := e.s.Schedule(nop, time.Hour)
			require.NoError(t, err)
			f, err := e.s.Submit(func(context.Context) error { panic("bad: in the caller") })
			require.NoError(t, err)
			require.True(t, f.IsDone(), "ran in the caller before Submit returned")
			var pe *scheduler.PanicError
			require.ErrorAs(t, f.Wait(e.ctx), &pe)
			e.clear()
		}})
	add(badCase{name: "DiscardOldestPolicy/queue full of canceled tasks: the oldest canceled one gives way",
		opts: []scheduler.Option{scheduler.WithRejectionPolicy(scheduler.DiscardOldestPolicy), scheduler.WithMaxQueueSize(1)},
		run: func(t *testing.T, e *badEnv) {
			old, err := e.s.Schedule(nop, time.Hour)
			require.NoError(t, err)
			require.True(t, old.Cancel(false)) // stays queued: remove-on-cancel is off
			f, err := e.s.Schedule(nop, 2*time.Hour)
			require.NoError(t, err)
			require.Equal(t, []scheduler.ScheduledFuture{f}, e.s.Queue())
			require.False(t, f.IsDone())
			e.clear()
		}})
	add(badCase{name: "WithRemoveOnCancel(true)/Cancel twice and Remove after: true, false, false",
		opts: []scheduler.Option{scheduler.WithRemoveOnCancel(true)},
		run: func(t *testing.T, e *badEnv) {
			f, err := e.s.ScheduleAtFixedRate(nop, time.Hour, time.Hour)
			require.NoError(t, err)
			require.True(t, f.Cancel(true))
			require.False(t, f.Cancel(true))
			require.False(t, e.s.Remove(f))
			require.Empty(t, e.s.Queue())
			require.Equal(t, uint64(1), e.s.Stats().Canceled)
		}})

	// --- Remove, Purge, Queue, Stats ------------------------------------------
	add(badCase{name: "Remove/nil: false", run: func(t *testing.T, e *badEnv) {
		require.False(t, e.s.Remove(nil))
	}})
	add(badCase{name: "Remove/typed nil *Future: false", run: func(t *testing.T, e *badEnv) {
		var f *scheduler.Future[int]
		require.False(t, e.s.Remove(f))
	}})
	add(badCase{name: "Remove/a foreign ScheduledFuture: false", run: func(t *testing.T, e *badEnv) {
		f, err := e.s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		require.False(t, e.s.Remove(foreignFuture{f}))
		require.Equal(t, 1, e.s.Stats().Queued)
	}})
	add(badCase{name: "Remove/another scheduler's future: false, left queued there", run: func(t *testing.T, e *badEnv) {
		other, err := scheduler.New(1, scheduler.WithClock(e.clk))
		require.NoError(t, err)
		defer func() {
			other.ShutdownNow()
			require.NoError(t, other.AwaitTermination(e.ctx))
		}()
		f, err := other.Schedule(nop, time.Hour)
		require.NoError(t, err)
		require.False(t, e.s.Remove(f))
		require.Equal(t, []scheduler.ScheduledFuture{f}, other.Queue())
	}})
	add(badCase{name: "Remove/twice, and of a done future: true, then false", run: func(t *testing.T, e *badEnv) {
		f, err := e.s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		require.True(t, e.s.Remove(f))
		require.False(t, e.s.Remove(f))
		require.False(t, f.IsDone(), "Remove does not cancel")
		done, err := e.s.Submit(nop)
		require.NoError(t, err)
		require.NoError(t, done.Wait(e.ctx))
		require.False(t, e.s.Remove(done))
	}})
	add(badCase{name: "Remove and Purge/after ShutdownNow: nothing left to remove", run: func(t *testing.T, e *badEnv) {
		f, err := e.s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		require.True(t, f.Cancel(false))
		e.s.ShutdownNow()
		require.False(t, e.s.Remove(f))
		e.s.Purge()
		require.Empty(t, e.s.Queue())
	}})
	add(badCase{name: "Purge, Queue, Stats, String/on a fresh scheduler: empty, zero", run: func(t *testing.T, e *badEnv) {
		e.s.Purge()
		require.Empty(t, e.s.Queue())
		require.Equal(t, scheduler.Stats{CorePoolSize: 1}, e.s.Stats())
		require.NotEmpty(t, e.s.String())
	}})

	// --- panics in a task, a hook, the decorator, the policy ----------------
	add(badCase{name: "task panics: *PanicError, logged at Error with its name", run: func(t *testing.T, e *badEnv) {
		f, err := e.s.Submit(func(context.Context) error { panic("bad: boom") }, scheduler.WithName("boomer"))
		require.NoError(t, err)
		var pe *scheduler.PanicError
		require.ErrorAs(t, f.Wait(e.ctx), &pe)
		require.Equal(t, "bad: boom", pe.Value)
		require.NotEmpty(t, pe.Stack)
		e.log.requireErrorRecord(t, "boomer", "bad: boom")
		require.NoError(t, e.s.AwaitIdle(e.ctx)) // the run is counted after its future completes, as in the JDK
		st := e.s.Stats()
		require.Equal(t, uint64(1), st.Panicked)
		require.Equal(t, uint64(1), st.Failed)
	}})
	add(badCase{name: "task panics with nil: still a *PanicError", run: func(t *testing.T, e *badEnv) {
		f, err := e.s.Submit(func(context.Context) error { panic(nil) })
		require.NoError(t, err)
		var pe *scheduler.PanicError
		require.ErrorAs(t, f.Wait(e.ctx), &pe)
	}})
	add(badCase{name: "periodic task panics: later runs suppressed, logged", run: func(t *testing.T, e *badEnv) {
		var ran atomic.Int32
		f, err := e.s.ScheduleAtFixedRate(func(context.Context) error {
			ran.Add(1)
			panic("bad: tick")
		}, 0, time.Minute, scheduler.WithName("ticker"))
		require.NoError(t, err)
		var pe *scheduler.PanicError
		require.ErrorAs(t, f.Wait(e.ctx), &pe)
		e.settle(t, time.Hour)
		require.Equal(t, int32(1), ran.Load())
		e.log.requireErrorRecord(t, "ticker", "bad: tick")
	}})
	add(badCase{name: "periodic task panics with ContinueOnError: keeps running", run: func(t *testing.T, e *badEnv) {
		var ran atomic.Int32
		f, err := e.s.ScheduleWithFixedDelay(func(context.Context) error {
			ran.Add(1)
			panic("bad: tock")
		}, 0, time.Minute, scheduler.ContinueOnError())
		require.NoError(t, err)
		require.NoError(t, e.s.AwaitIdle(e.ctx))
		for range 3 {
			e.settle(t, time.Minute)
		}
		require.Equal(t, int32(4), ran.Load())
		require.False(t, f.IsDone())
		require.Equal(t, uint64(4), e.s.Stats().Panicked)
	}})
	add(badCase{name: "task calls runtime.Goexit: future fails, the worker is replaced", run: func(t *testing.T, e *badEnv) {
		f, err := e.s.Submit(func(context.Context) error { runtime.Goexit(); return nil })
		require.NoError(t, err)
		err = f.Wait(e.ctx)
		require.Error(t, err)
		require.False(t, f.IsCanceled())
	}})
	{
		var after atomic.Int32
		add(badCase{name: "Hooks.BeforeExecute panics: the task does not run, its future holds the *PanicError",
			opts: []scheduler.Option{scheduler.WithHooks(scheduler.Hooks{
				BeforeExecute: func(f scheduler.ScheduledFuture) {
					if f.Name() == "victim" {
						panic("bad: before")
					}
				},
				AfterExecute: func(f scheduler.ScheduledFuture, _ error) {
					if f.Name() == "victim" {
						after.Add(1)
					}
				},
			})},
			run: func(t *testing.T, e *badEnv) {
				var ran atomic.Int32
				f, err := e.s.Submit(countRuns(&ran), scheduler.WithName("victim"))
				require.NoError(t, err)
				var pe *scheduler.PanicError
				require.ErrorAs(t, f.Wait(e.ctx), &pe)
				require.Equal(t, "bad: before", pe.Value)
				require.Zero(t, ran.Load())
				require.NoError(t, e.s.AwaitIdle(e.ctx))
				require.Zero(t, after.Load(), "AfterExecute is not called when BeforeExecute panicked")
				e.log.requireErrorRecord(t, "BeforeExecute", "bad: before")
			}})
	}
	add(badCase{name: "Hooks.AfterExecute panics: the run's outcome stays",
		opts: []scheduler.Option{scheduler.WithHooks(scheduler.Hooks{
			AfterExecute: func(scheduler.ScheduledFuture, error) { panic("bad: after") },
		})},
		run: func(t *testing.T, e *badEnv) {
			e.requireAnswer(t)
			require.NoError(t, e.s.AwaitIdle(e.ctx))
			e.log.requireErrorRecord(t, "AfterExecute", "bad: after")
		}})
	add(badCase{name: "Hooks.Terminated panics: AwaitTermination still returns nil",
		opts: []scheduler.Option{scheduler.WithHooks(scheduler.Hooks{
			Terminated: func() { panic("bad: terminated") },
		})},
		run: func(t *testing.T, e *badEnv) {
			e.s.Shutdown()
			require.NoError(t, e.s.AwaitTermination(e.ctx))
			require.True(t, e.s.IsTerminated())
			e.log.requireErrorRecord(t, "Terminated", "bad: terminated")
		}})
	{
		var calls atomic.Int32
		add(badCase{name: "WithDecorator panics: ErrRejected wrapping the *PanicError, nothing queued",
			opts: []scheduler.Option{scheduler.WithDecorator(func(task scheduler.Task) scheduler.Task {
				if calls.Add(1) == 1 {
					panic("bad: decorator")
				}
				return task
			})},
			run: func(t *testing.T, e *badEnv) {
				f, err := e.s.Submit(nop)
				require.ErrorIs(t, err, scheduler.ErrRejected)
				var pe *scheduler.PanicError
				require.ErrorAs(t, err, &pe)
				require.Nil(t, f)
				e.nothingQueued(t)
				e.log.requireErrorRecord(t, "decorator", "bad: decorator")
			}})
	}
	{
		var calls atomic.Int32
		add(badCase{name: "WithDecorator returns nil: ErrInvalidArgument, nothing queued",
			opts: []scheduler.Option{scheduler.WithDecorator(func(task scheduler.Task) scheduler.Task {
				if calls.Add(1) == 1 {
					return nil
				}
				return task
			})},
			run: func(t *testing.T, e *badEnv) {
				f, err := scheduler.SubmitCallable(e.s, return42)
				require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
				require.Nil(t, f)
				e.nothingQueued(t)
			}})
	}
	add(badCase{name: "RejectionPolicy panics: ErrRejected wrapping the *PanicError, future canceled",
		opts: []scheduler.Option{scheduler.WithRejectionPolicy(panickingPolicy{}), scheduler.WithMaxQueueSize(1)},
		run: func(t *testing.T, e *badEnv) {
			f, err := e.overflow(t)
			require.ErrorIs(t, err, scheduler.ErrRejected)
			var pe *scheduler.PanicError
			require.ErrorAs(t, err, &pe)
			require.Nil(t, f)
			st := e.s.Stats()
			require.Equal(t, 1, st.Queued)
			require.Equal(t, uint64(1), st.Rejected)
			require.Equal(t, uint64(1), st.Canceled)
			e.log.requireErrorRecord(t, "rejection policy", "bad: policy panics")
			e.clear()
		}})
	{
		p := &recordingPolicy{}
		add(badCase{name: "RejectionPolicy does nothing and returns nil: the future is returned done and canceled",
			opts: []scheduler.Option{scheduler.WithRejectionPolicy(p), scheduler.WithMaxQueueSize(1)},
			run: func(t *testing.T, e *badEnv) {
				f, err := e.overflow(t)
				require.NoError(t, err)
				require.NotNil(t, f)
				require.True(t, f.IsCanceled(), "no future is left pending")
				require.ErrorIs(t, f.Wait(e.ctx), scheduler.ErrCanceled)
				require.Equal(t, 1, p.got.len())
				e.clear()
			}})
	}
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
