package pgdriver_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/pgdriver/internal/pgtest"
	"github.com/jackc/pgx/v5/pgxpool"
)

// What the conformance suite cannot see of the layout: a database
// recorded with another number of partitions, one not migrated, and two
// nodes recording a fresh database's layout at once.

func TestCheckLayoutRefusesAnotherNumberOfPartitions(t *testing.T) {
	ctx := context.Background()
	_, pool := newStore(t)
	if err := newConformanceDriver(t, pool, 3).CheckLayout(ctx); err != nil {
		t.Fatal(err)
	}
	other := newConformanceDriver(t, pool, 5)
	err := other.CheckLayout(ctx)
	var le *driver.LayoutError
	if !errors.As(err, &le) || !errors.Is(err, driver.ErrLayout) {
		t.Fatalf("CheckLayout with 5 partitions on a database of 3 = %v, want a *driver.LayoutError", err)
	}
	if le.Reason != driver.LayoutPartitions || le.Found != "3" || le.Record == "" {
		t.Fatalf("LayoutError = %+v, want LayoutPartitions found \"3\" with its record named", le)
	}
	if n, err := other.RecordedPartitions(ctx); err != nil || n != 3 {
		t.Fatalf("RecordedPartitions = %d, %v; want 3 (the refused node records nothing)", n, err)
	}
}

func TestCheckLayoutRefusesADatabaseNotMigrated(t *testing.T) {
	ctx := context.Background()
	d := newConformanceDriver(t, pgtest.Pool(t), 3)
	if n, err := d.RecordedPartitions(ctx); err != nil || n != 0 {
		t.Fatalf("RecordedPartitions before Migrate = %d, %v; want 0", n, err)
	}
	err := d.CheckLayout(ctx)
	if !errors.Is(err, driver.ErrLayout) || !strings.Contains(err.Error(), "Migrate") {
		t.Fatalf("CheckLayout before Migrate = %v, want an error wrapping ErrLayout that says to migrate", err)
	}
}

// TestCheckLayoutWaitsForAConcurrentFirstRecord: a node that checks the
// layout while another records it on a fresh database waits for that
// record and accepts it (or refuses it), never failing for finding no
// record at all.
func TestCheckLayoutWaitsForAConcurrentFirstRecord(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		parts int
		ok    bool
	}{{4, true}, {6, false}} {
		_, pool := newStore(t)
		// The first node's record (the layout version the driver
		// writes), not yet committed.
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		if _, err := tx.Exec(ctx, `INSERT INTO stpe_layout (version, partitions) VALUES ('pg1', 4)`); err != nil {
			t.Fatal(err)
		}
		second := newConformanceDriver(t, pool, c.parts)
		got := make(chan error, 1)
		go func() { got <- second.CheckLayout(ctx) }()
		awaitLockWait(t, pool, "stpe_layout")
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		err = <-got
		var le *driver.LayoutError
		switch {
		case c.ok && err != nil:
			t.Fatalf("CheckLayout of 4 partitions racing a record of 4 = %v, want nil", err)
		case !c.ok && (!errors.As(err, &le) || le.Reason != driver.LayoutPartitions):
			t.Fatalf("CheckLayout of 6 partitions racing a record of 4 = %v, want LayoutPartitions", err)
		}
	}
}

// awaitLockWait waits until a statement on table waits for a lock.
func awaitLockWait(t *testing.T, pool *pgxpool.Pool, table string) {
	t.Helper()
	deadline := time.Now().Add(eventWait)
	for {
		var waiting bool
		err := pool.QueryRow(context.Background(), `
SELECT count(*) > 0 FROM pg_stat_activity
WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%'`,
			table).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		if waiting {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no statement on %s waits for a lock", table)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestAddrNamesTheDatabaseWithoutCredentials: host:port/database, never
// the user nor the password of the connection string.
func TestAddrNamesTheDatabaseWithoutCredentials(t *testing.T) {
	pool, err := pgxpool.New(context.Background(), "postgres://alice:s3cret@db.example:6543/orders?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	got := newConformanceDriver(t, pool, 4).Addr()
	if got != "db.example:6543/orders" || strings.Contains(got, "s3cret") || strings.Contains(got, "alice") {
		t.Fatalf("Addr = %q, want db.example:6543/orders", got)
	}
}

// TestRenewAfterTheMembershipExpiredIsAChange: a claimer whose membership
// expired (no node renewed meanwhile to drop it) rejoins the claimers when
// it renews again, and that is a change: any node that read the claimers
// in between read them without it.
func TestRenewAfterTheMembershipExpiredIsAChange(t *testing.T) {
	ctx := context.Background()
	_, pool := newStore(t)
	d := newConformanceDriver(t, pool, 4)
	r := driver.Renewal{Node: "a", TTL: 100 * time.Millisecond, Claimer: true, Kinds: []string{"k"}}
	if _, err := d.Renew(ctx, r); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(eventWait)
	for {
		members, err := d.Members(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(members) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the membership did not expire")
		}
		time.Sleep(10 * time.Millisecond)
	}
	r.TTL = time.Minute
	m, err := d.Renew(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Changed || len(m.Live) != 1 || m.Live[0].Name != "a" {
		t.Fatalf("renewal after expiry = %+v, want a change with a live", m)
	}
}
