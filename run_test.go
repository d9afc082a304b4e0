package scheduler_test

// Running a task (run.go): periodic timing, periodic failure and the
// re-queue, panics, the hooks and the decorator, and an interrupt that
// must not leak into the next run.
//
// Everything timed runs on a manual clock; tasks that must be running block
// on a gate.

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
)

// ---------------------------------------------------------------------------
// Periodic timing.

func TestFixedRateRunKIsDueAtInitialDelayPlusKPeriods(t *testing.T) {
	s, clk := newManual(t, 2)
	clk.Advance(7 * time.Second) // schedule at an instant other than the origin
	const initial, period = 3 * time.Second, 10 * time.Second
	var at recorder[time.Duration]
	f, err := s.ScheduleAtFixedRate(func(context.Context) error { at.add(since(clk)); return nil }, initial, period)
	require.NoError(t, err)
	require.Equal(t, initial, f.Delay())

	var want []time.Duration
	step := initial
	for k := range 6 {
		advance(t, clk, s, step-1)
		require.Len(t, at.get(), k, "run %d must not start a nanosecond early", k)
		advance(t, clk, s, 1)
		want = append(want, 7*time.Second+initial+time.Duration(k)*period)
		require.Equal(t, want, at.get())
		require.Equal(t, period, f.Delay())
		step = period
	}
}

func TestFixedRateCatchesUpAfterOverrun(t *testing.T) {
	s, clk := newManual(t, 1)
	const period = 10 * time.Second
	var at recorder[time.Duration]
	f, err := s.ScheduleAtFixedRate(func(context.Context) error {
		at.add(since(clk))
		if at.len() == 1 {
			clk.Advance(3 * period) // the first run takes three periods
		}
		return nil
	}, period, period)
	require.NoError(t, err)

	advance(t, clk, s, period)
	// Run 0 started at 10s and ended at 40s. Runs 1 to 3, due at 20s, 30s
	// and 40s, start right after it, back to back; none is skipped.
	require.Equal(t, []time.Duration{10 * time.Second, 40 * time.Second, 40 * time.Second, 40 * time.Second}, at.get())
	require.Equal(t, period, f.Delay(), "run 4 is due at 50s, on the original grid")

	advance(t, clk, s, period)
	require.Equal(t, 50*time.Second, at.get()[4])
}

func TestFixedDelayNextRunIsDueDelayAfterPreviousEnded(t *testing.T) {
	s, clk := newManual(t, 1)
	const initial, delay, runTime = time.Minute, 5 * time.Minute, 10 * time.Minute
	var at recorder[time.Duration]
	f, err := s.ScheduleWithFixedDelay(func(context.Context) error {
		at.add(since(clk))
		clk.Advance(runTime) // each run takes ten minutes
		return nil
	}, initial, delay)
	require.NoError(t, err)

	advance(t, clk, s, initial)
	require.Equal(t, []time.Duration{time.Minute}, at.get())
	require.Equal(t, delay, f.Delay(), "run 1 is due 5m after run 0 ended at 11m")

	advance(t, clk, s, delay-1)
	require.Len(t, at.get(), 1)
	advance(t, clk, s, 1)
	require.Equal(t, []time.Duration{time.Minute, 16 * time.Minute}, at.get())
	require.Equal(t, delay, f.Delay())
}

func TestPeriodicTaskNeverOverlapsItself(t *testing.T) {
	const period, runs = time.Millisecond, 200
	for _, tc := range []struct {
		name     string
		schedule func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error)
		step     time.Duration // how far to move time per Advance
	}{
		// One big jump: the fixed-rate task is 200 periods behind and
		// catches up with back-to-back runs while three workers are idle.
		{"fixed rate", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return s.ScheduleAtFixedRate(task, 0, period)
		}, runs * period},
		{"fixed delay", func(s *scheduler.Scheduler, task scheduler.Task) (scheduler.ScheduledFuture, error) {
			return s.ScheduleWithFixedDelay(task, 0, period)
		}, period},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, clk := newManual(t, 4)
			var inRun, maxInRun, total atomic.Int32
			_, err := tc.schedule(s, func(context.Context) error {
				n := inRun.Add(1)
				for {
					m := maxInRun.Load()
					if n <= m || maxInRun.CompareAndSwap(m, n) {
						break
					}
				}
				total.Add(1)
				runtime.Gosched() // give another worker the chance to overlap
				inRun.Add(-1)
				return nil
			})
			require.NoError(t, err)
			idle(t, s)
			for total.Load() < runs+1 {
				advance(t, clk, s, tc.step)
			}
			require.EqualValues(t, 1, maxInRun.Load())
		})
	}
}

