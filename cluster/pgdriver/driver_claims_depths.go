package pgdriver

import (
	"context"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/jackc/pgx/v5"
)

// The samples of pending depth, of the Claims group: how many tasks of
// each kind are pending in each partition and since when, read by
// PendingDepths and written by RecordPendingDepths to the timeline
// (stpe_timeline) as the fields "p" (the pending tasks) and "o" (how
// overdue the earliest was, in µs) of the kind's row of the minute, as
// the Redis driver writes "<kind>|p" and "<kind>|o" in the minute's hash.

// Depth sample fields of stpe_timeline.
const (
	depthPendingField = "p"
	depthOverdueField = "o"
)

// PendingDepths reads, in one statement, for each kind of each of
// partitions, how many tasks are pending (a paused kind's too, as the
// Redis driver counts its kind's pending index) and the time the earliest
// is pending for; a kind with no pending task in a partition is left out.
// It only reads, one snapshot for all partitions.
func (d *Driver) PendingDepths(ctx context.Context, partitions []int) ([]driver.PendingDepth, error) {
	if len(partitions) == 0 {
		return nil, nil
	}
	if err := d.st.validPartitions("pending depths", partitions); err != nil {
		return nil, err
	}
	rows, err := d.st.pool.Query(ctx, `
SELECT partition, kind, count(*), min(run_at) FROM stpe_tasks
WHERE state = 'pending' AND partition = ANY($1::integer[])
GROUP BY partition, kind
ORDER BY partition, kind`, partitionsArg(partitions))
	if err != nil {
		return nil, failed("pending depths", err)
	}
	depths, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (driver.PendingDepth, error) {
		var p driver.PendingDepth
		err := r.Scan(&p.Partition, &p.Kind, &p.Pending, &p.Earliest)
		return p, err
	})
	if err != nil {
		return nil, failed("pending depths", err)
	}
	return depths, nil
}

// RecordPendingDepths writes, in one statement, each of depths (its
// Pending and Overdue) as the sample of its kind and partition in tl's
// minute of the timeline, replacing an earlier sample of the minute (the
// later of two samples of one kind and partition in depths wins), kept
// for tl.TTL from the database's clock; nothing when tl.TTL is 0.
func (d *Driver) RecordPendingDepths(ctx context.Context, depths []driver.PendingDepth, tl driver.Timeline) error {
	if tl.TTL <= 0 || len(depths) == 0 {
		return nil
	}
	type sample struct {
		part int
		kind string
	}
	last := make(map[sample]int, len(depths))
	for i, p := range depths {
		if p.Partition < 0 || p.Partition >= d.st.partitions {
			return invalid("record pending depths", "partition %d out of [0, %d)", p.Partition, d.st.partitions)
		}
		last[sample{p.Partition, p.Kind}] = i
	}
	n := len(last)
	parts, kinds := make([]int32, 0, n), make([]string, 0, n)
	pending, overdue := make([]int64, 0, n), make([]int64, 0, n)
	for i, p := range depths {
		if last[sample{p.Partition, p.Kind}] != i {
			continue
		}
		parts, kinds = append(parts, int32(p.Partition)), append(kinds, p.Kind)
		pending, overdue = append(pending, int64(p.Pending)), append(overdue, micros(max(p.Overdue, 0)))
	}
	minute, ttl := timelineArgs(tl)
	_, err := d.st.pool.Exec(ctx, `
INSERT INTO stpe_timeline (partition, minute, kind, field, count, expires_at)
SELECT s.partition, $5::bigint, s.kind, f.field, f.count, statement_timestamp() + $6::bigint * interval '1 microsecond'
FROM unnest($1::integer[], $2::text[], $3::bigint[], $4::bigint[]) AS s(partition, kind, pending, overdue)
CROSS JOIN LATERAL (VALUES ('`+depthPendingField+`', s.pending), ('`+depthOverdueField+`', s.overdue)) AS f(field, count)
ON CONFLICT (minute, partition, kind, field) DO UPDATE SET count = EXCLUDED.count, expires_at = EXCLUDED.expires_at`,
		parts, kinds, pending, overdue, minute, ttl)
	if err != nil {
		return failed("record pending depths", err)
	}
	return nil
}
