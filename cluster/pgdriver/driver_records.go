package pgdriver

import "time"

// Mirrors of the Scheduling group's records as the scheduling branch
// declares them in cluster/driver (scheduling.go), field for field, so
// that Driver's methods have their signatures before the records land on
// this module's cluster/driver; each becomes an alias of the driver's
// type then.

// NewTask is a task to store, checked by the caller (driver.NewTask).
type NewTask struct {
	ID, Kind string
	Payload  []byte
	// Due is when the task is due (microsecond precision).
	Due        time.Time
	MaxRetries int
	// FixedID is true when the caller chose the ID: the ID then names
	// the task for retention, and a task of the same ID that ran keeps
	// it from being stored again (AlreadyDone).
	FixedID bool
	// Metadata is stored with the task and given back to its runs ("" for
	// none); it is not part of the task's identity.
	Metadata string
}

// Stored is what storing a task found (driver.Stored).
type Stored int

const (
	// StoredCreated: the task is stored, pending.
	StoredCreated Stored = iota + 1
	// StoredExists: the same task was stored already, and is left as it
	// is.
	StoredExists
	// StoredAlreadyDone: the same task already ran (or was canceled, for
	// a periodic occurrence), and is not stored again.
	StoredAlreadyDone
)

// ScheduleManyResult is what ScheduleMany did with one task: Stored, or
// the error that kept it from being stored (driver.ScheduleManyResult).
type ScheduleManyResult struct {
	Stored Stored
	Err    error
}

// Mirrors of the Claims group's records as the claims branch declares
// them in cluster/driver (claims.go).

// Recorded is what recording a run's outcome did (driver.Recorded); its
// values are the Store's Outcome strings.
type Recorded string

const (
	// RecordedLost: the owner no longer held the task; nothing changed.
	RecordedLost Recorded = "lost"
	// RecordedDone: a successful run was recorded.
	RecordedDone Recorded = "done"
	// RecordedRetry: the failed task is pending for its retry.
	RecordedRetry Recorded = "retry"
	// RecordedDead: the failed task is dead.
	RecordedDead Recorded = "dead"
	// RecordedReleased: the task is pending again, handed back.
	RecordedReleased Recorded = "released"
)

// Held is a task an owner holds under a lease (driver.Held).
type Held struct {
	ID, Kind, Owner string
}