// ---------------------------------------------------------------------------
// Periodic failure, Wait, re-queue before the run counts.

func TestPeriodicRunFailureStopsLaterRuns(t *testing.T) {
	const period = time.Second
	for _, kind := range []string{"fixed rate", "fixed delay"} {
		for _, failure := range []string{"error", "panic"} {
			t.Run(kind+"/"+failure, func(t *testing.T) {
				s, clk := newManual(t, 1)
				var runs atomic.Int32
				task := func(context.Context) error {
					if runs.Add(1) < 3 {
						return nil
					}
					if failure == "panic" {
						panic("periodic kaboom")
					}
					return fmt.Errorf("run 3: %w", errBoom)
				}
				f := schedulePeriodic(t, s, kind, task, period)
				for range 10 {
					advance(t, clk, s, period)
				}
				require.EqualValues(t, 3, runs.Load(), "no run after the failed one")
				require.True(t, f.IsDone())
				require.False(t, f.IsCanceled())
				require.Empty(t, s.Queue())
				require.False(t, f.Cancel(true), "a failed future cannot be canceled")

				err := f.Wait(testCtx(t))
				if failure == "panic" {
					var pe *scheduler.PanicError
					require.ErrorAs(t, err, &pe)
					require.Equal(t, "periodic kaboom", pe.Value)
				} else {
					require.ErrorIs(t, err, errBoom)
				}
			})
		}
	}
}

func TestContinueOnErrorKeepsPeriodicTaskRunning(t *testing.T) {
	const period = time.Second
	for _, kind := range []string{"fixed rate", "fixed delay"} {
		t.Run(kind, func(t *testing.T) {
			s, clk := newManual(t, 1)
			var runs atomic.Int32
			task := func(context.Context) error {
				switch runs.Add(1) % 3 {
				case 1:
					return errBoom
				case 2:
					panic("tolerated")
				}
				return nil
			}
			f := schedulePeriodic(t, s, kind, task, period, scheduler.ContinueOnError())
			for range 9 {
				advance(t, clk, s, period)
			}
			require.EqualValues(t, 9, runs.Load())
			require.False(t, f.IsDone())
			requireFutures(t, []scheduler.ScheduledFuture{f}, s.Queue())
			st := s.Stats()
			require.EqualValues(t, 9, st.Completed)
			require.EqualValues(t, 6, st.Failed)
			require.EqualValues(t, 3, st.Panicked)
		})
	}
}

func TestPeriodicWaitBlocksUntilCancel(t *testing.T) {
	const period = time.Second
	s, clk := newManual(t, 1)
	f, err := s.ScheduleAtFixedRate(nop, period, period)
	require.NoError(t, err)
	for range 3 {
		advance(t, clk, s, period)
	}
	require.False(t, f.IsDone(), "successful runs never complete a periodic future")

	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	require.Equal(t, context.Canceled, f.Wait(canceled))
	expired, cancel := context.WithDeadline(context.Background(), time.Unix(1, 0))
	defer cancel()
	require.Equal(t, context.DeadlineExceeded, f.Wait(expired))

	waitCtx, cancelWait := context.WithCancel(testCtx(t))
	waited := make(chan error, 1)
	go func() { waited <- f.Wait(waitCtx) }()
	advance(t, clk, s, period)
	select {
	case err := <-waited:
		t.Fatalf("Wait returned %v before the periodic task was canceled", err)
	default:
	}
	require.True(t, f.Cancel(false))
	require.ErrorIs(t, recv(t, waited), scheduler.ErrCanceled)

	cancelWait()
	waited2 := make(chan error, 1)
	go func() { waited2 <- f.Wait(waitCtx) }()
	require.ErrorIs(t, recv(t, waited2), scheduler.ErrCanceled, "a done future answers even after ctx ended")
}

