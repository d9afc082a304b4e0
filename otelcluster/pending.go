package otelcluster

import (
	"context"
	"sync/atomic"

	"go.opentelemetry.io/otel/metric"

	"github.com/go-stpe/scheduler/cluster"
)

// The cluster-wide view a node reports as a reaper: the pending depth of
// the partitions it reaps as their owner (cluster.Observer.PendingSampled),
// and the runs its reaper found lost (cluster.Observer.RunLost), which the
// node that ran them, dead or alive, does not count.

// pendingPoint is the last sample of one reported kind: several kinds
// beyond WithMaxKinds share "other", which sums them.
type pendingPoint struct {
	label   *kindLabel
	pending int64
	overdue float64 // seconds: the oldest overdue task's age, the largest of the kinds'
}

// pendingSamples holds the last sample, replaced whole at each sample so
// that a kind no longer pending anywhere the node samples drops out.
type pendingSamples struct {
	last atomic.Pointer[[]pendingPoint]
}

// observePending is the PendingSampled hook.
func (i *Instrumentation) observePending(samples []cluster.PendingSample) {
	if i.stopped.Load() {
		return
	}
	points := make([]pendingPoint, 0, len(samples))
	at := make(map[*kindLabel]int, len(samples))
	for _, s := range samples {
		l := i.kinds.label(s.Kind)
		j, ok := at[l]
		if !ok {
			j = len(points)
			at[l] = j
			points = append(points, pendingPoint{label: l})
		}
		points[j].pending += int64(s.Pending)
		points[j].overdue = max(points[j].overdue, s.OldestOverdue.Seconds())
	}
	i.pending.last.Store(&points)
}

// observePendingGauges is the callback of the pending gauges: the last
// sample, nothing before the first.
func (i *Instrumentation) observePendingGauges(_ context.Context, o metric.Observer) error {
	last := i.pending.last.Load()
	if last == nil {
		return nil
	}
	for _, p := range *last {
		o.ObserveInt64(i.pendingTasks, p.pending, p.label.kind.observe...)
		o.ObserveFloat64(i.oldestOverdue, p.overdue, p.label.kind.observe...)
	}
	return nil
}

// observeLost is the RunLost hook: a lost run counts in the runs counter
// with outcome "lost" on the node whose reaper found it, and a task it
// made dead in the dead counter.
func (i *Instrumentation) observeLost(l cluster.LostRun) {
	if i.stopped.Load() {
		return
	}
	ctx := context.Background()
	kl := i.kinds.label(l.Kind)
	i.runs.Add(ctx, 1, kl.outcome(cluster.OutcomeLost).add...)
	if l.Dead {
		i.dead.Add(ctx, 1, kl.kind.add...)
	}
}
