package cluster

import (
	"context"
	"errors"
	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
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

// extend renews the leases of held tasks (by ID) and returns the IDs whose
// lease was lost: one script per partition, in one pipeline.
func (s store) extend(ctx context.Context, lease time.Duration, held map[string]*run) ([]string, error) {
	byPart := make(map[int]*scriptCall)
	var calls []*scriptCall
	for id, r := range held {
		p := s.partOf(id)
		c := byPart[p.Index]
		if c == nil {
			c = &scriptCall{keys: []string{p.Lease()}, args: []any{lease.Microseconds()}}
			byPart[p.Index] = c
			calls = append(calls, c)
		}
		c.keys = append(c.keys, p.Task(id), p.KindIndex(string(Running), r.kind))
		c.args = append(c.args, id, r.token)
	}
	cmds, err := s.runPipelined(ctx, redisdriver.ExtendScript, calls)
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

// reap returns the expired leases of the partitions to pending, up to
// limit per partition: it lists them (one pipeline), reads their kinds
// (one pipeline) and reaps them (one pipeline). full is true if some
// partition had limit or more, so that the caller reaps again; lost are
// the runs reaped, in the partitions whose script succeeded even when
// another's failed.
func (s store) reap(ctx context.Context, parts []partition, limit, maxLost int, tl timelineRec) (full bool, lost []LostRun, err error) {
	listed, err := s.eachPartition(ctx, redisdriver.ExpiredScript, parts, func(p partition) *scriptCall {
		return &scriptCall{keys: []string{p.Lease()}, args: []any{limit}}
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
			ids[parts[i].Index] = got
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
	cmds, err := s.runOnTasksReplies(ctx, redisdriver.ReapScript, ids, kinds, func(p partition) []any { return []any{p.Channel(), maxLost, tl.ttlMillis()} },
		func(p partition) []string { return tl.keys(p, nil) })
	for _, cmd := range cmds {
		reaped, _ := cmd.StringSlice()
		for j := 0; j+1 < len(reaped); j += 2 {
			lost = append(lost, LostRun{ID: reaped[j], Kind: kinds[reaped[j]], Dead: reaped[j+1] == "dead"})
		}
	}
	return full && err == nil, lost, err
}
