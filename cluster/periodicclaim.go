package cluster

import (
	"context"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// The node's side of the periodic rules (misfire.go): the claim of an
// occurrence carries its task's settings and the trigger's next time
// after it, an occurrence that must wait goes back into the window, and
// the end of a run wakes the occurrences waiting for it.

// claimTask claims the task of entry e: an occurrence of a periodic task
// this node declares with the driver's ClaimOccurrence, given its task's
// rules, any other task with Claim.
func (n *Node) claimTask(ctx context.Context, e *entry, token string) (claimResult, error) {
	p := n.periodicOf(e.kind)
	var due time.Time
	ok := false
	if p != nil {
		_, due, ok = parseOccurrenceID(e.id)
	}
	if !ok {
		c, err := n.drv.Claim(ctx, e.id, e.kind, time.UnixMicro(e.due), n.cfg.lease, token)
		return claimed(c, n.cfg.lease), err
	}
	heard := p.ended.Load()
	next := p.next(due)
	c, err := n.drv.ClaimOccurrence(ctx, e.id, e.kind, time.UnixMicro(e.due), n.cfg.lease, token, driver.Occurrence{
		Misfire: p.cfg.misfire.lua(), Overlap: p.cfg.overlap, Due: due, Next: next,
		Threshold: threshold(due, next), Retention: n.cfg.retention})
	res := claimed(c, n.cfg.lease)
	if err == nil && res.outcome == claimBlocked && p.ended.Load() != heard {
		res.wait = 0 // a run ended meanwhile: try again at once
	}
	return res, err
}

// blockedWait is how long an occurrence that waits tries again after: when
// the lease of the run it waits for expires (until, by the store's clock,
// now), but at least a twentieth and at most a quarter of a lease, and a
// quarter lease when it waits for an earlier occurrence (until zero). The
// "ended" notice of the run it waits for wakes it sooner.
func blockedWait(until, now time.Time, lease time.Duration) time.Duration {
	if until.IsZero() {
		return lease / 4
	}
	return min(max(until.Sub(now), lease/20), lease/4)
}

// wakeBlocked tries again at once to claim the due occurrences of kind in
// the window: a run of one ended, so one of them may start now.
func (n *Node) wakeBlocked(kind string) {
	p := n.periodicOf(kind)
	if p == nil {
		return
	}
	p.ended.Add(1)
	n.mu.Lock()
	now := n.nowLocked().UnixMicro()
	var wake []*entry
	for _, e := range n.loaded {
		if e.kind == kind && e.due <= now && !e.ready {
			wake = append(wake, e)
		}
	}
	n.mu.Unlock()
	for _, e := range wake {
		n.enter(e.id, e.kind, e.due, 0, e.backup)
	}
}