func TestPeriodicTaskIsRequeuedBeforeItsRunCountsAsFinished(t *testing.T) {
	const period = time.Second
	for _, kind := range []string{"fixed rate", "fixed delay"} {
		t.Run(kind, func(t *testing.T) {
			type seen struct {
				inQueue   bool
				queued    int
				completed uint64
			}
			var got recorder[seen]
			var s *scheduler.Scheduler
			s, clk := newManual(t, 1, scheduler.WithHooks(scheduler.Hooks{
				AfterExecute: func(f scheduler.ScheduledFuture, _ error) {
					st := s.Stats()
					got.add(seen{slices.Contains(s.Queue(), f), st.Queued, st.Completed})
				},
			}))
			f := schedulePeriodic(t, s, kind, nop, period)
			for k := range 3 {
				advance(t, clk, s, period)
				require.Equal(t, seen{inQueue: true, queued: 1, completed: uint64(k)}, got.get()[k],
					"at the end of run %d the task is queued again and the run is not yet counted", k)
				require.EqualValues(t, k+1, s.Stats().Completed)
			}
			requireFutures(t, []scheduler.ScheduledFuture{f}, s.Queue())
		})
	}
}

// ---------------------------------------------------------------------------
// Panics.

func TestTaskPanicIsRecoveredAndWorkerSurvives(t *testing.T) {
	s, _ := newManual(t, 1)
	f1, err := s.Submit(func(context.Context) error { panic("kaboom") })
	require.NoError(t, err)
	f2, err := scheduler.SubmitCallable(s, func(context.Context) (int, error) { return 7, nil })
	require.NoError(t, err)
	idle(t, s)

	err = f1.Wait(testCtx(t))
	var pe *scheduler.PanicError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "kaboom", pe.Value)
	require.NotEmpty(t, pe.Stack)
	require.Contains(t, string(pe.Stack), "TestTaskPanicIsRecoveredAndWorkerSurvives",
		"the stack is the panicking goroutine's")
	require.NoError(t, pe.Unwrap(), "a non-error panic value unwraps to nil")
	require.Contains(t, pe.Error(), "kaboom")

	v, err := f2.Get(testCtx(t))
	require.NoError(t, err, "the pool of one ran the next task")
	require.Equal(t, 7, v)

	// And keeps running tasks.
	f3, err := s.Submit(nop)
	require.NoError(t, err)
	idle(t, s)
	require.NoError(t, f3.Wait(testCtx(t)))
	st := s.Stats()
	require.Equal(t, 1, st.PoolSize)
	require.EqualValues(t, 1, st.Panicked)
}

func TestPanicErrorUnwrapsAnErrorValue(t *testing.T) {
	s, _ := newManual(t, 1)
	f, err := scheduler.SubmitCallable(s, func(context.Context) (string, error) {
		panic(fmt.Errorf("wrapped: %w", errBoom))
	})
	require.NoError(t, err)
	idle(t, s)
	v, err := f.Get(testCtx(t))
	require.Empty(t, v)
	require.ErrorIs(t, err, errBoom, "errors.Is sees through a panic(err)")
	var pe *scheduler.PanicError
	require.ErrorAs(t, err, &pe)
	require.ErrorIs(t, pe.Unwrap(), errBoom)
	require.NotEmpty(t, pe.Stack)
}

func TestFailuresAreLoggedAtErrorWithNameAndValue(t *testing.T) {
	const period = time.Second
	cases := []struct {
		name     string
		schedule func(s *scheduler.Scheduler) error
		want     []string
	}{
		{"one-shot panic", func(s *scheduler.Scheduler) error {
			_, err := s.Submit(func(context.Context) error { panic("kaboom-4711") }, scheduler.WithName("exploder"))
			return err
		}, []string{"exploder", "kaboom-4711"}},
		{"callable panic with an error", func(s *scheduler.Scheduler) error {
			_, err := scheduler.SubmitCallable(s, func(context.Context) (int, error) {
				panic(errors.New("disk on fire"))
			}, scheduler.WithName("callable-exploder"))
			return err
		}, []string{"callable-exploder", "disk on fire"}},
		{"periodic panic", func(s *scheduler.Scheduler) error {
			_, err := s.ScheduleAtFixedRate(func(context.Context) error { panic("tick-panic") },
				0, period, scheduler.WithName("ticker"))
			return err
		}, []string{"ticker", "tick-panic"}},
		{"periodic stopped by error", func(s *scheduler.Scheduler) error {
			_, err := s.ScheduleWithFixedDelay(func(context.Context) error { return errors.New("quota exceeded") },
				0, period, scheduler.WithName("poller"))
			return err
		}, []string{"poller", "quota exceeded"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			logger, logs := newLogger()
			s, _ := newManual(t, 1, scheduler.WithLogger(logger))
			require.NoError(t, tc.schedule(s))
			idle(t, s) // the run, and its logging, are over
			logs.requireErrorRecord(t, tc.want...)
		})
	}
}

