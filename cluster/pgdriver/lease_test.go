package pgdriver_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
)

// TestExtendRenewsHeldLeasesOnly: Extend pushes back the leases the tokens
// hold, an expired one not yet reaped included, and names the others lost.
func TestExtendRenewsHeldLeasesOnly(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	for _, id := range []string{"a", "b", "c"} {
		mustSchedule(t, s, dueTask(id))
	}
	ta, _ := mustClaim(t, s, "a")
	tb, _ := mustClaim(t, s, "b")
	expireLease(t, pool, "b")
	tc, _ := mustClaim(t, s, "c")
	if _, err := s.Cancel(ctx, "c", pgdriver.Ending{}); err != nil {
		t.Fatal(err)
	}
	lease := 2 * time.Hour
	lost, err := s.Extend(ctx, []pgdriver.Lease{{"a", ta}, {"b", tb}, {"c", tc}, {"a", "stale"}, {"zz", "x"}}, lease)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(lost)
	if !slices.Equal(lost, []string{"a", "c", "zz"}) {
		t.Fatalf("lost = %v, want a (for its stale token), c and zz", lost)
	}
	for _, id := range []string{"a", "b"} {
		got := mustGet(t, s, id)
		if got.State != pgdriver.Running || got.LeaseExpires.Sub(got.UpdatedAt) < time.Hour {
			t.Fatalf("%s after Extend: %+v; want running, its lease about %v from the renewal", id, got, lease)
		}
	}
}

// TestReapExpiredCountsLostRuns: an expired lease returns its task to
// pending, due now, counting a lost run and no attempt; the old token is
// fenced off; past the limit of lost runs the task is dead. Unexpired
// leases and other partitions are left alone.
func TestReapExpiredCountsLostRuns(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	mustSchedule(t, s, dueTask("a"))
	mustSchedule(t, s, dueTask("alive"))
	mustClaim(t, s, "alive")
	const maxLost = 1
	for round := 1; round <= 2; round++ {
		old, _ := mustClaim(t, s, "a")
		expireLease(t, pool, "a")
		other := (s.PartitionOf("a") + 1) % s.Partitions()
		if got, err := s.ReapExpired(ctx, []int{other}, 10, maxLost, driver.Timeline{}); err != nil || len(got) != 0 {
			t.Fatalf("reap of partition %d = %+v, %v; want nothing", other, got, err)
		}
		got, err := s.ReapExpired(ctx, nil, 10, maxLost, driver.Timeline{})
		if err != nil {
			t.Fatal(err)
		}
		dead := round > maxLost
		if len(got) != 1 || got[0] != (pgdriver.LostRun{ID: "a", Kind: "k", Dead: dead}) {
			t.Fatalf("round %d: reaped %+v; want a, dead %v", round, got, dead)
		}
		task := mustGet(t, s, "a")
		if task.LostRuns != round || task.Attempts != 0 || task.LastError != pgdriver.LeaseExpiredError || task.LeaseToken != "" {
			t.Fatalf("round %d: task %+v", round, task)
		}
		if out, err := s.Complete(ctx, "a", old, keepHour); err != nil || out != pgdriver.OutcomeLost {
			t.Fatalf("round %d: Complete by the reaped run = %q, %v; want lost", round, out, err)
		}
		if dead {
			if task.State != pgdriver.Dead {
				t.Fatalf("round %d: task %+v; want dead", round, task)
			}
			break
		}
		if task.State != pgdriver.Pending || task.RunAt.Sub(task.UpdatedAt) != 0 {
			t.Fatalf("round %d: task %+v; want pending, due at the reap", round, task)
		}
	}
	if got, err := s.ReapExpired(ctx, nil, 10, maxLost, driver.Timeline{}); err != nil || len(got) != 0 {
		t.Fatalf("reap with no lease expired = %+v, %v", got, err)
	}
	if got := mustGet(t, s, "alive"); got.State != pgdriver.Running || got.LostRuns != 0 {
		t.Fatalf("the unexpired claim was touched: %+v", got)
	}
}

// TestReapCountsRunsOfOneMinuteTogether: the lost runs of one kind and
// partition reaped in one statement fall in one timeline row, summed (an
// upsert may touch a row only once per statement).
func TestReapCountsRunsOfOneMinuteTogether(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	var ids []string
	for i := 0; len(ids) < 3; i++ {
		if id := fmt.Sprintf("same-%d", i); s.PartitionOf(id) == 0 {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		mustSchedule(t, s, dueTask(id))
		mustClaim(t, s, id)
		expireLease(t, pool, id)
	}
	tl := driver.Timeline{Minute: 29_000_000, TTL: time.Hour}
	got, err := s.ReapExpired(ctx, nil, 10, 5, tl)
	if err != nil || len(got) != len(ids) {
		t.Fatalf("reap = %+v, %v; want the %d runs", got, err, len(ids))
	}
	minutes, err := s.Timeline(ctx, tl.Minute, tl.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(minutes) != 1 || minutes[0].Lost != int64(len(ids)) || minutes[0].Runs != int64(len(ids)) {
		t.Fatalf("timeline = %+v; want %d runs lost in one minute", minutes, len(ids))
	}
}
