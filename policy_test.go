package scheduler_test

// The policies (policy.go): the rejection policies and the queue bound
// (the JDK's four), and the shutdown policies' getters and setters
// (the JDK's).

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/schedulertest"
)

// rejectionReasons are the two reasons for a rejection (as in the JDK): enter
// brings a scheduler with a queue bound of one, holding one task, to it.
var rejectionReasons = []struct {
	name  string
	enter func(s *scheduler.Scheduler)
}{
	{"after Shutdown", func(s *scheduler.Scheduler) { s.Shutdown() }},
	{"queue full", func(*scheduler.Scheduler) {}},
}

func TestLifeAbortPolicy(t *testing.T) {
	for _, r := range rejectionReasons {
		t.Run(r.name, func(t *testing.T) {
			// AbortPolicy behind a recorder, to see the future it drops.
			rec := &recordingPolicy{then: scheduler.AbortPolicy.Rejected}
			s, clk := newManual(t, 1, scheduler.WithMaxQueueSize(1), scheduler.WithRejectionPolicy(rec))
			_, err := s.Schedule(nop, time.Hour)
			require.NoError(t, err)
			r.enter(s)

			var runs atomic.Int32
			f, err := s.Schedule(countRuns(&runs), time.Minute)
			require.ErrorIs(t, err, scheduler.ErrRejected)
			require.Nil(t, f)
			require.Len(t, rec.got.get(), 1)
			requireCanceled(t, rec.got.get()[0])
			st := s.Stats()
			require.Equal(t, uint64(1), st.Rejected)
			require.Equal(t, 1, st.Queued)

			advance(t, clk, s, 2*time.Hour)
			require.Zero(t, runs.Load())
		})
	}
	t.Run("the default policy is Abort", func(t *testing.T) {
		s, _ := newManual(t, 1, scheduler.WithMaxQueueSize(1))
		_, err := s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		_, err = s.Schedule(nop, time.Hour)
		require.ErrorIs(t, err, scheduler.ErrRejected)
		s.SetRejectionPolicy(nil) // nil means Abort
		_, err = s.Schedule(nop, time.Hour)
		require.ErrorIs(t, err, scheduler.ErrRejected)
		require.Equal(t, uint64(2), s.Stats().Rejected)
	})
}

