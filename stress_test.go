package scheduler_test

// The ledger stress test: many goroutines at once schedule one-shot and
// periodic tasks with random delays on the real clock, cancel them with and
// without interrupt, call Remove, Purge, SetCorePoolSize, Queue and Stats,
// and one of them shuts the scheduler down (Shutdown, ShutdownNow, or
// Shutdown escalated to ShutdownNow) at a random moment. Afterwards every
// accepted task must be accounted for in the ledger:
//
//   - a one-shot task ran exactly once, or was canceled (by Cancel, or by the
//     shutdown policy), or was handed back by ShutdownNow, or was removed by
//     Remove; a rejected submission returned an error wrapping ErrRejected;
//   - no task is left pending unless ShutdownNow handed it back or Remove
//     took it out of the queue;
//   - a periodic task never overlapped itself;
//   - after Cancel returned true, at most the one run that had already
//     started enters the task's body: the core marks a body as started with
//     a CAS from stateNew, so a Cancel that returned true came after that
//     mark or the body never starts; the test sees the entry a moment after
//     the mark, hence "at most one". Its outcome is discarded: the future
//     stays canceled;
//   - a removed task never runs again;
//   - Stats agrees with the ledger; AwaitTermination returns; goleak finds
//     no goroutine left.
//
// By default it runs a few rounds within a couple of seconds (CI runs it
// under -race). SCHEDULER_STRESS_DURATION=2m keeps starting rounds for that
// long.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// stressEnv names the variable that turns on the long mode.
const stressEnv = "SCHEDULER_STRESS_DURATION"

// stressShutdownKind is how a round ends.
type stressShutdownKind int

const (
	// stressShutdown: Shutdown with the default policies; one-shot
	// delays stay short so that the queued ones drain quickly.
	stressShutdown stressShutdownKind = iota
	// stressShutdownNoDelayed: Shutdown with the execute-existing-delayed
	// policy false: queued one-shot tasks not yet due are canceled.
	stressShutdownNoDelayed
	// stressShutdownNow: ShutdownNow; the queue is handed back.
	stressShutdownNow
	// stressEscalate: Shutdown with the continue-existing-periodic policy
	// true, then ShutdownNow once the goroutines are done.
	stressEscalate
	stressKinds
)

func (k stressShutdownKind) String() string {
	return [...]string{"Shutdown", "Shutdown(no delayed)", "ShutdownNow", "Shutdown+ShutdownNow"}[k]
}

// stressBehavior is what a task's body does.
type stressBehavior int

const (
	stressReturn     stressBehavior = iota // returns nil at once
	stressYield                            // yields a few times
	stressBlock                            // waits up to 1ms of real time, or until its ctx ends
	stressFail                             // returns errStressTask (periodic: on run failOn)
	stressPanic                            // panics (periodic: on run failOn)
	stressFailAlways                       // periodic with ContinueOnError: every run fails
)

var errStressTask = errors.New("stress: task failed")

// stressEntry is one accepted task in the ledger.
type stressEntry struct {
	id       int
	periodic bool
	behavior stressBehavior
	failOn   int64                                     // a periodic task's failing run (1-based)
	f        scheduler.ScheduledFuture                 // set before the entry is in the ledger
	base     time.Time                                 // the round's start, for cancelAt
	face     atomic.Pointer[scheduler.ScheduledFuture] // f, for the body

	runs      atomic.Int64 // body entries
	running   atomic.Int32 // 1 while a body runs
	overlaps  atomic.Int64 // body entries while another run of the task was in its body
	failed    atomic.Int64 // runs that returned an error or panicked
	panicked  atomic.Int64 // runs that panicked
	lateRuns  atomic.Int64 // body entries after Cancel returned true
	badLate   atomic.Int64 // of those, runs that were not yet due when Cancel returned
	cancelAt  atomic.Int64 // when a Cancel call returned true, since base
	canceled  atomic.Bool  // a Cancel call returned true; set after cancelAt
	removed   atomic.Bool  // a Remove call returned true
	runsAtRem atomic.Int64 // runs when Remove returned true
}

