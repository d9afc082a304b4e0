package redisdriver

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/redis/go-redis/v9"
)

// What the store knows of kinds: whether one is known at all (a typo is
// not), and which ones the partitions store with how many of their tasks
// are due.

// KnownKind reads, in one pipeline, the kinds of the live nodes
// (prefix:nodekinds), the declared periodic tasks (prefix:periodic) and
// every partition's sets of stored and paused kinds.
func (d *Driver) KnownKind(ctx context.Context, kind string) (bool, error) {
	pipe := d.rdb.Pipeline()
	nodeKinds := pipe.HVals(ctx, d.keys.NodeKinds())
	var declared *redis.FloatCmd
	if name, ok := strings.CutPrefix(kind, "@"); ok {
		declared = pipe.ZScore(ctx, d.keys.Periodic(), name)
	}
	stored := make([]*redis.BoolCmd, 0, 2*len(d.parts))
	for _, p := range d.parts {
		stored = append(stored, pipe.SIsMember(ctx, p.Kinds(), kind), pipe.SIsMember(ctx, p.Paused(), kind))
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return false, err
	}
	if declared != nil && declared.Err() == nil {
		return true, nil
	}
	for _, kinds := range nodeKinds.Val() {
		if slices.Contains(strings.Fields(kinds), kind) {
			return true, nil
		}
	}
	for _, c := range stored {
		if c.Val() {
			return true, nil
		}
	}
	return false, nil
}

// StoredKinds reads the sets of kinds of parts in one pipeline.
func (d *Driver) StoredKinds(ctx context.Context, parts []int) ([]string, error) {
	pipe := d.rdb.Pipeline()
	sets := make([]*redis.StringSliceCmd, len(parts))
	for i, pi := range parts {
		sets[i] = pipe.SMembers(ctx, d.parts[pi].Kinds())
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, err
	}
	var kinds []string
	for _, set := range sets {
		kinds = union(kinds, set.Val())
	}
	return kinds, nil
}

// DueOfKind counts in the kind's pending index of each of parts, and
// reads its first entry, in one pipeline.
func (d *Driver) DueOfKind(ctx context.Context, parts []int, kind string, now time.Time) (int, time.Time, error) {
	pipe := d.rdb.Pipeline()
	counts := make([]*redis.IntCmd, len(parts))
	firsts := make([]*redis.ZSliceCmd, len(parts))
	for i, pi := range parts {
		index := d.parts[pi].KindIndex(string(driver.Pending), kind)
		counts[i] = pipe.ZCount(ctx, index, "-inf", strconv.FormatInt(now.UnixMicro(), 10))
		firsts[i] = pipe.ZRangeWithScores(ctx, index, 0, 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, time.Time{}, err
	}
	var waiting, oldest int64
	for i := range parts {
		waiting += counts[i].Val()
		if zs := firsts[i].Val(); len(zs) > 0 && (oldest == 0 || int64(zs[0].Score) < oldest) {
			oldest = int64(zs[0].Score)
		}
	}
	if oldest == 0 {
		return int(waiting), time.Time{}, nil
	}
	return int(waiting), time.UnixMicro(oldest), nil
}
