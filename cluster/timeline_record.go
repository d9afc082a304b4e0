package cluster

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Recording the timeline: each partition keeps one hash per minute (key
// "<partition>:tl:<minute>", the minute counted from the Unix epoch by the
// node's clock corrected to Redis's), so its keys share the partition's
// hash tag. The scripts that end a run (complete, fail, reap) count it in
// the same step as the change of state, so the timeline costs no round
// trip of its own: one HINCRBY on the run's lateness bucket (the number of
// runs is the buckets' sum), one more for a failed or lost run, and a
// PEXPIRE only when a field is new. The reapers of a partition (its owner
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

// timelineRec says where a script that ends a run counts it: the minute
// and how long its hash is kept (0: not counted).
type timelineRec struct {
	minute int64
	ttl    time.Duration
}

// on tells whether the run is counted.
func (r timelineRec) on() bool { return r.ttl > 0 }

// keys adds the minute's hash of p to the keys of a script that ends a run.
func (r timelineRec) keys(p partition, keys []string) []string {
	if !r.on() {
		return keys
	}
	return append(keys, r.timelineKey(p))
}

func (r timelineRec) timelineKey(p partition) string { return p.Timeline(r.minute) }

// ttlMillis is the hash's time to live, set when a count creates a field:
// the retention, counted from the minute's first count (so the oldest
// minute kept may have lost its first seconds).
func (r timelineRec) ttlMillis() int64 { return r.ttl.Milliseconds() }

// timelineNow is where a run ending now is counted.
func (n *Node) timelineNow() timelineRec {
	if n.cfg.timeline <= 0 {
		return timelineRec{}
	}
	n.mu.Lock()
	now := n.nowLocked()
	n.mu.Unlock()
	return timelineRec{minute: minuteOf(now), ttl: n.cfg.timeline}
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
// how many tasks are pending and how overdue the oldest is, into the
// current minute's hash, and reports the sums over the partitions it
// reaps as their owner to the observer: one pipeline reads the kinds, one
// the kinds' pending indexes, one writes.
func (n *Node) sampleTimeline(ctx context.Context) error {
	rec := n.timelineNow()
	report := n.cfg.observer.PendingSampled != nil
	if !rec.on() && !report {
		return nil
	}
	n.mu.Lock()
	var parts []partition
	var owned []bool
	for i, ok := range n.shares.reaped {
		if ok {
			parts = append(parts, n.st.parts[i])
			owned = append(owned, n.shares.reapOwned[i])
		}
	}
	now := n.nowLocked()
	n.mu.Unlock()
	if len(parts) == 0 {
		n.observePending(nil)
		return nil
	}
	pipe := n.st.rdb.Pipeline()
	kindCmds := make([]*redis.StringSliceCmd, len(parts))
	for i, p := range parts {
		kindCmds[i] = pipe.SMembers(ctx, p.Kinds())
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return err
	}
	type read struct {
		p      partition
		owned  bool
		kind   string
		count  *redis.IntCmd
		oldest *redis.ZSliceCmd
	}
	var reads []read
	pipe = n.st.rdb.Pipeline()
	for i, p := range parts {
		for _, kind := range kindCmds[i].Val() {
			ix := p.KindIndex(string(Pending), kind)
			reads = append(reads, read{p, owned[i], kind, pipe.ZCard(ctx, ix), pipe.ZRangeWithScores(ctx, ix, 0, 0)})
		}
	}
	if len(reads) == 0 {
		n.observePending(nil)
		return nil
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	sums := make(map[string]int) // by kind: index in samples
	var samples []PendingSample
	pipe = n.st.rdb.Pipeline()
	for _, r := range reads {
		var overdue int64
		if z := r.oldest.Val(); len(z) > 0 {
			overdue = max(now.UnixMicro()-int64(z[0].Score), 0)
		}
		if report && r.owned {
			i, ok := sums[r.kind]
			if !ok {
				i = len(samples)
				sums[r.kind] = i
				samples = append(samples, PendingSample{Kind: r.kind})
			}
			samples[i].Pending += int(r.count.Val())
			samples[i].OldestOverdue = max(samples[i].OldestOverdue, time.Duration(overdue)*time.Microsecond)
		}
		if rec.on() {
			key := rec.timelineKey(r.p)
			pipe.HSet(ctx, key, r.kind+"|p", r.count.Val(), r.kind+"|o", overdue)
			pipe.PExpire(ctx, key, time.Duration(rec.ttlMillis())*time.Millisecond)
		}
	}
	n.observePending(samples)
	if !rec.on() {
		return nil
	}
	_, err := pipe.Exec(ctx)
	return err
}
