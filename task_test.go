package scheduler_test

// The scheduled task and its Future (task.go): outcomes, Done and Get,
// identity and Cancel.

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
)

// ---------------------------------------------------------------------------
// Futures.

func TestGetReturnsTheOutcome(t *testing.T) {
	t.Run("value", func(t *testing.T) {
		s, _ := newManual(t, 1)
		f, err := scheduler.SubmitCallable(s, func(context.Context) (int, error) { return 42, nil })
		require.NoError(t, err)
		v, err := f.Get(testCtx(t))
		require.NoError(t, err)
		require.Equal(t, 42, v)
		require.NoError(t, f.Wait(testCtx(t)))
	})
	t.Run("task nil", func(t *testing.T) {
		s, _ := newManual(t, 1)
		f, err := s.Submit(nop)
		require.NoError(t, err)
		require.NoError(t, f.Wait(testCtx(t)))
	})
	t.Run("task error", func(t *testing.T) {
		s, _ := newManual(t, 1)
		f, err := scheduler.SubmitCallable(s, func(context.Context) (int, error) {
			return 5, fmt.Errorf("lookup: %w", errBoom)
		})
		require.NoError(t, err)
		v, err := f.Get(testCtx(t))
		require.ErrorIs(t, err, errBoom)
		require.Zero(t, v, "no value with an error")
		require.ErrorIs(t, f.Wait(testCtx(t)), errBoom)
	})
	t.Run("canceled", func(t *testing.T) {
		s, _ := newManual(t, 1)
		f, err := scheduler.ScheduleCallable(s, func(context.Context) (int, error) { return 1, nil }, time.Hour)
		require.NoError(t, err)
		require.True(t, f.Cancel(false))
		v, err := f.Get(testCtx(t))
		require.ErrorIs(t, err, scheduler.ErrCanceled)
		require.Zero(t, v)
		require.ErrorIs(t, f.Wait(testCtx(t)), scheduler.ErrCanceled)
	})
	t.Run("panic", func(t *testing.T) {
		s, _ := newManual(t, 1)
		f, err := scheduler.SubmitCallable(s, func(context.Context) (int, error) { panic(17) })
		require.NoError(t, err)
		_, err = f.Get(testCtx(t))
		var pe *scheduler.PanicError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, 17, pe.Value)
	})
	t.Run("ctx ends first", func(t *testing.T) {
		s, _ := newManual(t, 1)
		f, err := scheduler.ScheduleCallable(s, func(context.Context) (int, error) { return 1, nil }, time.Hour)
		require.NoError(t, err)
		canceled, cancel := context.WithCancel(context.Background())
		cancel()
		v, err := f.Get(canceled)
		require.Equal(t, context.Canceled, err)
		require.Zero(t, v)
		require.Equal(t, context.Canceled, f.Wait(canceled))
		expired, cancel := context.WithDeadline(context.Background(), time.Unix(1, 0))
		defer cancel()
		_, err = f.Get(expired)
		require.Equal(t, context.DeadlineExceeded, err)
		require.False(t, f.IsDone(), "Get with an ended ctx leaves the future alone")
	})
	t.Run("done future answers an ended ctx", func(t *testing.T) {
		s, _ := newManual(t, 1)
		f, err := scheduler.SubmitCallable(s, func(context.Context) (int, error) { return 3, nil })
		require.NoError(t, err)
		idle(t, s)
		canceled, cancel := context.WithCancel(context.Background())
		cancel()
		v, err := f.Get(canceled)
		require.NoError(t, err)
		require.Equal(t, 3, v)
	})
}

func TestDoneIsClosedExactlyWhenIsDone(t *testing.T) {
	cases := []struct {
		name   string
		result func(ctx context.Context) error // what the run returns once released
		finish func(f scheduler.ScheduledFuture, openRelease func())
	}{
		{"normal", func(context.Context) error { return nil },
			func(_ scheduler.ScheduledFuture, open func()) { open() }},
		{"error", func(context.Context) error { return errBoom },
			func(_ scheduler.ScheduledFuture, open func()) { open() }},
		{"panic", func(context.Context) error { panic("done-panic") },
			func(_ scheduler.ScheduledFuture, open func()) { open() }},
		{"cancel", func(context.Context) error { return nil },
			func(f scheduler.ScheduledFuture, _ func()) { f.Cancel(false) }},
		{"cancel with interrupt", func(ctx context.Context) error { return ctx.Err() },
			func(f scheduler.ScheduledFuture, _ func()) { f.Cancel(true) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newManual(t, 1)
			started := make(chan struct{})
			release, openRelease := gate(t)
			f, err := s.Submit(func(ctx context.Context) error {
				hold(ctx, started, release)
				return tc.result(ctx)
			})
			require.NoError(t, err)
			recv(t, started)
			require.False(t, f.IsDone())
			requireOpen(t, f.Done(), "Done is closed while the task runs")

			woke := make(chan bool, 1)
			go func() {
				<-f.Done()
				woke <- f.IsDone()
			}()
			tc.finish(f, openRelease)
			require.True(t, recv(t, woke), "a goroutine woken by Done sees IsDone")
			if tc.name == "cancel" {
				openRelease() // let the run finish; its outcome is discarded
			}
			idle(t, s)
			requireClosed(t, f.Done(), "Done of a done future")
		})
	}
}

