package cluster

import (
	"context"
	"fmt"
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

// refreshMembers renews this node's membership and reads the live nodes,
// and, from the same reply, how far the node's clock is from Redis's.
func (n *Node) refreshMembers(ctx context.Context) {
	sent := n.cfg.clock.Now()
	ms, redisNow, err := n.st.members(ctx, n.name, n.cfg.lease)
	if err != nil {
		n.followFailover(err)
		if ctx.Err() == nil {
			n.cfg.logger.Warn("cluster: membership: renewal failed", "err", err)
		}
		return
	}
	got := n.cfg.clock.Now()
	slices.Sort(ms)
	n.mu.Lock()
	defer n.mu.Unlock()
	n.members = ms
	n.renewed = got
	if rtt := got.Sub(sent); rtt >= 0 && rtt < n.cfg.lease/10 {
		// Redis read its clock about halfway through the round trip.
		n.offset = time.UnixMicro(redisNow).Sub(sent.Add(rtt / 2))
	}
}

// now is the node's clock corrected by its last measured offset from
// Redis's clock: when the node thinks a task is due. Only a hint: the
// claim decides on Redis's clock itself. n.mu must be held.
func (n *Node) nowLocked() time.Time {
	return n.cfg.clock.Now().Add(n.offset)
}

// leave removes this node's membership, so that the others stop deferring
// to it at once.
func (n *Node) leave() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, _, _ = n.st.members(ctx, n.name, 0)
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

// membersScript renews a node's membership and returns Redis's time (µs)
// followed by the live nodes, or, with a zero time to live, removes it.
// KEYS: nodes. ARGV: name, time to live (µs).
var membersScript = redis.NewScript(luaNow + `
local t = now()
if ARGV[2] == '0' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return {t}
end
redis.call('ZADD', KEYS[1], string.format('%.0f', tonumber(t) + tonumber(ARGV[2])), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', t)
local out = redis.call('ZRANGE', KEYS[1], 0, -1)
table.insert(out, 1, t)
return out
`)

// members renews name's membership for ttl and returns the live nodes and
// Redis's time; a zero ttl removes it.
func (s store) members(ctx context.Context, name string, ttl time.Duration) (names []string, redisNow int64, err error) {
	vals, err := membersScript.Run(ctx, s.rdb, []string{s.nodes()}, name, ttl.Microseconds()).StringSlice()
	if err != nil {
		return nil, 0, err
	}
	if len(vals) == 0 {
		return nil, 0, fmt.Errorf("cluster: membership: empty reply")
	}
	redisNow, err = parseMicros(vals[0])
	return vals[1:], redisNow, err
}
