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
//
// A round's operations are in stress_round_test.go, its ledger check in
// stress_check_test.go.

import (
	"context"
	"errors"
	"fmt"
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

	mu     sync.Mutex // guards ledger
	ledger []*stressEntry

	ops      atomic.Int64 // operations issued so far (the shutdown trigger)
	rejected atomic.Int64 // submissions that returned ErrRejected
	executed atomic.Int64 // Execute calls accepted
	execRuns atomic.Int64 // runs of Execute'd tasks
	maxCore  atomic.Int64 // the largest core pool size ever set

	handedMu sync.Mutex                  // guards handed
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
