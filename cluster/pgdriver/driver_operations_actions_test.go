package pgdriver_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
)

// What the conformance suite cannot reach without the Claims group: the
// actions on dead tasks, done records and running tasks, and the notices
// they send.

// mustDie claims id and fails it past its retries, so it is dead.
func mustDie(t *testing.T, s *pgdriver.Store, id string) {
	t.Helper()
	tok, _ := mustClaim(t, s, id)
	if o, err := s.Fail(context.Background(), id, tok, pgdriver.Failure{Error: "boom", SkipRetry: true}); err != nil || o != pgdriver.OutcomeDead {
		t.Fatalf("Fail(%s) = %q, %v; want dead", id, o, err)
	}
}

// noticeOf waits for the notice of id in state.
func noticeOf(t *testing.T, events <-chan pgdriver.Event, id, state string) pgdriver.Notice {
	t.Helper()
	return nextEvent(t, events, func(e pgdriver.Event) bool {
		return e.Kind == pgdriver.EventNotice && e.Notice.ID == id && e.Notice.State == state
	}).Notice
}

// TestDriverActionsOnDeadAndDoneTasks: Retry makes a dead task pending,
// due now with its retries again, and tells "pending"; Delete removes a
// dead task and a done record and tells "removed"; the actions refuse a
// dead task's run now and a running task's retry or delete with its
// state; List lists the dead and done ones.
func TestDriverActionsOnDeadAndDoneTasks(t *testing.T) {
	ctx := context.Background()
	d, _ := newDriver(t)
	s := d.Store()
	_, events := listen(t, s, 0, 1, 2, 3, 4, 5, 6, 7)
	for _, id := range []string{"d1", "d2", "c1", "r1"} {
		mustSchedule(t, s, dueTask(id))
	}
	mustDie(t, s, "d1")
	mustDie(t, s, "d2")
	tok, _ := mustClaim(t, s, "c1")
	if o, err := s.Complete(ctx, "c1", tok, keepHour); err != nil || o != pgdriver.OutcomeDone {
		t.Fatalf("Complete(c1) = %q, %v", o, err)
	}
	mustClaim(t, s, "r1")

	refusals := map[string]struct {
		err   error
		state driver.State
	}{
		"run now of a dead task":    {d.RunNow(ctx, "d1"), driver.Dead},
		"reschedule of a done one":  {d.Reschedule(ctx, "c1", time.Now()), driver.Done},
		"retry of a running one":    {d.Retry(ctx, "r1"), driver.Running},
		"delete of a running one":   {d.Delete(ctx, "r1"), driver.Running},
		"retry of a done record":    {d.Retry(ctx, "c1"), driver.Done},
		"run now of a running task": {d.RunNow(ctx, "r1"), driver.Running},
	}
	for name, r := range refusals {
		var se *driver.StateError
		if !errors.As(r.err, &se) || se.State != r.state || se.ID == "" {
			t.Errorf("%s: %v, want a state error saying %s", name, r.err, r.state)
		}
	}

	page, err := d.List(ctx, driver.ListQuery{State: driver.Dead, Limit: 10})
	if err != nil || len(page.Tasks) != 2 || page.Tasks[0].LastError != "boom" {
		t.Fatalf("List(dead) = %+v, %v; want d1 and d2, failed", page, err)
	}
	page, err = d.List(ctx, driver.ListQuery{State: driver.Done, Kind: "k", Limit: 1})
	if err != nil || len(page.Tasks) != 1 || page.Tasks[0].ID != "c1" || page.Tasks[0].Finished.IsZero() || page.Next.ID != "c1" {
		t.Fatalf("List(done) = %+v, %v; want c1, finished, a full page", page, err)
	}
	page, err = d.List(ctx, driver.ListQuery{State: driver.Running, Limit: 5})
	if err != nil || len(page.Tasks) != 1 || page.Tasks[0].Owner == "" || page.Tasks[0].Started.IsZero() {
		t.Fatalf("List(running) = %+v, %v; want r1 with its owner and start", page, err)
	}

	before := time.Now()
	if err := d.Retry(ctx, "d1"); err != nil {
		t.Fatal(err)
	}
	info, ok, err := d.Get(ctx, "d1")
	if err != nil || !ok || info.State != driver.Pending || info.Attempt != 0 || info.Lost != 0 ||
		info.NextRun.Before(before.Add(-time.Minute)) || !info.Due.Equal(past) {
		t.Fatalf("Get(d1) after Retry = %+v, %v, %v; want pending now, no attempts, its due time", info, ok, err)
	}
	noticeOf(t, events, "d1", "pending")

	for _, id := range []string{"d2", "c1"} {
		if err := d.Delete(ctx, id); err != nil {
			t.Fatalf("Delete(%s): %v", id, err)
		}
		if _, ok, err := d.Get(ctx, id); err != nil || ok {
			t.Fatalf("Get(%s) after Delete = %v, %v; want none", id, ok, err)
		}
		noticeOf(t, events, id, "removed")
	}
	if err := d.Delete(ctx, "d2"); !errors.Is(err, driver.ErrNotFound) {
		t.Fatalf("Delete(d2) again: %v, want ErrNotFound", err)
	}
	counts, err := d.Counts(ctx)
	if err != nil || counts != (driver.Counts{Pending: 1, Running: 1}) {
		t.Fatalf("Counts = %+v, %v; want d1 pending, r1 running", counts, err)
	}
}

