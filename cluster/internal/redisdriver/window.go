package redisdriver

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/redis/go-redis/v9"
)

// LoadDue reads, in one pipeline, a range of each kind's pending index per
// partition and a look at the partition's paused set (driver.Scheduling).
func (d *Driver) LoadDue(ctx context.Context, kinds map[string][]bool, until time.Time, newest bool, limit int) (tasks []driver.PendingTask, full bool, err error) {
	type read struct {
		kind   string
		paused *redis.BoolCmd
		rng    *redis.ZSliceCmd
	}
	pairs := 0
	for _, parts := range kinds {
		for _, ok := range parts {
			if ok {
				pairs++
			}
		}
	}
	if pairs == 0 {
		return nil, false, nil
	}
	share := int64(max(limit/pairs, 1))
	lo, hi := "-inf", strconv.FormatInt(until.UnixMicro(), 10)
	pipe := d.rdb.Pipeline()
	var reads []read
	for kind, parts := range kinds {
		for i, ok := range parts {
			if !ok {
				continue
			}
			p := d.parts[i]
			r := read{kind: kind, paused: pipe.SIsMember(ctx, p.Paused(), kind)}
			args := redis.ZRangeArgs{Key: p.KindIndex(string(driver.Pending), kind), ByScore: true, Start: lo, Stop: hi, Count: share}
			if newest {
				args.Start, args.Stop, args.Rev = hi, lo, true
			}
			r.rng = pipe.ZRangeArgsWithScores(ctx, args)
			reads = append(reads, r)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, false, err
	}
	for _, r := range reads {
		if r.paused.Val() {
			continue
		}
		zs := r.rng.Val()
		full = full || int64(len(zs)) >= share
		for _, z := range zs {
			tasks = append(tasks, driver.PendingTask{ID: z.Member.(string), Kind: r.kind, Due: time.UnixMicro(int64(z.Score))})
		}
	}
	return tasks, full, nil
}
