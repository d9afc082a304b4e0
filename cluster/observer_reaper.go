package cluster

import "time"

// What the reaping node observes for the whole cluster: the pending depth
// of the partitions it owns as a reaper, and the runs lost with a lease
// (Observer.PendingSampled, Observer.RunLost).

// PendingSample is the pending depth of one kind, summed over the
// partitions a node reaps as their owner, as Observer.PendingSampled
// reports it.
type PendingSample struct {
	// Kind is the tasks' kind.
	Kind string
	// Pending counts the kind's pending tasks: waiting for their due
	// time or for a claim, retries included.
	Pending int
	// OldestOverdue is how long ago the most overdue of them was due, by
	// the node's clock corrected to Redis's; 0 if none is overdue.
	OldestOverdue time.Duration
}

// LostRun is a run whose lease expired, as Observer.RunLost reports it.
type LostRun struct {
	// ID is the task's ID.
	ID string
	// Kind is the task's kind.
	Kind string
	// Dead is true if the run was past the limit of lost runs
	// (WithMaxLostRuns) and the task is dead; otherwise it is pending
	// again, due now.
	Dead bool
}

// observePending reports the samples of the partitions owned as a reaper.
func (n *Node) observePending(samples []PendingSample) {
	if n.cfg.observer.PendingSampled != nil {
		n.cfg.observer.PendingSampled(samples)
	}
}

// observeLost reports the runs the reaper found lost.
func (n *Node) observeLost(lost []LostRun) {
	if n.cfg.observer.RunLost == nil {
		return
	}
	for _, l := range lost {
		n.cfg.observer.RunLost(l)
	}
}
