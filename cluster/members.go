package cluster

import (
	"context"
	"slices"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// Membership: every started node renews, every quarter lease, its place
// among the claimers (expiring after a lease) with the kinds it handles,
// its record and its periodic declarations, in one call of the driver
// (driver.Coordination's Renew) that also returns the live claimers.
// From them each node computes its share of the partitions
// (ownership.go). A node that joins or leaves the claimers, or finds one
// expired, announces it (driver.NoticeMembership), on which every node
// renews at once, so that a share moves within a round trip of the change
// rather than a quarter lease.

// membershipLoop renews the membership every quarter lease, and at once
// when a membership notice announces a change.
func (n *Node) membershipLoop(ctx context.Context) {
	defer n.bg.Done()
	every(ctx, n.cfg.lease/4, n.renewKick, func() { n.refreshMembers(ctx) })
}

// refreshMembers renews this node's membership, its record and its
// periodic declarations, reads the live nodes and the kinds they handle,
// and, from the same reply, how far the node's clock is from Redis's. A
// stopping node renews its record only: it is no longer a claimer.
func (n *Node) refreshMembers(ctx context.Context) {
	n.mu.Lock()
	claimer := n.state == stateStarted
	rec := n.recordLocked()
	kinds := n.handledKindsLocked()
	now := n.nowLocked()
	ps := append([]*periodic(nil), n.periodics...)
	n.mu.Unlock()
	r := driver.Renewal{Node: n.name, TTL: n.cfg.lease, Claimer: claimer, Kinds: kinds, Record: rec}
	if claimer {
		r.Periodic = declarations(ps, now)
	}
	sent := n.cfg.clock.Now()
	m, err := n.drv.Renew(ctx, r)
	if err != nil {
		n.followFailover(err)
		if ctx.Err() == nil {
			n.cfg.logger.Warn("cluster: membership: renewal failed", "err", err)
		}
		return
	}
	got := n.cfg.clock.Now()
	if m.Changed {
		n.announceMembership(ctx)
	}
	liveKinds := make(map[string]bool)
	for _, l := range m.Live {
		for _, k := range l.Kinds {
			liveKinds[k] = true
		}
	}
	sh := computeShares(n.name, kinds, liveNodes(m.Live), n.drv.Partitions())
	n.mu.Lock()
	n.liveKinds, n.liveKindsKnown = liveKinds, true
	n.renewed = got
	if got.Sub(sent) < n.cfg.lease/10 {
		n.offset = n.offsetEst.add(sent, got, m.Now.UnixMicro())
	}
	moved := claimer && !sameShares(n.shares, sh)
	if claimer {
		n.shares = sh
	}
	n.mu.Unlock()
	if moved {
		n.sharesMoved(ctx)
		// The record just written shows the share before the move:
		// write it again soon.
		kickNow(n.renewKick)
	}
}

// handledKindsLocked are the kinds this node handles, sorted. n.mu must be
// held.
func (n *Node) handledKindsLocked() []string {
	kinds := make([]string, 0, len(n.handlers))
	for k := range n.handlers {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	return kinds
}

// now is the node's clock corrected by its last measured offset from
// Redis's clock: when the node thinks a task is due. Only a hint: the
// claim decides on Redis's clock itself. n.mu must be held.
func (n *Node) nowLocked() time.Time {
	return n.cfg.clock.Now().Add(n.offset)
}

// leave removes this node's membership and record, once it has stopped.
func (n *Node) leave() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if m, err := n.drv.Renew(ctx, driver.Renewal{Node: n.name}); err == nil && m.Changed {
		n.announceMembership(ctx)
	}
}

// liveNode is a live claimer as Renew read it.
type liveNode struct {
	id    string
	kinds []string
}

// liveNodes converts the live claimers the driver read.
func liveNodes(live []driver.LiveNode) []liveNode {
	out := make([]liveNode, len(live))
	for i, m := range live {
		out[i] = liveNode{id: m.Name, kinds: m.Kinds}
	}
	return out
}