func TestLifeCallerRunsPolicy(t *testing.T) {
	newFull := func(t *testing.T, opts ...scheduler.Option) (*scheduler.Scheduler, *schedulertest.ManualClock, scheduler.ScheduledFuture) {
		opts = append([]scheduler.Option{scheduler.WithMaxQueueSize(1), scheduler.WithRejectionPolicy(scheduler.CallerRunsPolicy)}, opts...)
		s, clk := newManual(t, 1, opts...)
		filler, err := s.Schedule(nop, time.Hour, scheduler.WithName("filler"))
		require.NoError(t, err)
		return s, clk, filler
	}
	t.Run("a one-shot task runs in the caller's goroutine, hooks included", func(t *testing.T) {
		var beforeOn atomic.Uint64
		s, _, _ := newFull(t, scheduler.WithHooks(scheduler.Hooks{
			BeforeExecute: func(scheduler.ScheduledFuture) { beforeOn.Store(goroutineID()) },
		}))
		me := goroutineID()
		// ranOn is written by the task and read below without synchronization:
		// right only if the task ran in this goroutine (the race detector
		// would report any other goroutine).
		var ranOn uint64
		f, err := s.Schedule(func(context.Context) error { ranOn = goroutineID(); return nil }, time.Hour)
		require.NoError(t, err)
		require.Equal(t, me, ranOn, "ran before Schedule returned, in the caller")
		require.Equal(t, me, beforeOn.Load())
		require.True(t, f.IsDone())
		require.False(t, f.IsCanceled())
		require.NoError(t, f.Wait(doneCtx()))
		st := s.Stats()
		require.Equal(t, uint64(1), st.Rejected)
		require.Equal(t, uint64(1), st.Completed)
		require.Equal(t, 1, st.Queued)
	})
	t.Run("a callable's result is ready when the call returns", func(t *testing.T) {
		s, _, _ := newFull(t)
		f, err := scheduler.ScheduleCallable(s, func(context.Context) (int, error) { return 7, nil }, time.Hour)
		require.NoError(t, err)
		v, err := f.Get(doneCtx())
		require.NoError(t, err)
		require.Equal(t, 7, v)
	})
	t.Run("a periodic task runs once in the caller, then is queued", func(t *testing.T) {
		s, clk, filler := newFull(t)
		me := goroutineID()
		ranOn := make(chan uint64, 4)
		p, err := s.ScheduleAtFixedRate(func(context.Context) error {
			ranOn <- goroutineID()
			return nil
		}, 0, 10*time.Minute, scheduler.WithName("p"))
		require.NoError(t, err)
		require.Equal(t, me, recv(t, ranOn, "the first run"))
		require.False(t, p.IsDone())
		requireFutures(t, []scheduler.ScheduledFuture{p, filler}, s.Queue()) // beyond the max: a re-queue is never rejected

		advance(t, clk, s, 10*time.Minute)
		require.NotEqual(t, me, recv(t, ranOn, "the second run"), "later runs are on a worker")
	})
	t.Run("after Shutdown it discards", func(t *testing.T) {
		s, clk := newManual(t, 1, scheduler.WithRejectionPolicy(scheduler.CallerRunsPolicy))
		keeper, err := s.Schedule(nop, time.Hour, scheduler.WithName("keeper"))
		require.NoError(t, err)
		s.Shutdown()

		var runs atomic.Int32
		f, err := s.Schedule(countRuns(&runs), 0)
		require.NoError(t, err)
		requireCanceled(t, f)
		require.Zero(t, runs.Load())
		requireFutures(t, []scheduler.ScheduledFuture{keeper}, s.Queue())
		require.Equal(t, uint64(1), s.Stats().Rejected)
		advance(t, clk, s, time.Hour)
		require.Zero(t, runs.Load())
	})
}

func TestLifeDiscardPolicy(t *testing.T) {
	for _, r := range rejectionReasons {
		t.Run(r.name, func(t *testing.T) {
			s, clk := newManual(t, 1, scheduler.WithMaxQueueSize(1), scheduler.WithRejectionPolicy(scheduler.DiscardPolicy))
			var keeperRuns, runs atomic.Int32
			_, err := s.Schedule(countRuns(&keeperRuns), time.Hour)
			require.NoError(t, err)
			r.enter(s)

			f, err := s.Schedule(countRuns(&runs), time.Minute)
			require.NoError(t, err, "Discard drops silently")
			requireCanceled(t, f)
			st := s.Stats()
			require.Equal(t, uint64(1), st.Rejected)
			require.Equal(t, uint64(1), st.Canceled)

			advance(t, clk, s, 2*time.Hour)
			require.Zero(t, runs.Load())
			require.Equal(t, int32(1), keeperRuns.Load())
		})
	}
}

