package redisdriver

import (
	"context"
	"errors"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/redis/go-redis/v9"
)

// Leases: a running task's lease is its score in its partition's lease set
// and in its kind's running index, an expiry by Redis's clock.

// Extend renews the leases of held with ExtendScript, one call per
// partition, in one pipeline (driver.Claims).
func (d *Driver) Extend(ctx context.Context, lease time.Duration, held []driver.Held) ([]string, error) {
	byPart := make(map[int]*scriptCall)
	var calls []*scriptCall
	for _, h := range held {
		p := d.partOf(h.ID)
		c := byPart[p.Index]
		if c == nil {
			c = &scriptCall{keys: []string{p.Lease()}, args: []any{lease.Microseconds()}}
			byPart[p.Index] = c
			calls = append(calls, c)
		}
		c.keys = append(c.keys, p.Task(h.ID), p.KindIndex(string(driver.Running), h.Kind))
		c.args = append(c.args, h.ID, h.Owner)
	}
	cmds, err := d.runPipelined(ctx, ExtendScript, calls)
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

// Expired lists the expired leases of partitions with ExpiredScript, one
// call per partition, in one pipeline (driver.Claims).
func (d *Driver) Expired(ctx context.Context, partitions []int, limit int) (map[int][]string, bool, error) {
	parts := make([]Partition, len(partitions))
	for i, pi := range partitions {
		parts[i] = d.parts[pi]
	}
	listed, err := d.eachPartition(ctx, ExpiredScript, parts, func(p Partition) *scriptCall {
		return &scriptCall{keys: []string{p.Lease()}, args: []any{limit}}
	})
	if err != nil {
		return nil, false, err
	}
	expired := make(map[int][]string)
	full := false
	for i, cmd := range listed {
		got, err := cmd.StringSlice()
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, false, err
		}
		if len(got) > 0 {
			expired[parts[i].Index] = got
			full = full || len(got) >= limit
		}
	}
	return expired, full, nil
}

// Reap reads the kinds of expired (one pipeline) and reaps them with
// ReapScript, one call per partition (one pipeline), which checks each
// lease again (driver.Claims).
func (d *Driver) Reap(ctx context.Context, expired map[int][]string, maxLost int, tl driver.Timeline) ([]driver.LostRun, error) {
	if len(expired) == 0 {
		return nil, nil
	}
	kinds, err := d.kindsOf(ctx, expired)
	if err != nil {
		return nil, err
	}
	cmds, err := d.runOnTasksReplies(ctx, ReapScript, expired, kinds,
		func(p Partition) []any { return []any{p.Channel(), maxLost, tl.TTL.Milliseconds()} },
		func(p Partition) []string { return timelineKeys(p, tl, nil) })
	var lost []driver.LostRun
	for _, cmd := range cmds {
		reaped, _ := cmd.StringSlice()
		for j := 0; j+1 < len(reaped); j += 2 {
			lost = append(lost, driver.LostRun{ID: reaped[j], Kind: kinds[reaped[j]], Dead: reaped[j+1] == "dead"})
		}
	}
	return lost, err
}

// timelineKeys adds the hash of tl's minute in p to keys, the keys of a
// script that ends a run, when tl counts runs.
func timelineKeys(p Partition, tl driver.Timeline, keys []string) []string {
	if tl.TTL <= 0 {
		return keys
	}
	return append(keys, p.Timeline(tl.Minute))
}
