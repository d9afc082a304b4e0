package cluster

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster/driver"
)

// Bulk actions: the single actions (Retry, Delete, Cancel, RunNow) applied
// to every stored task a Selection picks. They are asynq's Inspector
// batch operations (RunAllArchivedTasks, DeleteAllArchivedTasks,
// DeleteAllCompletedTasks, RunAllScheduledTasks, and their ...ByIDs
// variants) and River's JobDeleteMany and JobCancel over a JobList
// filter.
//
// A bulk action works in rounds, as Purge does: it reads a batch of IDs
// from each partition that may hold more (500 at most, from the state's
// sorted set, or from the kind's index of that state when a kind is
// given), reads their kinds, then runs one script per partition on its
// batch, all of them pipelined, so no script holds Redis for long and a
// round costs three round trips whatever the number of partitions
// (driver.Operations.Bulk). Each script checks every task again, as the
// single action's script does:
// a task that moved on since it was read (claimed, canceled, retried
// meanwhile) is refused on its own and left as it is, never half changed.
// A bulk action is not a snapshot: a task that enters the selection while
// the action goes on may or may not be changed.

// Selection picks stored tasks for a bulk action.
type Selection struct {
	// State is required: the state the tasks are in now.
	State State
	// Kind, if not "", picks only the tasks of that kind.
	Kind string
	// IDs, if not empty, picks only these tasks, each of which must still
	// be in State (and of Kind, if given) when the action reaches it.
	// They may lie in any partitions.
	IDs []string
	// Before, if not zero, picks only the tasks whose score in State's set
	// is before it: for Pending the time the task is to run next
	// (Info.NextRun), for Running its lease's expiry, for Dead the time it
	// died, for Done the time it finished (Info.Finished).
	Before time.Time
}

// BulkResult is what a bulk action did: Matched is how many tasks the
// selection matched when read, Changed how many of them the action
// changed; a task that moved on between the read and the change is
// matched, not changed.
type BulkResult = driver.BulkResult

// bulkAction is one of the bulk actions.
type bulkAction struct {
	name   string            // the single action's name: "retry", "delete", ...
	action driver.BulkAction // what the driver does
	states []State           // the states a selection may name
}

var (
	bulkRetry  = bulkAction{name: "retry", action: driver.BulkRetry, states: []State{Dead}}
	bulkDelete = bulkAction{name: "delete", action: driver.BulkDelete, states: []State{Dead, Done}}
	bulkCancel = bulkAction{name: "cancel", action: driver.BulkCancel, states: []State{Pending, Running, Dead, Done}}
	bulkRunNow = bulkAction{name: "run now", action: driver.BulkRunNow, states: []State{Pending}}
)

// CountSelected counts the tasks sel picks now, without changing any:
// the dry run or confirmation of a bulk action. The count of a selection
// by IDs counts each ID once. Its errors are those of the bulk actions'
// selection (see RetryAll).
func (n *Node) CountSelected(ctx context.Context, sel Selection) (int, error) {
	what := "count " + sel.describe()
	if err := n.checkSelection(ctx, what, bulkCancel, sel); err != nil {
		return 0, err
	}
	c, err := n.drv.CountSelected(ctx, sel.toDriver())
	if err != nil {
		return 0, n.failed(what, err)
	}
	return c, nil
}

// RetryAll retries every dead task sel picks, as Retry does each: it gets
// its retries again and is due at once by Redis's clock (asynq's
// Inspector.RunAllArchivedTasks, River's JobRetry on each). sel.State
// must be Dead.
//
// The selection's errors, the same for every bulk action: a State that
// is not Pending, Running, Dead or Done, an empty ID among IDs, or an
// invalid Kind (see Node.Handle) is an error wrapping
// scheduler.ErrInvalidArgument; a State the action forbids wraps
// ErrWrongState and scheduler.ErrInvalidArgument; a Kind that no live node
// handles, no partition stores or has paused, and no periodic task
// declares wraps ErrUnknownKind. A Redis error is returned wrapped with
// what was done until then.
func (n *Node) RetryAll(ctx context.Context, sel Selection) (BulkResult, error) {
	return n.bulk(ctx, bulkRetry, sel)
}

// DeleteAll removes every dead task or done record sel picks, as Delete
// does each (asynq's Inspector.DeleteAllArchivedTasks and
// DeleteAllCompletedTasks, River's JobDeleteMany). sel.State must be
// Dead or Done. Its errors are RetryAll's.
func (n *Node) DeleteAll(ctx context.Context, sel Selection) (BulkResult, error) {
	return n.bulk(ctx, bulkDelete, sel)
}

