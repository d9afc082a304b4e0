package scheduler

// The machinery, seen from inside: the indexed heap, the
// leader-follower wait and the one-object periodic task.
//
// Time comes from fakeClock (internal_helpers_test.go). The
// leader-follower tests run inside testing/synctest bubbles: synctest.Wait()
// returns only once every worker is durably blocked, which is also the proof
// that none of them spins.

import (
	"context"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// poolView is the leader-follower state at one instant.
type poolView struct {
	workers, parked, active int
	leader                  *worker
	runners                 []*worker // workers with a current task
}

func lookAtPool(s *Scheduler) poolView {
	s.q.mu.Lock()
	defer s.q.mu.Unlock()
	v := poolView{workers: len(s.workers), parked: s.q.parked, active: s.active, leader: s.q.leader}
	for w := range s.workers {
		if w.run.t != nil {
			v.runners = append(v.runners, w)
		}
	}
	return v
}

// ---------------------------------------------------------------------------
// R-19 the heap

func TestInternalHeapRandomOperations(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run("seed="+strconv.FormatUint(seed, 10), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0x5eed))
			var h taskHeap
			model := map[*futureTask]bool{}
			var seq uint64
			for op := range 4000 {
				switch r := rng.IntN(100); {
				case r < 50 || h.len() == 0: // push; a small range of times makes ties
					tk := heapTask(rng.Int64N(64), seq)
					seq++
					h.push(tk)
					model[tk] = true
				case r < 75: // popHead returns the least (when, seq)
					want := slices.MinFunc(slices.Collect(maps.Keys(model)), byKey)
					got := h.popHead()
					require.Same(t, want, got, "op %d: popHead", op)
					require.Equal(t, int32(-1), got.heapIndex)
					delete(model, got)
				case r < 98: // removeAt any slot
					i := rng.IntN(h.len())
					want := h.at(i)
					got := h.removeAt(i)
					require.Same(t, want, got, "op %d: removeAt(%d)", op, i)
					require.Equal(t, int32(-1), got.heapIndex)
					delete(model, got)
				default: // filter, the bulk removal of Purge and Shutdown
					mod := int64(rng.IntN(5) + 2)
					var dropped []*futureTask
					h.filter(func(tk *futureTask) bool {
						if tk.when%mod == 0 {
							dropped = append(dropped, tk)
							return true
						}
						return false
					})
					for _, tk := range dropped {
						require.Equal(t, int32(-1), tk.heapIndex)
						delete(model, tk)
					}
				}
				require.Equal(t, len(model), h.len(), "op %d", op)
				requireHeap(t, &h)
			}
			// drain returns everything in (when, seq) order.
			want := slices.AppendSeq([]*futureTask{}, maps.Keys(model)) // empty, not nil, as drain returns
			slices.SortFunc(want, byKey)
			got := h.drain()
			require.Equal(t, want, got)
			for _, tk := range got {
				require.Equal(t, int32(-1), tk.heapIndex)
			}
			require.Zero(t, h.len())
			requireHeap(t, &h)
		})
	}
}

func TestInternalHeapGrowsByHalf(t *testing.T) {
	var h taskHeap
	var caps []int
	for i := range 200 {
		h.push(heapTask(int64(i), uint64(i)))
		if c := cap(h.a); len(caps) == 0 || caps[len(caps)-1] != c {
			caps = append(caps, c)
		}
	}
	// JDK DelayedWorkQueue: INITIAL_CAPACITY 16, then old + old>>1.
	require.Equal(t, []int{16, 24, 36, 54, 81, 121, 181, 271}, caps)
	requireHeap(t, &h)
}

