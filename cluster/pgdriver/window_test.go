package pgdriver_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/pgdriver"
)

// TestLoadWindowReadsDuePendingInOrder: the window is the pending tasks of
// the partitions asked, up to until, earliest first, up to the limit,
// without running tasks or those of a paused kind.
func TestLoadWindowReadsDuePendingInOrder(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	base := time.Date(2031, 5, 1, 12, 0, 0, 0, time.UTC)
	for i := range 10 {
		mustSchedule(t, s, pgdriver.Task{ID: fmt.Sprintf("w%d", i), Kind: "k", Due: base.Add(time.Duration(9-i) * time.Minute)})
	}
	mustSchedule(t, s, pgdriver.Task{ID: "late", Kind: "k", Due: base.Add(time.Hour)})
	mustSchedule(t, s, pgdriver.Task{ID: "quiet", Kind: "q", Due: base})
	mustSchedule(t, s, dueTask("claimed"))
	mustClaim(t, s, "claimed")
	if err := s.Pause(ctx, "q"); err != nil {
		t.Fatal(err)
	}
	until := base.Add(30 * time.Minute)
	got, err := s.LoadWindow(ctx, nil, until, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 10 {
		t.Fatalf("window has %d tasks, want the 10 due by %v: %+v", len(got), until, got)
	}
	for i, p := range got {
		want := fmt.Sprintf("w%d", 9-i)
		if p.ID != want || p.Kind != "k" || p.Partition != s.PartitionOf(p.ID) || !p.RunAt.Equal(base.Add(time.Duration(i)*time.Minute)) {
			t.Fatalf("window[%d] = %+v, want %s", i, p, want)
		}
	}
	if got, err := s.LoadWindow(ctx, nil, until, 3); err != nil || len(got) != 3 || got[0].ID != "w9" {
		t.Fatalf("window of 3 = %+v, %v", got, err)
	}
	part := s.PartitionOf("w0")
	got, err = s.LoadWindow(ctx, []int{part}, until, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range got {
		if p.Partition != part {
			t.Fatalf("window of partition %d holds %+v", part, p)
		}
	}
	if len(got) == 0 {
		t.Fatalf("window of partition %d is empty", part)
	}
}
