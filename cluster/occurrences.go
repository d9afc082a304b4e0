package cluster

import (
	"context"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// Storing the occurrences of periodic tasks. Each sweep, every node stores
// the occurrences of its periodic tasks that fall within the window,
// starting from the task's cursor (driver.Coordination's Cursors and
// WriteCursors), kept in the partition of its name (where its occurrences
// live too), holding the latest occurrence any node stored and the task's
// misfire policy and overlap setting as last declared (which
// Node.PeriodicTasks reads). So the occurrences that fell
// while every node was down are known when one starts again: under
// MisfireCoalesce the sweep stores the latest of them (the one run that
// stands for all), under MisfireRunEach each of them, under MisfireSkip
// none. The claim decides again by Redis's clock (misfire.go); the sweep
// only makes sure that what may run is stored. The cursor never expires.

// periodicPartition is the partition of periodic task name among n
// (driver.PeriodicPartition).
func periodicPartition(name string, n int) int { return driver.PeriodicPartition(name, n) }

// createOccurrences stores the occurrences of every periodic task that
// may run within the window and that this node has not stored yet.
func (n *Node) createOccurrences(ctx context.Context) {
	n.mu.Lock()
	ps := append([]*periodic(nil), n.periodics...)
	now := n.nowLocked()
	n.mu.Unlock()
	if len(ps) == 0 {
		return
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.name
	}
	cursors, err := n.drv.Cursors(ctx, names)
	if err != nil {
		if ctx.Err() == nil {
			n.cfg.logger.Warn("cluster: periodic: reading the cursors failed", "err", err)
		}
		return
	}
	written := make([]driver.Cursor, len(ps))
	for i, p := range ps {
		written[i] = driver.Cursor{Name: p.name, Stored: n.storeOccurrences(ctx, p, cursors[i], now),
			Misfire: p.cfg.misfire.lua(), Overlap: p.cfg.overlap}
	}
	if err := n.drv.WriteCursors(ctx, written); err != nil && ctx.Err() == nil {
		n.cfg.logger.Warn("cluster: periodic: writing the cursors failed", "err", err)
	}
}

// storeOccurrences stores the occurrences of p from the later of its
// cursor and the last one this node dealt with (from now if neither is
// known) to the end of the window, by p's misfire policy for those already
// due, and returns the latest it stored.
func (n *Node) storeOccurrences(ctx context.Context, p *periodic, cursor, now time.Time) (latest time.Time) {
	from := p.last
	if cursor.After(from) {
		from = cursor
	}
	if from.IsZero() {
		from = now
	}
	until := now.Add(n.cfg.window)
	due := p.next(from)
	count := 0
	for range maxTriggerSteps {
		if due.IsZero() || due.After(until) || count >= maxOccurrencesPerSweep {
			break
		}
		next := p.next(due)
		if !due.After(now) && !n.storesMissed(p, next, now) {
			p.last, due = due, next
			continue
		}
		sc := scheduleConfig{id: OccurrenceID(p.name, due), maxRetries: n.cfg.maxRetries}
		if _, err := n.store(ctx, periodicKind(p.name), nil, due, sc); err != nil {
			if ctx.Err() == nil {
				n.cfg.logger.Warn("cluster: periodic: storing an occurrence failed", "name", p.name, "due", due, "err", err)
			}
			break // tried again on the next sweep
		}
		p.last, latest = due, due
		count++
		due = next
	}
	return latest
}

// storesMissed reports whether the sweep stores an occurrence of p that is
// due already, whose next occurrence is next: every one under
// MisfireRunEach, the latest under MisfireCoalesce, none under
// MisfireSkip.
func (n *Node) storesMissed(p *periodic, next, now time.Time) bool {
	switch p.cfg.misfire {
	case MisfireRunEach:
		return true
	case MisfireCoalesce:
		return next.IsZero() || next.After(now)
	}
	return false
}
