package cluster

import (
	"context"
	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
	"time"
)

// The node's side of the periodic rules (misfire.go): the claim of an
// occurrence carries its task's settings and the trigger's next time
// after it, an occurrence that must wait goes back into the window, and
// the end of a run wakes the occurrences waiting for it.

// claimTask claims the task of entry e: an occurrence of a periodic task
// this node declares with redisdriver.PeriodicClaimScript, any other task with
// redisdriver.ClaimScript.
func (n *Node) claimTask(ctx context.Context, e *entry, token string) (claimResult, error) {
	p := n.periodicOf(e.kind)
	var due time.Time
	ok := false
	if p != nil {
		_, due, ok = parseOccurrenceID(e.id)
	}
	if !ok {
		return n.st.claim(ctx, e.id, e.kind, e.due, n.cfg.lease, token)
	}
	heard := p.ended.Load()
	next := p.next(due)
	res, err := n.st.runClaim(ctx, redisdriver.PeriodicClaimScript, e.id, e.kind, e.due, n.cfg.lease, token,
		p.cfg.misfire.lua(), boolText(p.cfg.overlap), microsText(next), threshold(due, next).Microseconds(),
		n.cfg.retention.Milliseconds(), due.UnixMicro())
	if err == nil && res.outcome == claimBlocked && p.ended.Load() != heard {
		res.wait = 0 // a run ended meanwhile: try again at once
	}
	return res, err
}

// blockedWait is how long an occurrence that waits tries again after: when
// the lease of the run it waits for expires (until, µs by Redis's clock,
// now), but at least a twentieth and at most a quarter of a lease, and a
// quarter lease when it waits for an earlier occurrence (until 0). The
// "ended" notice of the run it waits for wakes it sooner.
func blockedWait(until, now int64, lease time.Duration) time.Duration {
	if until == 0 {
		return lease / 4
	}
	return min(max(time.Duration(until-now)*time.Microsecond, lease/20), lease/4)
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
