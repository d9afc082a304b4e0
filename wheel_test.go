package scheduler_test

// The timing wheel (wheel.go) changes nothing a user can see: the same
// submissions, cancels, removes, purges and clock moves give the same runs
// at the same instants, the same Queue, PeekQueue and Stats, and the same
// shutdown, with the wheel as with the heap alone. Each test drives two
// schedulers on two manual clocks in lockstep and compares them after
// every step.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/schedulertest"
)

// wheelTwin is one of the two schedulers: with the wheel, or the heap alone.
type wheelTwin struct {
	s   *scheduler.Scheduler
	clk *schedulertest.ManualClock
	fs  []scheduler.ScheduledFuture

	mu  sync.Mutex // guards log
	log []string   // "name@offset from the start" per run, in run order
}

func newWheelTwin(t *testing.T, wheel bool, opts ...scheduler.Option) *wheelTwin {
	t.Helper()
	clk := schedulertest.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s, err := scheduler.New(1, append([]scheduler.Option{scheduler.WithClock(clk), scheduler.WithTimingWheel(wheel)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() {
		s.ShutdownNow()
		require.NoError(t, s.AwaitTermination(testCtx(t)))
	})
	return &wheelTwin{s: s, clk: clk}
}

// task returns a body that logs its name and the clock's offset.
func (w *wheelTwin) task(name string) scheduler.Task {
	start := w.clk.Now()
	return func(context.Context) error {
		at := w.clk.Now().Sub(start)
		w.mu.Lock()
		w.log = append(w.log, name+"@"+at.String())
		w.mu.Unlock()
		return nil
	}
}

// runs returns the run log so far.
func (w *wheelTwin) runs() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.log)
}

// names lists the futures' names.
func names(fs []scheduler.ScheduledFuture) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Name()
	}
	return out
}

// peekNames lists PeekQueue's entries as name/ID/canceled.
func peekNames(qs []scheduler.QueuedTask) []string {
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = fmt.Sprintf("%s/%d/%v/%v", q.Name, q.ID, q.Canceled, q.Due.Format(time.RFC3339Nano))
	}
	return out
}

// wheelDelay draws a delay: mostly far (minutes to days, the wheel's), some
// near (the heap's), some exactly equal to an earlier one (ties).
func wheelDelay(r *rand.Rand, earlier []time.Duration) time.Duration {
	switch r.IntN(8) {
	case 0:
		return time.Duration(r.Int64N(int64(3 * time.Second))) // within the horizon
	case 1:
		if len(earlier) > 0 {
			return earlier[r.IntN(len(earlier))]
		}
	case 2:
		return time.Duration(r.Int64N(int64(72 * time.Hour)))
	}
	return time.Minute + time.Duration(r.Int64N(int64(5*time.Hour)))
}

// TestTimingWheelMatchesHeapAlone drives a scheduler with the wheel and one
// without it through the same random life, on manual clocks, and requires
// them to agree after every step: the runs and their instants (one-shot,
// fixed-rate and fixed-delay tasks, periodic re-queues), Queue, PeekQueue,
// Stats, Cancel's and Remove's results, Purge, then the end: ShutdownNow's
// list, Shutdown under each policy, or Stop(ctx)'s dropped tasks.
func TestTimingWheelMatchesHeapAlone(t *testing.T) {
	ends := []string{"ShutdownNow", "Shutdown", "Shutdown without delayed", "Shutdown keeping periodic", "Stop"}
	for seed := range uint64(10) {
		for _, removeOnCancel := range []bool{false, true} {
			end := ends[int(seed)%len(ends)]
			t.Run(fmt.Sprintf("seed=%d/removeOnCancel=%v/%s", seed, removeOnCancel, end), func(t *testing.T) {
				wheelMatchesHeap(t, seed, removeOnCancel, end)
			})
		}
	}
}

