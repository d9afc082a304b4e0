package scheduler_test

// A task that panics (run.go): the panic is recovered into a *PanicError,
// the worker survives, and failures are logged at Error with the task's
// name and the value.
//
// Everything timed runs on a manual clock; tasks that must be running block
// on a gate.

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
)

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
