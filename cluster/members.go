package cluster

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
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

// refreshMembers renews this node's membership, its record and its
// periodic declarations, reads the live nodes and the kinds they handle,
// and, from the same reply, how far the node's clock is from Redis's. A
// stopping node renews its record only: it is no longer a claimer.
func (n *Node) refreshMembers(ctx context.Context) {
	n.mu.Lock()
	claimer := n.state == stateStarted
	rec := n.recordLocked()
	now := n.nowLocked()
	ps := append([]*periodic(nil), n.periodics...)
	n.mu.Unlock()
	var decls []periodicDecl
	if claimer {
		decls = declarations(ps, now)
	}
	sent := n.cfg.clock.Now()
	live, redisNow, err := n.st.renew(ctx, n.name, n.cfg.lease, claimer, rec, decls)
	if err != nil {
		n.followFailover(err)
		if ctx.Err() == nil {
			n.cfg.logger.Warn("cluster: membership: renewal failed", "err", err)
		}
		return
	}
	got := n.cfg.clock.Now()
	names := make([]string, 0, len(live))
	kinds := make(map[string]bool)
	known := true
	for _, m := range live {
		names = append(names, m.id)
		known = known && m.hasRecord
		for _, k := range m.kinds {
			kinds[k] = true
		}
	}
	slices.Sort(names)
	n.mu.Lock()
	defer n.mu.Unlock()
	n.members = names
	n.liveKinds, n.liveKindsKnown = kinds, known
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

// leave removes this node's membership and record, once it has stopped.
func (n *Node) leave() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, _, _ = n.st.renew(ctx, n.name, 0, false, nil, nil)
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

// membersScript renews a node's record (and, for a claimer, its place in
// the claimers' set, prefix:nodes) and its periodic declarations, drops
// the expired entries of the three indexes, and returns Redis's time (µs)
// followed by, for each live claimer, its ID, "1" and its kinds if it has a
// record ("0" and "" if not: a node of an older version). With a zero time
// to live it removes the node's membership and record instead.
// KEYS: nodes, members, periodic. ARGV: id, time to live (µs), "1" for a
// claimer, record key prefix, periodic key prefix, the number of record
// fields and values that follow, those fields and values, then name,
// trigger, next due (µs or "") triples.
var membersScript = redis.NewScript(luaNow + `
local t = now()
local id = ARGV[1]
local mkey = ARGV[4] .. id
if ARGV[2] == '0' then
  redis.call('ZREM', KEYS[1], id)
  redis.call('ZREM', KEYS[2], id)
  redis.call('DEL', mkey)
  return {t}
end
local exp = string.format('%.0f', tonumber(t) + tonumber(ARGV[2]))
local ms = math.ceil(tonumber(ARGV[2]) / 1000)
if ARGV[3] == '1' then
  redis.call('ZADD', KEYS[1], exp, id)
else
  redis.call('ZREM', KEYS[1], id)
end
local nf = tonumber(ARGV[6])
local fields = {'heartbeat', t, 'expires', exp}
for i = 7, 6 + nf do fields[#fields + 1] = ARGV[i] end
redis.call('HSET', mkey, unpack(fields))
redis.call('PEXPIRE', mkey, ms)
redis.call('ZADD', KEYS[2], exp, id)
for i = 7 + nf, #ARGV, 3 do
  local pkey = ARGV[5] .. ARGV[i]
  redis.call('HSET', pkey, 'trigger', ARGV[i + 1], 'next', ARGV[i + 2])
  if redis.call('PTTL', pkey) < ms then redis.call('PEXPIRE', pkey, ms) end
  redis.call('ZADD', KEYS[3], 'GT', exp, ARGV[i])
end
for _, k in ipairs(KEYS) do redis.call('ZREMRANGEBYSCORE', k, '-inf', t) end
local out = {t}
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local kinds = redis.call('HGET', ARGV[4] .. m, 'kinds')
  out[#out + 1] = m
  if kinds then
    out[#out + 1] = '1'
    out[#out + 1] = kinds
  else
    out[#out + 1] = '0'
    out[#out + 1] = ''
  end
end
return out
`)

// liveNode is a live claimer as renew read it.
type liveNode struct {
	id        string
	hasRecord bool
	kinds     []string
}

// renew renews id's membership (as a claimer or not) for ttl, with its
// record rec (field, value pairs) and periodic declarations, and returns
// the live claimers and Redis's time; a zero ttl removes the membership and
// the record.
func (s store) renew(ctx context.Context, id string, ttl time.Duration, claimer bool, rec []any, decls []periodicDecl) (live []liveNode, redisNow int64, err error) {
	c := "0"
	if claimer {
		c = "1"
	}
	args := make([]any, 0, 6+len(rec)+3*len(decls))
	args = append(args, id, ttl.Microseconds(), c, s.memberPrefix(), s.periodicPrefix(), len(rec))
	args = append(args, rec...)
	for _, d := range decls {
		args = append(args, d.name, d.trigger, d.next)
	}
	vals, err := membersScript.Run(ctx, s.rdb, []string{s.nodes(), s.membersIndex(), s.periodicIndex()}, args...).StringSlice()
	if err != nil {
		return nil, 0, err
	}
	if len(vals) == 0 {
		return nil, 0, fmt.Errorf("cluster: membership: empty reply")
	}
	if redisNow, err = parseMicros(vals[0]); err != nil {
		return nil, 0, err
	}
	for i := 1; i+2 < len(vals); i += 3 {
		live = append(live, liveNode{id: vals[i], hasRecord: vals[i+1] == "1", kinds: strings.Fields(vals[i+2])})
	}
	return live, redisNow, nil
}
