package driver

import (
	"context"
	"time"
)

// Scheduling is the group of a Driver's methods that store tasks, cancel
// them, load the pending tasks that fall due soon, and keep the done
// records within their bounds.
type Scheduling interface {
	// Schedule stores t unless its ID is taken, atomically, and makes it
	// pending at t.Due; it tells the nodes that own its partition that a
	// task is pending (Redis: the partition's channel). It answers
	// Created, Exists (the same task, by kind, payload and due time, is
	// stored: the metadata is not part of its identity), or AlreadyDone
	// (the same task already ran and its done marker is kept, or it is a
	// canceled periodic occurrence), and ErrIDConflict when the ID holds
	// a different task. A done record (KeepDone) whose done marker is gone
	// does not hold its ID: it is replaced, unless it is of another kind.
	// Under the driver's replica acknowledgements it returns once enough
	// replicas hold the write, or an error wrapping ErrNotReplicated (the
	// task may be stored). asynq's Client.Enqueue, River's Insert.
	Schedule(ctx context.Context, t NewTask) (Stored, error)

	// ScheduleMany stores each of tasks as Schedule does, grouped by
	// partition (each partition's share atomically, in chunks the driver
	// chooses, told to the partition's owners at once), and returns one
	// result per task, in order: a task of a partition that could not be
	// written has that error, and a conflict is that task's alone. A
	// task under an ID given twice in tasks is stored once; a different
	// task under an ID used earlier in tasks is a conflict. River's
	// InsertMany, BullMQ's addBulk.
	ScheduleMany(ctx context.Context, tasks []NewTask) []ScheduleManyResult

	// Cancel removes task id, of kind as the caller believes (or ""; the
	// driver finds the stored kind), in whatever state, atomically, with
	// its index entries, and tells the nodes that own its partition
	// (Redis: "canceled" on its channel). removed is false for a missing
	// task; wasRunning is true if it was claimed (held under a lease).
	// A periodic occurrence (kind "@...") keeps its done marker for
	// retention, so that no node stores it again. With keep.Max above 0
	// the task becomes a done record stamped by the store's clock, its
	// last run record saying OutcomeCanceled (a done record itself is
	// removed). Replica acknowledgements as Schedule. River's JobCancel,
	// asynq's Inspector.DeleteTask.
	Cancel(ctx context.Context, id, kind string, retention time.Duration, keep KeepDone) (removed, wasRunning bool, err error)

	// LoadDue reads the pending tasks of the given kinds and partitions
	// (kinds[kind][i] is true to read partition i of kind) pending for no
	// later than until, at most limit in all, shared evenly among the
	// pairs of kind and partition (at least one each); newest reads each
	// pair's latest first, else its earliest. A kind paused in a
	// partition is left out of it. full is true if some pair had as many
	// tasks as its share. It is a read: until is the caller's time, and
	// whether a task is due is decided by the claim, by the store's clock.
	// asynq's forwarder and River's scheduler read the same range.
	LoadDue(ctx context.Context, kinds map[string][]bool, until time.Time, newest bool, limit int) (tasks []PendingTask, full bool, err error)

	// DoneToTrim lists, by partition index, the done records past the
	// bounds of KeepDone: those finished (by the store's clock, when the
	// record was made) before olderThan (the caller's time), and, of the
	// rest, the oldest past the newest max across all partitions; at most
	// batch per partition each way. full is true if some partition had more to trim than it listed.
	// It only reads: RemoveDone removes them. River's job cleaner, asynq's
	// janitor.
	DoneToTrim(ctx context.Context, olderThan time.Time, max, batch int) (victims map[int][]string, full bool, err error)

	// RemoveDone removes the done records victims (by partition index),
	// each atomically with its index entries, leaving any that is no
	// longer a done record (stored again, or removed meanwhile); it
	// returns how many it removed.
	RemoveDone(ctx context.Context, victims map[int][]string) (int, error)
}

// NewTask is a task to store, checked by the caller.
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

// Stored is what storing a task found.
type Stored int

const (
	// Created: the task is stored, pending.
	Created Stored = iota + 1
	// Exists: the same task was stored already, and is left as it is.
	Exists
	// AlreadyDone: the same task already ran (or was canceled, for a
	// periodic occurrence), and is not stored again.
	AlreadyDone
)

// ScheduleManyResult is what ScheduleMany did with one task: Stored, or
// the error that kept it from being stored (ErrIDConflict, an error of the
// store).
type ScheduleManyResult struct {
	Stored Stored
	Err    error
}

// PendingTask is a pending task as LoadDue reads it: Due is the time it is
// pending for (its due time, or its retry time after a failed run).
type PendingTask struct {
	ID, Kind string
	Due      time.Time
}