// CancelAll cancels every task sel picks, in any state, by Cancel's rules
// for each (River's JobCancel on each of a JobList, asynq's
// Inspector.DeleteAllPendingTasks and CancelProcessing): once it returned,
// no node claims a canceled task again, a run in flight has its ctx
// canceled, a periodic occurrence is skipped, and with WithKeepDone a
// canceled task stays as a done record (Info.Canceled) while a done
// record is removed. A task that left sel.State meanwhile (a pending task
// claimed since it was read) is not canceled. WithReplicaAcks does not
// make CancelAll wait for replicas (Cancel does). Its errors are
// RetryAll's.
func (n *Node) CancelAll(ctx context.Context, sel Selection) (BulkResult, error) {
	return n.bulk(ctx, bulkCancel, sel)
}

// RunNowAll makes every pending task sel picks due at once by Redis's
// clock, as RunNow does each (asynq's Inspector.RunAllScheduledTasks).
// Only the tasks not due yet are picked (those due already run at once
// anyway): Matched counts those, and a task that fell due between the
// read and the change is matched, not changed (as is, in a selection by
// IDs, a task due already). Each keeps its Task.Due;
// a task of a paused kind keeps waiting for Resume at its new time.
// sel.State must be Pending. Its errors are RetryAll's.
func (n *Node) RunNowAll(ctx context.Context, sel Selection) (BulkResult, error) {
	return n.bulk(ctx, bulkRunNow, sel)
}

// describe names the selection in errors: "dead tasks of kind k".
func (sel Selection) describe() string {
	s := string(sel.State) + " tasks"
	if sel.State == "" {
		s = "tasks"
	}
	if sel.Kind != "" {
		s += " of kind " + sel.Kind
	}
	if len(sel.IDs) > 0 {
		s += " among " + strconv.Itoa(len(sel.IDs)) + " IDs"
	}
	return s
}

// checkSelection checks sel for the action a: its state, kind and IDs.
func (n *Node) checkSelection(ctx context.Context, what string, a bulkAction, sel Selection) error {
	if sel.State == "" {
		return invalid(what, "no state given: want pending, running, dead or done")
	}
	if err := validState(what, sel.State); err != nil {
		return err
	}
	allowed := false
	for _, s := range a.states {
		allowed = allowed || s == sel.State
	}
	if !allowed {
		names := make([]string, len(a.states))
		for i, s := range a.states {
			names[i] = string(s)
		}
		return &selectionStateError{what: what, why: fmt.Sprintf("the action needs %s tasks", strings.Join(names, " or "))}
	}
	for _, id := range sel.IDs {
		if id == "" {
			return invalid(what, "empty task ID")
		}
	}
	if sel.Kind != "" {
		if err := validKind(sel.Kind); err != nil {
			return failed(what, err)
		}
		return n.checkKnownKind(ctx, what, sel.Kind)
	}
	return nil
}

// selectionStateError is a bulk action on a state it forbids: "cluster:
// what: why", wrapping ErrWrongState and scheduler.ErrInvalidArgument.
type selectionStateError struct{ what, why string }

func (e *selectionStateError) Error() string { return "cluster: " + e.what + ": " + e.why }

func (e *selectionStateError) Unwrap() []error {
	return []error{ErrWrongState, scheduler.ErrInvalidArgument}
}

// toDriver is sel as the driver takes it.
func (sel Selection) toDriver() driver.Selection {
	return driver.Selection{State: sel.State, Kind: sel.Kind, IDs: sel.IDs, Before: sel.Before}
}

// bulk applies a to the tasks sel picks. A task CancelAll removed leaves
// this node's window and its run in flight here is canceled, as Cancel
// does; RunNowAll reads only the tasks after Redis's time as this node
// reckons it.
func (n *Node) bulk(ctx context.Context, a bulkAction, sel Selection) (BulkResult, error) {
	what := a.name + " all " + sel.describe()
	if err := n.checkSelection(ctx, what, a, sel); err != nil {
		return BulkResult{}, err
	}
	r := driver.BulkRequest{Action: a.action, Selection: sel.toDriver()}
	switch a.action {
	case driver.BulkRunNow:
		n.mu.Lock()
		r.Now = n.nowLocked()
		n.mu.Unlock()
	case driver.BulkCancel:
		r.Retention, r.Keep = n.cfg.retention, n.cfg.keepDone.driver()
		r.Canceled = func(id string) {
			n.unload(id)
			n.cancelRun(id)
		}
	}
	res, err := n.drv.Bulk(ctx, r)
	if err != nil {
		return res, n.failed(fmt.Sprintf("%s (%d of %d matched changed)", what, res.Changed, res.Matched), err)
	}
	return res, nil
}
