package pgdriver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
	"github.com/go-stpe/scheduler/cluster/pgdriver/internal/pgtest"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The driver purges what expired by itself, from the reaper's calls of
// Expired: rate-limited, in bounded batches, one driver at a time, and a
// failed purge never fails the listing.

// purgeDriver migrates a fresh database and returns a driver on it whose
// purge runs at most once per every, its store and its pool.
func purgeDriver(t testing.TB, every time.Duration) (*pgdriver.Driver, *pgdriver.Store, *pgxpool.Pool) {
	t.Helper()
	pool := pgtest.Pool(t)
	if _, err := pgdriver.Migrate(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
	s, err := pgdriver.New(pool, pgdriver.Options{Partitions: 8, PurgeEvery: every})
	if err != nil {
		t.Fatal(err)
	}
	d, err := pgdriver.NewDriver(s)
	if err != nil {
		t.Fatal(err)
	}
	return d, s, pool
}

// completeKept completes the fixed tasks ids, each leaving a done record
// and a done marker for an hour and counting its run in a timeline minute
// of its own (its index) for an hour.
func completeKept(t *testing.T, s *pgdriver.Store, ids ...string) {
	t.Helper()
	for i, id := range ids {
		mustSchedule(t, s, dueTask(id))
		tok, _ := mustClaim(t, s, id)
		e := keepHour
		e.Timeline = driver.Timeline{Minute: int64(i), TTL: time.Hour}
		if out, err := s.Complete(context.Background(), id, tok, e); err != nil || out != pgdriver.OutcomeDone {
			t.Fatalf("Complete(%s) = %q, %v", id, out, err)
		}
	}
}

// expireKept moves the retention of the done records and markers of ids,
// and of the timeline minutes below minutes, a second into the past.
func expireKept(t *testing.T, pool *pgxpool.Pool, ids []string, minutes int) {
	t.Helper()
	exec(t, pool, `UPDATE stpe_tasks SET expires_at = statement_timestamp() - interval '1 second' WHERE id = ANY($1)`, ids)
	exec(t, pool, `UPDATE stpe_done_marks SET expires_at = statement_timestamp() - interval '1 second' WHERE id = ANY($1)`, ids)
	exec(t, pool, `UPDATE stpe_timeline SET expires_at = statement_timestamp() - interval '1 second' WHERE minute < $1`, minutes)
}

// keptRows counts the done records, the done markers and the timeline
// rows left.
func keptRows(t *testing.T, pool *pgxpool.Pool) (done, marks, minutes int) {
	t.Helper()
	err := pool.QueryRow(context.Background(), `SELECT
    (SELECT count(*) FROM stpe_tasks WHERE state = 'done'),
    (SELECT count(*) FROM stpe_done_marks),
    (SELECT count(*) FROM stpe_timeline)`).Scan(&done, &marks, &minutes)
	if err != nil {
		t.Fatal(err)
	}
	return done, marks, minutes
}

// mustListExpired calls d.Expired on every partition and fails t unless
// it lists exactly want.
func mustListExpired(t *testing.T, d *pgdriver.Driver, want ...string) {
	t.Helper()
	got, _, err := d.Expired(context.Background(), nil, 10)
	if err != nil {
		t.Fatalf("Expired: %v", err)
	}
	var ids []string
	for _, part := range got {
		ids = append(ids, part...)
	}
	if fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Fatalf("Expired listed %v, want %v", ids, want)
	}
}

func TestExpiredPurgesWhatExpiredAndKeepsTheRest(t *testing.T) {
	d, s, pool := purgeDriver(t, time.Hour)
	ids := []string{"t0", "t1", "t2", "t3", "t4", "t5"}
	completeKept(t, s, ids...)
	mustSchedule(t, s, dueTask("stuck"))
	mustClaim(t, s, "stuck")
	expireLease(t, pool, "stuck")
	expireKept(t, pool, ids[:3], 3)

	mustListExpired(t, d, "stuck")
	if done, marks, minutes := keptRows(t, pool); done != 3 || marks != 3 || minutes != 3 {
		t.Fatalf("after the purge: %d done records, %d markers, %d timeline rows; want the 3 unexpired of each", done, marks, minutes)
	}
	var left string
	if err := pool.QueryRow(context.Background(),
		`SELECT string_agg(id, ' ' ORDER BY id) FROM stpe_done_marks`).Scan(&left); err != nil || left != "t3 t4 t5" {
		t.Fatalf("markers left %q, %v; want t3 t4 t5", left, err)
	}
	if got := d.Purges(); got.Runs != 1 || got.Rows != 9 || got.Failures != 0 {
		t.Fatalf("Purges = %+v, want 1 run of 9 rows", got)
	}

	// Within the hour, the reaper's next calls purge nothing more.
	expireKept(t, pool, ids, 6)
	mustListExpired(t, d, "stuck")
	if done, marks, minutes := keptRows(t, pool); done != 3 || marks != 3 || minutes != 3 {
		t.Fatalf("a second call within PurgeEvery purged: %d, %d, %d rows left", done, marks, minutes)
	}
	if got := d.Purges(); got.Runs != 1 {
		t.Fatalf("Purges = %+v, want still 1 run", got)
	}
}

