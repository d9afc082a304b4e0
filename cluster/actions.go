package cluster

import (
	"context"
	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Operators' actions on one stored task: run it now, move it to another
// time, retry a dead task, delete a dead task, purge the dead. Each is one
// Lua script that checks the task's state and changes it in the same step,
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

// actionResult turns an action script's answer into nil or a refusal.
func actionResult(what, id, res string) error {
	switch res {
	case "ok":
		return nil
	case "missing":
		return &actionError{what: what + " " + id, why: "no such task", sentinel: ErrNotFound}
	default:
		return &actionError{what: what + " " + id, why: "the task is " + res, sentinel: ErrWrongState}
	}
}

// The scripts of the actions work on the task's partition and are given
// partition.taskKeys of the kind the caller believes (an action by ID
// alone names none: the script answers with the stored kind, and withKind
// runs it again with that one). Each returns "ok", "missing" or the state
// that forbids the action.

// RunNow makes a pending task due at once, by Redis's clock (asynq's
// Inspector.RunTask, River's JobRetry on an available job). The task keeps
// its due time (Task.Due); only when it runs changes. A task that is
// running or dead is refused with ErrWrongState (retry a dead task with
// Retry), an unknown ID with ErrNotFound.
func (n *Node) RunNow(ctx context.Context, id string) error {
	return n.move(ctx, "run now", id, "now", false)
}

// Reschedule moves a pending task to due: it runs then, and Task.Due says
// due. A task that is running or dead is refused with ErrWrongState, an
// unknown ID with ErrNotFound, a zero due with scheduler.ErrInvalidArgument.
// River has no counterpart; asynq's is deleting and enqueueing again.
func (n *Node) Reschedule(ctx context.Context, id string, due time.Time) error {
	if due.IsZero() {
		return invalid("reschedule "+id, "zero due time")
	}
	return n.move(ctx, "reschedule", id, strconv.FormatInt(due.UnixMicro(), 10), true)
}

func (n *Node) move(ctx context.Context, what, id, at string, setDue bool) error {
	if id == "" {
		return invalid(what, "empty task ID")
	}
	set := "0"
	if setDue {
		set = "1"
	}
	p := n.st.partOf(id)
	return n.action(ctx, what, id, func(kind string) *redis.Cmd {
		return redisdriver.MoveScript.Run(ctx, n.st.rdb, p.TaskKeys(kind, id), id, at, set, p.Channel())
	})
}

// action runs the script of an action on task id, built by run for a kind,
// first with no kind then, if the task is stored, with its own; and turns
// its answer into nil or a refusal.
func (n *Node) action(ctx context.Context, what, id string, run func(kind string) *redis.Cmd) error {
	res, err := withKind("", func(kind string) (string, error) {
		return run(kind).Text()
	})
	if err != nil {
		return n.failed(what+" "+id, err)
	}
	return actionResult(what, id, res)
}

// Retry gives a dead task its retries again and makes it due at once
// (asynq's Inspector.RunTask on an archived task, River's JobRetry on a
// discarded job). Its last error stays until its next run. A task that is
// not dead is refused with ErrWrongState, an unknown ID with ErrNotFound.
func (n *Node) Retry(ctx context.Context, id string) error {
	if id == "" {
		return invalid("retry", "empty task ID")
	}
	p := n.st.partOf(id)
	return n.action(ctx, "retry", id, func(kind string) *redis.Cmd {
		return redisdriver.RetryScript.Run(ctx, n.st.rdb, p.TaskKeys(kind, id), id, p.Channel())
	})
}

// Delete removes the record of a dead task or a done record (asynq's
// Inspector.DeleteTask on an archived or completed task, River's
// JobDelete). A task that is pending or running is refused with
// ErrWrongState (remove it with Cancel), an unknown ID with ErrNotFound.
func (n *Node) Delete(ctx context.Context, id string) error {
	if id == "" {
		return invalid("delete", "empty task ID")
	}
	p := n.st.partOf(id)
	return n.action(ctx, "delete", id, func(kind string) *redis.Cmd {
		return redisdriver.DeleteScript.Run(ctx, n.st.rdb, p.TaskKeys(kind, id), id)
	})
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
