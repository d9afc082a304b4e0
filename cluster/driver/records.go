package driver

import "time"

// State is where a stored task is.
type State string

const (
	// Pending tasks wait for their due time (or their retry), or for
	// their kind to be resumed.
	Pending State = "pending"
	// Running tasks are claimed by a node and held under a lease.
	Running State = "running"
	// Dead tasks failed past their retry limit, or were lost to faults
	// past the limit of lost runs.
	Dead State = "dead"
	// Done records are the tasks that ran to completion or were
	// canceled, kept only when the node keeps done records.
	Done State = "done"
)

// States are the four states, in the order a task found in more than one
// is taken to be in.
var States = []State{Running, Dead, Done, Pending}

// Outcome is how a run ended.
type Outcome string

const (
	OutcomeSucceeded  Outcome = "succeeded"
	OutcomeFailed     Outcome = "failed"
	OutcomeTimedOut   Outcome = "timed_out"
	OutcomeLost       Outcome = "lost"
	OutcomeHandedBack Outcome = "handed_back"
	OutcomeCanceled   Outcome = "canceled"
)

// RunRecord is one run of a task, as the store recorded it; times come
// from the store's clock.
type RunRecord struct {
	// Node is the name of the node that ran it, or "" for a cancellation
	// of a task that was not running.
	Node string
	// Start is when the node claimed the task; End when the run's outcome
	// was recorded.
	Start, End time.Time
	// Outcome says how the run ended: OutcomeSucceeded, OutcomeFailed,
	// OutcomeTimedOut, OutcomeLost (its lease expired: its node died,
	// stalled or lost the store, and the reaper took the task back),
	// OutcomeHandedBack (the node stopped and gave it back unrun or
	// interrupted), or OutcomeCanceled (canceled; kept only with done
	// records kept, and a task canceled while pending gets a record with
	// no node and Start equal to End).
	Outcome Outcome
	// Error is the text of a failed, timed-out or lost run's error (at
	// most MaxHistoryError bytes of it), or "".
	Error string
}

// MaxHistory is how many run records a task keeps: the latest ones.
const MaxHistory = 10

// MaxHistoryError is how many bytes of a failed run's error text a run
// record keeps.
const MaxHistoryError = 2048

// KeepDone says which done records a store keeps of the tasks that ran to
// completion or were canceled: none when Max is 0, else at most Max, none
// older than Age.
type KeepDone struct {
	Age time.Duration
	Max int
}

// Timeline says where a step that ends a run counts it in the per-minute
// timeline: the minute (since the Unix epoch) and how long the minute's
// counts are kept; nothing is counted when TTL is 0.
type Timeline struct {
	Minute int64
	TTL    time.Duration
}
