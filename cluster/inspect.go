package cluster

import (
	"context"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// Inspecting the store: Node.Get, Node.Counts and Node.CountsByKind,
// read-only.

// State is where a stored task is.
type State = driver.State

const (
	// Pending tasks wait for their due time (or their retry), or for
	// their kind to be resumed (Node.Pause).
	Pending = driver.Pending
	// Running tasks are claimed by a node and held under a lease.
	Running = driver.Running
	// Dead tasks failed past their retry limit, or were lost to faults
	// past the limit of lost runs; they stay until deleted, retried,
	// purged or canceled.
	Dead = driver.Dead
	// Done records are the tasks that ran to completion or were
	// canceled, kept only with WithKeepDone.
	Done = driver.Done
)

// validState checks that state is one of the four, for what.
func validState(what string, state State) error {
	switch state {
	case Pending, Running, Dead, Done:
		return nil
	}
	return invalid(what, "unknown state %q: want pending, running, dead or done", state)
}

// Info describes a stored task (asynq's TaskInfo, River's JobRow). Its
// Task's Attempt and Lost are the two counts: failed runs, which use up
// MaxRetries, and runs lost to faults, which use up the node's
// WithMaxLostRuns.
type Info struct {
	Task
	State State
	// MaxRetries is the task's retry limit.
	MaxRetries int
	// LastError is the error of the last failed or lost run, or "". For
	// a panic it holds the stack too.
	LastError string
	// Owner is the name of the node running the task (Node.Name), the
	// holder of its lease; "" unless Running.
	Owner string
	// Started is when the run in flight was claimed, by Redis's clock;
	// zero unless Running.
	Started time.Time
	// NextRun is when a pending task runs next, by Redis's clock: its due
	// time on a first run, the retry's time (Redis's time of the failure
	// plus the backoff) while it waits to be retried, the time it was moved
	// to by RunNow or Reschedule, and its time before a hand-back. It is
	// the task's score in the pending set, which orders Node.List of
	// pending tasks and its cursor; a task of a paused kind keeps it and
	// waits for Node.Resume. Zero unless Pending. Task.Due keeps the time
	// the task was scheduled for (asynq's TaskInfo.NextProcessAt, River's
	// JobRow.ScheduledAt).
	NextRun time.Time
	// Finished is when a done record's task completed or was canceled;
	// zero unless Done.
	Finished time.Time
	// Canceled is true for a done record of a task that Node.Cancel (or
	// CancelAll) removed rather than one that ran to completion: its last
	// run record says OutcomeCanceled. False unless Done.
	Canceled bool
	// Retrying is true for a pending task that has run and failed or been
	// lost at least once since it was stored or last retried by hand:
	// asynq's "retry" state, River's "retryable".
	Retrying bool
	// Paused is true if the task's kind is paused (Node.Pause): a pending
	// task waits for Node.Resume.
	Paused bool
	// History holds the task's last runs, oldest first (at most
	// MaxHistory).
	History []RunRecord
}

// Get reads the stored task id, with its run history; ok is false if there
// is none (never stored, canceled, or run to completion without
// WithKeepDone). It is asynq's Inspector.GetTaskInfo and River's JobGet.
// It is one script on the task's partition, which needs no kind index,
// and reads Info.NextRun from the pending set in the same step; a pending
// task of a paused kind, which waits in its kind's index only, costs a
// second read there.
func (n *Node) Get(ctx context.Context, id string) (info Info, ok bool, err error) {
	ti, ok, err := n.drv.Get(ctx, id)
	if err != nil {
		return Info{}, false, n.failed("get "+id, err)
	}
	if !ok {
		return Info{}, false, nil
	}
	return infoOf(ti), true, nil
}

// infoOf is the Info of a task the driver read.
func infoOf(ti driver.TaskInfo) Info {
	info := Info{
		Task:  Task{ID: ti.ID, Kind: ti.Kind, Payload: ti.Payload, Due: ti.Due, Attempt: ti.Attempt, Lost: ti.Lost},
		State: ti.State, MaxRetries: ti.MaxRetries, LastError: ti.LastError,
		NextRun: ti.NextRun, Finished: ti.Finished, Paused: ti.Paused, History: ti.History,
	}
	if ti.State == Running && ti.Owner != "" {
		info.Owner = ownerNode(ti.Owner)
		info.Started = ti.Started
	}
	if h := info.History; ti.State == Done && len(h) > 0 && h[len(h)-1].Outcome == OutcomeCanceled {
		info.Canceled = true
	}
	info.Retrying = ti.State == Pending && (info.Attempt > 0 || info.Lost > 0)
	return info
}

// Counts is how many tasks the store holds in each state. A pending task
// of a paused kind counts as pending.
type Counts = driver.Counts

// KindCounts is how many tasks of one kind the store holds in each state,
// and whether the kind is paused.
type KindCounts = driver.KindCounts

// Counts counts the stored tasks by state, for every node of the prefix
// (asynq's Inspector.GetQueueInfo): each partition at one instant, all of
// them in one round trip. It costs O(P) in Redis for P partitions, plus
// one step per partition and paused kind.
func (n *Node) Counts(ctx context.Context) (Counts, error) {
	c, err := n.drv.Counts(ctx)
	if err != nil {
		return Counts{}, n.failed("counts", err)
	}
	return c, nil
}

// CountsByKind counts the stored tasks by state, in total and for each
// kind that has stored tasks or is paused (in any partition), sorted by
// kind. It reads the kinds of every partition in one round trip, then
// counts each partition at one instant, all of them in a second round trip
// of one script per partition that makes O(kinds) steps; the kinds read
// first may miss one stored in between, whose tasks the totals count. A
// kind left with no task in a partition and not paused there is dropped
// from the partition's set of kinds, and a kind with no task left at all
// and paused nowhere from the result.
func (n *Node) CountsByKind(ctx context.Context) (Counts, []KindCounts, error) {
	total, kinds, err := n.drv.CountsByKind(ctx)
	if err != nil {
		return Counts{}, nil, n.failed("counts by kind", err)
	}
	return total, kinds, nil
}