func TestPurgeRunsInBoundedBatchesAndCatchesUpOnABacklog(t *testing.T) {
	d, _, pool := purgeDriver(t, time.Hour)
	pgdriver.SetPurgeBatches(d, 2, 2)
	exec(t, pool, `INSERT INTO stpe_done_marks (id, kind, due, payload_md5, expires_at)
SELECT 'm' || g, 'k', statement_timestamp(), md5(''), statement_timestamp() - interval '1 second'
FROM generate_series(1, 10) g`)
	// Each run deletes 2 batches of 2; one that stopped at its bound
	// leaves the next call to run again, whatever PurgeEvery says.
	for i, want := range []int{6, 2, 0, 0} {
		mustListExpired(t, d)
		if _, marks, _ := keptRows(t, pool); marks != want {
			t.Fatalf("after call %d: %d markers left, want %d", i+1, marks, want)
		}
	}
	if got := d.Purges(); got.Runs != 3 || got.Rows != 10 {
		t.Fatalf("Purges = %+v, want 3 runs of 10 rows in all", got)
	}
}

func TestPurgeFailureDoesNotFailTheReapAndIsRetried(t *testing.T) {
	d, s, pool := purgeDriver(t, time.Nanosecond)
	completeKept(t, s, "t0")
	mustSchedule(t, s, dueTask("stuck"))
	mustClaim(t, s, "stuck")
	expireLease(t, pool, "stuck")
	expireKept(t, pool, []string{"t0"}, 1)

	exec(t, pool, `ALTER TABLE stpe_timeline RENAME TO stpe_timeline_away`)
	mustListExpired(t, d, "stuck")
	got := d.Purges()
	if got.Failures != 1 || got.LastError == nil || !strings.Contains(got.LastError.Error(), "cluster: purge expired") {
		t.Fatalf("Purges = %+v, want 1 failure of the purge", got)
	}

	exec(t, pool, `ALTER TABLE stpe_timeline_away RENAME TO stpe_timeline`)
	mustListExpired(t, d, "stuck")
	if done, marks, minutes := keptRows(t, pool); done != 0 || marks != 0 || minutes != 0 {
		t.Fatalf("after the retry: %d, %d, %d rows left; want none", done, marks, minutes)
	}
	if got := d.Purges(); got.Runs != 1 || got.Failures != 1 {
		t.Fatalf("Purges = %+v, want the failure then 1 run", got)
	}
}

func TestOnlyOneDriverPurgesAtATime(t *testing.T) {
	ctx := context.Background()
	d, s, pool := purgeDriver(t, time.Nanosecond)
	completeKept(t, s, "t0")
	expireKept(t, pool, []string{"t0"}, 1)

	other, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Release()
	if _, err := other.Exec(ctx, `SELECT pg_advisory_lock($1)`, pgdriver.PurgeLock); err != nil {
		t.Fatal(err)
	}
	mustListExpired(t, d)
	if done, marks, minutes := keptRows(t, pool); done != 1 || marks != 1 || minutes != 1 {
		t.Fatalf("purged while another node held the lock: %d, %d, %d rows left", done, marks, minutes)
	}
	if got := d.Purges(); got.Skipped != 1 || got.Runs != 0 {
		t.Fatalf("Purges = %+v, want 1 run skipped", got)
	}

	if _, err := other.Exec(ctx, `SELECT pg_advisory_unlock($1)`, pgdriver.PurgeLock); err != nil {
		t.Fatal(err)
	}
	mustListExpired(t, d)
	if done, marks, minutes := keptRows(t, pool); done != 0 || marks != 0 || minutes != 0 {
		t.Fatalf("after the other node let go: %d, %d, %d rows left; want none", done, marks, minutes)
	}
}

func TestNegativePurgeEveryLeavesThePurgeToTheProgram(t *testing.T) {
	d, s, pool := purgeDriver(t, -1)
	completeKept(t, s, "t0")
	expireKept(t, pool, []string{"t0"}, 1)
	mustListExpired(t, d)
	if done, marks, minutes := keptRows(t, pool); done != 1 || marks != 1 || minutes != 1 {
		t.Fatalf("the driver purged with its purge off: %d, %d, %d rows left", done, marks, minutes)
	}
	if n, err := s.PurgeExpired(context.Background(), 10); err != nil || n != 3 {
		t.Fatalf("PurgeExpired = %d, %v; want the 3 expired rows", n, err)
	}
}
