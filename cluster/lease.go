package cluster

import (
	"context"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// Leases: the heartbeat renews the leases of this node's runs, and the
// reaper (every node runs one) returns the tasks whose lease expired to
// pending. Lease expiries are stamped with the store's clock.

// heartbeatLoop renews the leases of the running tasks every quarter lease,
// and cancels the ctx of a run whose lease is lost.
func (n *Node) heartbeatLoop(ctx context.Context) {
	defer n.hb.Done()
	every(ctx, n.cfg.lease/4, nil, n.heartbeat)
}

// heartbeat is one round of heartbeatLoop. A run whose lease this node can
// no longer vouch for (its last renewal was sent a lease ago or more) is
// canceled as lost: another node may be running it.
func (n *Node) heartbeat() {
	now := time.Now()
	n.mu.Lock()
	held := make([]driver.Held, 0, len(n.running))
	runs := make([]*run, 0, len(n.running)) // runs[i] holds held[i]
	var expired []*run
	soonest := now.Add(n.cfg.lease)
	for id, r := range n.running {
		if !r.expires.After(now) {
			expired = append(expired, r)
			continue
		}
		held = append(held, driver.Held{ID: id, Kind: r.kind, Owner: r.token})
		runs = append(runs, r)
		soonest = minTime(soonest, r.expires)
	}
	n.mu.Unlock()
	for _, r := range expired {
		r.cancel(errLeaseLost)
	}
	if len(held) == 0 {
		return
	}
	d := max(min(soonest.Sub(now), n.cfg.lease/4), n.cfg.lease/20)
	sent := time.Now()
	lost, err := bounded(n, d, func(ctx context.Context) ([]string, error) {
		return n.drv.Extend(ctx, n.cfg.lease, held)
	})
	if err != nil {
		n.cfg.logger.Warn("cluster: heartbeat: renewal failed", "err", err)
		n.followFailover(err)
		return
	}
	isLost := make(map[string]bool, len(lost))
	for _, id := range lost {
		isLost[id] = true
	}
	var cancels []*run
	n.mu.Lock()
	for i, h := range held {
		r := n.running[h.ID]
		if r != runs[i] {
			continue
		}
		if isLost[h.ID] {
			cancels = append(cancels, r)
		} else {
			r.expires = sent.Add(n.cfg.lease)
		}
	}
	n.mu.Unlock()
	for _, r := range cancels {
		r.cancel(errLeaseLost)
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// reapBatch is how many expired leases one reap script handles.
const reapBatch = 1000

// reapLoop returns expired leases to pending in the partitions this node
// reaps (ownership.go) every quarter lease. Two reapers per partition; the
// driver's reap is atomic, so they never return a task twice.
func (n *Node) reapLoop(ctx context.Context) {
	defer n.bg.Done()
	every(ctx, n.cfg.lease/4, nil, func() {
		n.mu.Lock()
		var parts []int
		for i, ok := range n.shares.reaped {
			if ok {
				parts = append(parts, i)
			}
		}
		n.mu.Unlock()
		for len(parts) > 0 {
			full, err := n.reap(ctx, parts)
			if err != nil {
				if ctx.Err() == nil {
					n.cfg.logger.Warn("cluster: reap: failed", "err", err)
					n.followFailover(err)
				}
				return
			}
			if !full {
				return
			}
		}
	})
}

// reap returns the expired leases of the partitions to pending, up to
// reapBatch per partition, and reports the runs reaped to the observer,
// those of the partitions whose reap succeeded even when another's
// failed. full is true if some partition had reapBatch or more, so that
// the caller reaps again.
func (n *Node) reap(ctx context.Context, parts []int) (full bool, err error) {
	expired, full, err := n.drv.Expired(ctx, parts, reapBatch)
	if err != nil || len(expired) == 0 {
		return false, err
	}
	lost, err := n.drv.Reap(ctx, expired, n.cfg.maxLost, n.timelineNow())
	n.observeLost(lost)
	return full && err == nil, err
}
