//go:build unix

// chanheap, the floor the benchmarks compare with (see bench_test.go).

package scheduler_test

import (
	"container/heap"
	"sync"
	"testing"
	"time"
)

// ---------------------------------------------------------------------------
// chanheap: the floor. One dispatcher goroutine owns a container/heap of
// items and one time.Timer for the head; Schedule and Cancel are messages
// to it over a channel, and due items are handed to a pool of workers over
// another channel. It is what one writes in an afternoon; the Scheduler
// must beat it.

type benchChanHeap struct {
	origin time.Time
	ops    chan benchChanOp
	run    chan *benchChanItem
	quit   chan struct{} // closed by stop
	wg     sync.WaitGroup
}

// benchChanItem is one task. index is its slot in the heap, -1 when not
// queued; only the dispatcher touches it.
type benchChanItem struct {
	when   int64 // nanoseconds since origin
	period time.Duration
	fn     func()
	index  int
}

type benchChanOp struct {
	it     *benchChanItem
	cancel bool
	sync   chan struct{} // closed by the dispatcher once the ops before it are applied
}

// benchNewChanHeap starts a chanheap with workers workers, stopped when the
// benchmark ends.
func benchNewChanHeap(b *testing.B, workers int) *benchChanHeap {
	c := benchNewChanHeapUnmanaged(workers)
	b.Cleanup(c.stop)
	return c
}

func benchNewChanHeapUnmanaged(workers int) *benchChanHeap {
	c := &benchChanHeap{
		origin: time.Now(),
		ops:    make(chan benchChanOp, 1024),
		run:    make(chan *benchChanItem, 1024),
		quit:   make(chan struct{}),
	}
	c.wg.Add(1 + workers)
	go c.dispatch()
	for range workers {
		go c.work()
	}
	return c
}

func (c *benchChanHeap) now() int64 { return int64(time.Since(c.origin)) }

// schedule queues fn to run after d and returns its handle for cancel.
func (c *benchChanHeap) schedule(d time.Duration, fn func()) *benchChanItem {
	it := &benchChanItem{when: c.now() + int64(d), fn: fn, index: -1}
	c.ops <- benchChanOp{it: it}
	return it
}

// schedulePeriodic queues fn to run at first and every period after it, at
// a fixed rate.
func (c *benchChanHeap) schedulePeriodic(first time.Time, period time.Duration, fn func()) {
	c.ops <- benchChanOp{it: &benchChanItem{when: int64(first.Sub(c.origin)), period: period, fn: fn, index: -1}}
}

// cancel removes it from the queue if it has not been dispatched.
func (c *benchChanHeap) cancel(it *benchChanItem) { c.ops <- benchChanOp{it: it, cancel: true} }

// sync waits until every op sent before it has been applied.
func (c *benchChanHeap) sync() {
	done := make(chan struct{})
	c.ops <- benchChanOp{sync: done}
	<-done
}

// stop ends the dispatcher and the workers; queued items are dropped. No
// schedule, cancel or sync may follow.
func (c *benchChanHeap) stop() {
	close(c.quit)
	c.wg.Wait()
}

func (c *benchChanHeap) work() {
	defer c.wg.Done()
	for it := range c.run {
		it.fn()
		if it.period > 0 {
			it.when += int64(it.period) // fixed rate
			select {
			case c.ops <- benchChanOp{it: it}:
			case <-c.quit:
			}
		}
	}
}

func (c *benchChanHeap) dispatch() {
	defer c.wg.Done()
	var h benchChanItems
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	armed := int64(-1) // the head time the timer is armed for
	for {
		select {
		case <-c.quit:
			timer.Stop()
			close(c.run)
			return
		case op := <-c.ops:
			switch {
			case op.sync != nil:
				close(op.sync)
			case op.cancel:
				if op.it.index >= 0 {
					heap.Remove(&h, op.it.index)
				}
			default:
				heap.Push(&h, op.it)
			}
		case <-timer.C:
			armed = -1
		}
		if len(h) == 0 {
			continue
		}
		now := c.now()
		for len(h) > 0 && h[0].when <= now {
			select {
			case c.run <- heap.Pop(&h).(*benchChanItem):
			case <-c.quit:
			}
		}
		if len(h) > 0 && h[0].when != armed {
			timer.Reset(time.Duration(h[0].when - now))
			armed = h[0].when
		}
	}
}

// benchChanItems is the dispatcher's container/heap.Interface.
type benchChanItems []*benchChanItem

func (h benchChanItems) Len() int           { return len(h) }
func (h benchChanItems) Less(i, j int) bool { return h[i].when < h[j].when }
func (h benchChanItems) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h *benchChanItems) Push(x any) {
	it := x.(*benchChanItem)
	it.index = len(*h)
	*h = append(*h, it)
}

func (h *benchChanItems) Pop() any {
	old := *h
	n := len(old) - 1
	it := old[n]
	old[n] = nil
	it.index = -1
	*h = old[:n]
	return it
}