// body runs one run of the task and records it in the entry.
func (e *stressEntry) body(ctx context.Context) error {
	// A run may enter its body after Cancel returned true only if a worker
	// took it from the queue before: so only if it was due by then. The
	// due time is estimated from below (clock read before Delay's), so a
	// run seen as not yet due at cancel time certainly was not.
	if f := e.face.Load(); f != nil {
		now := time.Since(e.base)
		due := now + (*f).Delay()
		if e.canceled.Load() {
			e.lateRuns.Add(1)
			if due > time.Duration(e.cancelAt.Load()) {
				e.badLate.Add(1)
			}
		}
	}
	if !e.running.CompareAndSwap(0, 1) {
		e.overlaps.Add(1)
	}
	n := e.runs.Add(1)
	defer e.running.Store(0) // before the scheduler may start the next run
	fails := !e.periodic || n == e.failOn
	switch {
	case e.behavior == stressYield:
		for range 3 {
			runtime.Gosched()
		}
	case e.behavior == stressBlock:
		tm := time.NewTimer(time.Millisecond) // simulated work, not a test wait
		defer tm.Stop()
		select {
		case <-ctx.Done():
		case <-tm.C:
		}
	case e.behavior == stressFail && fails, e.behavior == stressFailAlways:
		e.failed.Add(1)
		return fmt.Errorf("task %d run %d: %w", e.id, n, errStressTask)
	case e.behavior == stressPanic && fails:
		e.failed.Add(1)
		e.panicked.Add(1)
		panic(fmt.Sprintf("stress: task %d run %d panics", e.id, n))
	}
	return nil
}

// stressRound is one scheduler's life under load.
type stressRound struct {
	t    *testing.T
	seed uint64
	kind stressShutdownKind
	s    *scheduler.Scheduler
	base time.Time // the round's start

	mu     sync.Mutex
	ledger []*stressEntry

	ops      atomic.Int64 // operations issued so far (the shutdown trigger)
	rejected atomic.Int64 // submissions that returned ErrRejected
	executed atomic.Int64 // Execute calls accepted
	execRuns atomic.Int64 // runs of Execute'd tasks
	maxCore  atomic.Int64 // the largest core pool size ever set
	handedMu sync.Mutex
	handed   []scheduler.ScheduledFuture // what ShutdownNow returned
}

// stressTotals sums what the rounds did, for the log.
type stressTotals struct {
	rounds, ops, accepted, oneShots, periodic, runs, ran, canceled, handedBack,
	removed, rejected, executed, lateRuns int64
}

func (a *stressTotals) add(b stressTotals) {
	a.rounds += b.rounds
	a.ops += b.ops
	a.accepted += b.accepted
	a.oneShots += b.oneShots
	a.periodic += b.periodic
	a.runs += b.runs
	a.ran += b.ran
	a.canceled += b.canceled
	a.handedBack += b.handedBack
	a.removed += b.removed
	a.rejected += b.rejected
	a.executed += b.executed
	a.lateRuns += b.lateRuns
}

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

