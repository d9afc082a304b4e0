package cluster

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Leases: the heartbeat renews the leases of this node's runs, and the
// reaper (every node runs one) returns the tasks whose lease expired to
// pending. Lease expiries are stamped with Redis's clock.

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
	held := make(map[string]string, len(n.running))
	var expired []*run
	soonest := now.Add(n.cfg.lease)
	for id, r := range n.running {
		if !r.expires.After(now) {
			expired = append(expired, r)
			continue
		}
		held[id] = r.token
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
		return n.st.extend(ctx, n.cfg.lease, held)
	})
	if err != nil {
		n.cfg.logger.Warn("cluster: heartbeat: renewal failed", "err", err)
		return
	}
	isLost := make(map[string]bool, len(lost))
	for _, id := range lost {
		isLost[id] = true
	}
	var cancels []*run
	n.mu.Lock()
	for id, tok := range held {
		r := n.running[id]
		if r == nil || r.token != tok {
			continue
		}
		if isLost[id] {
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

// extendScript pushes back the lease of the tasks an owner still holds,
// in the lease set and in the kind's running index.
// KEYS: lease. ARGV: lease (µs), task key prefix, store prefix, then id,
// token pairs. Returns the IDs whose lease is lost.
var extendScript = redis.NewScript(luaNow + `
local exp = string.format('%.0f', tonumber(now()) + tonumber(ARGV[1]))
local lost = {}
for i = 4, #ARGV, 2 do
  local id = ARGV[i]
  local f = redis.call('HMGET', ARGV[2] .. id, 'owner', 'kind')
  if f[1] == ARGV[i + 1] and redis.call('ZSCORE', KEYS[1], id) then
    redis.call('ZADD', KEYS[1], 'XX', exp, id)
    redis.call('ZADD', ARGV[3] .. ':k:running:' .. f[2], 'XX', exp, id)
  else
    lost[#lost + 1] = id
  end
end
return lost
`)

// extend renews the leases of held tasks (id, token pairs) and returns the
// IDs whose lease was lost.
func (s store) extend(ctx context.Context, lease time.Duration, held map[string]string) ([]string, error) {
	args := make([]any, 0, 3+2*len(held))
	args = append(args, lease.Microseconds(), s.taskPrefix(), s.prefix)
	for id, tok := range held {
		args = append(args, id, tok)
	}
	lost, err := extendScript.Run(ctx, s.rdb, []string{s.lease()}, args...).StringSlice()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return lost, err
}

// reapBatch is how many expired leases one reap script handles.
const reapBatch = 1000

// reapLoop returns expired leases to pending, renews the node's membership
// and removes the done records past WithKeepDone's bounds every quarter
// lease. Every node reaps; the script is atomic, so they never return a
// task twice.
func (n *Node) reapLoop(ctx context.Context) {
	defer n.bg.Done()
	every(ctx, n.cfg.lease/4, nil, func() {
		n.refreshMembers(ctx)
		if err := n.trimDone(ctx); err != nil && ctx.Err() == nil {
			n.cfg.logger.Warn("cluster: trim done records: failed", "err", err)
		}
		for {
			k, err := n.st.reap(ctx, reapBatch, n.cfg.maxLost)
			if err != nil {
				if ctx.Err() == nil {
					n.cfg.logger.Warn("cluster: reap: failed", "err", err)
				}
				return
			}
			if k < reapBatch {
				return
			}
		}
	})
}

// reapScript returns tasks whose lease expired to pending, due now (Redis
// time: they were due when claimed), counting the lost run in the task's
// "lost" field and its history, not as a failed attempt; past the limit of
// lost runs they go dead. KEYS: lease, pending, dead. ARGV: task key
// prefix, limit, channel, max lost runs, store prefix. Returns how many
// leases it found expired.
var reapScript = redis.NewScript(luaNow + luaPublish + luaIndex + luaHistory + `
local p = ARGV[5]
local t = now()
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', t, 'LIMIT', 0, tonumber(ARGV[2]))
local why = 'cluster: lease expired: the node running the task stopped, stalled or lost Redis'
for _, id in ipairs(ids) do
  local k = ARGV[1] .. id
  redis.call('ZREM', KEYS[1], id)
  local kind = redis.call('HGET', k, 'kind')
  if kind then
    redis.call('ZREM', kind_key(p, 'running', kind), id)
    add_run(k, 'lost', t, why)
    redis.call('HDEL', k, 'owner', 'next', 'start')
    local lost = redis.call('HINCRBY', k, 'lost', 1)
    redis.call('HSET', k, 'err', why)
    if lost > tonumber(ARGV[4]) then
      index_add(p, 'dead', kind, t, id)
    else
      make_pending(p, ARGV[3], kind, t, id)
    end
  end
end
return #ids
`)

func (s store) reap(ctx context.Context, limit, maxLost int) (int, error) {
	return reapScript.Run(ctx, s.rdb, []string{s.lease(), s.pending(), s.dead()},
		s.taskPrefix(), limit, s.channel(), maxLost, s.prefix).Int()
}
