package scheduler_test

// One round of the ledger stress test: workers that issue random operations
// on one scheduler and shut it down at a random moment, and the round that
// runs them and waits for termination.

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/stretchr/testify/require"
)

func (r *stressRound) entry(rng *rand.Rand) *stressEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ledger) == 0 {
		return nil
	}
	return r.ledger[rng.IntN(len(r.ledger))]
}

func (r *stressRound) accept(e *stressEntry, f scheduler.ScheduledFuture, err error) {
	if err != nil {
		if !errors.Is(err, scheduler.ErrRejected) {
			r.t.Errorf("task %d: submission failed with %v, want an error wrapping ErrRejected", e.id, err)
		}
		r.rejected.Add(1)
		return
	}
	if f == nil {
		r.t.Errorf("task %d: accepted with a nil future", e.id)
		return
	}
	e.f = f
	e.face.Store(&f)
	r.mu.Lock()
	r.ledger = append(r.ledger, e)
	r.mu.Unlock()
}

// delay draws a one-shot delay: mostly within a few milliseconds, some
// negative; rounds whose end does not wait for delayed tasks also get far
// ones.
func (r *stressRound) delay(rng *rand.Rand) time.Duration {
	if r.kind != stressShutdown && rng.IntN(10) == 0 {
		return time.Hour
	}
	return time.Duration(rng.IntN(2000)-500) * time.Microsecond
}

// shutdown ends the round the way its kind says.
func (r *stressRound) shutdown() {
	switch r.kind {
	case stressShutdownNow:
		got := r.s.ShutdownNow()
		r.handedMu.Lock()
		r.handed = append(r.handed, got...)
		r.handedMu.Unlock()
	default:
		r.s.Shutdown()
	}
}

// worker issues ops random operations.
func (r *stressRound) worker(g, ops int, shutdownAt, secondAt int64, nextID *atomic.Int64) {
	rng := rand.New(rand.NewPCG(r.seed, uint64(g)))
	s := r.s
	after := 0 // ops issued after the shutdown: a few, to see them rejected
	for range ops {
		if n := r.ops.Add(1); n == shutdownAt || n == secondAt {
			r.shutdown() // the second call checks that a repeated shutdown is harmless
			continue
		}
		if s.IsShutdown() {
			if after++; after > 25 && r.ops.Load() > secondAt {
				break
			}
		}
		switch p := rng.IntN(100); {
		case p < 30: // a one-shot task
			e := &stressEntry{id: int(nextID.Add(1)), base: r.base, behavior: stressBehavior(rng.IntN(5))}
			if rng.IntN(50) != 0 && e.behavior == stressPanic {
				e.behavior = stressReturn // panics are slow (stacks, logs): keep them rare
			}
			if rng.IntN(4) == 0 {
				f, err := scheduler.ScheduleCallable(s, func(ctx context.Context) (int, error) {
					return e.id, e.body(ctx)
				}, r.delay(rng))
				if err != nil {
					r.accept(e, nil, err)
				} else {
					r.accept(e, f, nil)
				}
			} else {
				f, err := s.Schedule(e.body, r.delay(rng))
				r.accept(e, f, err)
			}
		case p < 45: // a periodic task
			e := &stressEntry{id: int(nextID.Add(1)), base: r.base, periodic: true, behavior: stressBehavior(rng.IntN(6)),
				failOn: int64(rng.IntN(5) + 1)}
			if rng.IntN(20) != 0 && e.behavior == stressPanic {
				e.behavior = stressReturn
			}
			var opts []scheduler.TaskOption
			if e.behavior == stressFailAlways {
				opts = append(opts, scheduler.ContinueOnError())
			}
			initial := time.Duration(rng.IntN(1500)-500) * time.Microsecond
			period := time.Duration(rng.IntN(950)+50) * time.Microsecond
			var f scheduler.ScheduledFuture
			var err error
			if rng.IntN(2) == 0 {
				f, err = s.ScheduleAtFixedRate(e.body, initial, period, opts...)
			} else {
				f, err = s.ScheduleWithFixedDelay(e.body, initial, period, opts...)
			}
			r.accept(e, f, err)
		case p < 50: // Execute: no future; counted apart
			err := s.Execute(func(context.Context) error {
				r.execRuns.Add(1)
				return nil
			})
			if err == nil {
				r.executed.Add(1)
			} else if errors.Is(err, scheduler.ErrRejected) {
				r.rejected.Add(1)
			} else {
				r.t.Errorf("Execute: %v, want nil or ErrRejected", err)
			}
		case p < 60: // cancel, with or without interrupt
			if e := r.entry(rng); e != nil && e.f.Cancel(rng.IntN(2) == 0) {
				e.cancelAt.Store(int64(time.Since(e.base)))
				e.canceled.Store(true)
			}
		case p < 64: // remove
			if e := r.entry(rng); e != nil && s.Remove(e.f) {
				// Out of the queue and not running: its run count is final.
				e.runsAtRem.Store(e.runs.Load())
				e.removed.Store(true)
			}
		case p < 66:
			s.Purge()
		case p < 70: // resize the pool
			n := rng.IntN(4) + 1
			for {
				old := r.maxCore.Load()
				if int64(n) <= old || r.maxCore.CompareAndSwap(old, int64(n)) {
					break
				}
			}
			if err := s.SetCorePoolSize(n); err != nil {
				r.t.Errorf("SetCorePoolSize(%d): %v", n, err)
			}
		case p < 75: // look at the queue and the counters
			q := s.Queue()
			st := s.Stats()
			if st.TaskCount != st.Completed+uint64(st.Active)+uint64(st.Queued) {
				r.t.Errorf("Stats: TaskCount %d != Completed %d + Active %d + Queued %d",
					st.TaskCount, st.Completed, st.Active, st.Queued)
			}
			if st.Active > st.PoolSize {
				r.t.Errorf("Stats: %d active tasks on %d workers", st.Active, st.PoolSize)
			}
			for i := 1; i < len(q); i++ {
				if q[i] == q[i-1] {
					r.t.Errorf("Queue lists a task twice")
				}
			}
		case p < 95: // wait briefly on a future: never longer than ctx; paces the load
			if e := r.entry(rng); e != nil {
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rng.IntN(500))*time.Microsecond)
				err := e.f.Wait(ctx)
				cancel()
				if err != nil && !errors.Is(err, context.DeadlineExceeded) && !e.f.IsDone() {
					r.t.Errorf("task %d: Wait returned %v while not done", e.id, err)
				}
			}
		default: // Delay, IsDone and friends must not block or panic
			if e := r.entry(rng); e != nil {
				_ = e.f.Delay()
				if e.f.IsPeriodic() != e.periodic {
					r.t.Errorf("task %d: IsPeriodic() = %v", e.id, !e.periodic)
				}
				if e.f.IsCanceled() && !e.f.IsDone() {
					r.t.Errorf("task %d: canceled but not done", e.id)
				}
			}
		}
	}
}