func TestLifeDiscardOldestPolicy(t *testing.T) {
	t.Run("queue full: the earliest-due task is canceled, the new one queued", func(t *testing.T) {
		s, clk := newManual(t, 1, scheduler.WithMaxQueueSize(2), scheduler.WithRejectionPolicy(scheduler.DiscardOldestPolicy))
		var runs [3]atomic.Int32
		later, err := s.Schedule(countRuns(&runs[0]), 2*time.Hour, scheduler.WithName("2h"))
		require.NoError(t, err)
		earliest, err := s.Schedule(countRuns(&runs[1]), time.Hour, scheduler.WithName("1h, submitted second"))
		require.NoError(t, err)

		f, err := s.Schedule(countRuns(&runs[2]), 3*time.Hour, scheduler.WithName("3h"))
		require.NoError(t, err)
		require.False(t, f.IsDone())
		requireCanceled(t, earliest)
		requireFutures(t, []scheduler.ScheduledFuture{later, f}, s.Queue())
		require.Equal(t, uint64(1), s.Stats().Rejected)

		advance(t, clk, s, 3*time.Hour)
		require.Equal(t, [3]int32{1, 0, 1}, [3]int32{runs[0].Load(), runs[1].Load(), runs[2].Load()})
	})
	t.Run("after Shutdown it discards and cancels nothing queued", func(t *testing.T) {
		s, clk := newManual(t, 1, scheduler.WithRejectionPolicy(scheduler.DiscardOldestPolicy))
		var keeperRuns, runs atomic.Int32
		keeper, err := s.Schedule(countRuns(&keeperRuns), time.Hour, scheduler.WithName("keeper"))
		require.NoError(t, err)
		s.Shutdown()

		f, err := s.Schedule(countRuns(&runs), time.Minute)
		require.NoError(t, err)
		requireCanceled(t, f)
		require.False(t, keeper.IsDone())
		requireFutures(t, []scheduler.ScheduledFuture{keeper}, s.Queue())

		advance(t, clk, s, time.Hour)
		require.NoError(t, s.AwaitTermination(testCtx(t)))
		require.Equal(t, int32(1), keeperRuns.Load())
		require.Zero(t, runs.Load())
	})
}

func TestLifeCustomRejectionPolicy(t *testing.T) {
	t.Run("called once per rejection with the future the call returns", func(t *testing.T) {
		pol := &recordingPolicy{} // leaves every future undone
		s, clk := newManual(t, 1, scheduler.WithRejectionPolicy(pol))
		_, err := s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		s.Shutdown()

		var runs atomic.Int32
		for i, e := range entryPoints[:7] { // the entry points that return the submission's outcome
			t.Run(e.name, func(t *testing.T) {
				me := goroutineID()
				f, err := e.submit(s, countRuns(&runs))
				require.NoError(t, err)
				seen := pol.got.get()
				require.Len(t, seen, i+1, "exactly one call per rejected submission")
				if f != nil {
					require.True(t, f == seen[i], "the policy got the future the call returned")
				}
				// The policy left it pending; the scheduler cancels it.
				requireCanceled(t, seen[i])
				require.Equal(t, me, pol.callers.get()[i], "called in the submitting goroutine")
			})
		}
		require.Equal(t, uint64(7), s.Stats().Rejected)
		advance(t, clk, s, 2*time.Hour)
		require.Zero(t, runs.Load())
	})
	t.Run("the policy's error is the call's error", func(t *testing.T) {
		errFull := errors.New("full, try later")
		pol := &recordingPolicy{then: func(*scheduler.Scheduler, scheduler.ScheduledFuture) error { return errFull }}
		s, _ := newManual(t, 1, scheduler.WithMaxQueueSize(1), scheduler.WithRejectionPolicy(pol))
		_, err := s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		f, err := scheduler.ScheduleCallable(s, func(context.Context) (int, error) { return 1, nil }, time.Hour)
		require.ErrorIs(t, err, errFull)
		require.Nil(t, f)
		require.Len(t, pol.got.get(), 1)
		requireCanceled(t, pol.got.get()[0])
	})
	t.Run("a panicking policy fails the submission, nothing crashes", func(t *testing.T) {
		pol := &recordingPolicy{then: func(*scheduler.Scheduler, scheduler.ScheduledFuture) error { panic("policy boom") }}
		s, clk := newManual(t, 1, scheduler.WithMaxQueueSize(1), scheduler.WithRejectionPolicy(pol))
		var runs atomic.Int32
		_, err := s.Schedule(countRuns(&runs), time.Hour)
		require.NoError(t, err)

		f, err := s.Schedule(countRuns(&runs), time.Hour)
		require.ErrorIs(t, err, scheduler.ErrRejected)
		var pe *scheduler.PanicError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, "policy boom", pe.Value)
		require.Nil(t, f)
		requireCanceled(t, pol.got.get()[0])
		require.Equal(t, uint64(1), s.Stats().Rejected)

		advance(t, clk, s, time.Hour)
		require.Equal(t, int32(1), runs.Load(), "the scheduler carries on")
		g, err := s.Submit(countRuns(&runs))
		require.NoError(t, err)
		require.NoError(t, g.Wait(testCtx(t)))
	})
}