// ---------------------------------------------------------------------------
// Hooks and the decorator.

func TestLifeHooksRunAroundEveryRun(t *testing.T) {
	var (
		mu        sync.Mutex
		events    []string
		afterErrs = map[string][]error{}
		hooked    = map[string][]scheduler.ScheduledFuture{}
	)
	record := func(e string) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}
	hooks := scheduler.Hooks{
		BeforeExecute: func(f scheduler.ScheduledFuture) {
			record("before " + f.Name())
			mu.Lock()
			hooked[f.Name()] = append(hooked[f.Name()], f)
			mu.Unlock()
		},
		AfterExecute: func(f scheduler.ScheduledFuture, err error) {
			record("after " + f.Name())
			mu.Lock()
			afterErrs[f.Name()] = append(afterErrs[f.Name()], err)
			hooked[f.Name()] = append(hooked[f.Name()], f)
			mu.Unlock()
		},
	}
	s, clk := newManual(t, 1, scheduler.WithHooks(hooks))
	body := func(name string, err error) scheduler.Task {
		return func(context.Context) error {
			record("run " + name)
			if name == "panics" {
				panic("task boom")
			}
			return err
		}
	}
	futures := map[string]scheduler.ScheduledFuture{}
	var err error
	futures["ok"], err = s.Schedule(body("ok", nil), 10*time.Second, scheduler.WithName("ok"))
	require.NoError(t, err)
	futures["fails"], err = s.Schedule(body("fails", errBoom), 20*time.Second, scheduler.WithName("fails"))
	require.NoError(t, err)
	futures["panics"], err = s.Schedule(body("panics", nil), 30*time.Second, scheduler.WithName("panics"))
	require.NoError(t, err)
	futures["p"], err = s.ScheduleAtFixedRate(body("p", nil), time.Minute, time.Minute, scheduler.WithName("p"))
	require.NoError(t, err)
	futures["callable"], err = asScheduledFuture(scheduler.ScheduleCallable(s, asCallable(body("callable", nil)),
		3*time.Minute+time.Second, scheduler.WithName("callable")))
	require.NoError(t, err)

	advance(t, clk, s, 3*time.Minute+time.Second) // one worker: everything in due order

	mu.Lock()
	defer mu.Unlock()
	var want []string
	for _, name := range []string{"ok", "fails", "panics", "p", "p", "p", "callable"} {
		want = append(want, "before "+name, "run "+name, "after "+name)
	}
	require.Equal(t, want, events, "BeforeExecute, the run, AfterExecute: around every run")

	require.Equal(t, []error{nil}, afterErrs["ok"])
	require.Len(t, afterErrs["fails"], 1)
	require.ErrorIs(t, afterErrs["fails"][0], errBoom)
	require.Len(t, afterErrs["panics"], 1)
	var pe *scheduler.PanicError
	require.ErrorAs(t, afterErrs["panics"][0], &pe)
	require.Equal(t, "task boom", pe.Value)
	require.Equal(t, []error{nil, nil, nil}, afterErrs["p"])
	require.Equal(t, []error{nil}, afterErrs["callable"])
	require.Len(t, hooked["callable"], 2)
	for name, fs := range hooked {
		for _, f := range fs {
			require.Truef(t, f == futures[name], "%s: the hooks got the future the call returned", name)
		}
	}
}

