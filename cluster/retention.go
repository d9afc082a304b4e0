package cluster

import (
	"cmp"
	"context"
	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/redis/go-redis/v9"
)

// Done records: with WithKeepDone, a task that ran to completion (or was
// canceled) is kept, with its payload and run history, in the Done state,
// within bounds of age and number. Without it a completed task is deleted,
// as before. asynq's counterpart is the Retention option of a task (kept
// as "completed"), River's the completed jobs its job cleaner deletes
// after CompletedJobRetentionPeriod (24 h by default).

// keepDone is the setting of WithKeepDone.
type keepDone struct {
	on  bool // WithKeepDone was given
	age time.Duration
	max int
}

// WithKeepDone keeps the record of each task that ran to completion (or
// was canceled) in the Done state, so that Node.Get, Node.List and the
// counts show it, newest first: at most max records, none older than age.
// Every started node removes the records past the bounds soon after each
// of its completions (at most ten times a second) and every quarter lease:
// the records of a prefix are spread over its partitions, and no one
// script sees them all, so the bounds hold within that delay. Without it (the default)
// a completed task is deleted. An age of zero or less, or a max below 1, is
// an error wrapping scheduler.ErrInvalidArgument at New. Nodes of one
// prefix should agree on it: a node without it deletes what it completes.
func WithKeepDone(age time.Duration, max int) Option {
	return optionFunc(func(c *config) { c.keepDone = keepDone{on: true, age: age, max: max} })
}

// validate checks the bounds given to WithKeepDone.
func (k keepDone) validate() error {
	if !k.on {
		return nil
	}
	if k.age <= 0 || k.max < 1 {
		return invalid("New", "keep done: age %v and max %d must be > 0", k.age, k.max)
	}
	return nil
}

// driver is the setting as the driver's calls take it: Max 0 when done
// records are not kept.
func (k keepDone) driver() driver.KeepDone {
	if !k.on {
		return driver.KeepDone{}
	}
	return driver.KeepDone{Age: k.age, Max: k.max}
}

// args are the script arguments of the setting: age (µs) and max, max 0
// when done records are not kept.
func (k keepDone) args() []any {
	if !k.on {
		return []any{0, 0}
	}
	return []any{k.age.Microseconds(), k.max}
}

// minTrimGap is the least time between two trims of one node, however
// many completions ask for one.
const minTrimGap = 100 * time.Millisecond

// trimLoop removes the done records past WithKeepDone's bounds every
// quarter lease and soon after each completion (requestTrim), until ctx
// ends.
func (n *Node) trimLoop(ctx context.Context) {
	defer n.bg.Done()
	every(ctx, n.cfg.lease/4, n.trimKick, func() {
		if err := n.trimDone(ctx); err != nil && ctx.Err() == nil {
			n.cfg.logger.Warn("cluster: trim done records: failed", "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(minTrimGap):
		}
	})
}

// trimDone removes the done records past the node's bounds, reapBatch per
// partition at a time, until none is left; the reaper calls it. The age
// is measured on the node's clock corrected by its offset from Redis's.
// The newest max records are kept across all partitions: it counts the
// records of every partition, and removes the oldest of those past max
// from the merged order of the partitions' oldest.
func (n *Node) trimDone(ctx context.Context) error {
	if !n.cfg.keepDone.on {
		return nil
	}
	for {
		n.mu.Lock()
		cut := n.nowLocked().Add(-n.cfg.keepDone.age).UnixMicro()
		n.mu.Unlock()
		victims, full, err := n.st.doneToTrim(ctx, cut, n.cfg.keepDone.max, reapBatch)
		if err != nil || len(victims) == 0 {
			return err
		}
		if err := n.st.removeDone(ctx, victims); err != nil {
			return err
		}
		if !full {
			return nil
		}
	}
}

// doneToTrim lists, by partition index, the done records older than cut
// (µs) and the oldest of the rest past max, at most batch per partition
// each way; full is true if some partition had more.
func (s store) doneToTrim(ctx context.Context, cut int64, max, batch int) (victims map[int][]string, full bool, err error) {
	pipe := s.rdb.Pipeline()
	cards := make([]*redis.IntCmd, len(s.parts))
	old := make([]*redis.StringSliceCmd, len(s.parts))
	for i, p := range s.parts {
		cards[i] = pipe.ZCard(ctx, p.DoneSet())
		old[i] = pipe.ZRangeArgs(ctx, redis.ZRangeArgs{Key: p.DoneSet(), ByScore: true,
			Start: "-inf", Stop: "(" + strconv.FormatInt(cut, 10), Count: int64(batch)})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, false, err
	}
	victims = make(map[int][]string)
	total, aged := 0, 0
	for i := range s.parts {
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
	pipe = s.rdb.Pipeline()
	oldest := make([]*redis.ZSliceCmd, len(s.parts))
	for i, p := range s.parts {
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
	for i := range s.parts {
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

// removeDone removes the done records victims (by partition index), one
// script per partition in one pipeline.
func (s store) removeDone(ctx context.Context, victims map[int][]string) error {
	kinds, err := s.kindsOf(ctx, victims)
	if err != nil {
		return err
	}
	return s.runOnTasks(ctx, redisdriver.RemoveDoneScript, victims, kinds, func(partition) []any { return nil }, nil)
}
