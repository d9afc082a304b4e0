package cluster

import (
	"context"
	"time"
)

// Minute is one minute of one kind's (or all kinds') history, as
// Node.Timeline reads it: what asynqmon charts from asynq's daily stats,
// by the minute. The JDK and River keep nothing like it.
type Minute struct {
	// Start is the minute's first instant.
	Start time.Time
	// Runs counts the runs that ended in the minute (succeeded, failed,
	// timed out or lost; a run handed back by Node.Stop did not end).
	// Failed counts the failed and timed-out ones, Lost the ones whose
	// lease expired.
	Runs, Failed, Lost int
	// LatenessP50 and LatenessP99 are quantiles of the runs' start
	// lateness (claim time minus the time they were due, by Redis's
	// clock), each the upper bound of its histogram bucket: within 25 %
	// above the true value, and exact at 0.
	LatenessP50, LatenessP99 time.Duration
	// Pending is how many tasks were pending at the minute's last sample
	// (each partition is sampled once a minute by a node that reaps it),
	// and OldestOverdue how long the oldest overdue one had been due
	// then: asynqmon's "latency".
	Pending       int
	OldestOverdue time.Duration
}

// minuteCounts is what Timeline adds up for one minute.
type minuteCounts struct {
	late                  [timelineBuckets]uint64
	failed, lost, pending int
	oldest                time.Duration
}

// Timeline returns the history of kind ("" for all kinds) by minute, from
// the minute holding since to the current one, oldest first, one entry
// per minute (empty minutes included). It reads at most the last
// WithTimelineRetention (or DefaultTimelineRetention when recording is
// off on this node), all partitions in one pipeline. Minutes are counted
// by the node's clock corrected to Redis's.
func (n *Node) Timeline(ctx context.Context, kind string, since time.Time) ([]Minute, error) {
	n.mu.Lock()
	now := n.nowLocked()
	n.mu.Unlock()
	keep := n.cfg.timeline
	if keep <= 0 {
		keep = DefaultTimelineRetention
	}
	first, last := minuteOf(since), minuteOf(now)
	if oldest := minuteOf(now.Add(-keep)); first < oldest {
		first = oldest
	}
	if first > last {
		return nil, nil
	}
	got, err := n.drv.ReadTimeline(ctx, kind, first, last)
	if err != nil {
		return nil, failed("Timeline", err)
	}
	out := make([]Minute, len(got))
	for i, mc := range got {
		var c minuteCounts
		for b, v := range mc.Late {
			if b < timelineBuckets {
				c.late[b] = v
			}
		}
		c.failed, c.lost, c.pending, c.oldest = mc.Failed, mc.Lost, mc.Pending, mc.Oldest
		out[i] = c.minute(time.Unix(mc.Minute*60, 0))
	}
	return out, nil
}

// minute is the Minute starting at start these counts make.
func (c *minuteCounts) minute(start time.Time) Minute {
	var runs uint64
	for _, v := range c.late {
		runs += v
	}
	return Minute{
		Start: start, Runs: int(runs), Failed: c.failed, Lost: c.lost,
		LatenessP50: latenessQuantile(&c.late, 0.50), LatenessP99: latenessQuantile(&c.late, 0.99),
		Pending: c.pending, OldestOverdue: c.oldest,
	}
}

// latenessBucket returns the timeline's bucket of a lateness of us
// microseconds: 0 for none, else four buckets per power of two (the
// scripts' late_bucket does the same in Lua).
func latenessBucket(us int64) int {
	if us < 1 {
		return 0
	}
	e := 0
	for int64(1)<<(e+1) <= us {
		e++
	}
	var sub int
	if e >= 2 {
		sub = int(us>>(e-2)) & 3
	} else {
		sub = int(us<<(2-e)) & 3
	}
	return min(1+e*4+sub, timelineBuckets-1)
}

// latenessUpper returns the upper bound of bucket b, the value a quantile
// falling in it is reported as: the bucket holds [(4+sub)·2^e/4,
// (5+sub)·2^e/4) µs.
func latenessUpper(b int) time.Duration {
	if b == 0 {
		return 0
	}
	e, sub := (b-1)/4, (b-1)%4
	return time.Duration((5+sub)<<e) * time.Microsecond / 4
}

// latenessQuantile returns the upper bound of the bucket holding quantile
// q of counts, 0 when there are none.
func latenessQuantile(counts *[timelineBuckets]uint64, q float64) time.Duration {
	var total uint64
	for _, c := range counts {
		total += c
	}
	if total == 0 {
		return 0
	}
	rank := uint64(q*float64(total-1)) + 1
	var seen uint64
	for b, c := range counts {
		seen += c
		if seen >= rank {
			return latenessUpper(b)
		}
	}
	return latenessUpper(timelineBuckets - 1)
}
