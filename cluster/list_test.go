package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
)

// TestListNeverSkipsOrRepeatsATaskThatStaysWhileTasksComeAndGo lists the
// pending tasks 7 at a time, many of them sharing a due time, while the
// last task of each page is canceled and new ones are stored: every task
// stored before the listing began is listed exactly once, in order.
func TestListNeverSkipsOrRepeatsATaskThatStaysWhileTasksComeAndGo(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ok := func(context.Context, cluster.Task) error { return nil }
	n := newNode(t, srv, map[string]cluster.Handler{"k": ok})
	ctx := context.Background()
	base := time.Now().Add(time.Hour).Truncate(time.Second)
	want := map[string]bool{}
	for i := range 40 {
		id, err := n.Schedule(ctx, "k", nil, base.Add(time.Duration(i%3)*time.Second), cluster.WithID(fmt.Sprintf("t%02d", (i*17)%40)))
		if err != nil {
			t.Fatal(err)
		}
		want[id] = true
	}
	seen := map[string]int{}
	var last cluster.Info
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 20 {
			t.Fatal("the listing does not end")
		}
		page, err := n.List(ctx, cluster.ListQuery{State: cluster.Pending, Cursor: cursor, Limit: 7})
		if err != nil {
			t.Fatal(err)
		}
		for _, info := range page.Tasks {
			if info.State != cluster.Pending || info.Kind != "k" {
				t.Fatalf("listed %+v", info)
			}
			if last.ID != "" && (info.Due.Before(last.Due) || info.Due.Equal(last.Due) && info.ID <= last.ID) {
				t.Fatalf("%s (%v) listed after %s (%v)", info.ID, info.Due, last.ID, last.Due)
			}
			last = info
			seen[info.ID]++
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
		// The cursor's own task goes away, and new ones arrive on both
		// sides of the position.
		if _, err := n.Cancel(ctx, page.Tasks[len(page.Tasks)-1].ID); err != nil {
			t.Fatal(err)
		}
		for _, d := range []time.Duration{0, time.Second, 2 * time.Second} {
			if _, err := n.Schedule(ctx, "k", nil, base.Add(d), cluster.WithID(fmt.Sprintf("new%d-%d", pages, d/time.Second))); err != nil {
				t.Fatal(err)
			}
		}
	}
	for id := range want {
		if seen[id] != 1 {
			t.Errorf("task %s listed %d times", id, seen[id])
		}
	}
	for id, k := range seen {
		if k != 1 {
			t.Errorf("task %s listed %d times", id, k)
		}
	}
}

