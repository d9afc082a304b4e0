package pgdriver_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
	"github.com/go-stpe/scheduler/cluster/pgdriver/internal/pgtest"
)

// TestANodeOnPostgresPurgesWhatExpiredByItself: a started node whose
// retention and timeline TTL are short leaves a done marker and timeline
// rows that expire within seconds; its reaper's calls delete them, with
// nothing called by the user, and leave the rows not yet expired.
func TestANodeOnPostgresPurgesWhatExpiredByItself(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.NewPool(t, pgtest.Database(t))
	d, err := pgdriver.Open(ctx, pool, pgdriver.Options{Partitions: 8, PurgeEvery: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// Rows a node with a long retention left: not expired, they stay.
	exec(t, pool, `INSERT INTO stpe_done_marks (id, kind, due, payload_md5, expires_at)
VALUES ('kept', 'k', statement_timestamp(), md5(''), statement_timestamp() + interval '1 hour')`)
	exec(t, pool, `INSERT INTO stpe_timeline (partition, minute, kind, field, count, expires_at)
VALUES (0, 1, 'kept', '0', 1, statement_timestamp() + interval '1 hour')`)

	n, err := cluster.NewWithDriver(d, cluster.WithLease(2*time.Second), cluster.WithWindow(5*time.Second),
		cluster.WithSweepInterval(time.Second), cluster.WithRetention(time.Second), cluster.WithTimelineRetention(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan string, 1)
	if err := n.Handle("k", func(_ context.Context, task cluster.Task) error {
		ran <- task.ID
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.StopNow)
	if _, err := n.Schedule(ctx, "k", nil, time.Now(), cluster.WithID("fixed")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("the task did not run within 10s")
	}

	// The run left a marker and a timeline row or more, a second each; the
	// node's reaper deletes them once they expired.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var marks, minutes int
		if err := pool.QueryRow(ctx, `SELECT
    (SELECT count(*) FROM stpe_done_marks WHERE id = 'fixed'),
    (SELECT count(*) FROM stpe_timeline WHERE kind = 'k')`).Scan(&marks, &minutes); err != nil {
			t.Fatal(err)
		}
		if marks == 0 && minutes == 0 && d.Purges().Rows >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30s: %d markers and %d timeline rows of the run left; purges %+v", marks, minutes, d.Purges())
		}
		time.Sleep(20 * time.Millisecond)
	}
	var kept int
	if err := pool.QueryRow(ctx, `SELECT
    (SELECT count(*) FROM stpe_done_marks WHERE id = 'kept') + (SELECT count(*) FROM stpe_timeline WHERE kind = 'kept')`).Scan(&kept); err != nil {
		t.Fatal(err)
	}
	if kept != 2 {
		t.Fatalf("%d of the 2 unexpired rows left; the purge took an unexpired one", kept)
	}
}