func TestInternalHeapRemoveAt(t *testing.T) {
	// build pushes tasks with the given times in order and returns them.
	build := func(t *testing.T, whens ...int64) (*taskHeap, []*futureTask) {
		var h taskHeap
		var ts []*futureTask
		for i, w := range whens {
			tk := heapTask(w, uint64(i))
			h.push(tk)
			ts = append(ts, tk)
		}
		requireHeap(t, &h)
		return &h, ts
	}
	whensOf := func(h *taskHeap) []int64 {
		var out []int64
		for _, e := range h.a {
			out = append(out, e.when)
		}
		return out
	}
	t.Run("the replacement moves up", func(t *testing.T) {
		// Slots: 0:1, 1:10, 2:2, 3:11, 4:12, 5:3, 6:4. Removing slot 3
		// moves the last entry (4) there, under 10: it has no children, so
		// sift-down leaves it and only sift-up restores the heap.
		h, _ := build(t, 1, 10, 2, 11, 12, 3, 4)
		require.Equal(t, []int64{1, 10, 2, 11, 12, 3, 4}, whensOf(h))
		got := h.removeAt(3)
		require.Equal(t, int64(11), got.when)
		require.Equal(t, []int64{1, 4, 2, 10, 12, 3}, whensOf(h))
		requireHeap(t, h)
	})
	t.Run("the replacement moves down", func(t *testing.T) {
		h, _ := build(t, 1, 2, 3, 4, 5, 6, 7)
		h.removeAt(1)
		require.Equal(t, []int64{1, 4, 3, 7, 5, 6}, whensOf(h))
		requireHeap(t, h)
	})
	t.Run("the last slot", func(t *testing.T) {
		h, ts := build(t, 1, 2, 3)
		require.Same(t, ts[2], h.removeAt(2))
		require.Equal(t, []int64{1, 2}, whensOf(h))
		requireHeap(t, h)
	})
	t.Run("ties order by sequence", func(t *testing.T) {
		h, ts := build(t, 5, 5, 5, 5, 5)
		h.removeAt(1)
		for _, want := range []*futureTask{ts[0], ts[2], ts[3], ts[4]} {
			require.Same(t, want, h.popHead())
			requireHeap(t, h)
		}
	})
}

// ---------------------------------------------------------------------------
// R-20 the leader-follower wait

func TestInternalLeaderOneTimedWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := newFakeClock()
		s := newTestScheduler(t, 4, clk)
		require.Equal(t, 4, s.PrestartAllCoreWorkers())
		synctest.Wait()
		v := lookAtPool(s)
		require.Equal(t, 4, v.parked, "every worker is parked")
		require.Nil(t, v.leader, "with nothing queued nobody leads")
		n, _ := clk.armed()
		require.Zero(t, n, "and nobody waits with a timer")

		// A task in the future: exactly one worker wakes, and it is the
		// only one in a timed wait.
		woke := clk.track(func() {
			_, err := s.Schedule(nop, time.Hour)
			require.NoError(t, err)
			synctest.Wait()
		})
		require.Equal(t, 1, woke, "one new head wakes one worker")
		v = lookAtPool(s)
		require.Equal(t, 4, v.parked)
		require.NotNil(t, v.leader)
		n, dues := clk.armed()
		require.Equal(t, 1, n, "at most one worker in a timed wait")
		require.Equal(t, []time.Duration{time.Hour}, dues)

		// A task that does not become the head wakes nobody.
		woke = clk.track(func() {
			_, err := s.Schedule(nop, 2*time.Hour)
			require.NoError(t, err)
			synctest.Wait()
		})
		require.Zero(t, woke, "no herd")
		n, _ = clk.armed()
		require.Equal(t, 1, n)

		// A new, earlier head wakes exactly one goroutine, which re-arms
		// for it.
		woke = clk.track(func() {
			_, err := s.Schedule(nop, 30*time.Minute)
			require.NoError(t, err)
			synctest.Wait()
		})
		require.Equal(t, 1, woke)
		v = lookAtPool(s)
		require.Equal(t, 4, v.parked)
		require.NotNil(t, v.leader)
		n, dues = clk.armed()
		require.Equal(t, 1, n)
		require.Equal(t, []time.Duration{30 * time.Minute}, dues)
	})
}

func TestInternalLeaderHandsOffBeforeRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := newFakeClock()
		s := newTestScheduler(t, 4, clk)
		require.Equal(t, 4, s.PrestartAllCoreWorkers())
		started, release := make(chan struct{}), make(chan struct{})
		first, err := s.Schedule(func(context.Context) error {
			close(started)
			<-release
			return nil
		}, time.Hour)
		require.NoError(t, err)
		second, err := s.Schedule(nop, 2*time.Hour)
		require.NoError(t, err)
		synctest.Wait()

		// The leader's timer fires; it takes the first task and, before
		// running it, signals one follower to lead for the second: two
		// goroutines wake, not four.
		woke := clk.track(func() {
			clk.Advance(time.Hour)
			<-started
			synctest.Wait()
		})
		require.Equal(t, 2, woke, "the old leader and the one follower it handed off to")

		v := lookAtPool(s)
		require.Len(t, v.runners, 1)
		runner := v.runners[0]
		require.Same(t, first.(*futureTask), runner.run.t)
		require.NotNil(t, v.leader, "another worker leads while the first task runs")
		require.NotSame(t, runner, v.leader)
		require.Equal(t, 3, v.parked)
		require.Equal(t, 1, v.active)
		n, dues := clk.armed()
		require.Equal(t, 1, n)
		require.Equal(t, []time.Duration{2 * time.Hour}, dues, "armed for the second task")

		// The runner comes back, sees a leader, and follows; it wakes nobody.
		woke = clk.track(func() {
			close(release)
			synctest.Wait()
		})
		require.Equal(t, 1, woke, "only the runner looks at the queue")
		v = lookAtPool(s)
		require.Equal(t, 4, v.parked)
		require.Zero(t, v.active)
		n, _ = clk.armed()
		require.Equal(t, 1, n)

		clk.Advance(time.Hour)
		synctest.Wait()
		require.True(t, second.IsDone())
	})
}