// check settles the ledger once the scheduler has terminated.
func (r *stressRound) check(ctx context.Context) stressTotals {
	t := r.t
	s := r.s
	handed := make(map[scheduler.ScheduledFuture]int)
	for _, f := range r.handed {
		handed[f]++
	}
	known := make(map[scheduler.ScheduledFuture]bool, len(r.ledger))
	var tot stressTotals
	var runs, failed, panicked, canceled int64
	for _, e := range r.ledger {
		where := fmt.Sprintf("round %v seed %d task %d (periodic %v, behavior %d)", r.kind, r.seed, e.id, e.periodic, e.behavior)
		known[e.f] = true
		n := e.runs.Load()
		runs += n
		failed += e.failed.Load()
		panicked += e.panicked.Load()
		tot.lateRuns += e.lateRuns.Load()
		if e.f.IsCanceled() {
			canceled++
		}
		require.Zero(t, e.overlaps.Load(), "%s: overlapped itself", where)
		require.LessOrEqual(t, e.lateRuns.Load(), int64(1),
			"%s: entered its body %d times after Cancel returned true", where, e.lateRuns.Load())
		require.Zero(t, e.badLate.Load(),
			"%s: ran after Cancel returned true, and was not yet due when it did", where)
		if e.lateRuns.Load() > 0 {
			require.True(t, e.f.IsCanceled(), "%s: a run after Cancel replaced the canceled outcome", where)
		}
		if e.periodic {
			tot.periodic++
		} else {
			tot.oneShots++
			require.LessOrEqual(t, n, int64(1), "%s: a one-shot task ran %d times", where, n)
		}
		require.LessOrEqual(t, handed[e.f], 1, "%s: handed back twice", where)
		switch {
		case handed[e.f] == 1:
			tot.handedBack++
			require.False(t, e.removed.Load(), "%s: handed back after Remove took it out", where)
			if !e.periodic {
				require.Zero(t, n, "%s: handed back by ShutdownNow after it ran", where)
			}
			if e.f.IsDone() {
				require.True(t, e.f.IsCanceled() && e.canceled.Load(),
					"%s: handed back, done, and not canceled by Cancel", where)
			}
		case e.removed.Load():
			tot.removed++
			require.Equal(t, e.runsAtRem.Load(), n, "%s: ran after Remove took it out", where)
			if e.f.IsDone() {
				require.True(t, e.f.IsCanceled() && e.canceled.Load(),
					"%s: removed, done, and not canceled by Cancel", where)
			}
		default:
			require.True(t, e.f.IsDone(), "%s: lost: not done, not handed back, not removed (runs %d)", where, n)
			err := e.f.Wait(ctx)
			switch {
			case e.f.IsCanceled():
				tot.canceled++
				require.ErrorIs(t, err, scheduler.ErrCanceled, where)
				if !e.canceled.Load() {
					// Only the scheduler's shutdown cancels on its own:
					// periodic tasks; one-shot tasks not yet due, with the
					// delayed policy false; and a one-shot task a worker
					// had taken but not started when ShutdownNow came (JDK
					// ScheduledFutureTask.run: cancel if it may no longer
					// run).
					require.True(t, e.periodic || (n == 0 && r.kind != stressShutdown),
						"%s: canceled, but no Cancel returned true and no policy applies", where)
				}
			case e.periodic:
				// A periodic task completes only by failing.
				require.Equal(t, e.failOn, n, "%s: done after %d runs", where, n)
				if e.behavior == stressPanic {
					var pe *scheduler.PanicError
					require.ErrorAs(t, err, &pe, where)
				} else {
					require.Equal(t, stressFail, e.behavior, "%s: done without failing or canceling: %v", where, err)
					require.ErrorIs(t, err, errStressTask, where)
				}
			default:
				tot.ran++
				require.Equal(t, int64(1), n, "%s: done, not canceled, yet ran %d times", where, n)
				switch e.behavior {
				case stressFail:
					require.ErrorIs(t, err, errStressTask, where)
				case stressPanic:
					var pe *scheduler.PanicError
					require.ErrorAs(t, err, &pe, where)
				default:
					require.NoError(t, err, where)
				}
			}
		}
	}
	unknownHanded := 0
	for f := range handed {
		if !known[f] {
			unknownHanded += handed[f]
		}
	}
	// Execute'd tasks have no future in the ledger: each ran once, was
	// handed back, or (taken by a worker when ShutdownNow came) was
	// canceled; Stats.Canceled below checks the last count.
	execCanceled := r.executed.Load() - r.execRuns.Load() - int64(unknownHanded)
	require.GreaterOrEqual(t, execCanceled, int64(0),
		"round %v seed %d: Execute'd tasks: accepted %d, ran %d, handed back %d",
		r.kind, r.seed, r.executed.Load(), r.execRuns.Load(), unknownHanded)
	if r.kind != stressShutdownNow && r.kind != stressEscalate {
		require.Zero(t, execCanceled, "round %v seed %d: Execute'd tasks lost", r.kind, r.seed)
	}

	st := s.Stats()
	want := scheduler.Stats{
		CorePoolSize:    st.CorePoolSize,
		LargestPoolSize: st.LargestPoolSize,
		TaskCount:       uint64(runs + r.execRuns.Load()),
		Completed:       uint64(runs + r.execRuns.Load()),
		Rejected:        uint64(r.rejected.Load()),
		Failed:          uint64(failed),
		Panicked:        uint64(panicked),
		// Abort cancels the future of every rejected submission.
		Canceled: uint64(canceled + r.rejected.Load() + execCanceled),
	}
	require.Equal(t, want, st, "round %v seed %d: Stats disagree with the ledger", r.kind, r.seed)
	require.LessOrEqual(t, int64(st.LargestPoolSize), r.maxCore.Load())

	tot.rounds = 1
	tot.ops = r.ops.Load()
	tot.accepted = int64(len(r.ledger))
	tot.runs = runs + r.execRuns.Load()
	tot.rejected = r.rejected.Load()
	tot.executed = r.executed.Load()
	return tot
}

