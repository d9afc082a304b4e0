package pgdriver

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/jackc/pgx/v5"
)

// The per-minute timeline, as the Redis store keeps it: each step that
// ends a run (Complete, Fail, ReapExpired) counts it, in the statement
// that changes the task, in the row of its partition, the minute the
// caller gives (driver.Timeline) and its kind: one count on its start
// lateness bucket (the number of runs is the buckets' sum), one more for a
// failed or timed-out run ("f") or a lost one ("l"). A run handed back
// (Release) did not end and is not counted. A row is kept until the
// minute's TTL after the count that created it; PurgeExpired deletes it
// after.

// TimelineBuckets is the number of start lateness buckets: 0 for none,
// then four per power of two of microseconds from 1 µs, the last holding
// every lateness beyond about 8 s (the cluster package's latenessBucket).
const TimelineBuckets = 1 + 24*4

// countRun is the common table expression "counted" that counts the runs
// of the rows of the CTE src (columns partition, kind, run_at, claimed_at:
// the lateness is claimed_at - run_at) in the timeline, plus the field
// extra ('f', 'l' or NULL), at the minute and TTL (µs) of the parameters
// minute and ttl; nothing when ttl is 0. The runs are summed per timeline
// row first, so that many runs of one statement (a reap, a combined
// completion) update each row once, and the rows are written in key order,
// so that two such statements never deadlock on them.
func countRun(src, extra, minute, ttl string) string {
	return `counted AS (
    INSERT INTO stpe_timeline (partition, minute, kind, field, count, expires_at)
    SELECT r.partition, ` + minute + `::bigint, r.kind, f.field, count(*), statement_timestamp() + ` + ttl + `::bigint * interval '1 microsecond'
    FROM ` + src + ` r CROSS JOIN LATERAL unnest(ARRAY[
        stpe_late_bucket((extract(epoch FROM r.claimed_at - r.run_at) * 1000000)::bigint)::text,
        ` + extra + `::text]) AS f(field)
    WHERE ` + ttl + `::bigint > 0 AND f.field IS NOT NULL
    GROUP BY r.partition, r.kind, f.field
    ORDER BY r.partition, r.kind, f.field
    ON CONFLICT (minute, partition, kind, field) DO UPDATE SET count = stpe_timeline.count + EXCLUDED.count
)`
}

// timelineArgs are the minute and TTL (µs) of tl as countRun's parameters.
func timelineArgs(tl driver.Timeline) (int64, int64) {
	if tl.TTL <= 0 {
		return 0, 0
	}
	return tl.Minute, max(micros(tl.TTL), 1)
}

// TimelineMinute is what the timeline counted of one kind in one minute,
// over every partition.
type TimelineMinute struct {
	// Minute counts minutes since the Unix epoch.
	Minute int64
	Kind   string
	// Late counts the runs by start lateness bucket (see TimelineBuckets);
	// Runs is their sum.
	Late [TimelineBuckets]int64
	Runs int64
	// Failed counts the failed and timed-out runs, Lost the runs whose
	// lease expired.
	Failed, Lost int64
}

// Timeline reads the counts of the minutes from through to (since the
// Unix epoch), by minute and kind, over every partition; minutes past
// their TTL by the database's clock are left out.
func (s *Store) Timeline(ctx context.Context, from, to int64) ([]TimelineMinute, error) {
	rows, err := s.pool.Query(ctx, `
SELECT minute, kind, field, sum(count)::bigint FROM stpe_timeline
WHERE minute BETWEEN $1 AND $2 AND expires_at > statement_timestamp()
GROUP BY minute, kind, field ORDER BY minute, kind`, from, to)
	if err != nil {
		return nil, failed("timeline", err)
	}
	var out []TimelineMinute
	var (
		minute, count int64
		kind, field   string
	)
	_, err = pgx.ForEachRow(rows, []any{&minute, &kind, &field, &count}, func() error {
		if field == depthPendingField || field == depthOverdueField {
			return nil // a sample of pending depth (RecordPendingDepths), not a run
		}
		if len(out) == 0 || out[len(out)-1].Minute != minute || out[len(out)-1].Kind != kind {
			out = append(out, TimelineMinute{Minute: minute, Kind: kind})
		}
		m := &out[len(out)-1]
		switch field {
		case "f":
			m.Failed += count
		case "l":
			m.Lost += count
		default:
			b, err := strconv.Atoi(field)
			if err != nil || b < 0 {
				return fmt.Errorf("field %q of minute %d is no lateness bucket", field, minute)
			}
			m.Late[min(b, TimelineBuckets-1)] += count
			m.Runs += count
		}
		return nil
	})
	if err != nil {
		return nil, failed("timeline", err)
	}
	return out, nil
}

// MinuteOf is the minute (since the Unix epoch) t falls in, as
// driver.Timeline counts it.
func MinuteOf(t time.Time) int64 { return t.Unix() / 60 }
