package driver

import (
	"context"
	"time"
)

// Operations is the group of a Driver's methods that operators use:
// reading tasks (one, a page of a state, the counts), the actions on one
// task and on a selection of them, pausing kinds, and reading the
// per-minute timeline. Each action checks the task's state and changes it
// in one atomic step of the store, so it never races a claim: either the
// action finds the task pending and the claim then finds it moved, or the
// claim won and the action is refused, changing nothing.
type Operations interface {
	// Get reads task id with its run history; ok is false if none is
	// stored. A pending task's NextRun is its time in the pending order
	// (asynq's Inspector.GetTaskInfo, River's JobGet).
	Get(ctx context.Context, id string) (info TaskInfo, ok bool, err error)
	// Counts counts the stored tasks by state, each partition at one
	// instant (asynq's Inspector.GetQueueInfo); a pending task of a
	// paused kind counts as pending.
	Counts(ctx context.Context) (Counts, error)
	// CountsByKind counts the stored tasks by state, in total and for
	// each kind that has stored tasks or is paused, sorted by kind. A
	// kind found with no task and not paused in a partition is forgotten
	// there (checked again atomically), and left out of the result when
	// it has no task anywhere.
	CountsByKind(ctx context.Context) (Counts, []KindCounts, error)
	// List returns up to q.Limit tasks in q.State (of q.Kind when given)
	// after q.After, in the listing's order: pending ones by NextRun
	// (those of a paused kind too), running ones by lease expiry, soonest
	// first, dead and done ones newest first (by when they died or
	// finished), ties by ID. Page.Next is the position of the last task
	// of a full page (the zero Position otherwise), the After of the next
	// page. A task removed between the listing and the reading of its
	// record is left out of Tasks, not of the positions. It is River's
	// JobList with a cursor.
	List(ctx context.Context, q ListQuery) (ListPage, error)

	// RunNow makes pending task id due at once by the store's clock,
	// keeping its Due (asynq's Inspector.RunTask). A missing task is
	// ErrNotFound, one not pending a *StateError (ErrWrongState).
	RunNow(ctx context.Context, id string) error
	// Reschedule makes pending task id due at due and sets its Due to
	// it; its refusals are RunNow's.
	Reschedule(ctx context.Context, id string, due time.Time) error
	// Retry gives dead task id its retries again and makes it due at once
	// by the store's clock (asynq's RunTask on an archived task, River's
	// JobRetry). A missing task is ErrNotFound, one not dead a
	// *StateError.
	Retry(ctx context.Context, id string) error
	// Delete removes dead task id or done record id (River's JobDelete). A
	// missing task is ErrNotFound, a pending or running one a *StateError.
	Delete(ctx context.Context, id string) error

	// CountSelected counts the tasks sel picks now, each ID of sel.IDs
	// once.
	CountSelected(ctx context.Context, sel Selection) (int, error)
	// Bulk applies r.Action to every task r.Selection picks, in rounds of
	// a batch per partition, each task checked again as the single
	// action checks it: a task that moved on since it was read is matched,
	// not changed, and never half changed (asynq's Inspector batch
	// operations, River's JobDeleteMany). It is not a snapshot: a task
	// that enters the selection meanwhile may or may not be changed. On an
	// error the result says what was done until then.
	Bulk(ctx context.Context, r BulkRequest) (BulkResult, error)

	// Pause pauses kind in every partition: its pending tasks leave the
	// order nodes claim from and keep their times; every step that makes
	// a task of it pending keeps it so, and a claim of one is refused.
	// Pausing a paused kind does nothing. If some partitions fail, the
	// error says in how many of how many the kind is paused (asynq's
	// PauseQueue, River's QueuePause).
	Pause(ctx context.Context, kind string) error
	// Resume puts the pending tasks of kind back in every partition's
	// order and tells the nodes listening to the partitions; its errors
	// are Pause's.
	Resume(ctx context.Context, kind string) error
	// PausedKinds returns the kinds paused in some partition, sorted.
	PausedKinds(ctx context.Context) ([]string, error)

	// KnownKind tells whether kind is known to the store: handled by a
	// live member, stored or paused in some partition, or, for "@" +
	// name, declared as a periodic task.
	KnownKind(ctx context.Context, kind string) (bool, error)
	// StoredKinds returns the kinds stored in the partitions parts (by
	// index), each once, unsorted.
	StoredKinds(ctx context.Context, parts []int) ([]string, error)
	// DueOfKind counts the pending tasks of kind in parts that are due by
	// now (the caller's reckoning of the store's clock), and returns the
	// earliest pending time among that kind's tasks there (zero if none).
	DueOfKind(ctx context.Context, parts []int, kind string, now time.Time) (waiting int, oldest time.Time, err error)

	// Ping checks that the store answers.
	Ping(ctx context.Context) error
	// ReadTimeline returns the timeline's counts of kind ("" for every
	// kind) for each minute from first to last (minutes since the Unix
	// epoch), summed over the partitions, one entry per minute.
	ReadTimeline(ctx context.Context, kind string, first, last int64) ([]MinuteCounts, error)
}

