package pgdriver

import (
	"context"
	"sync"
	"time"
)

// The driver's purge: what expired (done markers, timeline minutes, done
// records past their age) is deleted by the driver itself, from the
// reaper's calls of Expired, which every started node makes every quarter
// lease: Redis lets the same keys expire by their TTL. A run deletes in
// small batches, each its own transaction, so that no lock is held long
// and autovacuum keeps up; one driver of the cluster purges at a time
// (an advisory try-lock; the others skip their run), and each driver at
// most once per Options.PurgeEvery, sooner only while a backlog is left.
// River's job cleaner and its leader-only maintenance services do the
// same.

// DefaultPurgeEvery is the least time between two purges of one driver
// made without Options.PurgeEvery.
const DefaultPurgeEvery = time.Minute

const (
	// purgeBatch is how many rows one statement of the purge deletes.
	purgeBatch = 1000
	// purgeMaxBatches is how many statements of each kind of row one run
	// makes at most, so that a run delays its reap little; a run that
	// stops at the bound leaves the rest to the next call.
	purgeMaxBatches = 10
	// purgeLock is the key of the advisory lock a purging driver holds,
	// so that one node purges at a time: "stpepurg" in hexadecimal.
	purgeLock int64 = 0x7374_7065_7075_7267
)

// PurgeStats count a driver's purges since it was made.
type PurgeStats struct {
	// Runs counts the runs that held the purge lock, Skipped those that
	// found another driver purging.
	Runs, Skipped int64
	// Rows counts the rows deleted.
	Rows int64
	// Failures counts the runs that failed; LastError is the latest
	// failure's error. A failure never fails the Expired call that ran
	// it: the next run retries.
	Failures  int64
	LastError error
}

// purger paces a driver's purges.
type purger struct {
	mu      sync.Mutex    // guards the fields below
	every   time.Duration // least time between two runs; negative: none
	batch   int           // rows per statement (purgeBatch)
	batches int           // statements per kind of row per run (purgeMaxBatches)
	last    time.Time     // start of the last run; zero for none, or a backlog left
	running bool          // a run is under way
	stats   PurgeStats
}

// start reports whether a run starts now, and marks it started.
func (p *purger) start(now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.every < 0 || p.running || (!p.last.IsZero() && now.Sub(p.last) < p.every) {
		return false
	}
	p.running, p.last = true, now
	return true
}

// finish records the end of a run: rows deleted, whether it held the
// lock, whether rows were left (then the next call runs again) and its
// error.
func (p *purger) finish(rows int, held, more bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running = false
	p.stats.Rows += int64(rows)
	switch {
	case err != nil:
		p.stats.Failures++
		p.stats.LastError = err
	case !held:
		p.stats.Skipped++
	default:
		p.stats.Runs++
	}
	if more && err == nil {
		p.last = time.Time{}
	}
}

// Purges returns the counts of the driver's purges (see Expired).
func (d *Driver) Purges() PurgeStats {
	d.purge.mu.Lock()
	defer d.purge.mu.Unlock()
	return d.purge.stats
}

// purgeIfDue runs a purge if one is due (purger.start): under the
// advisory lock, deleting at most purgeMaxBatches batches of each kind of
// expired row. Its error is counted (Purges), never returned: the reap
// that called it goes on, and a later run retries.
func (d *Driver) purgeIfDue(ctx context.Context) {
	if !d.purge.start(time.Now()) {
		return
	}
	rows, held, more, err := d.st.purgeLocked(ctx, d.purge.batch, d.purge.batches)
	if err != nil && ctx.Err() != nil {
		more, err = true, nil // the caller gave up, not the purge: the next call runs again
	}
	d.purge.finish(rows, held, more, err)
}

// purgeLocked runs purgeExpired on a connection of its own if it can take
// the purge's advisory lock (held), and releases the lock after; a
// connection whose lock could not be released is closed rather than
// returned to the pool, which releases the lock too.
func (s *Store) purgeLocked(ctx context.Context, batch, maxBatches int) (rows int, held, more bool, err error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return 0, false, false, failed("purge expired", err)
	}
	defer conn.Release()
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, purgeLock).Scan(&held); err != nil {
		return 0, false, false, failed("purge expired", err)
	}
	if !held {
		return 0, false, false, nil
	}
	defer func() {
		unlockCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, err := conn.Exec(unlockCtx, `SELECT pg_advisory_unlock($1)`, purgeLock); err != nil {
			_ = conn.Conn().Close(unlockCtx)
		}
	}()
	rows, more, err = purgeExpired(ctx, conn, batch, maxBatches)
	return rows, true, more, err
}