func TestLifeBeforeExecutePanic(t *testing.T) {
	t.Run("one-shot", func(t *testing.T) {
		var afterCalls recorder[string]
		hooks := scheduler.Hooks{
			BeforeExecute: func(f scheduler.ScheduledFuture) {
				if f.Name() == "bad" {
					panic("before boom")
				}
			},
			AfterExecute: func(f scheduler.ScheduledFuture, _ error) {
				afterCalls.add(f.Name())
			},
		}
		s, _ := newManual(t, 1, scheduler.WithHooks(hooks))
		var badRan atomic.Bool
		bad, err := scheduler.SubmitCallable(s, func(context.Context) (int, error) {
			badRan.Store(true)
			return 1, nil
		}, scheduler.WithName("bad"))
		require.NoError(t, err)
		_, err = bad.Get(testCtx(t))
		var pe *scheduler.PanicError
		require.ErrorAs(t, err, &pe, "the future completes with the hook's panic")
		require.Equal(t, "before boom", pe.Value)
		require.False(t, badRan.Load(), "the task did not run")

		good, err := s.Submit(nop, scheduler.WithName("good"))
		require.NoError(t, err)
		require.NoError(t, good.Wait(testCtx(t)))
		require.NoError(t, s.AwaitIdle(testCtx(t)))

		require.Equal(t, []string{"good"}, afterCalls.get(), "AfterExecute is not called for the task whose BeforeExecute panicked")
		st := s.Stats()
		require.Equal(t, 1, st.PoolSize, "the worker survived")
		require.Equal(t, 1, st.LargestPoolSize, "and was not replaced")
		require.Equal(t, uint64(1), st.Failed)
		require.Equal(t, uint64(1), st.Panicked)
	})
	t.Run("periodic: the panic stops later runs", func(t *testing.T) {
		var before atomic.Int32
		hooks := scheduler.Hooks{BeforeExecute: func(scheduler.ScheduledFuture) {
			if before.Add(1) == 2 {
				panic("second before")
			}
		}}
		s, clk := newManual(t, 1, scheduler.WithHooks(hooks))
		var runs atomic.Int32
		p, err := s.ScheduleAtFixedRate(countRuns(&runs), time.Minute, time.Minute)
		require.NoError(t, err)
		advance(t, clk, s, time.Minute)
		advance(t, clk, s, time.Minute)
		var pe *scheduler.PanicError
		require.ErrorAs(t, p.Wait(testCtx(t)), &pe)
		require.False(t, p.IsCanceled())
		advance(t, clk, s, 5*time.Minute)
		require.Equal(t, int32(1), runs.Load())
		require.Equal(t, int32(2), before.Load())
	})
}

func TestLifeAfterExecutePanicKeepsTheOutcome(t *testing.T) {
	s, clk := newManual(t, 1, scheduler.WithHooks(scheduler.Hooks{
		AfterExecute: func(scheduler.ScheduledFuture, error) { panic("after boom") },
	}))
	v, err := scheduler.SubmitCallable(s, func(context.Context) (int, error) { return 7, nil })
	require.NoError(t, err)
	got, err := v.Get(testCtx(t))
	require.NoError(t, err)
	require.Equal(t, 7, got)

	errX := errors.New("x")
	f, err := s.Submit(func(context.Context) error { return errX })
	require.NoError(t, err)
	err = f.Wait(testCtx(t))
	require.ErrorIs(t, err, errX)
	var pe *scheduler.PanicError
	require.False(t, errors.As(err, &pe), "the hook's panic does not replace the run's error")

	var runs atomic.Int32
	p, err := s.ScheduleAtFixedRate(countRuns(&runs), time.Minute, time.Minute)
	require.NoError(t, err)
	for range 3 {
		advance(t, clk, s, time.Minute)
	}
	require.Equal(t, int32(3), runs.Load(), "the periodic task keeps its schedule")
	require.False(t, p.IsDone())
	st := s.Stats()
	require.Equal(t, 1, st.PoolSize)
	require.Equal(t, 1, st.LargestPoolSize)
	require.Equal(t, uint64(1), st.Failed, "only errX failed")
}

func TestLifeNoHooksForDiscardedCanceledTask(t *testing.T) {
	var calls atomic.Int32
	s, clk := newManual(t, 1, scheduler.WithHooks(scheduler.Hooks{
		BeforeExecute: func(scheduler.ScheduledFuture) { calls.Add(1) },
		AfterExecute:  func(scheduler.ScheduledFuture, error) { calls.Add(1) },
	}))
	var runs atomic.Int32
	f, err := s.Schedule(countRuns(&runs), time.Hour)
	require.NoError(t, err)
	require.True(t, f.Cancel(false))
	require.Equal(t, 1, s.Stats().Queued)

	advance(t, clk, s, time.Hour) // a worker takes it off the queue and discards it
	require.Zero(t, s.Stats().Queued)
	require.Zero(t, calls.Load())
	require.Zero(t, runs.Load())
	// Not a run, so not counted (the JDK's getCompletedTaskCount would count it, L-4).
	require.Zero(t, s.Stats().Completed)
}

