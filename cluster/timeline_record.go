package cluster

import (
	"context"
	"slices"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// Recording the timeline: each partition keeps one hash per minute (key
// "<partition>:tl:<minute>" in the Redis driver, the minute counted from
// the Unix epoch by the node's clock corrected to the store's), so its
// keys share the partition's hash tag. The driver's steps that end a run
// (Complete, Fail, Reap) count it in the same step as the change of state
// (driver.Timeline says where), so the timeline costs no round trip of its
// own: one HINCRBY on the run's lateness bucket (the number of runs is the
// buckets' sum), one more for a failed or lost run, and a PEXPIRE only
// when a field is new. The reapers of a partition (its owner
// and backup, ownership.go) sample its pending depth and oldest overdue
// task at their start and once a minute; the owner reports its samples to
// the observer too (Observer.PendingSampled). A node of an
// earlier version simply counts nothing; the hashes are only read.
//
// Fields, per kind: "<kind>|<bucket>" runs by start lateness bucket (see
// latenessBucket), "<kind>|f" failed or timed-out runs, "<kind>|l" lost
// runs, "<kind>|p" pending tasks and "<kind>|o" the age in µs of the
// oldest overdue one, as last sampled in the minute. A run handed back by
// Node.Stop is not counted: it did not end.

// timelineBuckets counts the lateness histogram's buckets: 0, then four
// per power of two of microseconds from 1 µs up to about 8 s; a lateness
// beyond that counts in the last bucket (as the root package's RunHistory).
const timelineBuckets = 1 + 24*4

// timelineSamplePeriod is how often a node samples the pending depth of
// the partitions it reaps.
const timelineSamplePeriod = time.Minute

// minuteOf is the minute (since the Unix epoch) t falls in.
func minuteOf(t time.Time) int64 {
	return t.Unix() / 60
}

// timelineNow is where a run ending now is counted.
func (n *Node) timelineNow() driver.Timeline {
	if n.cfg.timeline <= 0 {
		return driver.Timeline{}
	}
	n.mu.Lock()
	now := n.nowLocked()
	n.mu.Unlock()
	return driver.Timeline{Minute: minuteOf(now), TTL: n.cfg.timeline}
}

// timelineLoop samples the pending depth of the partitions this node
// reaps (ownership.go) at its start and once a minute after, while
// recording is on or the observer wants the samples.
func (n *Node) timelineLoop(ctx context.Context) {
	defer n.bg.Done()
	if n.cfg.timeline <= 0 && n.cfg.observer.PendingSampled == nil {
		return
	}
	sample := func() {
		if err := n.sampleTimeline(ctx); err != nil && ctx.Err() == nil {
			n.cfg.logger.Warn("cluster: timeline: sampling the pending tasks failed", "err", err)
		}
	}
	sample()
	every(ctx, timelineSamplePeriod, nil, sample)
}

// sampleTimeline writes, for each kind of each partition this node reaps,
// how many tasks are pending and how overdue the oldest is (by the node's
// clock corrected to the store's), into the current minute of the
// timeline, and reports the sums over the partitions it reaps as their
// owner to the observer.
func (n *Node) sampleTimeline(ctx context.Context) error {
	rec := n.timelineNow()
	report := n.cfg.observer.PendingSampled != nil
	if rec.TTL <= 0 && !report {
		return nil
	}
	n.mu.Lock()
	var parts []int
	for i, ok := range n.shares.reaped {
		if ok {
			parts = append(parts, i)
		}
	}
	owned := slices.Clone(n.shares.reapOwned)
	now := n.nowLocked()
	n.mu.Unlock()
	depths, err := n.drv.PendingDepths(ctx, parts)
	if err != nil {
		return err
	}
	sums := make(map[string]int) // by kind: index in samples
	var samples []PendingSample
	for i, d := range depths {
		if !d.Earliest.IsZero() {
			depths[i].Overdue = max(now.Sub(d.Earliest), 0).Truncate(time.Microsecond)
		}
		if report && owned[d.Partition] {
			j, ok := sums[d.Kind]
			if !ok {
				j = len(samples)
				sums[d.Kind] = j
				samples = append(samples, PendingSample{Kind: d.Kind})
			}
			samples[j].Pending += d.Pending
			samples[j].OldestOverdue = max(samples[j].OldestOverdue, depths[i].Overdue)
		}
	}
	n.observePending(samples)
	return n.drv.RecordPendingDepths(ctx, depths, rec)
}
