package pgdriver

import (
	"context"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/jackc/pgx/v5"
)

// PeriodicStates reads, for each periodic task of names, in one
// statement: its settings as a node last wrote them to its cursor (Found
// false if none did) and the due times of its pending occurrences (kind
// "@" + name) that the misfire policy chooses among at now: the first by
// the time it is pending for, the latest pending for no later than now
// (Overdue), and the first after now (Onwards). A task with nothing stored
// has the zero PeriodicState.
func (d *Driver) PeriodicStates(ctx context.Context, names []string, now time.Time) (map[string]driver.PeriodicState, error) {
	rows, err := d.st.pool.Query(ctx, `
SELECT n.name, c.name IS NOT NULL, coalesce(c.misfire, ''), coalesce(c.overlap, false),
    f.id, f.due, o.id, o.due, w.id, w.due
FROM unnest($1::text[]) AS n(name)
LEFT JOIN stpe_periodic_cursors AS c ON c.name = n.name
LEFT JOIN LATERAL (SELECT id, due FROM stpe_tasks WHERE kind = '@' || n.name AND state = 'pending'
    ORDER BY run_at, id LIMIT 1) AS f ON true
LEFT JOIN LATERAL (SELECT id, due FROM stpe_tasks WHERE kind = '@' || n.name AND state = 'pending' AND run_at <= $2
    ORDER BY run_at DESC, id DESC LIMIT 1) AS o ON true
LEFT JOIN LATERAL (SELECT id, due FROM stpe_tasks WHERE kind = '@' || n.name AND state = 'pending' AND run_at > $2
    ORDER BY run_at, id LIMIT 1) AS w ON true`, names, toTime(now))
	if err != nil {
		return nil, failed("periodic states", err)
	}
	out := make(map[string]driver.PeriodicState, len(names))
	var name string
	var s driver.PeriodicState
	var first, overdue, onwards occurrence
	_, err = pgx.ForEachRow(rows, []any{&name, &s.Found, &s.Misfire, &s.Overlap,
		&first.id, &first.due, &overdue.id, &overdue.due, &onwards.id, &onwards.due}, func() error {
		s.First, s.Overdue, s.Onwards = first.at(), overdue.at(), onwards.at()
		out[name] = s
		return nil
	})
	if err != nil {
		return nil, failed("periodic states", err)
	}
	return out, nil
}

// occurrence is a pending occurrence PeriodicStates read, if any.
type occurrence struct {
	id  *string
	due *time.Time
}

// at is the occurrence's due time: from its ID, exact to the nanosecond
// as the node computed it (the column keeps microseconds), as the Redis
// driver reads it; from the column for an ID of another shape; the zero
// Time for none.
func (o occurrence) at() time.Time {
	if o.id == nil {
		return time.Time{}
	}
	if _, due, ok := driver.ParseOccurrenceID(*o.id); ok {
		return due
	}
	return stamp(deref(o.due))
}

// Cursors are the cursors of the periodic tasks names (the latest
// occurrence any node stored), in order: the zero Time for a task with
// none. A cursor never expires.
func (d *Driver) Cursors(ctx context.Context, names []string) ([]time.Time, error) {
	rows, err := d.st.pool.Query(ctx, `
SELECT c.last_due FROM unnest($1::text[]) WITH ORDINALITY AS n(name, i)
LEFT JOIN stpe_periodic_cursors AS c ON c.name = n.name ORDER BY n.i`, names)
	if err != nil {
		return nil, failed("read cursors", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (time.Time, error) {
		var last *time.Time
		err := r.Scan(&last)
		return stamp(deref(last)), err
	})
	if err != nil {
		return nil, failed("read cursors", err)
	}
	return out, nil
}

// WriteCursors writes each cursor's settings and moves it forward to its
// Stored occurrence, never back (a zero Stored moves nothing), all in one
// statement. A name given twice counts once: its latest Stored and the
// settings given last.
func (d *Driver) WriteCursors(ctx context.Context, cursors []driver.Cursor) error {
	if len(cursors) == 0 {
		return nil
	}
	at := make(map[string]int, len(cursors))
	var names, misfires []string
	var stored []*time.Time
	var overlaps []bool
	for _, c := range cursors {
		i, seen := at[c.Name]
		if !seen {
			i = len(names)
			at[c.Name] = i
			names, misfires, stored, overlaps = append(names, c.Name), append(misfires, ""), append(stored, nil), append(overlaps, false)
		}
		misfires[i], overlaps[i] = c.Misfire, c.Overlap
		if s := optTime(c.Stored); s != nil && (stored[i] == nil || s.After(*stored[i])) {
			stored[i] = s
		}
	}
	_, err := d.st.pool.Exec(ctx, `
INSERT INTO stpe_periodic_cursors AS c (name, last_due, misfire, overlap)
SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::boolean[])
ON CONFLICT (name) DO UPDATE SET misfire = EXCLUDED.misfire, overlap = EXCLUDED.overlap,
    last_due = greatest(c.last_due, EXCLUDED.last_due), -- greatest ignores NULLs
    updated_at = statement_timestamp()`, names, stored, misfires, overlaps)
	if err != nil {
		return failed("write cursors", err)
	}
	return nil
}