func TestDoneIsClosedBeforeCancelReturnsTrue(t *testing.T) {
	for _, interrupt := range []bool{false, true} {
		t.Run(fmt.Sprintf("queued/interrupt=%v", interrupt), func(t *testing.T) {
			s, _ := newManual(t, 1)
			f, err := s.Schedule(nop, time.Hour)
			require.NoError(t, err)
			done := f.Done()
			require.True(t, f.Cancel(interrupt))
			requireClosed(t, done, "Done is not closed when Cancel returns true")
		})
		t.Run(fmt.Sprintf("periodic between runs/interrupt=%v", interrupt), func(t *testing.T) {
			s, clk := newManual(t, 1)
			f, err := s.ScheduleAtFixedRate(nop, time.Second, time.Second)
			require.NoError(t, err)
			advance(t, clk, s, time.Second)
			done := f.Done()
			require.True(t, f.Cancel(interrupt))
			requireClosed(t, done, "Done is not closed when Cancel returns true")
		})
		t.Run(fmt.Sprintf("running/interrupt=%v", interrupt), func(t *testing.T) {
			s, _ := newManual(t, 1)
			running := newTaskGate(t)
			f := running.Start(t, s, running.Task)
			done := f.Done()
			require.True(t, f.Cancel(interrupt))
			requireClosed(t, done, "Done is not closed when Cancel returns true")
			running.Open()
		})
	}
}

// ---------------------------------------------------------------------------
// Identity.

func TestFuturesKeepTheirIdentity(t *testing.T) {
	t.Run("Queue", func(t *testing.T) {
		s, clk := newManual(t, 1)
		task, err := s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		callable, err := scheduler.ScheduleCallable(s, func(context.Context) (int, error) { return 1, nil }, 2*time.Hour)
		require.NoError(t, err)
		periodic, err := s.ScheduleAtFixedRate(nop, time.Minute, 3*time.Hour)
		require.NoError(t, err)
		q := s.Queue()
		require.Len(t, q, 3)
		require.True(t, q[0] == periodic)
		require.True(t, q[1] == task)
		require.True(t, q[2] == scheduler.ScheduledFuture(callable))

		advance(t, clk, s, time.Minute) // the periodic task ran and is queued again
		require.True(t, s.Queue()[2] == periodic, "a periodic task is re-queued as itself")
	})
	t.Run("ShutdownNow", func(t *testing.T) {
		s, _ := newManual(t, 1)
		task, err := s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		callable, err := scheduler.ScheduleCallable(s, func(context.Context) (int, error) { return 1, nil }, 2*time.Hour)
		require.NoError(t, err)
		periodic, err := s.ScheduleWithFixedDelay(nop, 3*time.Hour, time.Hour)
		require.NoError(t, err)
		got := s.ShutdownNow()
		require.Len(t, got, 3)
		require.True(t, got[0] == task)
		require.True(t, got[1] == scheduler.ScheduledFuture(callable))
		require.True(t, got[2] == periodic)
	})
	t.Run("hooks", func(t *testing.T) {
		var before, after recorder[scheduler.ScheduledFuture]
		s, clk := newManual(t, 1, scheduler.WithHooks(scheduler.Hooks{
			BeforeExecute: func(f scheduler.ScheduledFuture) { before.add(f) },
			AfterExecute:  func(f scheduler.ScheduledFuture, _ error) { after.add(f) },
		}))
		task, err := s.Schedule(nop, time.Second)
		require.NoError(t, err)
		callable, err := scheduler.ScheduleCallable(s, func(context.Context) (int, error) { return 1, nil }, 2*time.Second)
		require.NoError(t, err)
		periodic, err := s.ScheduleAtFixedRate(nop, 3*time.Second, time.Hour)
		require.NoError(t, err)
		advance(t, clk, s, 3*time.Second)
		want := []scheduler.ScheduledFuture{task, callable, periodic}
		for _, got := range [][]scheduler.ScheduledFuture{before.get(), after.get()} {
			require.Len(t, got, 3)
			for i := range want {
				require.True(t, got[i] == want[i], "hook argument %d is not the scheduled future", i)
			}
		}
	})
	t.Run("rejection policy", func(t *testing.T) {
		for _, why := range []string{"shut down", "queue full"} {
			t.Run(why, func(t *testing.T) {
				p := &recordingPolicy{}
				s, _ := newManual(t, 1, scheduler.WithRejectionPolicy(p), scheduler.WithMaxQueueSize(1))
				if why == "shut down" {
					s.Shutdown()
				} else {
					_, err := s.Schedule(nop, time.Hour) // fills the queue
					require.NoError(t, err)
				}
				task, err := s.Schedule(nop, time.Hour)
				require.NoError(t, err)
				callable, err := scheduler.ScheduleCallable(s, func(context.Context) (int, error) { return 1, nil }, time.Hour)
				require.NoError(t, err)
				periodic, err := s.ScheduleAtFixedRate(nop, time.Hour, time.Hour)
				require.NoError(t, err)
				got := p.got.get()
				require.Len(t, got, 3)
				require.True(t, got[0] == task)
				require.True(t, got[1] == scheduler.ScheduledFuture(callable))
				require.True(t, got[2] == periodic)
			})
		}
	})
}