// run plays one round and checks its ledger.
func (r *stressRound) run(goroutines, opsEach int) stressTotals {
	t := r.t
	rng := rand.New(rand.NewPCG(r.seed, 0xfeed))
	pool := rng.IntN(4) + 1
	r.maxCore.Store(int64(pool))
	opts := []scheduler.Option{
		scheduler.WithLogger(slog.New(slog.DiscardHandler)),
		scheduler.WithRemoveOnCancel(rng.IntN(2) == 0),
	}
	if rng.IntN(3) == 0 {
		opts = append(opts, scheduler.WithMaxQueueSize(100+rng.IntN(300)))
	}
	switch r.kind {
	case stressShutdownNoDelayed:
		opts = append(opts, scheduler.WithExecuteExistingDelayedTasksAfterShutdown(false))
	case stressEscalate:
		opts = append(opts, scheduler.WithContinueExistingPeriodicTasksAfterShutdown(true))
	}
	s, err := scheduler.New(pool, opts...)
	require.NoError(t, err)
	r.s = s
	r.base = time.Now()

	total := int64(goroutines * opsEach)
	shutdownAt := total/2 + rng.Int64N(total*2/5)
	secondAt := int64(-1)
	if rng.IntN(2) == 0 {
		secondAt = shutdownAt + 1 + rng.Int64N(total-shutdownAt)
	}
	var nextID atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() { r.worker(g, opsEach, shutdownAt, secondAt, &nextID) })
	}
	wg.Wait()
	require.True(t, s.IsShutdown(), "the shutdown op never ran")
	if r.kind == stressEscalate {
		// Periodic tasks go on after this Shutdown: while one is live,
		// AwaitTermination gives up with ctx.Err(); ShutdownNow ends them.
		short, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		err := s.AwaitTermination(short)
		cancel()
		if err == nil {
			for _, e := range r.ledger {
				require.True(t, !e.periodic || e.f.IsDone() || e.removed.Load(),
					"seed %d: terminated with periodic task %d live", r.seed, e.id)
			}
		} else {
			require.ErrorIs(t, err, context.DeadlineExceeded)
		}
		r.handed = append(r.handed, s.ShutdownNow()...)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, s.AwaitTermination(ctx), "AwaitTermination after %v (seed %d): wedged", r.kind, r.seed)
	require.True(t, s.IsTerminated())
	return r.check(ctx)
}
