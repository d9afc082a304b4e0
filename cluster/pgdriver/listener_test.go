package pgdriver_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/pgdriver"
)

// eventWait bounds each wait for an event.
const eventWait = 20 * time.Second

// listen starts a listener on partitions whose events go to the returned
// channel, closed with t, and waits for its first subscription.
func listen(t *testing.T, s *pgdriver.Store, partitions ...int) (*pgdriver.Listener, <-chan pgdriver.Event) {
	t.Helper()
	events := make(chan pgdriver.Event, 4096)
	l, err := s.Listen(partitions, func(e pgdriver.Event) { events <- e })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	e := nextEvent(t, events, func(e pgdriver.Event) bool { return e.Kind == pgdriver.EventSubscribed })
	if !slices.Equal(e.Partitions, sorted(partitions)) {
		t.Fatalf("subscribed to %v, want %v", e.Partitions, partitions)
	}
	return l, events
}

func sorted(p []int) []int {
	out := slices.Clone(p)
	slices.Sort(out)
	return slices.Compact(out)
}

// nextEvent returns the first event that match accepts, failing t if
// none comes within eventWait.
func nextEvent(t *testing.T, events <-chan pgdriver.Event, match func(pgdriver.Event) bool) pgdriver.Event {
	t.Helper()
	deadline := time.After(eventWait)
	for {
		select {
		case e := <-events:
			if match(e) {
				return e
			}
		case <-deadline:
			t.Fatal("no matching event within", eventWait)
		}
	}
}

// nextNotice returns the next notice, failing t if another event or none
// comes.
func nextNotice(t *testing.T, events <-chan pgdriver.Event) pgdriver.Notice {
	t.Helper()
	select {
	case e := <-events:
		if e.Kind != pgdriver.EventNotice {
			t.Fatalf("event %+v, want a notice", e)
		}
		return e.Notice
	case <-time.After(eventWait):
		t.Fatal("no notice within", eventWait)
	}
	return pgdriver.Notice{}
}

// idsIn returns n IDs of partition p and one (other) of another partition.
func idsIn(s *pgdriver.Store, p, n int) (ids []string, other string) {
	for i := 0; len(ids) < n || other == ""; i++ {
		id := fmt.Sprintf("id%d", i)
		if s.PartitionOf(id) == p {
			ids = append(ids, id)
		} else if other == "" {
			other = id
		}
	}
	return ids[:n], other
}