// TestDriverBulkOnRunningAndDeadTasks: a bulk retry and delete act on
// dead tasks only, a bulk cancel of running tasks cancels the runs (their
// holders find them lost), a run now of a task due already matches it
// and changes nothing, and an action on a state it does not act on is
// refused as bad input.
func TestDriverBulkOnRunningAndDeadTasks(t *testing.T) {
	ctx := context.Background()
	d, _ := newDriver(t)
	s := d.Store()
	for _, id := range []string{"d1", "d2", "d3", "r1", "r2", "p1"} {
		mustSchedule(t, s, dueTask(id))
	}
	for _, id := range []string{"d1", "d2", "d3"} {
		mustDie(t, s, id)
	}
	tok1, _ := mustClaim(t, s, "r1")
	mustClaim(t, s, "r2")

	res, err := d.Bulk(ctx, driver.BulkRequest{Action: driver.BulkRetry,
		Selection: driver.Selection{State: driver.Dead, IDs: []string{"d1", "p1", "r1", "d1", "nope"}}})
	if err != nil || res != (driver.BulkResult{Matched: 1, Changed: 1}) {
		t.Fatalf("bulk retry by IDs = %+v, %v; want d1 alone", res, err)
	}
	res, err = d.Bulk(ctx, driver.BulkRequest{Action: driver.BulkDelete, Selection: driver.Selection{State: driver.Dead}})
	if err != nil || res != (driver.BulkResult{Matched: 2, Changed: 2}) {
		t.Fatalf("bulk delete of the dead = %+v, %v; want d2 and d3", res, err)
	}
	var canceled []string
	res, err = d.Bulk(ctx, driver.BulkRequest{Action: driver.BulkCancel, Retention: time.Minute,
		Selection: driver.Selection{State: driver.Running}, Canceled: func(id string) { canceled = append(canceled, id) }})
	if err != nil || res != (driver.BulkResult{Matched: 2, Changed: 2}) || len(canceled) != 2 {
		t.Fatalf("bulk cancel of the running = %+v, %v, told %v; want r1 and r2", res, err, canceled)
	}
	if o, err := s.Complete(ctx, "r1", tok1, keepHour); err != nil || o != pgdriver.OutcomeLost {
		t.Fatalf("Complete of a canceled run = %q, %v; want lost", o, err)
	}
	counts, err := d.Counts(ctx)
	if err != nil || counts != (driver.Counts{Pending: 2}) {
		t.Fatalf("Counts = %+v, %v; want d1 and p1 pending", counts, err)
	}
	res, err = d.Bulk(ctx, driver.BulkRequest{Action: driver.BulkRunNow, Now: time.Now(),
		Selection: driver.Selection{State: driver.Pending, IDs: []string{"p1"}}})
	if err != nil || res != (driver.BulkResult{Matched: 1, Changed: 0}) {
		t.Fatalf("bulk run now of a due task by ID = %+v, %v; want matched, not changed", res, err)
	}
	for _, r := range []driver.BulkRequest{
		{Action: driver.BulkRetry, Selection: driver.Selection{State: driver.Pending}},
		{Action: driver.BulkDelete, Selection: driver.Selection{State: driver.Running}},
		{Action: driver.BulkRunNow, Selection: driver.Selection{State: driver.Dead}},
		{Action: driver.BulkAction(99), Selection: driver.Selection{State: driver.Dead}},
	} {
		if _, err := d.Bulk(ctx, r); !errors.Is(err, scheduler.ErrInvalidArgument) {
			t.Errorf("Bulk(%+v): %v, want ErrInvalidArgument", r, err)
		}
	}
	if _, err := d.List(ctx, driver.ListQuery{State: "lost", Limit: 1}); !errors.Is(err, scheduler.ErrInvalidArgument) {
		t.Errorf("List of an unknown state: %v, want ErrInvalidArgument", err)
	}
}