func TestLifeDecorator(t *testing.T) {
	t.Run("wraps every submission once, callables included", func(t *testing.T) {
		var calls, wrapped atomic.Int32
		deco := func(task scheduler.Task) scheduler.Task {
			calls.Add(1)
			return func(ctx context.Context) error {
				wrapped.Add(1)
				return task(ctx)
			}
		}
		s, _ := newManual(t, 2, scheduler.WithDecorator(deco))
		for i, e := range entryPoints {
			_, err := e.submit(s, nop)
			require.NoError(t, err, e.name)
			require.Equal(t, int32(i+1), calls.Load(), "%s: one decorator call", e.name)
		}
		// Invoke* waited for their callables, which ran through the wrapper.
		require.GreaterOrEqual(t, wrapped.Load(), int32(2))
	})
	t.Run("a periodic task is wrapped once, every run goes through the wrapper", func(t *testing.T) {
		var calls, wrapped atomic.Int32
		s, clk := newManual(t, 1, scheduler.WithDecorator(func(task scheduler.Task) scheduler.Task {
			calls.Add(1)
			return func(ctx context.Context) error { wrapped.Add(1); return task(ctx) }
		}))
		var runs atomic.Int32
		_, err := s.ScheduleWithFixedDelay(countRuns(&runs), time.Minute, time.Minute)
		require.NoError(t, err)
		for range 3 {
			advance(t, clk, s, time.Minute)
		}
		require.Equal(t, int32(1), calls.Load())
		require.Equal(t, int32(3), wrapped.Load())
		require.Equal(t, int32(3), runs.Load())
	})
	t.Run("a callable's result passes through the wrapper", func(t *testing.T) {
		var wrapped atomic.Int32
		s, _ := newManual(t, 1, scheduler.WithDecorator(func(task scheduler.Task) scheduler.Task {
			return func(ctx context.Context) error { wrapped.Add(1); return task(ctx) }
		}))
		f, err := scheduler.SubmitCallable(s, func(context.Context) (string, error) { return "v", nil })
		require.NoError(t, err)
		v, err := f.Get(testCtx(t))
		require.NoError(t, err)
		require.Equal(t, "v", v)
		require.Equal(t, int32(1), wrapped.Load())
	})
	for _, e := range entryPoints {
		t.Run("a panicking decorator fails "+e.name+" and queues nothing", func(t *testing.T) {
			s, _ := newManual(t, 1, scheduler.WithDecorator(func(scheduler.Task) scheduler.Task { panic("deco boom") }))
			f, err := e.submit(s, nop)
			require.ErrorIs(t, err, scheduler.ErrRejected)
			var pe *scheduler.PanicError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, "deco boom", pe.Value)
			require.Nil(t, f)
			st := s.Stats()
			require.Zero(t, st.Queued)
			require.Zero(t, st.PoolSize, "no worker was started")
			require.Equal(t, uint64(1), st.Rejected)
		})
	}
	t.Run("a decorator returning nil is an invalid argument", func(t *testing.T) {
		s, _ := newManual(t, 1, scheduler.WithDecorator(func(scheduler.Task) scheduler.Task { return nil }))
		for _, e := range entryPoints {
			_, err := e.submit(s, nop)
			require.ErrorIs(t, err, scheduler.ErrInvalidArgument, e.name)
		}
		st := s.Stats()
		require.Zero(t, st.Queued)
		require.Zero(t, st.PoolSize)
	})
}

// ---------------------------------------------------------------------------
// The interrupt (runcontext.go): a run's ctx is its own.

func TestLifeInterruptDoesNotLeakIntoNextTask(t *testing.T) {
	// As in the JDK, an interrupt delivered to one task does not reach the next
	// task on the same worker.
	s, _ := newManual(t, 1)
	gate := newTaskGate(t)
	first := gate.Start(t, s, gate.Task)
	next, err := scheduler.SubmitCallable(s, func(ctx context.Context) (error, error) { return ctx.Err(), nil })
	require.NoError(t, err)

	require.True(t, first.Cancel(true))
	ctxErr, err := next.Get(testCtx(t))
	require.NoError(t, err)
	require.NoError(t, ctxErr, "the next task's ctx is live")
	require.Equal(t, 1, s.Stats().LargestPoolSize, "both ran on the one worker")
}
