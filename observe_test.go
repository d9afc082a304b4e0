package scheduler_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
)

func TestObserveSeesEveryRunOnce(t *testing.T) {
	var o observed
	logger, logs := newLogger()
	s, clk := newManual(t, 1, o.hooks(), scheduler.WithLogger(logger), scheduler.WithHooks(scheduler.Hooks{
		BeforeExecute: func(f scheduler.ScheduledFuture) {
			if f.Name() == "before-panics" {
				panic("before")
			}
		},
	}))
	clk.Advance(time.Minute)
	ok, err := s.Schedule(func(context.Context) error {
		clk.Advance(2 * time.Second) // the run takes 2 s
		return nil
	}, 5*time.Second, scheduler.WithName("ok"))
	require.NoError(t, err)
	failing, err := s.Schedule(func(context.Context) error { return errBoom }, 5*time.Second, scheduler.WithName("fails"))
	require.NoError(t, err)
	panicking, err := s.Schedule(func(context.Context) error { panic("body") }, 5*time.Second, scheduler.WithName("panics"))
	require.NoError(t, err)
	beforePanics, err := s.Schedule(nop, 5*time.Second, scheduler.WithName("before-panics"))
	require.NoError(t, err)
	canceled, err := s.Schedule(nop, 5*time.Second, scheduler.WithName("canceled"))
	require.NoError(t, err)
	require.True(t, canceled.Cancel(false))
	advance(t, clk, s, 5*time.Second)

	runs := o.get()
	require.Len(t, runs, 4, "a canceled task is no run")
	byName := map[string]scheduler.RunInfo{}
	for _, r := range runs {
		byName[r.Future.Name()] = r
	}
	due := epoch.Add(time.Minute + 5*time.Second)
	r := byName["ok"]
	require.True(t, r.Future == ok)
	require.Equal(t, due, r.Due, "a one-shot task is due at its scheduling time plus its delay")
	require.Equal(t, due, r.Started)
	require.Equal(t, due.Add(2*time.Second), r.Ended)
	require.NoError(t, r.Err)
	require.Zero(t, r.Jitter)

	r = byName["fails"]
	require.True(t, r.Future == failing)
	require.ErrorIs(t, r.Err, errBoom)

	r = byName["panics"]
	require.True(t, r.Future == panicking)
	var pe *scheduler.PanicError
	require.ErrorAs(t, r.Err, &pe)
	require.Equal(t, "body", pe.Value)

	r = byName["before-panics"]
	require.True(t, r.Future == beforePanics)
	require.ErrorAs(t, r.Err, &pe)
	require.Equal(t, "before", pe.Value)
	require.Equal(t, r.Started, r.Ended, "the task did not run")
	logs.requireErrorRecord(t, "before-panics", "before")
}

func TestObservePanicIsRecoveredAndLogged(t *testing.T) {
	logger, logs := newLogger()
	var o observed
	s, clk := newManual(t, 1, scheduler.WithLogger(logger),
		scheduler.WithHooks(scheduler.Hooks{Observe: func(scheduler.RunInfo) { panic("observer down") }}),
		o.hooks())
	f, err := s.ScheduleAtFixedRate(nop, time.Second, time.Second, scheduler.WithName("watched"))
	require.NoError(t, err)
	advance(t, clk, s, time.Second)
	advance(t, clk, s, time.Second)
	require.Len(t, o.get(), 2, "the later Observe still runs, every run")
	require.False(t, f.IsDone(), "the task is not affected")
	logs.requireErrorRecord(t, "watched", "observer down")
}

func TestHooksAndDecoratorsCompose(t *testing.T) {
	var calls recorder[string]
	hooks := func(name string) scheduler.Option {
		return scheduler.WithHooks(scheduler.Hooks{
			BeforeExecute: func(scheduler.ScheduledFuture) { calls.add(name + ".before") },
			AfterExecute:  func(scheduler.ScheduledFuture, error) { calls.add(name + ".after") },
			Observe:       func(scheduler.RunInfo) { calls.add(name + ".observe") },
			Terminated:    func() { calls.add(name + ".terminated") },
		})
	}
	decorator := func(name string) scheduler.Option {
		return scheduler.WithDecorator(func(next scheduler.Task) scheduler.Task {
			return func(ctx context.Context) error {
				calls.add(name + ".in")
				defer calls.add(name + ".out")
				return next(ctx)
			}
		})
	}
	s, clk := newManual(t, 1, hooks("h1"), decorator("d1"), hooks("h2"), decorator("d2"), scheduler.WithDecorator(nil))
	_, err := s.Schedule(func(context.Context) error { calls.add("body"); return nil }, time.Second)
	require.NoError(t, err)
	advance(t, clk, s, time.Second)
	s.Shutdown()
	require.NoError(t, s.AwaitTermination(testCtx(t)))
	require.Equal(t, []string{
		"h1.before", "h2.before",
		"d1.in", "d2.in", "body", "d2.out", "d1.out",
		"h1.after", "h2.after",
		"h1.observe", "h2.observe",
		"h1.terminated", "h2.terminated",
	}, calls.get())
}

