package cluster

import (
	"context"
	"hash/fnv"
	"slices"
	"time"
)

// Preferred claimers. Every node in whose window a task falls could claim
// it, and the atomic claim gives it to one; but if all of them tried at the
// due time, each task would cost a claim per node. So the nodes register in
// prefix:nodes (renewed every quarter lease, expiring after a lease), and
// rendezvous hashing of the task ID over the live nodes names one preferred
// node per task. That node claims at the due time; the others wait
// WithBackupDelay longer, and drop the task from their windows as soon as
// the claim's "claimed" notice arrives. If the preferred node is busy (no
// free worker), gone, or does not handle the kind, a backup claims it
// after the delay. Nodes that disagree on the membership for a moment only
// claim in vain; the claim stays atomic.

// refreshMembers renews this node's membership and reads the live nodes.
func (n *Node) refreshMembers(ctx context.Context) {
	ms, err := n.st.members(ctx, n.name, n.cfg.lease)
	if err != nil {
		if ctx.Err() == nil {
			n.cfg.logger.Warn("cluster: membership renewal failed", "err", err)
		}
		return
	}
	slices.Sort(ms)
	n.mu.Lock()
	n.members = ms
	n.mu.Unlock()
}

// leave removes this node's membership, so that the others stop deferring
// to it at once.
func (n *Node) leave() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, _ = n.st.members(ctx, n.name, 0)
}

// preferredLocked reports whether this node is the preferred claimer of id:
// the live node with the highest hash of (node, id). With no membership
// known, every node is. n.mu must be held.
func (n *Node) preferredLocked(id string) bool {
	if len(n.members) == 0 {
		return true
	}
	best, bestHash := "", uint64(0)
	for _, m := range n.members {
		h := fnv.New64a()
		h.Write([]byte(m))
		h.Write([]byte{0})
		h.Write([]byte(id))
		if v := h.Sum64(); best == "" || v > bestHash {
			best, bestHash = m, v
		}
	}
	return best == n.name
}

// dropClaimed removes a task another node has claimed from the window.
func (n *Node) dropClaimed(id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if e := n.loaded[id]; e != nil {
		e.fut.Cancel(false)
		delete(n.loaded, id)
	}
}
