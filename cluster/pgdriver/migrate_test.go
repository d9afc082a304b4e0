package pgdriver_test

import (
	"context"
	"sync"
	"testing"

	"github.com/go-stpe/scheduler/cluster/pgdriver"
	"github.com/go-stpe/scheduler/cluster/pgdriver/internal/pgtest"
)

// TestMigrateTwice: a second Migrate finds nothing to do and records each
// migration once.
func TestMigrateTwice(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if v, err := pgdriver.SchemaVersion(ctx, pool); err != nil || v != 0 {
		t.Fatalf("SchemaVersion before Migrate = %d, %v; want 0", v, err)
	}
	for i := range 2 {
		v, err := pgdriver.Migrate(ctx, pool)
		if err != nil {
			t.Fatalf("Migrate #%d: %v", i+1, err)
		}
		if v != pgdriver.LatestVersion() || v < 1 {
			t.Fatalf("Migrate #%d = version %d, want %d", i+1, v, pgdriver.LatestVersion())
		}
	}
	var rows, distinct int
	if err := pool.QueryRow(ctx, "SELECT count(*), count(DISTINCT version) FROM stpe_migrations").Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	if rows != pgdriver.LatestVersion() || distinct != rows {
		t.Fatalf("stpe_migrations has %d rows (%d versions), want %d", rows, distinct, pgdriver.LatestVersion())
	}
	for _, table := range []string{"stpe_tasks", "stpe_paused_kinds", "stpe_members", "stpe_periodic_cursors"} {
		var ok bool
		if err := pool.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", table).Scan(&ok); err != nil || !ok {
			t.Fatalf("table %s missing after Migrate (%v)", table, err)
		}
	}
}

// TestMigrateConcurrently: eight nodes migrating one fresh database at
// once all succeed, and each migration is applied once.
func TestMigrateConcurrently(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = pgdriver.Migrate(ctx, pool)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Migrate in goroutine %d: %v", i, err)
		}
	}
	var rows int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM stpe_migrations").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != pgdriver.LatestVersion() {
		t.Fatalf("stpe_migrations has %d rows, want %d", rows, pgdriver.LatestVersion())
	}
}
