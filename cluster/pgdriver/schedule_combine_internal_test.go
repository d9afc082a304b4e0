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

// TestScheduleBatcherCombinesWaitingCalls: the Schedule calls made while
// an insert is in flight go in together, in one insert, once it ends,
// calls of one ID included; a lone call runs alone on its caller's
// context, a batch detached with a deadline; a call whose context ends
// while it waits is withdrawn and never inserted, and one whose context
// ends while its insert is in flight returns at once.
func TestScheduleBatcherCombinesWaitingCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type callerKey struct{}
		release := make(chan struct{})
		var (
			mu       sync.Mutex // guards batches and the failures below
			batches  [][]string
			ctxWrong []string
		)
		b := newScheduleBatcher(func(ctx context.Context, calls []*batchCall[Task, scheduleGot]) {
			var ids []string
			for _, c := range calls {
				ids = append(ids, c.q.ID)
			}
			_, deadline := ctx.Deadline()
			mu.Lock()
			batches = append(batches, ids)
			n := len(batches)
			if len(calls) == 1 && (ctx.Value(callerKey{}) != calls[0].q.ID || deadline) {
				ctxWrong = append(ctxWrong, "lone "+calls[0].q.ID)
			}
			if len(calls) > 1 && (!deadline || ctx.Err() != nil) {
				ctxWrong = append(ctxWrong, fmt.Sprint("batch ", ids))
			}
			mu.Unlock()
			if n <= 2 {
				<-release // the first two inserts wait for the test
			}
			for _, c := range calls {
				c.a.res = Created
			}
		})
		type answer struct {
			id  string
			err error
		}
		answers := make(chan answer, 10)
		call := func(ctx context.Context, id string) {
			got, err := b.do(context.WithValue(ctx, callerKey{}, id), Task{ID: id})
			if err == nil && got.res != Created {
				err = fmt.Errorf("answered %+v", got)
			}
			answers <- answer{id, err}
		}
		go call(context.Background(), "first")
		synctest.Wait() // the first insert is in flight
		waiting := []string{"b", "c", "b", "d"}
		inFlight, leaveInFlight := context.WithCancel(context.Background())
		queued, leaveQueued := context.WithCancel(context.Background())
		for _, id := range waiting {
			go call(context.Background(), id)
			synctest.Wait() // queued in this order
			if id == "c" {
				go call(queued, "gives-up-queued")
				go call(inFlight, "gives-up-in-flight")
				synctest.Wait()
			}
		}
		leaveQueued()
		if a := <-answers; a.id != "gives-up-queued" || a.err != context.Canceled {
			t.Fatalf("the call whose context ended while queued: %+v, want context.Canceled", a)
		}
		release <- struct{}{} // the first insert ends; the batch is in flight
		if a := <-answers; a.id != "first" || a.err != nil {
			t.Fatalf("the first call: %+v", a)
		}
		synctest.Wait()
		leaveInFlight()
		if a := <-answers; a.id != "gives-up-in-flight" || a.err != context.Canceled {
			t.Fatalf("the call whose context ended in flight: %+v, want context.Canceled at once", a)
		}
		close(release)
		for range waiting {
			if a := <-answers; a.err != nil {
				t.Fatalf("call %s: %v", a.id, a.err)
			}
		}
		want := [][]string{{"first"}, {"b", "c", "gives-up-in-flight", "b", "d"}}
		if !slices.EqualFunc(batches, want, slices.Equal) {
			t.Fatalf("inserts %v, want %v", batches, want)
		}
		if len(ctxWrong) > 0 {
			t.Fatalf("run on the wrong context: %v", ctxWrong)
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
	call := func(id, payload string) *batchCall[Task, scheduleGot] {
		task := Task{ID: id, Kind: "k", Payload: []byte(payload), Due: time.UnixMilli(due)}
		return &batchCall[Task, scheduleGot]{ctx: ctx, q: task, done: make(chan struct{}), lead: make(chan struct{})}
	}
	// Many calls per ID, so that an unstable order among them would show.
	var calls []*batchCall[Task, scheduleGot]
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
			if c.q.ID != id {
				continue
			}
			if c.a.res == Created {
				told = append(told, string(c.q.Payload))
				continue
			}
			if !c.a.alone || c.err != nil {
				t.Fatalf("%s: a call neither Created nor alone: %+v", id, c)
			}
			if r, err := s.Schedule(ctx, c.q); err != nil || r != Conflict {
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
