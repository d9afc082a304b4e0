package pgdriver

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/jackc/pgx/v5"
)

// What the store knows of kinds (whether one is known at all, which ones
// the partitions store, how many of a kind's tasks are due), and the
// per-minute timeline as the nodes read it.

// KnownKind tells, in one statement, whether kind is known: claimed by a
// live member (stpe_members.claim_kinds, the Redis driver's node kinds),
// stored (a task of it in any state) or paused, or, for "@" + name, a
// periodic task declared by a live declaration (stpe_periodic_decls).
func (d *Driver) KnownKind(ctx context.Context, kind string) (bool, error) {
	var known bool
	name, periodic := strings.CutPrefix(kind, "@")
	err := d.st.pool.QueryRow(ctx, `
SELECT EXISTS (SELECT 1 FROM stpe_tasks WHERE kind = $1)
    OR EXISTS (SELECT 1 FROM stpe_paused_kinds WHERE kind = $1)
    OR EXISTS (SELECT 1 FROM stpe_members WHERE expires_at > statement_timestamp() AND $1 = ANY(claim_kinds))
    OR $3 AND EXISTS (SELECT 1 FROM stpe_periodic_decls WHERE name = $2 AND expires_at > statement_timestamp())`,
		kind, name, periodic).Scan(&known)
	if err != nil {
		return false, failed("known kind "+kind, err)
	}
	return known, nil
}

// StoredKinds returns the kinds of the tasks stored in the partitions
// parts, each once, in one statement that skips from kind to kind along
// the index of kinds (a few index probes per kind, not a scan of every
// task).
func (d *Driver) StoredKinds(ctx context.Context, parts []int) ([]string, error) {
	if len(parts) == 0 {
		return nil, nil
	}
	if err := d.st.validPartitions("stored kinds", parts); err != nil {
		return nil, err
	}
	rows, err := d.st.pool.Query(ctx, storedKindsSQL,
		partitionsArg(parts))
	if err != nil {
		return nil, failed("stored kinds", err)
	}
	kinds, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, failed("stored kinds", err)
	}
	return kinds, nil
}

// DueOfKind counts the pending tasks of kind in parts due by now (the
// caller's reckoning of the database's clock), a paused kind's too, and
// returns the earliest run time among them (zero if none), in one
// statement on the kind's pending index.
func (d *Driver) DueOfKind(ctx context.Context, parts []int, kind string, now time.Time) (int, time.Time, error) {
	if len(parts) == 0 {
		return 0, time.Time{}, nil
	}
	if err := d.st.validPartitions("due of kind", parts); err != nil {
		return 0, time.Time{}, err
	}
	var (
		waiting int
		oldest  *time.Time
	)
	err := d.st.pool.QueryRow(ctx, dueOfKindSQL,
		partitionsArg(parts), kind, toTime(now)).Scan(&waiting, &oldest)
	if err != nil {
		return 0, time.Time{}, failed("due of kind "+kind, err)
	}
	return waiting, deref(oldest), nil
}

// maxLateBuckets bounds the lateness buckets read (Late's length).
const maxLateBuckets = 1024

// ReadTimeline returns the timeline's counts of kind ("" for every kind)
// for each minute from first to last, summed over the partitions (the
// oldest overdue sample the longest of them), one entry per minute, in one
// statement; minutes past their TTL by the database's clock count
// nothing.
func (d *Driver) ReadTimeline(ctx context.Context, kind string, first, last int64) ([]driver.MinuteCounts, error) {
	if first > last {
		return nil, nil
	}
	rows, err := d.st.pool.Query(ctx, `
SELECT minute, field, CASE WHEN field = '`+depthOverdueField+`' THEN max(count) ELSE sum(count) END::bigint
FROM stpe_timeline
WHERE minute BETWEEN $1 AND $2 AND expires_at > statement_timestamp() AND ($3 = '' OR kind = $3)
GROUP BY minute, field`, first, last, kind)
	if err != nil {
		return nil, failed("read timeline", err)
	}
	out := make([]driver.MinuteCounts, last-first+1)
	for i := range out {
		out[i].Minute = first + int64(i)
	}
	var (
		minute, count int64
		field         string
	)
	_, err = pgx.ForEachRow(rows, []any{&minute, &field, &count}, func() error {
		return addField(&out[minute-first], field, count)
	})
	if err != nil {
		return nil, failed("read timeline", err)
	}
	return out, nil
}

// addField adds the count of one field of the timeline to c.
func addField(c *driver.MinuteCounts, field string, count int64) error {
	switch field {
	case "f":
		c.Failed += int(count)
	case "l":
		c.Lost += int(count)
	case depthPendingField:
		c.Pending += int(count)
	case depthOverdueField:
		c.Oldest = max(c.Oldest, time.Duration(count)*time.Microsecond)
	default:
		b, err := strconv.Atoi(field)
		if err != nil || b < 0 || b >= maxLateBuckets {
			return fmt.Errorf("field %q of minute %d is no lateness bucket", field, c.Minute)
		}
		if b >= len(c.Late) {
			c.Late = append(c.Late, make([]uint64, b+1-len(c.Late))...)
		}
		c.Late[b] += uint64(count)
	}
	return nil
}

// storedKindsSQL is the statement of StoredKinds: $1 the partitions.
const storedKindsSQL = `
WITH RECURSIVE kinds AS (
    SELECT min(kind) AS kind FROM stpe_tasks
    UNION ALL
    SELECT (SELECT min(t.kind) FROM stpe_tasks t WHERE t.kind > k.kind) FROM kinds k WHERE k.kind IS NOT NULL
)
SELECT k.kind FROM kinds k
WHERE k.kind IS NOT NULL
    AND EXISTS (SELECT 1 FROM stpe_tasks t WHERE t.kind = k.kind AND t.partition = ANY($1::integer[]))`

// dueOfKindSQL is the statement of DueOfKind: $1 the partitions, $2 the kind, $3 now.
const dueOfKindSQL = `
SELECT count(*) FILTER (WHERE run_at <= $3), min(run_at) FROM stpe_tasks
WHERE state = 'pending' AND kind = $2 AND partition = ANY($1::integer[])`