func TestCurrentRunMatchesObserve(t *testing.T) {
	var o observed
	s, clk := newManual(t, 2, o.hooks())
	var inRun recorder[scheduler.RunInfo]
	var after []bool
	record := func(ctx context.Context) error {
		derived, cancel := context.WithTimeout(ctx, time.Hour)
		defer cancel()
		r, ok := scheduler.CurrentRun(derived)
		if !ok {
			return errors.New("no current run")
		}
		inRun.add(r)
		return nil
	}
	f, err := s.ScheduleAtFixedRate(record, time.Second, time.Second, scheduler.WithJitter(500*time.Millisecond))
	require.NoError(t, err)
	var leaked context.Context
	_, err = s.Schedule(func(ctx context.Context) error { leaked = ctx; return nil }, 0)
	require.NoError(t, err)
	for range 3 {
		advance(t, clk, s, 2*time.Second)
	}
	require.True(t, f.Cancel(false))
	idle(t, s)
	_, ok := scheduler.CurrentRun(leaked)
	after = append(after, ok)
	_, ok = scheduler.CurrentRun(context.Background())
	after = append(after, ok)
	//lint:ignore SA1012 CurrentRun answers a nil ctx with ok false, not a panic: this checks it.
	_, ok = scheduler.CurrentRun(nil)
	after = append(after, ok)
	require.Equal(t, []bool{false, false, false}, after, "no run after it returned, nor for other contexts")

	var observedRuns []scheduler.RunInfo
	for _, r := range o.get() {
		if r.Future == f {
			observedRuns = append(observedRuns, r)
		}
	}
	// A periodic task is re-queued before its hooks run, so when two runs
	// catch up at one instant the next run's Observe may come first: the
	// runs themselves are in due order, their observations by due time.
	slices.SortFunc(observedRuns, func(a, b scheduler.RunInfo) int { return a.Due.Compare(b.Due) })
	require.Len(t, inRun.get(), len(observedRuns))
	require.NotEmpty(t, inRun.get())
	for i, r := range inRun.get() {
		want := observedRuns[i]
		require.True(t, r.Future == want.Future)
		require.Equal(t, want.Due, r.Due)
		require.Equal(t, want.Started, r.Started)
		require.Equal(t, want.Jitter, r.Jitter)
		require.True(t, r.Ended.IsZero())
		require.NoError(t, r.Err)
	}
}

func TestCurrentRunInACallerRunsRun(t *testing.T) {
	s, clk := newManual(t, 1, scheduler.WithMaxQueueSize(1), scheduler.WithRejectionPolicy(scheduler.CallerRunsPolicy))
	_, err := s.Schedule(nop, time.Hour)
	require.NoError(t, err)
	clk.Advance(time.Minute)
	var got scheduler.RunInfo
	var ok bool
	f, err := s.Schedule(func(ctx context.Context) error {
		got, ok = scheduler.CurrentRun(ctx)
		return nil
	}, 0) // rejected: the queue is full, so it runs here
	require.NoError(t, err)
	require.True(t, f.IsDone())
	require.True(t, ok)
	require.True(t, got.Future == f)
	require.Equal(t, epoch.Add(time.Minute), got.Due)
}

func TestGoexitRunIsObservedAndAfterExecuted(t *testing.T) {
	var o observed
	var afters recorder[error]
	s, clk := newManual(t, 1, o.hooks(), scheduler.WithHooks(scheduler.Hooks{
		AfterExecute: func(_ scheduler.ScheduledFuture, err error) { afters.add(err) },
	}))
	f, err := s.Schedule(func(context.Context) error { runtime.Goexit(); return nil }, time.Second)
	require.NoError(t, err)
	advance(t, clk, s, time.Second)
	require.Error(t, f.Wait(testCtx(t)))
	runs := o.get()
	require.Len(t, runs, 1)
	require.True(t, runs[0].Future == f)
	require.Error(t, runs[0].Err)
	require.Equal(t, []error{runs[0].Err}, afters.get(), "AfterExecute gets the same outcome")
	require.Equal(t, uint64(1), s.Stats().Completed)
}

// TestCurrentRunIsTheRunInProgressWhenRunsCatchUp: a periodic task is
// re-queued before its worker calls the hooks, so when runs catch up the
// next run may start on the other worker meanwhile; CurrentRun in that run
// must describe it, not the previous run whose worker is still in the
// hooks (it did one time in ten).
func TestCurrentRunIsTheRunInProgressWhenRunsCatchUp(t *testing.T) {
	for range 100 {
		s, clk := newManual(t, 2, scheduler.WithHooks(scheduler.Hooks{
			AfterExecute: func(scheduler.ScheduledFuture, error) { runtime.Gosched() },
		}))
		var dues recorder[time.Time]
		f, err := s.ScheduleAtFixedRate(func(ctx context.Context) error {
			r, ok := scheduler.CurrentRun(ctx)
			if !ok {
				return errors.New("no current run")
			}
			dues.add(r.Due)
			return nil
		}, time.Second, time.Second)
		require.NoError(t, err)
		advance(t, clk, s, 6*time.Second) // six runs due at once
		require.True(t, f.Cancel(false))
		idle(t, s)
		got := dues.get()
		require.Len(t, got, 6)
		for i, due := range got {
			require.Equal(t, time.Duration(i+1)*time.Second, due.Sub(epoch), "run %d", i)
		}
	}
}