// TestStressLedger is the stress test described at the top of this file.
func TestStressLedger(t *testing.T) {
	budget := 2 * time.Second // the default: a few rounds, CI-sized
	goroutines, opsEach := 8, 400
	if v := os.Getenv(stressEnv); v != "" {
		d, err := time.ParseDuration(v)
		require.NoError(t, err, "%s=%q", stressEnv, v)
		budget = d
		opsEach = 2000
	}
	before := goleak.IgnoreCurrent()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d (rounds use seed+i), budget %v, %d goroutines x %d ops per round", seed, budget, goroutines, opsEach)

	var tot stressTotals
	start := time.Now()
	perKind := make([]int, stressKinds)
	for i := 0; ; i++ {
		kind := stressShutdownKind(i % int(stressKinds))
		// At least one round of each kind, then as many as the budget allows.
		if i >= int(stressKinds) && time.Since(start) > budget {
			break
		}
		r := &stressRound{t: t, seed: seed + uint64(i), kind: kind}
		tot.add(r.run(goroutines, opsEach))
		perKind[kind]++
		if t.Failed() {
			t.Fatalf("round %d (%v, seed %d) failed", i, kind, r.seed)
		}
	}
	goleak.VerifyNone(t, before)
	t.Logf("%d rounds in %v (per kind %v): %d ops; ledger: %d accepted (%d one-shot, %d periodic), "+
		"%d one-shots ran once, %d canceled, %d handed back by ShutdownNow, %d removed; "+
		"%d rejected; %d Execute'd; %d runs in all; %d runs entered after Cancel returned true",
		tot.rounds, time.Since(start).Round(time.Millisecond), perKind, tot.ops, tot.accepted, tot.oneShots, tot.periodic,
		tot.ran, tot.canceled, tot.handedBack, tot.removed, tot.rejected, tot.executed, tot.runs, tot.lateRuns)
}

// TestStressSetCorePoolSizeNeverGrowsPastCore is a regression test for a
// bug TestStressLedger found (LargestPoolSize above every core size ever
// set): shrinking the pool lets busy workers finish their task before they
// exit, and growing it again right after added delta new workers without
// counting the ones still alive. The JDK's addWorker(null, true) never goes
// past corePoolSize.
func TestStressSetCorePoolSizeNeverGrowsPastCore(t *testing.T) {
	s, err := scheduler.New(2, scheduler.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	defer func() {
		s.ShutdownNow()
		require.NoError(t, s.AwaitTermination(context.Background()))
	}()
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	for range 2 { // both workers busy until release
		_, err := s.Submit(func(context.Context) error {
			started <- struct{}{}
			<-release
			return nil
		})
		require.NoError(t, err)
	}
	<-started
	<-started
	_, err = s.Schedule(func(context.Context) error { return nil }, time.Hour) // something queued
	require.NoError(t, err)

	require.NoError(t, s.SetCorePoolSize(1)) // both workers busy: neither exits yet
	require.NoError(t, s.SetCorePoolSize(2))
	st := s.Stats()
	close(release)
	require.LessOrEqual(t, st.PoolSize, 2, "pool of 2 has %d workers: %+v", st.PoolSize, st)
	require.LessOrEqual(t, st.LargestPoolSize, 2, "pool of 2 had %d workers: %+v", st.LargestPoolSize, st)
}

// TestStressCancelDuringBeforeExecutePreventsBody is a regression test for the
// ledger rule "no task runs after its Cancel returned true": a Cancel that
// landed while the BeforeExecute hook ran used to let the body run anyway,
// as the state was checked only before the hook. The JDK calls
// beforeExecute before FutureTask.run, whose state check then skips the
// body.
func TestStressCancelDuringBeforeExecutePreventsBody(t *testing.T) {
	inHook := make(chan struct{})
	release := make(chan struct{})
	s, err := scheduler.New(1,
		scheduler.WithLogger(slog.New(slog.DiscardHandler)),
		scheduler.WithHooks(scheduler.Hooks{BeforeExecute: func(f scheduler.ScheduledFuture) {
			if f.Name() == "victim" {
				close(inHook)
				<-release
			}
		}}))
	require.NoError(t, err)
	defer func() {
		s.ShutdownNow()
		require.NoError(t, s.AwaitTermination(context.Background()))
	}()
	var ran atomic.Bool
	f, err := s.Submit(func(context.Context) error {
		ran.Store(true)
		return nil
	}, scheduler.WithName("victim"))
	require.NoError(t, err)
	<-inHook
	require.True(t, f.Cancel(false), "the body has not started: Cancel succeeds")
	close(release)
	require.ErrorIs(t, f.Wait(context.Background()), scheduler.ErrCanceled)
	s.Shutdown()
	require.NoError(t, s.AwaitTermination(context.Background()))
	require.False(t, ran.Load(), "the body ran after Cancel returned true")
}
