package cluster

import (
	"context"
	"errors"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// Operators' actions on one stored task: run it now, move it to another
// time, retry a dead task, delete a dead task, purge the dead. Each is one
// atomic step of the driver that checks the task's state and changes it,
// so an action never races a claim: either the action finds the task
// pending and the claim then finds it moved (and leaves it), or the claim
// won first and the action is refused. A refused action changes nothing.

// ErrNotFound is wrapped by the error of an action on an ID that names no
// stored task (never stored, canceled, deleted, or run to completion).
// asynq's counterpart is ErrTaskNotFound; River's is ErrNotFound.
var ErrNotFound = driver.ErrNotFound

// ErrWrongState is wrapped by the error of an action the task's state
// forbids: running now or rescheduling a task that is not pending,
// retrying a task that is not dead, deleting one that is neither dead nor
// done. asynq returns
// FailedPrecondition for these.
var ErrWrongState = driver.ErrWrongState

// actionError is a refused action: "cluster: what: why", wrapping its
// sentinel.
type actionError struct {
	what, why string
	sentinel  error
}

func (e *actionError) Error() string { return "cluster: " + e.what + ": " + e.why }

func (e *actionError) Unwrap() error { return e.sentinel }

// actionResult turns the driver's answer to an action into nil, a
// refusal or a failure of the store.
func (n *Node) actionResult(what, id string, err error) error {
	var wrong *driver.StateError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, driver.ErrNotFound):
		return &actionError{what: what + " " + id, why: "no such task", sentinel: ErrNotFound}
	case errors.As(err, &wrong):
		return &actionError{what: what + " " + id, why: "the task is " + string(wrong.State), sentinel: ErrWrongState}
	}
	return n.failed(what+" "+id, err)
}

// RunNow makes a pending task due at once, by Redis's clock (asynq's
// Inspector.RunTask, River's JobRetry on an available job). The task keeps
// its due time (Task.Due); only when it runs changes. A task that is
// running or dead is refused with ErrWrongState (retry a dead task with
// Retry), an unknown ID with ErrNotFound.
func (n *Node) RunNow(ctx context.Context, id string) error {
	return n.move(ctx, "run now", id, time.Time{})
}

// Reschedule moves a pending task to due: it runs then, and Task.Due says
// due. A task that is running or dead is refused with ErrWrongState, an
// unknown ID with ErrNotFound, a zero due with scheduler.ErrInvalidArgument.
// River has no counterpart; asynq's is deleting and enqueueing again.
func (n *Node) Reschedule(ctx context.Context, id string, due time.Time) error {
	if due.IsZero() {
		return invalid("reschedule "+id, "zero due time")
	}
	return n.move(ctx, "reschedule", id, due)
}

// move runs RunNow (a zero due) or Reschedule on the driver.
func (n *Node) move(ctx context.Context, what, id string, due time.Time) error {
	if id == "" {
		return invalid(what, "empty task ID")
	}
	if due.IsZero() {
		return n.actionResult(what, id, n.drv.RunNow(ctx, id))
	}
	return n.actionResult(what, id, n.drv.Reschedule(ctx, id, due))
}

// Retry gives a dead task its retries again and makes it due at once
// (asynq's Inspector.RunTask on an archived task, River's JobRetry on a
// discarded job). Its last error stays until its next run. A task that is
// not dead is refused with ErrWrongState, an unknown ID with ErrNotFound.
func (n *Node) Retry(ctx context.Context, id string) error {
	if id == "" {
		return invalid("retry", "empty task ID")
	}
	return n.actionResult("retry", id, n.drv.Retry(ctx, id))
}

// Delete removes the record of a dead task or a done record (asynq's
// Inspector.DeleteTask on an archived or completed task, River's
// JobDelete). A task that is pending or running is refused with
// ErrWrongState (remove it with Cancel), an unknown ID with ErrNotFound.
func (n *Node) Delete(ctx context.Context, id string) error {
	if id == "" {
		return invalid("delete", "empty task ID")
	}
	return n.actionResult("delete", id, n.drv.Delete(ctx, id))
}

// Purge removes every dead task that died before before, and returns how
// many it removed (asynq's Inspector.DeleteAllArchivedTasks, bounded by
// time as River's job cleaner): DeleteAll of the dead tasks before it. A
// zero before is an error wrapping scheduler.ErrInvalidArgument.
func (n *Node) Purge(ctx context.Context, before time.Time) (int, error) {
	return n.purge(ctx, Dead, before)
}

// PurgeDone removes every done record (WithKeepDone) of a task that
// finished before before, and returns how many it removed (asynq's
// Inspector.DeleteAllCompletedTasks, River's job cleaner): DeleteAll of
// the done records before it. A zero before is an error wrapping
// scheduler.ErrInvalidArgument.
func (n *Node) PurgeDone(ctx context.Context, before time.Time) (int, error) {
	return n.purge(ctx, Done, before)
}

// purge is DeleteAll of the tasks of state that entered it before before.
func (n *Node) purge(ctx context.Context, state State, before time.Time) (int, error) {
	if before.IsZero() {
		return 0, invalid("purge "+string(state), "zero time")
	}
	res, err := n.DeleteAll(ctx, Selection{State: state, Before: before})
	return res.Changed, err
}