func TestInternalLeaderLastTaskHandsOffToNobody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := newFakeClock()
		s := newTestScheduler(t, 4, clk)
		require.Equal(t, 4, s.PrestartAllCoreWorkers())
		f, err := s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		synctest.Wait()
		woke := clk.track(func() {
			clk.Advance(time.Hour)
			synctest.Wait()
		})
		require.True(t, f.IsDone())
		require.Equal(t, 1, woke, "with nothing left to wait for, no follower is woken")
		v := lookAtPool(s)
		require.Equal(t, 4, v.parked)
		require.Nil(t, v.leader)
	})
}

func TestInternalWorkersParkWithoutPolling(t *testing.T) {
	// On the system clock in a bubble: if any worker spun or polled,
	// synctest.Wait would not return, and the workers would not all be
	// counted as parked.
	synctest.Test(t, func(t *testing.T) {
		s := newTestScheduler(t, 4, SystemClock())
		var runs atomic.Int32
		start := time.Now()
		var at []time.Duration
		_, err := s.ScheduleAtFixedRate(func(context.Context) error {
			runs.Add(1)
			at = append(at, time.Since(start))
			return nil
		}, time.Hour, time.Hour)
		require.NoError(t, err)
		require.Equal(t, 3, s.PrestartAllCoreWorkers())
		synctest.Wait()
		v := lookAtPool(s)
		require.Equal(t, 4, v.workers)
		require.Equal(t, 4, v.parked)
		require.NotNil(t, v.leader)

		time.Sleep(3*time.Hour + time.Minute) // virtual time in the bubble
		synctest.Wait()
		require.Equal(t, int32(3), runs.Load())
		require.Equal(t, []time.Duration{time.Hour, 2 * time.Hour, 3 * time.Hour}, at, "each run exactly when due")
		v = lookAtPool(s)
		require.Equal(t, 4, v.parked)
		require.NotNil(t, v.leader)
	})
}

// ---------------------------------------------------------------------------
// R-21 a periodic task is one object

func TestInternalPeriodicTaskIsReinsertedNotCopied(t *testing.T) {
	cases := []struct {
		name     string
		schedule func(s *Scheduler) (ScheduledFuture, error)
	}{
		{"fixed rate", func(s *Scheduler) (ScheduledFuture, error) {
			return s.ScheduleAtFixedRate(nop, time.Minute, time.Minute)
		}},
		{"fixed delay", func(s *Scheduler) (ScheduledFuture, error) {
			return s.ScheduleWithFixedDelay(nop, time.Minute, time.Minute)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := newFakeClock()
			s := newTestScheduler(t, 2, clk)
			f, err := tc.schedule(s)
			require.NoError(t, err)
			tk, ok := f.(*futureTask)
			require.True(t, ok, "a plain Task's future is the task itself")
			seq := tk.seq
			for i := 1; i <= 5; i++ {
				s.q.mu.Lock()
				queued := append([]heapEntry(nil), s.q.heap.a...)
				index := tk.heapIndex
				s.q.mu.Unlock()
				require.Len(t, queued, 1)
				require.Same(t, tk, queued[0].t, "run %d: the same task is in the heap", i)
				require.Equal(t, int32(0), index)
				require.Equal(t, int64(i)*int64(time.Minute), queued[0].when)
				require.Equal(t, seq, queued[0].seq, "it keeps its sequence number")

				clk.Advance(time.Minute)
				require.NoError(t, s.AwaitIdle(testCtx(t)))
			}
			require.False(t, f.IsDone())
			require.Equal(t, uint64(5), s.Stats().Completed)
		})
	}
}

// mallocsPerRun returns the heap allocations per call of f over runs
// calls, after one warm-up call. Unlike testing.AllocsPerRun it does not
// round down to a whole number.
func mallocsPerRun(runs int, f func()) float64 {
	f()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(runs)
}

// bestOf returns the least of trials measurements. MemStats counts
// every allocation in the process, and a goroutine that blocks may make the
// runtime allocate a sudog when its caches happen to be empty: noise of a few
// allocations per thousand blocks, which fades as the caches fill. A real
// allocation per run costs 1 per run in every trial.
func bestOf(trials int, measure func() float64) (best float64, all []float64) {
	for i := range trials {
		m := measure()
		all = append(all, m)
		if i == 0 || m < best {
			best = m
		}
	}
	return best, all
}

