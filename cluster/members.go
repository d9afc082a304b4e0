package cluster

import (
	"context"
	"fmt"
	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
	"slices"
	"strings"
	"time"
)

// Membership: every started node renews, every quarter lease, its place
// among the claimers (prefix:nodes, expiring after a lease) with the kinds
// it handles (prefix:nodekinds), its record and its periodic declarations,
// in one script that also returns the live claimers. From them each node
// computes its share of the partitions (ownership.go). A node that joins
// or leaves the claimers, or finds one expired, announces it on the
// membership channel, on which every node renews at once, so that a share
// moves within a round trip of the change rather than a quarter lease.

// membershipLoop renews the membership every quarter lease, and at once
// when the membership channel announces a change.
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
	var decls []periodicDecl
	if claimer {
		decls = declarations(ps, now)
	}
	sent := n.cfg.clock.Now()
	live, redisNow, changed, err := n.st.renew(ctx, n.name, n.cfg.lease, claimer, kinds, rec, decls)
	if err != nil {
		n.followFailover(err)
		if ctx.Err() == nil {
			n.cfg.logger.Warn("cluster: membership: renewal failed", "err", err)
		}
		return
	}
	got := n.cfg.clock.Now()
	if changed {
		n.announceMembership(ctx)
	}
	liveKinds := make(map[string]bool)
	for _, m := range live {
		for _, k := range m.kinds {
			liveKinds[k] = true
		}
	}
	sh := computeShares(n.name, kinds, live, len(n.st.parts))
	n.mu.Lock()
	n.liveKinds, n.liveKindsKnown = liveKinds, true
	n.renewed = got
	if got.Sub(sent) < n.cfg.lease/10 {
		n.offset = n.offsetEst.add(sent, got, redisNow)
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
	if _, _, left, err := n.st.renew(ctx, n.name, 0, false, nil, nil, nil); err == nil && left {
		n.announceMembership(ctx)
	}
}

// liveNode is a live claimer as renew read it.
type liveNode struct {
	id    string
	kinds []string
}

// renew renews id's membership (as a claimer of kinds, or not) for ttl,
// with its record rec (field, value pairs) and periodic declarations, and
// returns the live claimers, Redis's time, and whether this node joined or
// left the claimers or found one gone; a zero ttl removes the membership
// and the record.
func (s store) renew(ctx context.Context, id string, ttl time.Duration, claimer bool, kinds []string, rec []any, decls []periodicDecl) (live []liveNode, redisNow int64, changed bool, err error) {
	c := "0"
	if claimer {
		c = "1"
	}
	keys := make([]string, 0, 5+len(decls))
	keys = append(keys, s.nodes(), s.membersIndex(), s.periodicIndex(), s.nodeKinds(), s.memberPrefix()+id)
	args := make([]any, 0, 5+len(rec)+3*len(decls))
	args = append(args, id, ttl.Microseconds(), c, strings.Join(kinds, " "), len(rec))
	args = append(args, rec...)
	for _, d := range decls {
		keys = append(keys, s.periodicPrefix()+d.name)
		args = append(args, d.name, d.trigger, d.next)
	}
	vals, err := redisdriver.MembersScript.Run(ctx, s.rdb, keys, args...).StringSlice()
	if err != nil {
		return nil, 0, false, err
	}
	if len(vals) < 2 {
		return nil, 0, false, fmt.Errorf("cluster: membership: short reply")
	}
	if redisNow, err = parseMicros(vals[0]); err != nil {
		return nil, 0, false, err
	}
	for i := 2; i+1 < len(vals); i += 2 {
		live = append(live, liveNode{id: vals[i], kinds: strings.Fields(vals[i+1])})
	}
	return live, redisNow, vals[1] == "1", nil
}

// nodeKinds is the hash of the kinds each live claimer handles, by node.
func (s store) nodeKinds() string { return s.keys().NodeKinds() }
