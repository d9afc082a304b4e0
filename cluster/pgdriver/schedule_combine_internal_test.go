package pgdriver

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
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
