package cluster

import (
	"context"
	"slices"
	"strconv"
	"strings"
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

// unhandledKind is one kind to warn about, as a sweep found it.
type unhandledKind struct {
	kind   string
	oldest int64 // µs: the due time of its oldest due task in the sweep
}

// warnUnhandled logs the kinds of the due tasks among tasks (a sweep's, in
// due order) that no live node handles, each at most once per
// WithUnhandledKindWarning.
func (n *Node) warnUnhandled(ctx context.Context, tasks []pendingTask) {
	n.mu.Lock()
	if !n.liveKindsKnown || n.state != stateStarted {
		n.mu.Unlock()
		return
	}
	now := n.nowLocked().UnixMicro()
	clock := n.cfg.clock.Now()
	var found []unhandledKind
	seen := make(map[string]bool)
	for _, t := range tasks {
		if t.due > now {
			break
		}
		if t.kind == "" || seen[t.kind] || n.liveKinds[t.kind] {
			continue
		}
		if _, ok := n.handlers[t.kind]; ok {
			continue
		}
		seen[t.kind] = true
		if last, ok := n.warned[t.kind]; ok && clock.Sub(last) < n.cfg.unhandledEvery {
			continue
		}
		n.warned[t.kind] = clock
		found = append(found, unhandledKind{kind: t.kind, oldest: t.due})
	}
	n.mu.Unlock()
	slices.SortFunc(found, func(a, b unhandledKind) int { return strings.Compare(a.kind, b.kind) })
	for _, u := range found {
		waiting, err := n.st.rdb.ZCount(ctx, n.st.kindIndex(Pending, u.kind), "-inf", strconv.FormatInt(now, 10)).Result()
		if err != nil {
			if ctx.Err() == nil {
				n.cfg.logger.Warn("cluster: unhandled kinds: counting failed", "kind", u.kind, "err", err)
			}
			continue
		}
		n.cfg.logger.Warn("cluster: no live node handles this kind; its tasks wait pending until a node that handles it starts",
			"kind", u.kind, "waiting", waiting, "oldest_due", time.UnixMicro(u.oldest).UTC())
	}
}