// ---------------------------------------------------------------------------
// Cancel.

func TestCancelBeforeRunPreventsTheRun(t *testing.T) {
	for _, kind := range scheduleKinds {
		for _, interrupt := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/interrupt=%v", kind.name, interrupt), func(t *testing.T) {
				s, clk := newManual(t, 1)
				var ran atomic.Bool
				f, err := kind.schedule(s, func(context.Context) error { ran.Store(true); return nil })
				require.NoError(t, err)
				require.True(t, f.Cancel(interrupt))
				require.True(t, f.IsDone())
				require.True(t, f.IsCanceled())
				require.False(t, f.Cancel(interrupt), "a second Cancel returns false")
				require.False(t, f.Cancel(!interrupt))
				advance(t, clk, s, 2*time.Hour)
				require.False(t, ran.Load())
				require.ErrorIs(t, f.Wait(testCtx(t)), scheduler.ErrCanceled)
			})
		}
	}
}

func TestCancelAfterCompletionReturnsFalse(t *testing.T) {
	for _, outcome := range []struct {
		name string
		err  error
	}{{"normal", nil}, {"failed", errBoom}} {
		t.Run(outcome.name, func(t *testing.T) {
			s, _ := newManual(t, 1)
			f, err := s.Submit(func(context.Context) error { return outcome.err })
			require.NoError(t, err)
			idle(t, s)
			require.False(t, f.Cancel(true))
			require.False(t, f.Cancel(false))
			require.False(t, f.IsCanceled())
			require.True(t, f.IsDone())
			require.ErrorIs(t, f.Wait(testCtx(t)), outcome.err)
		})
	}
}

func TestCancelWithInterruptCancelsTheRunningTasksCtx(t *testing.T) {
	s, _ := newManual(t, 1)
	started := make(chan struct{})
	ctxErr := make(chan error, 1)
	f, err := s.Submit(func(ctx context.Context) error {
		close(started)
		<-ctx.Done()
		ctxErr <- ctx.Err()
		return ctx.Err()
	})
	require.NoError(t, err)
	recv(t, started)
	require.True(t, f.Cancel(true))
	require.True(t, f.IsCanceled(), "the future reports canceled at once")
	require.True(t, f.IsDone())
	require.ErrorIs(t, recv(t, ctxErr), context.Canceled)
	idle(t, s)
	require.ErrorIs(t, f.Wait(testCtx(t)), scheduler.ErrCanceled)
}

func TestCancelWithoutInterruptLetsTheRunFinish(t *testing.T) {
	s, _ := newManual(t, 1)
	started := make(chan struct{})
	release, openRelease := gate(t)
	ctxErr := make(chan error, 1)
	f, err := scheduler.SubmitCallable(s, func(ctx context.Context) (int, error) {
		close(started)
		<-release
		ctxErr <- ctx.Err()
		return 99, nil
	})
	require.NoError(t, err)
	recv(t, started)
	require.True(t, f.Cancel(false))
	require.True(t, f.IsCanceled(), "the future reports canceled at once")
	require.True(t, f.IsDone())
	openRelease()
	require.NoError(t, recv(t, ctxErr), "the run's ctx is not canceled")
	idle(t, s)
	v, err := f.Get(testCtx(t))
	require.ErrorIs(t, err, scheduler.ErrCanceled, "the run's result is discarded")
	require.Zero(t, v)
}

func TestPeriodicTaskCanceledWhileRunningNeverRunsAgain(t *testing.T) {
	const period = time.Second
	for _, kind := range []string{"fixed rate", "fixed delay"} {
		for _, interrupt := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/interrupt=%v", kind, interrupt), func(t *testing.T) {
				s, clk := newManual(t, 2)
				var runs atomic.Int32
				started := make(chan struct{})
				release, openRelease := gate(t)
				task := func(ctx context.Context) error {
					if runs.Add(1) == 2 {
						hold(ctx, started, release)
					}
					return nil
				}
				f := schedulePeriodic(t, s, kind, task, period)
				advance(t, clk, s, period)
				clk.Advance(period)
				recv(t, started) // run 2 is in progress
				require.True(t, f.Cancel(interrupt))
				require.True(t, f.IsCanceled())
				openRelease()
				idle(t, s)
				// As in the JDK's runAndReset, a run that ends canceled
				// does not re-queue its task.
				require.Empty(t, s.Queue(), "not re-queued after the canceled run")
				for range 5 {
					advance(t, clk, s, period)
				}
				require.EqualValues(t, 2, runs.Load())
				require.Empty(t, s.Queue())
				require.ErrorIs(t, f.Wait(testCtx(t)), scheduler.ErrCanceled)
			})
		}
	}
}