// TestDeadTasksAreListedNewestFirstAndRetriedDeletedOrPurged makes three
// tasks dead, lists them, and retries, deletes and purges them from a
// producer node that never starts.
func TestDeadTasksAreListedNewestFirstAndRetriedDeletedOrPurged(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	fail := func(context.Context, cluster.Task) error { return errors.New("boom") }
	worker := newNode(t, srv, map[string]cluster.Handler{"bad": fail}, cluster.WithMaxRetries(0))
	start(t, worker)
	var ids []string
	for i := range 3 {
		id, err := worker.Schedule(ctx, "bad", []byte{byte('a' + i)}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		waitFor(t, 10*time.Second, "task "+id+" dead", func() bool {
			info, ok, err := worker.Get(ctx, id)
			return err == nil && ok && info.State == cluster.Dead
		})
	}
	worker.StopNow()

	ops := newNode(t, srv, map[string]cluster.Handler{"bad": fail})
	page, err := ops.List(ctx, cluster.ListQuery{State: cluster.Dead, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Tasks) != 2 || page.Tasks[0].ID != ids[2] || page.Tasks[1].ID != ids[1] || page.Next == "" {
		t.Fatalf("first page %+v", page)
	}
	if page.Tasks[0].LastError != "boom" || string(page.Tasks[0].Payload) != "c" || page.Tasks[0].Attempt != 1 {
		t.Fatalf("dead task %+v", page.Tasks[0])
	}
	page, err = ops.List(ctx, cluster.ListQuery{State: cluster.Dead, Cursor: page.Next, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Tasks) != 1 || page.Tasks[0].ID != ids[0] || page.Next != "" {
		t.Fatalf("second page %+v", page)
	}

	if err := ops.Retry(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	info, ok, err := ops.Get(ctx, ids[0])
	if err != nil || !ok || info.State != cluster.Pending || info.Attempt != 0 {
		t.Fatalf("retried task: %+v %v %v", info, ok, err)
	}
	if err := ops.Delete(ctx, ids[1]); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := ops.Get(ctx, ids[1]); ok {
		t.Fatal("deleted task still stored")
	}
	if k, err := ops.Purge(ctx, time.Now().Add(-time.Hour)); err != nil || k != 0 {
		t.Fatalf("purge of the older than an hour: %d, %v", k, err)
	}
	if k, err := ops.Purge(ctx, time.Now().Add(time.Hour)); err != nil || k != 1 {
		t.Fatalf("purge: %d, %v", k, err)
	}
	c, err := ops.Counts(ctx)
	if err != nil || c != (cluster.Counts{Pending: 1}) {
		t.Fatalf("counts %+v, %v", c, err)
	}
}

// TestRefusedActionsWrapTheSentinelsAndChangeNothing tries each action on
// an unknown ID and on a task in a state that forbids it, and lists with
// bad cursors and page sizes.
func TestRefusedActionsWrapTheSentinelsAndChangeNothing(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	ok := func(context.Context, cluster.Task) error { return nil }
	n := newNode(t, srv, map[string]cluster.Handler{"k": ok})
	due := time.Now().Add(time.Hour).Truncate(time.Microsecond)
	id, err := n.Schedule(ctx, "k", []byte("p"), due)
	if err != nil {
		t.Fatal(err)
	}
	before, _, _ := n.Get(ctx, id)

	for name, err := range map[string]error{
		"run now unknown":    n.RunNow(ctx, "nope"),
		"reschedule unknown": n.Reschedule(ctx, "nope", due),
		"retry unknown":      n.Retry(ctx, "nope"),
		"delete unknown":     n.Delete(ctx, "nope"),
	} {
		if !errors.Is(err, cluster.ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", name, err)
		}
	}
	for name, err := range map[string]error{
		"retry pending":  n.Retry(ctx, id),
		"delete pending": n.Delete(ctx, id),
	} {
		if !errors.Is(err, cluster.ErrWrongState) {
			t.Errorf("%s: %v, want ErrWrongState", name, err)
		}
	}
	page, err := n.List(ctx, cluster.ListQuery{State: cluster.Pending, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	list := func(q cluster.ListQuery) error { _, err := n.List(ctx, q); return err }
	for name, err := range map[string]error{
		"empty ID":           n.RunNow(ctx, ""),
		"zero time":          n.Reschedule(ctx, id, time.Time{}),
		"zero purge":         func() error { _, err := n.Purge(ctx, time.Time{}); return err }(),
		"page 0":             list(cluster.ListQuery{State: cluster.Pending}),
		"page too big":       list(cluster.ListQuery{State: cluster.Pending, Limit: cluster.MaxPage + 1}),
		"unknown state":      list(cluster.ListQuery{State: "late", Limit: 10}),
		"no state":           list(cluster.ListQuery{Limit: 10}),
		"bad kind":           list(cluster.ListQuery{State: cluster.Pending, Kind: "a b", Limit: 10}),
		"garbage cursor":     list(cluster.ListQuery{State: cluster.Pending, Cursor: "!!", Limit: 10}),
		"other state cursor": list(cluster.ListQuery{State: cluster.Dead, Cursor: page.Next, Limit: 10}),
		"other kind cursor":  list(cluster.ListQuery{State: cluster.Pending, Kind: "k", Cursor: page.Next, Limit: 10}),
		"zero purge done":    func() error { _, err := n.PurgeDone(ctx, time.Time{}); return err }(),
		"pause bad kind":     n.Pause(ctx, ""),
		"resume bad kind":    n.Resume(ctx, "a\tb"),
	} {
		if !errors.Is(err, scheduler.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
	after, _, _ := n.Get(ctx, id)
	if after.State != before.State || !after.Due.Equal(before.Due) || after.Attempt != before.Attempt {
		t.Fatalf("a refused action changed the task: %+v, was %+v", after, before)
	}

	later := due.Add(time.Hour)
	if err := n.Reschedule(ctx, id, later); err != nil {
		t.Fatal(err)
	}
	if info, _, _ := n.Get(ctx, id); !info.Due.Equal(later) {
		t.Fatalf("rescheduled due %v, want %v", info.Due, later)
	}
}
