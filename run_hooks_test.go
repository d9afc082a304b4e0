package scheduler_test

// The hooks and the decorator around every run (run.go): the order they
// run in, their panics, and the runs they are not called for.
//
// Everything timed runs on a manual clock; tasks that must be running block
// on a gate.

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
)

func TestLifeHooksRunAroundEveryRun(t *testing.T) {
	var (
		mu        sync.Mutex // guards the three below
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