func TestInternalPeriodicRunsDoNotAllocate(t *testing.T) {
	const runs = 1000
	t.Run("catch-up runs", func(t *testing.T) {
		// One Advance of 1000 periods makes a fixed-rate task run 1000
		// times back to back. The task itself says when the last one ran,
		// so the test side allocates nothing meanwhile (AwaitIdle would
		// make a channel each time it wakes).
		clk := newFakeClock()
		s := newTestScheduler(t, 1, clk)
		var n, last atomic.Int64
		done := make(chan struct{}, 1)
		_, err := s.ScheduleAtFixedRate(func(context.Context) error {
			if n.Add(1) == last.Load() {
				done <- struct{}{}
			}
			return nil
		}, time.Second, time.Second)
		require.NoError(t, err)
		for range 100 { // warm up: the worker's timer exists, the runs are steady
			clk.Advance(time.Second)
			require.NoError(t, s.AwaitIdle(testCtx(t)))
		}
		best, all := bestOf(5, func() float64 {
			n0 := n.Load()
			last.Store(n0 + runs)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			clk.Advance(runs * time.Second)
			<-done
			runtime.ReadMemStats(&after)
			require.Equal(t, int64(runs), n.Load()-n0)
			return float64(after.Mallocs-before.Mallocs) / runs
		})
		t.Logf("catch-up, %d runs back to back: best %.4f allocations per run (trials %v)", runs, best, all)
		require.Less(t, best, 0.01)
	})
	for _, kind := range []string{"fixed rate", "fixed delay"} {
		t.Run("one run per timer/"+kind, func(t *testing.T) {
			// Each Advance fires the leader's timer for one run. The
			// AfterExecute hook signals once the task is back in the
			// queue, so the test side allocates nothing.
			clk := newFakeClock()
			ran := make(chan struct{}, 1)
			s := newTestScheduler(t, 1, clk, WithHooks(Hooks{
				AfterExecute: func(ScheduledFuture, error) { ran <- struct{}{} },
			}))
			var err error
			if kind == "fixed rate" {
				_, err = s.ScheduleAtFixedRate(nop, time.Second, time.Second)
			} else {
				_, err = s.ScheduleWithFixedDelay(nop, time.Second, time.Second)
			}
			require.NoError(t, err)
			step := func() {
				clk.Advance(time.Second)
				<-ran
			}
			for range 100 {
				step()
			}
			best, all := bestOf(5, func() float64 { return mallocsPerRun(runs, step) })
			t.Logf("%s, one run per Advance: best %.4f allocations per run (trials %v; testing.AllocsPerRun: %v)",
				kind, best, all, testing.AllocsPerRun(runs, step))
			require.Less(t, best, 0.01)
		})
	}
}

// TestInternalScheduleAllocatesOnlyTheTask: Schedule of a plain Task with no
// TaskOption allocates only the task once the worker runs and the heap has
// room. Regression test: newTaskExt used to declare its taskConfig before
// looking at opts, and &tc escaped through the TaskOption interface call, so
// every submission paid a second allocation.
func TestInternalScheduleAllocatesOnlyTheTask(t *testing.T) {
	clk := newFakeClock()
	s := newTestScheduler(t, 1, clk)
	// Start the worker and give the heap room for every task below.
	var fs []ScheduledFuture
	for range 4096 {
		f, err := s.Schedule(nop, time.Hour)
		require.NoError(t, err)
		fs = append(fs, f)
	}
	for _, f := range fs {
		require.True(t, s.Remove(f))
	}
	require.Equal(t, 1, s.Stats().PoolSize)
	s.q.mu.Lock()
	capBefore := cap(s.q.heap.a)
	s.q.mu.Unlock()

	schedule := func() {
		if _, err := s.Schedule(nop, time.Hour); err != nil {
			panic(err)
		}
	}
	allocs := testing.AllocsPerRun(1000, schedule)
	precise := mallocsPerRun(1000, schedule)
	t.Logf("Schedule: testing.AllocsPerRun = %v, precise = %.4f allocations per call", allocs, precise)
	require.LessOrEqual(t, allocs, 1.0)
	// The precise count sees the whole process: with several Ps the
	// runtime itself allocates now and then (a sudog for a blocking
	// select, say), so allow stray runtime allocations, far below one more
	// per call.
	require.LessOrEqual(t, precise, 1.01)
	s.q.mu.Lock()
	defer s.q.mu.Unlock()
	require.Equal(t, capBefore, cap(s.q.heap.a), "the heap never had to grow")
}
