package redisdriver

import (
	"context"
	"errors"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/redis/go-redis/v9"
)

// The timeline's samples of pending depth: fields "<kind>|p" (pending
// tasks) and "<kind>|o" (the age in µs of the oldest overdue one) of the
// minute's hash of each partition (Partition.Timeline).

// PendingDepths reads the kinds of partitions (one pipeline), then each
// kind's pending index's size and earliest entry (one pipeline)
// (driver.Claims).
func (d *Driver) PendingDepths(ctx context.Context, partitions []int) ([]driver.PendingDepth, error) {
	if len(partitions) == 0 {
		return nil, nil
	}
	pipe := d.rdb.Pipeline()
	kindCmds := make([]*redis.StringSliceCmd, len(partitions))
	for i, pi := range partitions {
		kindCmds[i] = pipe.SMembers(ctx, d.parts[pi].Kinds())
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, err
	}
	type read struct {
		count  *redis.IntCmd
		oldest *redis.ZSliceCmd
	}
	var depths []driver.PendingDepth
	var reads []read
	pipe = d.rdb.Pipeline()
	for i, pi := range partitions {
		for _, kind := range kindCmds[i].Val() {
			ix := d.parts[pi].KindIndex(string(driver.Pending), kind)
			depths = append(depths, driver.PendingDepth{Partition: pi, Kind: kind})
			reads = append(reads, read{pipe.ZCard(ctx, ix), pipe.ZRangeWithScores(ctx, ix, 0, 0)})
		}
	}
	if len(reads) == 0 {
		return nil, nil
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	for i, r := range reads {
		depths[i].Pending = int(r.count.Val())
		if z := r.oldest.Val(); len(z) > 0 {
			depths[i].Earliest = time.UnixMicro(int64(z[0].Score))
		}
	}
	return depths, nil
}

// RecordPendingDepths writes the samples with HSET and renews each
// hash's time to live, in one pipeline (driver.Claims).
func (d *Driver) RecordPendingDepths(ctx context.Context, depths []driver.PendingDepth, tl driver.Timeline) error {
	if tl.TTL <= 0 || len(depths) == 0 {
		return nil
	}
	pipe := d.rdb.Pipeline()
	for _, s := range depths {
		key := d.parts[s.Partition].Timeline(tl.Minute)
		pipe.HSet(ctx, key, s.Kind+"|p", s.Pending, s.Kind+"|o", s.Overdue.Microseconds())
		pipe.PExpire(ctx, key, time.Duration(tl.TTL.Milliseconds())*time.Millisecond)
	}
	_, err := pipe.Exec(ctx)
	return err
}
