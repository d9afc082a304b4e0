package cluster

import (
	"context"
	"slices"
	"time"
)

// Kinds no live node handles. Scheduling such a kind is accepted (a
// producer need not handle what it schedules), and its tasks wait pending
// until a node that handles the kind starts. So that this does not go
// unnoticed, every started node looks, at each sweep, for due tasks whose
// kind none of the live nodes handles (from their records' kinds), and
// logs a warning naming the kind and how many of its tasks are due and
// waiting: once per kind per WithUnhandledKindWarning interval on each
// node. A kind paused with Node.Pause is not loaded by the sweep and so is
// not reported. When some live node has no record (an older version), the
// kinds it handles are unknown and nothing is reported.

// WithUnhandledKindWarning sets how often at most a node logs a warning
// about one kind that has due tasks but no live node handling it (default
// 5 min). A zero or negative interval is an error wrapping
// scheduler.ErrInvalidArgument.
func WithUnhandledKindWarning(every time.Duration) Option {
	return optionFunc(func(c *config) { c.unhandledEvery = every })
}

// warnUnhandled logs the kinds that have due tasks in the partitions this
// node reaps (every partition has a reaper while a node lives) and that
// no live node handles, each at most once per WithUnhandledKindWarning. It
// reads the partitions' sets of kinds, then, for a kind to report, how
// many of its tasks are due and the oldest, in two pipelines.
func (n *Node) warnUnhandled(ctx context.Context) {
	n.mu.Lock()
	if !n.liveKindsKnown || n.state != stateStarted {
		n.mu.Unlock()
		return
	}
	now := n.nowLocked()
	var parts []int
	for i, ok := range n.shares.reaped {
		if ok {
			parts = append(parts, i)
		}
	}
	n.mu.Unlock()
	if len(parts) == 0 {
		return
	}
	stored, err := n.drv.StoredKinds(ctx, parts)
	if err != nil {
		if ctx.Err() == nil {
			n.cfg.logger.Warn("cluster: unhandled kinds: reading the kinds failed", "err", err)
		}
		return
	}
	clock := n.cfg.clock.Now()
	var found []string
	n.mu.Lock()
	for _, k := range stored {
		if n.liveKinds[k] {
			continue
		}
		if _, ok := n.handlers[k]; ok {
			continue
		}
		if last, ok := n.warned[k]; ok && clock.Sub(last) < n.cfg.unhandledEvery {
			continue
		}
		found = append(found, k)
	}
	n.mu.Unlock()
	slices.Sort(found)
	for _, k := range found {
		waiting, oldest, err := n.drv.DueOfKind(ctx, parts, k, now)
		if err != nil {
			if ctx.Err() == nil {
				n.cfg.logger.Warn("cluster: unhandled kinds: counting failed", "kind", k, "err", err)
			}
			continue
		}
		if waiting == 0 {
			continue
		}
		n.mu.Lock()
		n.warned[k] = clock
		n.mu.Unlock()
		n.cfg.logger.Warn("cluster: no live node handles this kind; its tasks wait pending until a node that handles it starts",
			"kind", k, "waiting", waiting, "oldest_due", oldest.UTC())
	}
}
