package redisdriver

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/redis/go-redis/v9"
)

// Done records (driver.KeepDone): each partition's done set, scored by
// the time each record was finished, and its kinds' done indexes.

// keepArgs are the script arguments of keep: age (µs) and max, max 0 when
// done records are not kept.
func keepArgs(keep driver.KeepDone) []any {
	if keep.Max == 0 {
		return []any{0, 0}
	}
	return []any{keep.Age.Microseconds(), keep.Max}
}

// DoneToTrim reads each partition's count of done records and its oldest
// before olderThan in one pipeline, then, if more than max are left, each
// partition's oldest of the rest in another, and merges them by age
// (driver.Scheduling).
func (d *Driver) DoneToTrim(ctx context.Context, olderThan time.Time, max, batch int) (victims map[int][]string, full bool, err error) {
	cut := strconv.FormatInt(olderThan.UnixMicro(), 10)
	pipe := d.rdb.Pipeline()
	cards := make([]*redis.IntCmd, len(d.parts))
	old := make([]*redis.StringSliceCmd, len(d.parts))
	for i, p := range d.parts {
		cards[i] = pipe.ZCard(ctx, p.DoneSet())
		old[i] = pipe.ZRangeArgs(ctx, redis.ZRangeArgs{Key: p.DoneSet(), ByScore: true,
			Start: "-inf", Stop: "(" + cut, Count: int64(batch)})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, false, err
	}
	victims = make(map[int][]string)
	total, aged := 0, 0
	for i := range d.parts {
		total += int(cards[i].Val())
		if ids := old[i].Val(); len(ids) > 0 {
			victims[i] = ids
			aged += len(ids)
			full = full || len(ids) == batch
		}
	}
	over := min(total-aged-max, batch)
	if over <= 0 {
		return victims, full, nil
	}
	// The oldest over records past the aged ones, merged across the
	// partitions: each partition's oldest over+aged hold them all.
	pipe = d.rdb.Pipeline()
	oldest := make([]*redis.ZSliceCmd, len(d.parts))
	for i, p := range d.parts {
		oldest[i] = pipe.ZRangeWithScores(ctx, p.DoneSet(), int64(len(victims[i])), int64(len(victims[i])+over-1))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, false, err
	}
	type rec struct {
		part  int
		id    string
		score float64
	}
	var all []rec
	for i := range d.parts {
		for _, z := range oldest[i].Val() {
			all = append(all, rec{i, z.Member.(string), z.Score})
		}
	}
	slices.SortFunc(all, func(a, b rec) int { return cmp.Or(cmp.Compare(a.score, b.score), strings.Compare(a.id, b.id)) })
	for _, r := range all[:min(over, len(all))] {
		victims[r.part] = append(victims[r.part], r.id)
	}
	return victims, full || total-aged-max > batch, nil
}

// RemoveDone removes victims with RemoveDoneScript, one call per
// partition, in one pipeline (driver.Scheduling).
func (d *Driver) RemoveDone(ctx context.Context, victims map[int][]string) (int, error) {
	kinds, err := d.kindsOf(ctx, victims)
	if err != nil {
		return 0, err
	}
	cmds, err := d.runOnTasksReplies(ctx, RemoveDoneScript, victims, kinds, func(Partition) []any { return nil }, nil)
	removed := 0
	for _, cmd := range cmds {
		n, _ := cmd.Int()
		removed += n
	}
	return removed, err
}
