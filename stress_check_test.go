package scheduler_test

// The end of a ledger stress round: every accepted task accounted for by
// the rules at the top of stress_test.go, and Stats checked against the
// ledger.

import (
	"context"
	"fmt"

	"github.com/go-stpe/scheduler"
	"github.com/stretchr/testify/require"
)

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
