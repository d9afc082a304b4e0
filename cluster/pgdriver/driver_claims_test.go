package pgdriver_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
)

// TestDriverExtendAndExpired: Extend renews the leases their owner holds
// and returns the others; Expired lists, by partition, the leases expired
// by the database's clock, at most limit per partition (full when one had
// the limit or more), and only of the partitions asked.
func TestDriverExtendAndExpired(t *testing.T) {
	ctx := context.Background()
	d, pool := newDriver(t)
	s := d.Store()
	ids, other := idsIn(s, 2, 3)
	for _, id := range append(ids, other) {
		mustSchedule(t, s, dueTask(id))
	}
	owners := map[string]string{}
	for _, id := range append(ids, other) {
		owners[id], _ = mustClaim(t, s, id)
	}
	lost, err := d.Extend(ctx, time.Minute, []pgdriver.Held{{ID: ids[0], Kind: "k", Owner: owners[ids[0]]}, {ID: ids[1], Kind: "k", Owner: "not-its-owner"}})
	if err != nil || fmt.Sprint(lost) != fmt.Sprint([]string{ids[1]}) {
		t.Fatalf("Extend = %v, %v; want [%s] lost", lost, err, ids[1])
	}
	if exp, full, err := d.Expired(ctx, nil, 10); err != nil || len(exp) != 0 || full {
		t.Fatalf("Expired before any lease ran out = %v, %v, %v", exp, full, err)
	}
	for _, id := range append(ids, other) {
		expireLease(t, pool, id)
	}
	exp, full, err := d.Expired(ctx, []int{2}, 2)
	if err != nil || !full || len(exp) != 1 || len(exp[2]) != 2 {
		t.Fatalf("Expired(partition 2, limit 2) = %v, %v, %v; want two of its three, full", exp, full, err)
	}
	exp, full, err = d.Expired(ctx, nil, 3)
	if err != nil || !full || len(exp[2]) != 3 || len(exp[s.PartitionOf(other)]) != 1 {
		t.Fatalf("Expired(all, limit 3) = %v, %v, %v; want all four, full (a partition had the limit)", exp, full, err)
	}
	exp, full, err = d.Expired(ctx, nil, 4)
	if err != nil || full || len(exp[2]) != 3 || len(exp[s.PartitionOf(other)]) != 1 {
		t.Fatalf("Expired(all, limit 4) = %v, %v, %v; want all four, not full", exp, full, err)
	}
}

// TestDriverCompleteAndRelease: Complete answers done (keeping the done
// record and counting the run) or lost for another owner; Release answers
// released, the task pending again, or lost.
func TestDriverCompleteAndRelease(t *testing.T) {
	ctx := context.Background()
	d, _ := newDriver(t)
	s := d.Store()
	mustSchedule(t, s, dueTask("a"))
	mustSchedule(t, s, dueTask("b"))
	ta, _ := mustClaim(t, s, "a")
	tb, _ := mustClaim(t, s, "b")
	keep := driver.KeepDone{Age: time.Hour, Max: 10}
	tl := driver.Timeline{Minute: 1000, TTL: time.Hour}
	if r, err := d.Complete(ctx, "a", "k", "not-"+ta, time.Hour, keep, tl); err != nil || r != pgdriver.RecordedLost {
		t.Fatalf("Complete by another owner = %q, %v; want lost", r, err)
	}
	if r, err := d.Complete(ctx, "a", "k", ta, time.Hour, keep, tl); err != nil || r != pgdriver.RecordedDone {
		t.Fatalf("Complete = %q, %v; want done", r, err)
	}
	if got := mustGet(t, s, "a"); got.State != pgdriver.Done {
		t.Fatalf("completed task = %+v; want a done record", got)
	}
	if m, err := s.Timeline(ctx, 1000, 1000); err != nil || len(m) != 1 || m[0].Runs != 1 {
		t.Fatalf("Timeline = %+v, %v; want the run counted", m, err)
	}
	if r, err := d.Release(ctx, "b", "k", tb); err != nil || r != pgdriver.RecordedReleased {
		t.Fatalf("Release = %q, %v; want released", r, err)
	}
	if r, err := d.Release(ctx, "b", "k", tb); err != nil || r != pgdriver.RecordedLost {
		t.Fatalf("second Release = %q, %v; want lost", r, err)
	}
	if got := mustGet(t, s, "b"); got.State != pgdriver.Pending || got.History[len(got.History)-1].Outcome != driver.OutcomeHandedBack {
		t.Fatalf("released task = %+v; want pending, handed back", got)
	}
}

// TestDriverRunRecordNamesTheNodeOfTheToken: a store that names no node
// (as a cluster node's driver from postgresconn.Driver) records, as the
// node of a run, the stem of the owner's token: the cluster node's name.
func TestDriverRunRecordNamesTheNodeOfTheToken(t *testing.T) {
	ctx := context.Background()
	_, pool := newStore(t)
	s, err := pgdriver.New(pool, pgdriver.Options{Partitions: 8})
	if err != nil {
		t.Fatal(err)
	}
	d, err := pgdriver.NewDriver(s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Schedule(ctx, newTask("a")); err != nil {
		t.Fatal(err)
	}
	const owner = "worker-7f3a:12"
	if c, err := d.Claim(ctx, "a", "k", past, time.Minute, owner); err != nil || c.Outcome != driver.ClaimWon {
		t.Fatalf("Claim = %+v, %v", c, err)
	}
	if _, err := d.Fail(ctx, driver.Failure{ID: "a", Kind: "k", Owner: owner, Error: "boom", Backoff: time.Hour, Outcome: driver.OutcomeFailed}, driver.Timeline{}); err != nil {
		t.Fatalf("Fail: %v", err)
	}
	info, ok, err := d.Get(ctx, "a")
	if err != nil || !ok || len(info.History) != 1 || info.History[0].Node != "worker-7f3a" {
		t.Fatalf("Get = %+v, %v, %v; want one run on worker-7f3a", info, ok, err)
	}
}
