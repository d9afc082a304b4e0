package pgdriver

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
)

// TestBatcherCombinesWaitingCallsByKey: the calls made while a statement
// is in flight go together in the next one, except a second call of a key
// already taken (and one that does not fit with the first), which waits
// for the one after; a call whose context ends while it waits is
// withdrawn, answered by its context's error, and never run.
func TestBatcherCombinesWaitingCallsByKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var (
			mu      sync.Mutex // guards batches
			batches [][]string
		)
		b := &batcher[string, string]{
			key:  func(q string) string { return q[:1] },
			fits: func(first, q string) bool { return q != "zz" },
			run: func(ctx context.Context, calls []*batchCall[string, string]) {
				var qs []string
				for _, c := range calls {
					qs = append(qs, c.q)
				}
				mu.Lock()
				batches = append(batches, qs)
				first := len(batches) == 1
				mu.Unlock()
				if first {
					<-release
				}
				for _, c := range calls {
					c.a = "answer " + c.q
				}
			},
		}
		type answer struct{ q, a string }
		answers := make(chan answer, 10)
		errs := make(chan error, 10)
		call := func(ctx context.Context, q string) {
			a, err := b.do(ctx, q)
			if err != nil {
				errs <- err
				return
			}
			answers <- answer{q, a}
		}
		go call(context.Background(), "first")
		synctest.Wait() // the first statement is in flight
		ctx, cancel := context.WithCancel(context.Background())
		for _, q := range []string{"a1", "b1", "a2", "zz", "c1"} {
			go call(context.Background(), q)
			synctest.Wait() // queued in this order
			if q == "b1" {
				go call(ctx, "gives-up")
				synctest.Wait()
			}
		}
		cancel()
		if err := <-errs; err != context.Canceled {
			t.Fatalf("the call whose context ended: %v, want context.Canceled", err)
		}
		close(release)
		for range 6 {
			if a := <-answers; a.a != "answer "+a.q {
				t.Fatalf("call %q answered %q", a.q, a.a)
			}
		}
		want := [][]string{{"first"}, {"a1", "b1", "c1"}, {"a2"}, {"zz"}}
		if !slices.EqualFunc(batches, want, slices.Equal) {
			t.Fatalf("statements %v, want %v", batches, want)
		}
		if b.busy || len(b.queue) > 0 {
			t.Fatalf("after the calls: busy %v, queue %d", b.busy, len(b.queue))
		}
	})
}
