package pgdriver

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Periodic cursors: for each periodic task, the latest occurrence stored
// (so that no node stores one twice, nor one before it), with its misfire
// policy and whether its occurrences may overlap (the cluster package's
// q:periodic:<name> hash). A cursor only moves forward and never expires.

// Cursor is a periodic task's cursor.
type Cursor struct {
	Name string
	// LastDue is the latest occurrence stored; zero for none yet.
	LastDue time.Time
	// Misfire is the task's misfire policy, as the cluster package
	// names it.
	Misfire string
	Overlap bool
}

// AdvanceCursor writes c's settings and moves its cursor forward to
// c.LastDue, never back (a zero LastDue leaves it where it is), and
// returns the cursor as stored.
func (s *Store) AdvanceCursor(ctx context.Context, c Cursor) (Cursor, error) {
	if c.Name == "" {
		return Cursor{}, invalid("advance cursor", "empty name")
	}
	var last *time.Time
	if !c.LastDue.IsZero() {
		t := toTime(c.LastDue)
		last = &t
	}
	misfire := c.Misfire
	if misfire == "" {
		misfire = "coalesce"
	}
	var stored *time.Time
	out := Cursor{Name: c.Name}
	err := s.pool.QueryRow(ctx, `
INSERT INTO stpe_periodic_cursors (name, last_due, misfire, overlap) VALUES ($1, $2, $3, $4)
ON CONFLICT (name) DO UPDATE SET misfire = EXCLUDED.misfire, overlap = EXCLUDED.overlap,
    last_due = greatest(stpe_periodic_cursors.last_due, EXCLUDED.last_due), -- greatest ignores NULLs
    updated_at = statement_timestamp()
RETURNING last_due, misfire, overlap`, c.Name, last, misfire, c.Overlap).Scan(&stored, &out.Misfire, &out.Overlap)
	if err != nil {
		return Cursor{}, failed("advance cursor "+c.Name, err)
	}
	out.LastDue = deref(stored)
	return out, nil
}

// Cursors returns the cursors of names that exist, by name.
func (s *Store) Cursors(ctx context.Context, names []string) (map[string]Cursor, error) {
	rows, err := s.pool.Query(ctx, `
SELECT name, last_due, misfire, overlap FROM stpe_periodic_cursors WHERE name = ANY($1::text[])`, names)
	if err != nil {
		return nil, failed("read cursors", err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Cursor, error) {
		var c Cursor
		var last *time.Time
		err := r.Scan(&c.Name, &last, &c.Misfire, &c.Overlap)
		c.LastDue = deref(last)
		return c, err
	})
	if err != nil {
		return nil, failed("read cursors", err)
	}
	out := make(map[string]Cursor, len(list))
	for _, c := range list {
		out[c.Name] = c
	}
	return out, nil
}
