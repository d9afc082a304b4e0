package cluster

import "context"

// Canceling a stored task: Node.Cancel.

// Cancellation is what Node.Cancel did.
type Cancellation struct {
	// Removed is true if a task was stored under the ID and is now
	// removed: no node claims it again.
	Removed bool
	// WasRunning is true if a node held a claim on it (a run was in
	// flight) when it was removed. That run's ctx is canceled within a
	// third of the lease, if its node can reach Redis, and its outcome is
	// dropped. Its handler is not called if the node heard of the cancel
	// first; it may still start while the notice is in flight.
	WasRunning bool
}

// Cancel removes a stored task, in whatever state (River's JobCancel,
// asynq's Inspector.DeleteTask, Quartz's deleteJob), and says whether there
// was one and whether a run of it was in flight. Once Cancel has returned
// with Removed true, no node claims the task again. A run in flight has its
// ctx canceled with a lost-lease cause: at once on this node, through the
// store's channel on another, and at that node's next renewal (every
// quarter lease) if the message is lost. The ID is free again afterwards,
// except for a periodic occurrence, which is remembered for the retention
// so that no node stores it again: canceling an occurrence skips it. With
// WithKeepDone the canceled task stays as a Done record, its last run
// record saying Canceled, and a done record is removed. An empty ID is an error wrapping scheduler.ErrInvalidArgument; a Redis
// error is returned wrapped, and the task may or may not be removed then.
func (n *Node) Cancel(ctx context.Context, id string) (Cancellation, error) {
	if id == "" {
		return Cancellation{}, invalid("cancel", "empty task ID")
	}
	removed, wasRunning, err := n.drv.Cancel(ctx, id, n.knownKind(id), n.cfg.retention, n.cfg.keepDone.driver())
	if err != nil {
		n.followFailover(err)
		return Cancellation{}, n.failed("cancel "+id, err)
	}
	n.unload(id)
	n.cancelRun(id)
	return Cancellation{Removed: removed, WasRunning: wasRunning}, nil
}

// knownKind is the kind of task id if this node has it in its window or
// runs it, else "" (the driver finds the stored kind).
func (n *Node) knownKind(id string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if e := n.loaded[id]; e != nil {
		return e.kind
	}
	if r := n.running[id]; r != nil {
		return r.kind
	}
	return ""
}
