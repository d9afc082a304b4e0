package cluster

import (
	"context"
	"hash/fnv"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"
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
			n.cfg.logger.Warn("cluster: membership: renewal failed", "err", err)
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

// membersScript renews a node's membership and returns the live nodes, or,
// with a zero time to live, removes it. KEYS: nodes. ARGV: name, time to
// live (µs).
var membersScript = redis.NewScript(luaNow + `
local t = tonumber(now())
if ARGV[2] == '0' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return {}
end
redis.call('ZADD', KEYS[1], string.format('%.0f', t + tonumber(ARGV[2])), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%.0f', t))
return redis.call('ZRANGE', KEYS[1], 0, -1)
`)

// members renews name's membership for ttl and returns the live nodes;
// a zero ttl removes it.
func (s store) members(ctx context.Context, name string, ttl time.Duration) ([]string, error) {
	return membersScript.Run(ctx, s.rdb, []string{s.nodes()}, name, ttl.Microseconds()).StringSlice()
}