// TaskInfo is a stored task as a driver reads it.
type TaskInfo struct {
	ID, Kind string
	Payload  []byte
	// Due is the time the task was scheduled for.
	Due time.Time
	// Attempt counts the failed runs, Lost the runs lost to faults,
	// MaxRetries is the retry limit.
	Attempt, Lost, MaxRetries int
	State                     State
	// LastError is the error of the last failed or lost run.
	LastError string
	// Owner is the owner token of the claim of a running task, Started
	// when it was claimed (the store's clock); empty otherwise.
	Owner   string
	Started time.Time
	// NextRun is a pending task's time in the pending order; zero
	// otherwise.
	NextRun time.Time
	// Finished is when a done record's task completed or was canceled.
	Finished time.Time
	// Paused is true if the task's kind is paused in its partition.
	Paused bool
	// History holds the task's last runs, oldest first.
	History []RunRecord
}

// Counts is how many tasks the store holds in each state. A pending task
// of a paused kind counts as pending.
type Counts struct {
	Pending, Running, Dead, Done int64
}

// Plus is the sum of c and d.
func (c Counts) Plus(d Counts) Counts {
	return Counts{Pending: c.Pending + d.Pending, Running: c.Running + d.Running, Dead: c.Dead + d.Dead,
		Done: c.Done + d.Done}
}

// KindCounts is how many tasks of one kind the store holds in each state,
// and whether the kind is paused.
type KindCounts struct {
	Kind string
	Counts
	Paused bool
}

// Position is a place in a listing: after task ID at At; the zero
// Position is the start.
type Position struct {
	At time.Time
	ID string
}

// ListQuery selects a page of Operations.List.
type ListQuery struct {
	State State
	// Kind, if not "", lists only the tasks of that kind.
	Kind  string
	After Position
	// Limit is the page size, at least 1.
	Limit int
}

// ListPage is a page of Operations.List: its tasks and the position of
// its last one if the page is full.
type ListPage struct {
	Tasks []TaskInfo
	Next  Position
}

// Selection picks stored tasks for Operations.Bulk and CountSelected.
type Selection struct {
	// State is the state the tasks are in now.
	State State
	// Kind, if not "", picks only the tasks of that kind.
	Kind string
	// IDs, if not empty, picks only these tasks (still in State, of
	// Kind).
	IDs []string
	// Before, if not zero, picks only the tasks whose time in State's
	// order is before it: NextRun, lease expiry, death or finish.
	Before time.Time
}

// BulkAction is what Operations.Bulk does to each task.
type BulkAction int

const (
	// BulkRetry retries dead tasks, as Retry.
	BulkRetry BulkAction = iota + 1
	// BulkDelete deletes dead tasks or done records, as Delete.
	BulkDelete
	// BulkRunNow makes pending tasks that are not due yet due at once,
	// as RunNow.
	BulkRunNow
	// BulkCancel cancels tasks in any state, as the single cancel does:
	// a removed task, or a done record with Keep.
	BulkCancel
)

// BulkRequest is what Operations.Bulk is asked.
type BulkRequest struct {
	Action    BulkAction
	Selection Selection
	// Now is, for BulkRunNow, the caller's reckoning of the store's
	// clock: only the tasks after it are read (each partition's step then
	// answers with the store's own time).
	Now time.Time
	// Retention is how long a canceled task's ID stays refused for
	// BulkCancel, Keep which done records it keeps.
	Retention time.Duration
	Keep      KeepDone
	// Canceled, if not nil, is called with the ID of each task BulkCancel
	// removed, once it is removed.
	Canceled func(id string)
}

// BulkResult is what Operations.Bulk did.
type BulkResult struct {
	// Matched is how many tasks the selection matched when read.
	Matched int
	// Changed is how many of them the action changed; a task that moved
	// on between the read and the change is matched, not changed.
	Changed int
}

// StateError is the refusal of an action on a task whose state forbids
// it; it wraps ErrWrongState.
type StateError struct {
	ID    string
	State State
}

func (e *StateError) Error() string { return "task " + e.ID + " is " + string(e.State) }

func (e *StateError) Unwrap() error { return ErrWrongState }

// MinuteCounts is one minute of the timeline, summed over the partitions.
type MinuteCounts struct {
	// Minute is the minute since the Unix epoch.
	Minute int64
	// Late counts the runs that ended in the minute by their lateness
	// bucket: Late[b] is the count of bucket b (nil when none ended).
	Late []uint64
	// Failed and Lost count the failed (and timed-out) and lost runs;
	// Pending the pending tasks at the partitions' last samples.
	Failed, Lost, Pending int
	// Oldest is the longest any sampled oldest overdue task had been due.
	Oldest time.Duration
}
