package cluster

import (
	"fmt"
	"time"
)

// Misfires and overlap of periodic tasks: what happens to the occurrences
// of one periodic task that are overdue together (after a Pause, while
// every node was down, while the nodes were cut off from Redis, or while
// the previous occurrence ran), and whether two of its occurrences may run
// at once. Quartz's misfire instructions and @DisallowConcurrentExecution;
// the root module's MissedRunPolicy is the same rule for one process.
//
// The rules are part of the claim (the driver's ClaimOccurrence): every
// occurrence of a periodic task is stored in the one partition of its name
// (driver.PeriodicPartition), so the step that claims one sees all the
// others, and decides by the store's clock, atomically, whether it runs,
// is skipped or waits. Two nodes cannot decide differently, and since a skipped
// occurrence leaves a done marker under its ID (name@due), no node stores
// it again and nothing runs twice.

// Misfire says what a periodic task does with occurrences that are
// overdue when a node claims them (Quartz's misfire instruction). An
// occurrence is missed when, as it is claimed, the trigger's next
// occurrence after it is due too by Redis's clock. A failed run's retries
// are not occurrences: they run as any task's.
type Misfire int

const (
	// MisfireCoalesce runs one occurrence for all the missed ones: the
	// latest that is due. The missed ones are skipped, and the runs go on
	// at the trigger's times after it (Quartz's "fire once now", the
	// root module's CoalesceMissed). The default. If every node was down,
	// the first sweep after a node starts stores that latest occurrence.
	MisfireCoalesce Misfire = iota
	// MisfireSkip runs none of the missed occurrences, nor one that is
	// late by more than the misfire threshold (a second, or half the time
	// to the next occurrence if that is shorter): the next run is the
	// trigger's first time still ahead (Quartz's "do nothing").
	MisfireSkip
	// MisfireRunEach runs every missed occurrence, one after another, in
	// the order of their due times (Quartz's "ignore misfire policy", the
	// root module's CatchUpMissed). If every node was down, the sweeps
	// after a node starts store the occurrences that fell meanwhile.
	MisfireRunEach
)

// String names the policy.
func (m Misfire) String() string {
	switch m {
	case MisfireCoalesce:
		return "MisfireCoalesce"
	case MisfireSkip:
		return "MisfireSkip"
	case MisfireRunEach:
		return "MisfireRunEach"
	}
	return fmt.Sprintf("Misfire(%d)", int(m))
}

// lua is the policy's name in the claim (driver.Occurrence) and the
// store.
func (m Misfire) lua() string {
	switch m {
	case MisfireSkip:
		return "skip"
	case MisfireRunEach:
		return "each"
	}
	return "coalesce"
}

// misfireOf reads a policy's name as lua writes it; ok is false for an
// unknown one.
func misfireOf(s string) (m Misfire, ok bool) {
	for _, m := range []Misfire{MisfireCoalesce, MisfireSkip, MisfireRunEach} {
		if m.lua() == s {
			return m, true
		}
	}
	return MisfireCoalesce, false
}

// misfireThreshold is how late an occurrence may start under MisfireSkip,
// at most: Quartz's misfireThreshold (60 s there). Half the time to the
// next occurrence if that is shorter.
const misfireThreshold = time.Second

// threshold is the misfire threshold of the occurrence due at due, whose
// next occurrence is next (zero if none).
func threshold(due, next time.Time) time.Duration {
	if next.IsZero() {
		return misfireThreshold
	}
	return min(misfireThreshold, next.Sub(due)/2)
}

// PeriodicOption is the option WithMisfire and WithOverlap return: a
// HandleOption that only Node.Periodic accepts; Node.Handle and HandleJSON
// refuse it with an error wrapping scheduler.ErrInvalidArgument.
type PeriodicOption struct{ apply func(*periodicConfig) }

func (o PeriodicOption) applyHandle(h *handleConfig) {
	o.apply(&h.periodic)
	h.periodic.given = true
}

// periodicConfig holds the settings of one periodic task.
type periodicConfig struct {
	misfire Misfire
	overlap bool
	given   bool // a PeriodicOption was applied
}

// WithMisfire sets what a periodic task does with its missed occurrences
// (default MisfireCoalesce). A value other than the three policies is an
// error wrapping scheduler.ErrInvalidArgument at Node.Periodic.
func WithMisfire(m Misfire) PeriodicOption {
	return PeriodicOption{apply: func(c *periodicConfig) { c.misfire = m }}
}

// WithOverlap says whether two occurrences of a periodic task may run at
// once. By default (false) they never do anywhere in the cluster (Quartz's
// @DisallowConcurrentExecution): an occurrence that falls due while
// another runs is claimed only after that run ended, or is skipped by the
// misfire policy then; a run whose node died holds the next ones up until
// its lease expired and the reaper returned it. With true, an occurrence
// starts at its time whatever runs.
func WithOverlap(allow bool) PeriodicOption {
	return PeriodicOption{apply: func(c *periodicConfig) { c.overlap = allow }}
}

// validPeriodicConfig checks the settings of a periodic task.
func validPeriodicConfig(what string, c periodicConfig) error {
	if c.misfire < MisfireCoalesce || c.misfire > MisfireRunEach {
		return invalid(what, "misfire policy %v unknown", c.misfire)
	}
	return nil
}
