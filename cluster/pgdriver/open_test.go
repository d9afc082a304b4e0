package pgdriver_test

import (
	"context"
	"errors"
	"testing"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
	"github.com/go-stpe/scheduler/cluster/pgdriver/internal/pgtest"
)

// TestOpenMigratesAndReturnsTheDriver: Open brings a fresh database to
// the latest schema and returns a driver of the options' partitions; a
// bad argument migrates nothing.
func TestOpenMigratesAndReturnsTheDriver(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if _, err := pgdriver.Open(ctx, nil, pgdriver.Options{}); !errors.Is(err, scheduler.ErrInvalidArgument) {
		t.Fatalf("Open(nil pool) = %v, want an invalid argument", err)
	}
	if _, err := pgdriver.Open(ctx, pool, pgdriver.Options{Partitions: -1}); !errors.Is(err, scheduler.ErrInvalidArgument) {
		t.Fatalf("Open(-1 partitions) = %v, want an invalid argument", err)
	}
	if v, err := pgdriver.SchemaVersion(ctx, pool); err != nil || v != 0 {
		t.Fatalf("SchemaVersion after refused Opens = %d, %v; want 0", v, err)
	}
	d, err := pgdriver.Open(ctx, pool, pgdriver.Options{Partitions: 16})
	if err != nil {
		t.Fatal(err)
	}
	if d.Partitions() != 16 {
		t.Fatalf("Partitions = %d, want 16", d.Partitions())
	}
	if v, err := pgdriver.SchemaVersion(ctx, pool); err != nil || v != pgdriver.LatestVersion() {
		t.Fatalf("SchemaVersion after Open = %d, %v; want %d", v, err, pgdriver.LatestVersion())
	}
}