func wheelMatchesHeap(t *testing.T, seed uint64, removeOnCancel bool, end string) {
	opts := []scheduler.Option{scheduler.WithRemoveOnCancel(removeOnCancel)}
	switch end {
	case "Shutdown without delayed":
		opts = append(opts, scheduler.WithExecuteExistingDelayedTasksAfterShutdown(false))
	case "Shutdown keeping periodic":
		opts = append(opts, scheduler.WithContinueExistingPeriodicTasksAfterShutdown(true))
	}
	twins := []*wheelTwin{newWheelTwin(t, true, opts...), newWheelTwin(t, false, opts...)}
	r := rand.New(rand.NewPCG(seed, 7))
	var delays []time.Duration
	// each applies one step to both twins and returns what each reported.
	each := func(step func(w *wheelTwin) string) {
		t.Helper()
		var got []string
		for _, w := range twins {
			got = append(got, step(w))
		}
		require.Equal(t, got[1], got[0], "the wheel's result, then the heap's")
	}
	compare := func(op string) {
		t.Helper()
		for _, w := range twins {
			require.NoError(t, w.s.AwaitIdle(testCtx(t)))
		}
		a, b := twins[0], twins[1]
		require.Equal(t, b.runs(), a.runs(), "%s: runs", op)
		require.Equal(t, names(b.s.Queue()), names(a.s.Queue()), "%s: Queue", op)
		require.Equal(t, peekNames(b.s.PeekQueue(25)), peekNames(a.s.PeekQueue(25)), "%s: PeekQueue", op)
		sa, sb := a.s.Stats(), b.s.Stats()
		require.Equal(t, sb.Queued, sa.Queued, "%s: Stats().Queued", op)
		require.Equal(t, sb.Completed, sa.Completed, "%s: Stats().Completed", op)
		require.Equal(t, sb.Canceled, sa.Canceled, "%s: Stats().Canceled", op)
		for i := range a.fs {
			require.Equal(t, b.fs[i].IsDone(), a.fs[i].IsDone(), "%s: task %d IsDone", op, i)
			require.Equal(t, b.fs[i].Delay(), a.fs[i].Delay(), "%s: task %d Delay", op, i)
		}
	}

	for step := range 150 {
		switch op := r.IntN(20); {
		case op < 9: // a one-shot task
			d := wheelDelay(r, delays)
			delays = append(delays, d)
			each(func(w *wheelTwin) string {
				name := strconv.Itoa(len(w.fs))
				f, err := w.s.Schedule(w.task(name), d, scheduler.WithName(name))
				require.NoError(t, err)
				w.fs = append(w.fs, f)
				return ""
			})
		case op < 11: // a periodic task, fixed rate or fixed delay
			d := wheelDelay(r, delays)
			period := time.Duration(1+r.IntN(4)) * []time.Duration{10 * time.Minute, time.Hour, 3 * time.Hour}[r.IntN(3)]
			fixedRate := r.IntN(2) == 0
			each(func(w *wheelTwin) string {
				name := strconv.Itoa(len(w.fs))
				var f scheduler.ScheduledFuture
				var err error
				if fixedRate {
					f, err = w.s.ScheduleAtFixedRate(w.task(name), d, period, scheduler.WithName(name))
				} else {
					f, err = w.s.ScheduleWithFixedDelay(w.task(name), d, period, scheduler.WithName(name))
				}
				require.NoError(t, err)
				w.fs = append(w.fs, f)
				return ""
			})
		case op < 13: // cancel
			if len(twins[0].fs) == 0 {
				continue
			}
			i := r.IntN(len(twins[0].fs))
			each(func(w *wheelTwin) string { return strconv.FormatBool(w.fs[i].Cancel(false)) })
		case op < 14: // remove
			if len(twins[0].fs) == 0 {
				continue
			}
			i := r.IntN(len(twins[0].fs))
			each(func(w *wheelTwin) string { return strconv.FormatBool(w.s.Remove(w.fs[i])) })
		case op < 15:
			each(func(w *wheelTwin) string { w.s.Purge(); return "" })
		default: // move the clock: a small or a large step, stepping timer to timer
			d := time.Duration(r.Int64N(int64([]time.Duration{time.Second, 10 * time.Minute, 3 * time.Hour}[r.IntN(3)])))
			each(func(w *wheelTwin) string {
				require.NoError(t, schedulertest.AdvanceAndSettle(testCtx(t), w.clk, w.s, d))
				return ""
			})
		}
		compare(fmt.Sprintf("step %d", step))
	}

	switch end {
	case "ShutdownNow":
		each(func(w *wheelTwin) string { return fmt.Sprint(names(w.s.ShutdownNow())) })
	case "Stop":
		each(func(w *wheelTwin) string {
			err := w.s.Stop(testCtx(t))
			var se *scheduler.StopError
			if err == nil {
				return "nil"
			}
			require.ErrorAs(t, err, &se)
			return fmt.Sprint(names(se.Dropped), se.Err)
		})
	default:
		each(func(w *wheelTwin) string { w.s.Shutdown(); return "" })
		compare("Shutdown")
		if end == "Shutdown keeping periodic" {
			each(func(w *wheelTwin) string {
				require.NoError(t, schedulertest.AdvanceAndSettle(testCtx(t), w.clk, w.s, 5*time.Hour))
				w.s.SetContinueExistingPeriodicTasksAfterShutdownPolicy(false)
				return ""
			})
			compare("periodic tasks dropped after Shutdown")
		}
		each(func(w *wheelTwin) string {
			require.NoError(t, schedulertest.AdvanceAndSettle(testCtx(t), w.clk, w.s, 80*time.Hour))
			require.NoError(t, w.s.AwaitTermination(testCtx(t)))
			return ""
		})
	}
	compare(end)
}
