package pgdriver_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
	"github.com/jackc/pgx/v5/pgxpool"
)

// latenessBucket is the cluster package's bucket of a lateness of us
// microseconds (its timeline.go), which stpe_late_bucket must match.
func latenessBucket(us int64) int {
	if us < 1 {
		return 0
	}
	e := 0
	for int64(1)<<(e+1) <= us {
		e++
	}
	var sub int
	if e >= 2 {
		sub = int(us>>(e-2)) & 3
	} else {
		sub = int(us<<(2-e)) & 3
	}
	return min(1+e*4+sub, pgdriver.TimelineBuckets-1)
}

// TestLateBucketMatchesTheCluster: the SQL bucket of every lateness from
// 0 to 4,096 µs, and of each power of two (and its neighbours) up to 2^40,
// is the cluster package's.
func TestLateBucketMatchesTheCluster(t *testing.T) {
	_, pool := newStore(t)
	var us []int64
	for v := int64(-1); v <= 4096; v++ {
		us = append(us, v)
	}
	for e := 12; e <= 40; e++ {
		us = append(us, int64(1)<<e-1, int64(1)<<e, int64(1)<<e+1, int64(3)<<(e-1))
	}
	var got []int
	if err := pool.QueryRow(context.Background(), `SELECT array_agg(stpe_late_bucket(u) ORDER BY i) FROM unnest($1::bigint[]) WITH ORDINALITY AS x(u, i)`, us).Scan(&got); err != nil {
		t.Fatal(err)
	}
	for i, u := range us {
		if want := latenessBucket(u); got[i] != want {
			t.Errorf("stpe_late_bucket(%d) = %d, want %d", u, got[i], want)
		}
	}
}

// claimLate claims id and moves the time it was pending for to lateness
// before the claim, as if it had started that late.
func claimLate(t *testing.T, s *pgdriver.Store, pool *pgxpool.Pool, id string, lateness time.Duration) string {
	t.Helper()
	mustSchedule(t, s, dueTask(id))
	tok, _ := mustClaim(t, s, id)
	exec(t, pool, `UPDATE stpe_tasks SET run_at = claimed_at - $2::bigint * interval '1 microsecond' WHERE id = $1`, id, lateness.Microseconds())
	return tok
}

// TestTimelineCountsEndedRuns: Complete, Fail and ReapExpired count each
// run in the minute the caller gives, on its lateness bucket, a failed
// or timed-out run as failed and a reaped one as lost; Release and a
// timeline of no TTL count nothing; PurgeExpired deletes a minute past
// its TTL.
func TestTimelineCountsEndedRuns(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	const minute = 29_000_000
	tl := driver.Timeline{Minute: minute, TTL: time.Hour}
	tok := claimLate(t, s, pool, "ok", 1500*time.Microsecond)
	if _, err := s.Complete(ctx, "ok", tok, pgdriver.Ending{Timeline: tl}); err != nil {
		t.Fatal(err)
	}
	tok = claimLate(t, s, pool, "failed", 3*time.Second)
	if _, err := s.Fail(ctx, "failed", tok, pgdriver.Failure{Error: "boom", Timeline: tl}); err != nil {
		t.Fatal(err)
	}
	tok = claimLate(t, s, pool, "timed-out", 0)
	if _, err := s.Fail(ctx, "timed-out", tok, pgdriver.Failure{TimedOut: true, SkipRetry: true, Timeline: tl}); err != nil {
		t.Fatal(err)
	}
	claimLate(t, s, pool, "lost", time.Hour)
	expireLease(t, pool, "lost")
	if got, err := s.ReapExpired(ctx, nil, 10, 5, tl); err != nil || len(got) != 1 {
		t.Fatalf("ReapExpired = %v, %v", got, err)
	}
	tok = claimLate(t, s, pool, "released", time.Second)
	if _, err := s.Release(ctx, "released", tok); err != nil {
		t.Fatal(err)
	}
	tok = claimLate(t, s, pool, "uncounted", time.Second)
	if _, err := s.Complete(ctx, "uncounted", tok, pgdriver.Ending{Timeline: driver.Timeline{Minute: minute}}); err != nil {
		t.Fatal(err)
	}

	got, err := s.Timeline(ctx, minute-1, minute+1)
	if err != nil || len(got) != 1 {
		t.Fatalf("Timeline = %+v, %v; want one minute of kind k", got, err)
	}
	m := got[0]
	var want [pgdriver.TimelineBuckets]int64
	for _, late := range []time.Duration{1500 * time.Microsecond, 3 * time.Second, 0, time.Hour} {
		want[latenessBucket(late.Microseconds())]++
	}
	if m.Minute != minute || m.Kind != "k" || m.Runs != 4 || m.Failed != 2 || m.Lost != 1 || m.Late != want {
		t.Fatalf("minute = %+v; want 4 runs (buckets %v), 2 failed, 1 lost", m, want)
	}

	exec(t, pool, `UPDATE stpe_timeline SET expires_at = statement_timestamp() - interval '1 second'`)
	if got, err := s.Timeline(ctx, minute, minute); err != nil || len(got) != 0 {
		t.Fatalf("Timeline past the TTL = %+v, %v; want none", got, err)
	}
	var rows int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM stpe_timeline`).Scan(&rows); err != nil || rows < 6 {
		t.Fatalf("%d timeline rows (%v); want a row per partition, kind and field, at least 6", rows, err)
	}
	if n, err := s.PurgeExpired(ctx, 2); err != nil || n != rows {
		t.Fatalf("PurgeExpired = %d, %v; want the minute's %d rows", n, err, rows)
	}
}
