package cluster

import (
	"context"
	"errors"
	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
	"time"

	"github.com/redis/go-redis/v9"
)

// Storing the occurrences of periodic tasks. Each sweep, every node stores
// the occurrences of its periodic tasks that fall within the window,
// starting from the task's cursor: q:periodic:<name>, a hash in the
// partition of its name (where its occurrences live too) holding the
// latest occurrence any node stored (field "stored", µs) and the task's
// misfire policy and overlap setting as last declared (fields "misfire",
// "overlap", which Node.PeriodicTasks reads). So the occurrences that fell
// while every node was down are known when one starts again: under
// MisfireCoalesce the sweep stores the latest of them (the one run that
// stands for all), under MisfireRunEach each of them, under MisfireSkip
// none. The claim decides again by Redis's clock (misfire.go); the sweep
// only makes sure that what may run is stored. The cursor never expires.

// periodicPartition is the partition of periodic task name among n
// (driver.PeriodicPartition).
func periodicPartition(name string, n int) int { return driver.PeriodicPartition(name, n) }

// cursorKey is the cursor of periodic task name.
func (s store) cursorKey(name string) string {
	return s.parts[periodicPartition(name, len(s.parts))].PeriodicCursor(name)
}

// createOccurrences stores the occurrences of every periodic task that
// may run within the window and that this node has not stored yet.
func (n *Node) createOccurrences(ctx context.Context) {
	n.mu.Lock()
	ps := append([]*periodic(nil), n.periodics...)
	now := n.nowLocked()
	n.mu.Unlock()
	if len(ps) == 0 {
		return
	}
	cursors, err := n.st.readCursors(ctx, ps)
	if err != nil {
		if ctx.Err() == nil {
			n.cfg.logger.Warn("cluster: periodic: reading the cursors failed", "err", err)
		}
		return
	}
	stored := make([]time.Time, len(ps))
	for i, p := range ps {
		stored[i] = n.storeOccurrences(ctx, p, cursors[i], now)
	}
	if err := n.st.writeCursors(ctx, ps, stored); err != nil && ctx.Err() == nil {
		n.cfg.logger.Warn("cluster: periodic: writing the cursors failed", "err", err)
	}
}

// storeOccurrences stores the occurrences of p from the later of its
// cursor and the last one this node dealt with (from now if neither is
// known) to the end of the window, by p's misfire policy for those already
// due, and returns the latest it stored.
func (n *Node) storeOccurrences(ctx context.Context, p *periodic, cursor, now time.Time) (latest time.Time) {
	from := p.last
	if cursor.After(from) {
		from = cursor
	}
	if from.IsZero() {
		from = now
	}
	until := now.Add(n.cfg.window)
	due := p.next(from)
	count := 0
	for range maxTriggerSteps {
		if due.IsZero() || due.After(until) || count >= maxOccurrencesPerSweep {
			break
		}
		next := p.next(due)
		if !due.After(now) && !n.storesMissed(p, next, now) {
			p.last, due = due, next
			continue
		}
		sc := scheduleConfig{id: OccurrenceID(p.name, due), maxRetries: n.cfg.maxRetries}
		if _, err := n.store(ctx, periodicKind(p.name), nil, due, sc); err != nil {
			if ctx.Err() == nil {
				n.cfg.logger.Warn("cluster: periodic: storing an occurrence failed", "name", p.name, "due", due, "err", err)
			}
			break // tried again on the next sweep
		}
		p.last, latest = due, due
		count++
		due = next
	}
	return latest
}

// storesMissed reports whether the sweep stores an occurrence of p that is
// due already, whose next occurrence is next: every one under
// MisfireRunEach, the latest under MisfireCoalesce, none under
// MisfireSkip.
func (n *Node) storesMissed(p *periodic, next, now time.Time) bool {
	switch p.cfg.misfire {
	case MisfireRunEach:
		return true
	case MisfireCoalesce:
		return next.IsZero() || next.After(now)
	}
	return false
}

// readCursors reads the cursors of ps in one pipeline: the zero Time for a
// task that has none.
func (s store) readCursors(ctx context.Context, ps []*periodic) ([]time.Time, error) {
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.StringCmd, len(ps))
	for i, p := range ps {
		cmds[i] = pipe.HGet(ctx, s.cursorKey(p.name), "stored")
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	out := make([]time.Time, len(ps))
	for i, c := range cmds {
		if v, err := c.Result(); err == nil {
			us, err := parseMicros(v)
			if err != nil {
				return nil, err
			}
			out[i] = time.UnixMicro(us)
		}
	}
	return out, nil
}

// writeCursors runs redisdriver.CursorScript for each of ps, with the latest
// occurrence stored of each, in one pipeline.
func (s store) writeCursors(ctx context.Context, ps []*periodic, stored []time.Time) error {
	calls := make([]*scriptCall, len(ps))
	for i, p := range ps {
		calls[i] = &scriptCall{keys: []string{s.cursorKey(p.name)},
			args: []any{microsText(stored[i]), p.cfg.misfire.lua(), boolText(p.cfg.overlap)}}
	}
	cmds, err := s.runPipelined(ctx, redisdriver.CursorScript, calls)
	if err != nil {
		return err
	}
	for _, c := range cmds {
		if err := c.Err(); err != nil {
			return err
		}
	}
	return nil
}

// boolText writes b as the scripts read it: "1" or "0".
func boolText(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
