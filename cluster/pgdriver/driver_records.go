package pgdriver

import "github.com/go-stpe/scheduler/cluster/driver"

// The driver's records that Driver's methods take and return, under the
// names this package's tests and callers use.

// NewTask is a task to store, checked by the caller.
type NewTask = driver.NewTask

// Stored is what storing a task found.
type Stored = driver.Stored

const (
	// StoredCreated: the task is stored, pending.
	StoredCreated = driver.Created
	// StoredExists: the same task was stored already, and is left as it
	// is.
	StoredExists = driver.Exists
	// StoredAlreadyDone: the same task already ran (or was canceled, for
	// a periodic occurrence), and is not stored again.
	StoredAlreadyDone = driver.AlreadyDone
)

// ScheduleManyResult is what ScheduleMany did with one task.
type ScheduleManyResult = driver.ScheduleManyResult

// Recorded is what recording a run's outcome did.
type Recorded = driver.Recorded

const (
	RecordedLost     = driver.RecordedLost
	RecordedDone     = driver.RecordedDone
	RecordedRetry    = driver.RecordedRetry
	RecordedDead     = driver.RecordedDead
	RecordedReleased = driver.RecordedReleased
)

// Held is a task an owner holds under a lease.
type Held = driver.Held
