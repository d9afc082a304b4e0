package cluster

import (
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
)

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

// LostRun is a run whose lease expired, as Observer.RunLost reports it:
// the driver's record of a run the reaper took back (driver.LostRun).
type LostRun = driver.LostRun

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
