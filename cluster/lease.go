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
	held := make(map[string]*run, len(n.running))
	var expired []*run
	soonest := now.Add(n.cfg.lease)
	for id, r := range n.running {
		if !r.expires.After(now) {
			expired = append(expired, r)
			continue
		}
		held[id] = r
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
		n.followFailover(err)
		return
	}
	isLost := make(map[string]bool, len(lost))
	for _, id := range lost {
		isLost[id] = true
	}
	var cancels []*run
	n.mu.Lock()
	for id, h := range held {
		r := n.running[id]
		if r != h {
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

// extendScript pushes back the lease of the tasks an owner still holds
// in one partition, in the lease set and in each kind's running index.
// KEYS: the partition's lease set, then for each task its hash and its
// kind's running index. ARGV: lease (µs), then the tasks' id, token pairs
// in the same order. Returns the IDs whose lease is lost.
var extendScript = redis.NewScript(luaNow + `
local exp = string.format('%.0f', tonumber(now()) + tonumber(ARGV[1]))
local lost = {}
for j = 1, (#ARGV - 1) / 2 do
  local id, tok = ARGV[2 * j], ARGV[2 * j + 1]
  local key, ix = KEYS[2 * j], KEYS[2 * j + 1]
  if redis.call('HGET', key, 'owner') == tok and redis.call('ZSCORE', KEYS[1], id) then
    redis.call('ZADD', KEYS[1], 'XX', exp, id)
    redis.call('ZADD', ix, 'XX', exp, id)
  else
    lost[#lost + 1] = id
  end
end
return lost
`)

// extend renews the leases of held tasks (by ID) and returns the IDs whose
// lease was lost: one script per partition, in one pipeline.
func (s store) extend(ctx context.Context, lease time.Duration, held map[string]*run) ([]string, error) {
	byPart := make(map[int]*scriptCall)
	var calls []*scriptCall
	for id, r := range held {
		p := s.partOf(id)
		c := byPart[p.index]
		if c == nil {
			c = &scriptCall{keys: []string{p.lease()}, args: []any{lease.Microseconds()}}
			byPart[p.index] = c
			calls = append(calls, c)
		}
		c.keys = append(c.keys, p.task(id), p.kindIndex(Running, r.kind))
		c.args = append(c.args, id, r.token)
	}
	cmds, err := s.runPipelined(ctx, extendScript, calls)
	if err != nil {
		return nil, err
	}
	var lost []string
	for _, cmd := range cmds {
		ids, err := cmd.StringSlice()
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, err
		}
		lost = append(lost, ids...)
	}
	return lost, nil
}

// reapBatch is how many expired leases one reap script handles.
const reapBatch = 1000

// reapLoop returns expired leases to pending in the partitions this node
// reaps (ownership.go) every quarter lease. Two reapers per partition; the
// script is atomic, so they never return a task twice.
func (n *Node) reapLoop(ctx context.Context) {
	defer n.bg.Done()
	every(ctx, n.cfg.lease/4, nil, func() {
		n.mu.Lock()
		var parts []partition
		for i, ok := range n.shares.reaped {
			if ok {
				parts = append(parts, n.st.parts[i])
			}
		}
		n.mu.Unlock()
		for len(parts) > 0 {
			full, lost, err := n.st.reap(ctx, parts, reapBatch, n.cfg.maxLost, n.timelineNow())
			n.observeLost(lost)
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

// expiredScript lists up to a limit of the tasks of a partition whose
// lease expired by Redis's clock. KEYS: the partition's lease set. ARGV:
// limit.
var expiredScript = redis.NewScript(luaNow + `
return redis.call('ZRANGE', KEYS[1], '-inf', now(), 'BYSCORE', 'LIMIT', 0, tonumber(ARGV[1]))
`)

// reapScript returns tasks of one partition whose lease expired to
// pending, due now (Redis time: they were due when claimed), counting the
// lost run in the task's "lost" field and its history, not as a failed
// attempt; past the limit of lost runs they go dead. It checks each lease
// again, so a task renewed or reaped since expiredScript listed it is left
// alone. KEYS: the partition's fixed keys, then five per task (see
// luaPart), then the minute's timeline hash if lost runs are counted
// (timeline_record.go). ARGV: channel, max lost runs, the timeline hash's
// time to live (ms), then the tasks' IDs. Returns the lost runs, an ID
// then "pending" or "dead" for each (a stale lease of a task gone is
// removed, and is no lost run).
var reapScript = redis.NewScript(luaNow + luaPublish + luaPart + luaHistory + luaTimeline + `
local t = now()
local why = 'cluster: lease expired: the node running the task stopped, stalled or lost Redis'
local out = {}
local tl = KEYS[6 + 5 * (#ARGV - 3) + 1]
for j = 4, #ARGV do
  local id = ARGV[j]
  local k, ix = task_keys(j - 3)
  local s = redis.call('ZSCORE', STATE.running, id)
  local kind = redis.call('HGET', k, 'kind')
  if s and tonumber(s) <= tonumber(t) and not kind then
    redis.call('ZREM', STATE.running, id)
  elseif s and tonumber(s) <= tonumber(t) and names_kind(ix, kind) then
    index_rem(ix, 'running', id)
    if tl then
      local r = redis.call('HMGET', k, 'next', 'start')
      count_run(tl, ARGV[3], kind, r[1], r[2], 'l')
    end
    add_run(k, 'lost', t, why)
    redis.call('HDEL', k, 'owner', 'next', 'start')
    local lost = redis.call('HINCRBY', k, 'lost', 1)
    redis.call('HSET', k, 'err', why)
    if lost > tonumber(ARGV[2]) then
      index_add(ix, 'dead', kind, t, id)
      out[#out + 1] = id
      out[#out + 1] = 'dead'
    else
      make_pending(ix, ARGV[1], kind, t, id)
      out[#out + 1] = id
      out[#out + 1] = 'pending'
    end
  end
end
return out
`)

// reap returns the expired leases of the partitions to pending, up to
// limit per partition: it lists them (one pipeline), reads their kinds
// (one pipeline) and reaps them (one pipeline). full is true if some
// partition had limit or more, so that the caller reaps again; lost are
// the runs reaped, in the partitions whose script succeeded even when
// another's failed.
func (s store) reap(ctx context.Context, parts []partition, limit, maxLost int, tl timelineRec) (full bool, lost []LostRun, err error) {
	listed, err := s.eachPartition(ctx, expiredScript, parts, func(p partition) *scriptCall {
		return &scriptCall{keys: []string{p.lease()}, args: []any{limit}}
	})
	if err != nil {
		return false, nil, err
	}
	ids := make(map[int][]string)
	for i, cmd := range listed {
		got, err := cmd.StringSlice()
		if err != nil && !errors.Is(err, redis.Nil) {
			return false, nil, err
		}
		if len(got) > 0 {
			ids[parts[i].index] = got
			full = full || len(got) >= limit
		}
	}
	if len(ids) == 0 {
		return false, nil, nil
	}
	kinds, err := s.kindsOf(ctx, ids)
	if err != nil {
		return false, nil, err
	}
	cmds, err := s.runOnTasksReplies(ctx, reapScript, ids, kinds, func(p partition) []any { return []any{p.channel(), maxLost, tl.ttlMillis()} },
		func(p partition) []string { return tl.keys(p, nil) })
	for _, cmd := range cmds {
		reaped, _ := cmd.StringSlice()
		for j := 0; j+1 < len(reaped); j += 2 {
			lost = append(lost, LostRun{ID: reaped[j], Kind: kinds[reaped[j]], Dead: reaped[j+1] == "dead"})
		}
	}
	return full && err == nil, lost, err
}