func TestLifeMaxQueueSize(t *testing.T) {
	t.Run("running tasks do not count", func(t *testing.T) {
		s, _ := newManual(t, 1, scheduler.WithMaxQueueSize(1))
		gate := newTaskGate(t)
		gate.Start(t, s, gate.Task)

		_, err := s.Schedule(nop, time.Hour)
		require.NoError(t, err, "the queue is empty while the only task runs")
		_, err = s.Schedule(nop, time.Hour)
		require.ErrorIs(t, err, scheduler.ErrRejected)
	})
	t.Run("periodic re-queues are never rejected", func(t *testing.T) {
		s, clk := newManual(t, 1, scheduler.WithMaxQueueSize(1))
		var runs atomic.Int32
		var fromRun error
		p, err := s.ScheduleAtFixedRate(func(context.Context) error {
			if runs.Add(1) == 1 {
				// The periodic task is off the queue while it runs, so this
				// fills it; the re-queue then goes beyond the max.
				_, fromRun = s.Schedule(nop, time.Hour)
			}
			return nil
		}, time.Minute, time.Minute)
		require.NoError(t, err)

		for i := int32(1); i <= 5; i++ {
			advance(t, clk, s, time.Minute)
			require.Equal(t, i, runs.Load())
		}
		require.NoError(t, fromRun)
		require.False(t, p.IsDone())
		require.Equal(t, 2, s.Stats().Queued)
		_, err = s.Schedule(nop, time.Hour)
		require.ErrorIs(t, err, scheduler.ErrRejected)
		require.Equal(t, uint64(1), s.Stats().Rejected, "only the new submission was rejected")
	})
	for _, n := range []int{0, -1} {
		t.Run("n="+strconv.Itoa(n)+" is unbounded", func(t *testing.T) {
			s, _ := newManual(t, 1, scheduler.WithMaxQueueSize(n))
			for range 200 {
				_, err := s.Schedule(nop, time.Hour)
				require.NoError(t, err)
			}
			require.Equal(t, 200, s.Stats().Queued)
		})
	}
}

func TestLifeShutdownPolicyAccessors(t *testing.T) {
	cases := []struct {
		name                      string
		opts                      []scheduler.Option
		wantContinue, wantDelay   bool
		setContinue, setDelay     *bool
		afterContinue, afterDelay bool
	}{
		{name: "JDK defaults", wantContinue: false, wantDelay: true, afterContinue: false, afterDelay: true},
		{
			name: "options",
			opts: []scheduler.Option{
				scheduler.WithContinueExistingPeriodicTasksAfterShutdown(true),
				scheduler.WithExecuteExistingDelayedTasksAfterShutdown(false),
			},
			wantContinue: true, wantDelay: false, afterContinue: true, afterDelay: false,
		},
		{
			name:         "setters",
			wantContinue: false, wantDelay: true,
			setContinue: ptr(true), setDelay: ptr(false),
			afterContinue: true, afterDelay: false,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newManual(t, 1, tc.opts...)
			require.Equal(t, tc.wantContinue, s.ContinueExistingPeriodicTasksAfterShutdownPolicy())
			require.Equal(t, tc.wantDelay, s.ExecuteExistingDelayedTasksAfterShutdownPolicy())
			if tc.setContinue != nil {
				s.SetContinueExistingPeriodicTasksAfterShutdownPolicy(*tc.setContinue)
			}
			if tc.setDelay != nil {
				s.SetExecuteExistingDelayedTasksAfterShutdownPolicy(*tc.setDelay)
			}
			require.Equal(t, tc.afterContinue, s.ContinueExistingPeriodicTasksAfterShutdownPolicy())
			require.Equal(t, tc.afterDelay, s.ExecuteExistingDelayedTasksAfterShutdownPolicy())
		})
	}
}

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }
