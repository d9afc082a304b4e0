package pgdriver

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestCombinerStoresWaitingCallsInOneInsert: the calls made while an
// insert is in flight go in together, in one insert, once it ends; a lone
// call runs alone; a call whose context ends while it waits is dropped,
// answered by its context's error, and never inserted.
func TestCombinerStoresWaitingCallsInOneInsert(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var (
			mu      sync.Mutex // guards batches
			batches [][]string
		)
		b := &combiner{insert: func(ctx context.Context, calls []*scheduleCall) {
			var ids []string
			for _, c := range calls {
				ids = append(ids, c.task.ID)
			}
			mu.Lock()
			batches = append(batches, ids)
			first := len(batches) == 1
			mu.Unlock()
			if first {
				<-release
			}
			for _, c := range calls {
				c.res = Created
				close(c.done)
			}
		}}
		call := func(id string) *scheduleCall {
			return &scheduleCall{task: Task{ID: id}, done: make(chan struct{}), lead: make(chan struct{})}
		}
		errs := make(chan error, 10)
		go func() { errs <- b.schedule(context.Background(), call("first")) }()
		synctest.Wait() // the first insert is in flight
		waiting := []string{"b", "c", "d", "e", "f"}
		for _, id := range waiting {
			go func() { errs <- b.schedule(context.Background(), call(id)) }()
			synctest.Wait() // queued in this order
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() { errs <- b.schedule(ctx, call("gives-up")) }()
		synctest.Wait()
		cancel()
		if err := <-errs; err != context.Canceled {
			t.Fatalf("the call whose context ended: %v, want context.Canceled", err)
		}
		close(release)
		for range 1 + len(waiting) {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		want := [][]string{{"first"}, waiting}
		if !slices.EqualFunc(batches, want, slices.Equal) {
			t.Fatalf("inserts %v, want %v", batches, want)
		}
		if b.busy || len(b.queue) > 0 {
			t.Fatalf("after the calls: busy %v, queue %d", b.busy, len(b.queue))
		}
	})
}

// TestCombinedInsertOfOneIDTwice: when calls with one ID but different
// tasks share a combined insert, the call told Created is the one whose
// task is stored, and the others run alone, to be told Conflict.
func TestCombinedInsertOfOneIDTwice(t *testing.T) {
	s := combineStore(t)
	ctx := context.Background()
	due := time.Now().Add(time.Hour).UnixMilli()
	call := func(id, payload string) *scheduleCall {
		task := Task{ID: id, Kind: "k", Payload: []byte(payload), Due: time.UnixMilli(due)}
		return &scheduleCall{task: task, done: make(chan struct{}), lead: make(chan struct{})}
	}
	// Many calls per ID, so that an unstable order among them would show.
	var calls []*scheduleCall
	for i := range 40 {
		calls = append(calls, call("b", fmt.Sprint("b", i)), call("a", fmt.Sprint("a", i)))
	}
	s.insertCombined(ctx, calls)
	for _, id := range []string{"a", "b"} {
		stored, err := s.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var told []string
		for _, c := range calls {
			if c.task.ID != id {
				continue
			}
			if c.res == Created {
				told = append(told, string(c.task.Payload))
				continue
			}
			if !c.alone {
				t.Fatalf("%s: a call neither Created nor alone: %+v", id, c)
			}
			if r, err := s.Schedule(ctx, c.task); err != nil || r != Conflict {
				t.Fatalf("%s: a later call alone got %v, %v; want Conflict", id, r, err)
			}
		}
		if want := []string{string(stored.Payload)}; !slices.Equal(told, want) {
			t.Fatalf("%s: Created told to %v, stored %v", id, told, want)
		}
		if want := id + "0"; string(stored.Payload) != want {
			t.Fatalf("%s: stored %q, want the first call's %q", id, stored.Payload, want)
		}
	}
}
