package pgdriver_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster/driver"
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

// TestPartitionOfIsTheDriversRule: by default a task lies in the
// partition driver.PartitionOf names, an occurrence of a periodic task in
// its name's.
func TestPartitionOfIsTheDriversRule(t *testing.T) {
	_, pool := newStore(t)
	s, err := pgdriver.New(pool, pgdriver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	occ := driver.OccurrenceID("report", time.Date(2030, 1, 2, 3, 4, 5, 6, time.UTC))
	for _, id := range []string{"a", "report", occ, "report@tomorrow", "0123456789abcdef0123456789abcdef"} {
		if got, want := s.PartitionOf(id), driver.PartitionOf(id, pgdriver.DefaultPartitions); got != want {
			t.Errorf("PartitionOf(%q) = %d, want %d", id, got, want)
		}
	}
	if s.PartitionOf(occ) != s.PartitionOf("report") {
		t.Fatalf("occurrence %s in partition %d, its task in %d", occ, s.PartitionOf(occ), s.PartitionOf("report"))
	}
}