// TestListenerTellsEachChangeOfItsPartitions: the listener hears, in
// commit order, each task of its partition made pending and each cancel
// (removed), nothing of a claim, a renewal or a completion, and nothing
// of other partitions.
func TestListenerTellsEachChangeOfItsPartitions(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	ids, other := idsIn(s, 3, 4)
	a, b, c, d := ids[0], ids[1], ids[2], ids[3]
	_, events := listen(t, s, 3)
	mustSchedule(t, s, dueTask(other))
	mustSchedule(t, s, dueTask(a))
	n := nextNotice(t, events)
	want := pgdriver.Notice{Partition: 3, State: "pending", RunAt: past, Kind: "k", ID: a}
	if !n.RunAt.Equal(past) || n.Partition != 3 || n.State != "pending" || n.Kind != "k" || n.ID != a {
		t.Fatalf("notice %+v, want %+v (and none for %s of another partition)", n, want, other)
	}
	tok, _ := mustClaim(t, s, a)
	if _, err := s.Extend(ctx, []pgdriver.Lease{{ID: a, Token: tok}}, testLease); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Complete(ctx, a, tok, keepHour); err != nil {
		t.Fatal(err)
	}
	mustSchedule(t, s, dueTask(b))
	if n := nextNotice(t, events); n.State != "pending" || n.ID != b {
		t.Fatalf("notice %+v, want pending %s (a claim, a renewal and a completion tell nothing)", n, b)
	}
	if _, err := s.Cancel(ctx, b, pgdriver.Ending{}); err != nil {
		t.Fatal(err)
	}
	if n := nextNotice(t, events); n.State != "removed" || n.ID != b || n.Kind != "k" {
		t.Fatalf("notice %+v, want removed %s", n, b)
	}
	mustSchedule(t, s, dueTask(d))
	if n := nextNotice(t, events); n.State != "pending" || n.ID != d {
		t.Fatalf("notice %+v, want pending %s", n, d)
	}
	mustClaim(t, s, d)
	if _, err := s.Cancel(ctx, d, keepHour); err != nil {
		t.Fatal(err)
	}
	if n := nextNotice(t, events); n.State != "removed" || n.ID != d {
		t.Fatalf("notice %+v, want removed %s (a running task canceled into a done record)", n, d)
	}
	if _, err := s.Cancel(ctx, d, keepHour); err != nil { // the done record: told to no one
		t.Fatal(err)
	}
	if err := s.Pause(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if err := s.Resume(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if n := nextNotice(t, events); n.State != "resumed" || n.Kind != "k" || n.ID != "" {
		t.Fatalf("notice %+v, want resumed k", n)
	}
	mustSchedule(t, s, dueTask(c))
	if n := nextNotice(t, events); n.ID != c {
		t.Fatalf("notice %+v, want pending %s", n, c)
	}
}

// TestScheduleTxNotifiesOnCommitOnly: a task scheduled in a transaction is
// told once the transaction commits, and never if it rolls back.
func TestScheduleTxNotifiesOnCommitOnly(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	ids, _ := idsIn(s, 5, 4)
	_, events := listen(t, s, 5)
	scheduleTx(t, s, pool, ids[0], false, nil)
	mustSchedule(t, s, dueTask(ids[1]))
	if n := nextNotice(t, events); n.ID != ids[1] {
		t.Fatalf("notice %+v, want %s (nothing for the rolled back %s)", n, ids[1], ids[0])
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := s.ScheduleTx(ctx, tx, dueTask(ids[2])); err != nil {
		t.Fatal(err)
	}
	mustSchedule(t, s, dueTask(ids[3]))
	if n := nextNotice(t, events); n.ID != ids[3] {
		t.Fatalf("notice %+v, want %s (nothing for %s before its commit)", n, ids[3], ids[2])
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if n := nextNotice(t, events); n.ID != ids[2] || n.State != "pending" {
		t.Fatalf("notice %+v, want pending %s on its commit", n, ids[2])
	}
}

// TestListenerSetMovesTheSubscription: after Set, the listener hears the
// new partitions and no longer the old ones.
func TestListenerSetMovesTheSubscription(t *testing.T) {
	s, _ := newStore(t)
	in1, _ := idsIn(s, 1, 2)
	in2, _ := idsIn(s, 2, 1)
	l, events := listen(t, s, 1)
	if err := l.Set([]int{2}); err != nil {
		t.Fatal(err)
	}
	e := nextEvent(t, events, func(e pgdriver.Event) bool { return e.Kind == pgdriver.EventSubscribed })
	if !slices.Equal(e.Partitions, []int{2}) {
		t.Fatalf("subscribed to %v, want [2]", e.Partitions)
	}
	mustSchedule(t, s, dueTask(in1[0]))
	mustSchedule(t, s, dueTask(in2[0]))
	if n := nextNotice(t, events); n.ID != in2[0] || n.Partition != 2 {
		t.Fatalf("notice %+v, want %s of partition 2 (none of partition 1)", n, in2[0])
	}
	if err := l.Set([]int{99}); err == nil {
		t.Fatal("Set of a partition out of range: no error")
	}
}

// TestListenerReconnects: when its connection is cut (the server ends the
// backend), the listener says so, reconnects, subscribes again and hears
// the next notices.
func TestListenerReconnects(t *testing.T) {
	ctx := context.Background()
	s, pool := newStore(t)
	ids, _ := idsIn(s, 0, 1)
	_, events := listen(t, s, 0, 4)
	var ended int
	if err := pool.QueryRow(ctx, `
SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
WHERE application_name = 'stpe-listener' AND datname = current_database()`).Scan(&ended); err != nil || ended != 1 {
		t.Fatalf("ended %d listener backends (%v), want 1", ended, err)
	}
	e := nextEvent(t, events, func(e pgdriver.Event) bool { return e.Kind != pgdriver.EventNotice })
	if e.Kind != pgdriver.EventDisconnected || e.Err == nil {
		t.Fatalf("event %+v, want a disconnection with its error", e)
	}
	e = nextEvent(t, events, func(e pgdriver.Event) bool { return e.Kind == pgdriver.EventSubscribed })
	if !slices.Equal(e.Partitions, []int{0, 4}) {
		t.Fatalf("subscribed again to %v, want [0 4]", e.Partitions)
	}
	mustSchedule(t, s, dueTask(ids[0]))
	if n := nextNotice(t, events); n.ID != ids[0] {
		t.Fatalf("notice %+v after the reconnection, want %s", n, ids[0])
	}
}
