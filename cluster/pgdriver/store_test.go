package pgdriver_test

import (
	"context"
	"errors"
	"testing"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
)

// TestNewRefusesBadOptions: a nil pool or a negative number of partitions
// is an error wrapping scheduler.ErrInvalidArgument; zero partitions means
// the default.
func TestNewRefusesBadOptions(t *testing.T) {
	if _, err := pgdriver.New(nil, pgdriver.Options{}); !errors.Is(err, scheduler.ErrInvalidArgument) {
		t.Fatalf("New(nil pool): %v", err)
	}
	_, pool := newStore(t)
	if _, err := pgdriver.New(pool, pgdriver.Options{Partitions: -1}); !errors.Is(err, scheduler.ErrInvalidArgument) {
		t.Fatalf("New with -1 partitions: %v", err)
	}
	s, err := pgdriver.New(pool, pgdriver.Options{})
	if err != nil || s.Partitions() != pgdriver.DefaultPartitions {
		t.Fatalf("New with zero partitions: %d partitions, %v", s.Partitions(), err)
	}
}

// TestPartitionOutOfRangeIsRefused: a task that Options.PartitionOf puts
// outside the store's partitions is refused, and nothing is stored.
func TestPartitionOutOfRangeIsRefused(t *testing.T) {
	ctx := context.Background()
	_, pool := newStore(t)
	s, err := pgdriver.New(pool, pgdriver.Options{Partitions: 4, PartitionOf: func(string, int) int { return 4 }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Schedule(ctx, dueTask("a")); !errors.Is(err, scheduler.ErrInvalidArgument) {
		t.Fatalf("Schedule into partition 4 of 4: %v", err)
	}
	if _, err := s.ScheduleMany(ctx, []pgdriver.Task{dueTask("b")}); !errors.Is(err, scheduler.ErrInvalidArgument) {
		t.Fatalf("ScheduleMany into partition 4 of 4: %v", err)
	}
	if _, err := s.LoadWindow(ctx, []int{4}, past, 10); !errors.Is(err, scheduler.ErrInvalidArgument) {
		t.Fatalf("LoadWindow of partition 4 of 4: %v", err)
	}
}

// TestPartitionIndexMatchesTheClusterRule: an occurrence of a periodic
// task lies in its name's partition; other IDs, an @ included, hash whole.
func TestPartitionIndexMatchesTheClusterRule(t *testing.T) {
	const n = 64
	name := "report"
	occ := name + "@2030-01-02T03:04:05.123456789Z"
	if pgdriver.PartitionIndex(occ, n) != pgdriver.PartitionIndex(name, n) {
		t.Fatalf("occurrence %s in partition %d, its name in %d", occ, pgdriver.PartitionIndex(occ, n), pgdriver.PartitionIndex(name, n))
	}
	// FNV-1a 32 of "report" is 0x19bb34eb, 431699179; modulo 64, 43.
	if got := pgdriver.PartitionIndex(name, n); got != 43 {
		t.Fatalf("PartitionIndex(%q, 64) = %d, want 43", name, got)
	}
	notOcc := name + "@tomorrow"
	seen := map[int]bool{}
	for _, id := range []string{notOcc, name} {
		seen[pgdriver.PartitionIndex(id, n)] = true
	}
	if len(seen) != 2 {
		t.Fatalf("%s lies in its prefix's partition; want it hashed whole", notOcc)
	}
}
