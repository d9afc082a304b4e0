package redisdriver

import (
	"context"
	"errors"
	"strconv"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/redis/go-redis/v9"
)

// Reading what a bulk action's selection picks: a batch of IDs per
// partition from the state's set or the kind's index (scan), or the IDs
// given that match (pickIDs).

// scan reads a selection by state, kind and time, a batch per partition
// and round.
type scan struct {
	d   *Driver
	sel driver.Selection
	// sources are the sorted sets each partition's tasks are read from (by
	// partition index): the kind's index of the state, or the state's set
	// and, for pending tasks of every kind, the pending index of each kind
	// paused there (whose pending tasks are only in it).
	sources [][]string
	// from is the lower bound of the scores read in each partition
	// ("-inf", or "(" and a time for RunNowAll), by partition index.
	from []string
	// to is the upper bound: "+inf", or "(" and sel.Before.
	to string
}

// newScan prepares the reading of sel, reading the paused kinds of every
// partition first when it picks pending tasks of every kind.
func (d *Driver) newScan(ctx context.Context, sel driver.Selection) (*scan, error) {
	sc := &scan{d: d, sel: sel, sources: make([][]string, len(d.parts)), from: make([]string, len(d.parts)), to: "+inf"}
	if !sel.Before.IsZero() {
		sc.to = "(" + strconv.FormatInt(sel.Before.UnixMicro(), 10)
	}
	var paused []map[string]struct{}
	if sel.State == driver.Pending && sel.Kind == "" {
		var err error
		if paused, err = d.pausedSets(ctx); err != nil {
			return nil, err
		}
	}
	for i, p := range d.parts {
		sc.from[i] = "-inf"
		if sel.Kind != "" {
			sc.sources[i] = []string{p.KindIndex(string(sel.State), sel.Kind)}
			continue
		}
		sc.sources[i] = []string{p.StateSet(string(sel.State))}
		if paused != nil {
			for kind := range paused[i] {
				sc.sources[i] = append(sc.sources[i], p.KindIndex(string(driver.Pending), kind))
			}
		}
	}
	return sc, nil
}

// scanBatch is one round's read: the IDs of each partition (by index)
// and whether a partition's read filled a batch (it may hold more).
type scanBatch struct {
	byPart map[int][]string
	full   map[int]bool
}

// read reads up to bulkBatch IDs from each source of parts, in one round
// trip.
func (sc *scan) read(ctx context.Context, parts []Partition) (scanBatch, error) {
	pipe := sc.d.rdb.Pipeline()
	cmds := make([][]*redis.StringSliceCmd, len(parts))
	for i, p := range parts {
		for _, key := range sc.sources[p.Index] {
			cmds[i] = append(cmds[i], pipe.ZRangeArgs(ctx, redis.ZRangeArgs{Key: key, ByScore: true,
				Start: sc.from[p.Index], Stop: sc.to, Count: bulkBatch}))
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return scanBatch{}, err
	}
	b := scanBatch{byPart: make(map[int][]string, len(parts)), full: make(map[int]bool, len(parts))}
	for i, p := range parts {
		var ids []string
		for _, c := range cmds[i] {
			got := c.Val()
			ids = append(ids, got...)
			b.full[p.Index] = b.full[p.Index] || len(got) == bulkBatch
		}
		if len(ids) > 0 {
			b.byPart[p.Index] = dedupe(ids)
		}
	}
	return b, nil
}

// countScan counts what sel (with no IDs) picks, every partition's sources
// in one round trip.
func (d *Driver) countScan(ctx context.Context, sel driver.Selection) (int, error) {
	sc, err := d.newScan(ctx, sel)
	if err != nil {
		return 0, err
	}
	pipe := d.rdb.Pipeline()
	var cmds []*redis.IntCmd
	for i := range d.parts {
		for _, key := range sc.sources[i] {
			cmds = append(cmds, pipe.ZCount(ctx, key, "-inf", sc.to))
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, err
	}
	total := 0
	for _, c := range cmds {
		total += int(c.Val())
	}
	return total, nil
}

// pickedIDs are the IDs of a selection that match it when read, by
// partition index, with their kinds.
type pickedIDs struct {
	byPart map[int][]string
	kinds  map[string]string
}

// pickIDs reads which of ids match sel: their kinds in one round trip,
// then their scores in their kinds' indexes of sel.State in a second.
func (d *Driver) pickIDs(ctx context.Context, sel driver.Selection, ids []string) (pickedIDs, error) {
	byPart := map[int][]string{}
	for _, id := range ids {
		p := d.partOf(id)
		byPart[p.Index] = append(byPart[p.Index], id)
	}
	kinds, err := d.kindsOf(ctx, byPart)
	if err != nil {
		return pickedIDs{}, err
	}
	pipe := d.rdb.Pipeline()
	scores := map[string]*redis.FloatCmd{}
	for _, id := range ids {
		kind := kinds[id]
		if kind == "" || (sel.Kind != "" && kind != sel.Kind) {
			continue
		}
		scores[id] = pipe.ZScore(ctx, d.partOf(id).KindIndex(string(sel.State), kind), id)
	}
	if len(scores) > 0 {
		if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
			return pickedIDs{}, err
		}
	}
	out := pickedIDs{byPart: map[int][]string{}, kinds: map[string]string{}}
	for _, id := range ids {
		c := scores[id]
		if c == nil || c.Err() != nil {
			continue
		}
		if !sel.Before.IsZero() && int64(c.Val()) >= sel.Before.UnixMicro() {
			continue
		}
		pi := d.partOf(id).Index
		out.byPart[pi] = append(out.byPart[pi], id)
		out.kinds[id] = kinds[id]
	}
	return out, nil
}