// TestDriverBulkPagesPastABatch: a bulk action on more tasks than one
// statement reads (500) goes on batch after batch until the selection is
// read, each task once: a run now of the tasks not due yet, from the
// latest, then a cancel of a kind whose tasks tie on one time.
func TestDriverBulkPagesPastABatch(t *testing.T) {
	ctx := context.Background()
	d, _ := newDriver(t)
	s := d.Store()
	const n = 1100
	tasks := make([]pgdriver.Task, 0, 2*n)
	later := time.Now().Add(time.Hour)
	for i := range n {
		a := dueTask(fmt.Sprintf("a%04d", i))
		a.Due = later.Add(time.Duration(i%7) * time.Second)
		b := dueTask(fmt.Sprintf("b%04d", i))
		b.Kind, b.Due = "tie", later
		tasks = append(tasks, a, b)
	}
	if _, err := s.ScheduleMany(ctx, tasks); err != nil {
		t.Fatal(err)
	}
	res, err := d.Bulk(ctx, driver.BulkRequest{Action: driver.BulkRunNow, Now: time.Now(),
		Selection: driver.Selection{State: driver.Pending, Kind: "k"}})
	if err != nil || res != (driver.BulkResult{Matched: n, Changed: n}) {
		t.Fatalf("bulk run now = %+v, %v; want %d each", res, err, n)
	}
	waiting, _, err := d.DueOfKind(ctx, []int{0, 1, 2, 3, 4, 5, 6, 7}, "k", time.Now().Add(time.Minute))
	if err != nil || waiting != n {
		t.Fatalf("DueOfKind(k) = %d, %v; want %d", waiting, err, n)
	}
	seen := map[string]int{}
	res, err = d.Bulk(ctx, driver.BulkRequest{Action: driver.BulkCancel, Selection: driver.Selection{State: driver.Pending, Kind: "tie"},
		Canceled: func(id string) { seen[id]++ }})
	if err != nil || res != (driver.BulkResult{Matched: n, Changed: n}) || len(seen) != n {
		t.Fatalf("bulk cancel = %+v, %v, told %d; want %d each", res, err, len(seen), n)
	}
	counts, err := d.Counts(ctx)
	if err != nil || counts != (driver.Counts{Pending: n}) {
		t.Fatalf("Counts = %+v, %v; want %d pending", counts, err, n)
	}
}

// TestDriverKnownKindOfMembersAndDeclarations: a kind a live member claims
// and a periodic task a live declaration names ("@" + its name) are
// known, and the member's kind no more once it leaves.
func TestDriverKnownKindOfMembersAndDeclarations(t *testing.T) {
	ctx := context.Background()
	d, _ := newDriver(t)
	_, err := d.Renew(ctx, driver.Renewal{Node: "n1", TTL: time.Minute, Claimer: true, Kinds: []string{"mail"},
		Periodic: []driver.PeriodicDeclaration{{Name: "nightly", Trigger: "every 24h"}}})
	if err != nil {
		t.Fatal(err)
	}
	for kind, want := range map[string]bool{"mail": true, "@nightly": true, "nightly": false, "@mail": false, "sms": false} {
		if known, err := d.KnownKind(ctx, kind); err != nil || known != want {
			t.Errorf("KnownKind(%q) = %v, %v; want %v", kind, known, err, want)
		}
	}
	if _, err := d.Renew(ctx, driver.Renewal{Node: "n1"}); err != nil {
		t.Fatal(err)
	}
	if known, err := d.KnownKind(ctx, "mail"); err != nil || known {
		t.Errorf("KnownKind(mail) after the member left = %v, %v; want false", known, err)
	}
}
