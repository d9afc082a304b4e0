package cluster

import (
	"context"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
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
// The newest max records are kept across all partitions: the driver lists
// the records past the bounds (DoneToTrim) and removes them (RemoveDone),
// leaving any stored again meanwhile.
func (n *Node) trimDone(ctx context.Context) error {
	if !n.cfg.keepDone.on {
		return nil
	}
	for {
		n.mu.Lock()
		cut := n.nowLocked().Add(-n.cfg.keepDone.age)
		n.mu.Unlock()
		victims, full, err := n.drv.DoneToTrim(ctx, cut, n.cfg.keepDone.max, reapBatch)
		if err != nil || len(victims) == 0 {
			return err
		}
		if _, err := n.drv.RemoveDone(ctx, victims); err != nil {
			return err
		}
		if !full {
			return nil
		}
	}
}
