package scheduler

// FuzzDelayQueue: a real Scheduler with a pool of one on fakeClock checked
// after every step against fzModel.

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"testing"
	"time"
)

// fzDelay decodes a signed delay in fzUnit, most of them small; 255 asks
// for a delay at or near math.MaxInt64.
func fzDelay(r *fzReader) time.Duration {
	c := r.byte()
	if c == 255 {
		return math.MaxInt64 - time.Duration(r.byte())
	}
	return time.Duration(int8(c)) * fzUnit
}

// FuzzDelayQueue drives a Scheduler with a pool of one on fakeClock and checks
// it against fzModel after every step. After each step it waits with
// AwaitIdle, so the scheduler has done everything due.
//
// The input is a config byte (bit 0: remove-on-cancel; bit 1: the heap
// alone, else a small timing wheel whose level-0 slots are 1 µs wide and
// whose horizon is 1 ms, so that the ms-scale delays pass through it),
// then ops, each a byte followed by its operands (op%10): 0 Schedule
// (delay), 1 ScheduleCallable (delay), 2-3 a periodic task, fixed rate or,
// if op&16, fixed delay (delay, period byte: 1-32ms), 4 the same failing
// on run k (delay, period, k byte), 5 Cancel, with interrupt if op&16
// (task byte), 6 Remove (task byte), 7 Advance (byte: ms, or ns if op&16),
// 8 Advance to the head's due time, 9 Purge; then a final byte (%3):
// ShutdownNow, Shutdown and drain, Shutdown without the delayed tasks. A
// delay byte is an int8 count of ms; 255 followed by k means MaxInt64-k.
func FuzzDelayQueue(f *testing.F) {
	f.Add([]byte{})
	// one-shots at 5, 3, 3 and now; advance 4; advance to the next due.
	f.Add([]byte{0, 0, 5, 0, 3, 0, 3, 0, 0, 7, 4, 8})
	// fixed rate 10, fixed delay 7, cancel, advance a lot, purge.
	f.Add([]byte{1, 1, 10, 9, 2, 0, 6, 7, 100, 4, 0, 1, 6, 7, 200, 2})
	// remove-on-cancel; a periodic task that fails on its 3rd run; remove.
	f.Add([]byte{3, 3, 5, 4, 2, 7, 50, 5, 0, 0, 0, 20, 7, 30, 1})
	// a far-future task next to near ones, then Shutdown.
	f.Add([]byte{4, 0, 255, 0, 0, 2, 0, 1, 7, 3, 8, 8, 1})
	f.Add([]byte{5, 1, 0, 4, 0, 0, 10, 1, 1, 3, 11, 9, 0, 5, 1, 7, 60, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &fzReader{b: data}
		cfg := r.byte()
		m := &fzModel{removeOnC: cfg&1 != 0}
		clk := newFakeClock()
		heapAlone := cfg&2 != 0
		s, err := New(1, WithClock(clk), WithRemoveOnCancel(m.removeOnC), WithLogger(slog.New(slog.DiscardHandler)),
			WithTimingWheel(!heapAlone))
		if err != nil {
			t.Fatal(err)
		}
		if !heapAlone {
			s.q.wheel = newTimingWheel(10, 1<<20) // nothing is queued yet
		}
		h := &fzHarness{t: t, clk: clk, s: s, ctx: context.Background()}
		defer func() {
			s.ShutdownNow()
			ctx, cancel := context.WithTimeout(h.ctx, 20*time.Second)
			defer cancel()
			if err := s.AwaitTermination(ctx); err != nil {
				t.Fatalf("AwaitTermination: %v (wedged)", err)
			}
		}()
		submit := func(x *fzTask, f ScheduledFuture, err error) {
			t.Helper()
			if err != nil {
				t.Fatalf("submitting task %d: %v", x.id, err)
			}
			x.f = f
			x.seq = len(m.tasks)
			x.queued = true
			m.tasks = append(m.tasks, x)
		}
		pick := func() *fzTask {
			if len(m.tasks) == 0 {
				return nil
			}
			return m.tasks[int(r.byte())%len(m.tasks)]
		}

		const maxTasks = 64
		for step := 0; r.more() && step < 300; step++ {
			var op string
			switch c := r.byte(); c % 10 {
			case 0, 1: // a one-shot task, a callable if c says so
				if len(m.tasks) == maxTasks {
					continue
				}
				x := &fzTask{id: len(m.tasks)}
				d := fzDelay(r)
				x.when = m.now + int64(max(d, 0))
				if c%2 == 1 {
					op = fmt.Sprintf("ScheduleCallable(task %d, %v)", x.id, d)
					id := x.id
					fut, err := ScheduleCallable(s, func(context.Context) (int, error) {
						h.record(id)
						return id, nil
					}, d)
					x.value = fut
					submit(x, fut, err)
				} else {
					op = fmt.Sprintf("Schedule(task %d, %v)", x.id, d)
					id := x.id
					fut, err := s.Schedule(func(context.Context) error {
						h.record(id)
						return nil
					}, d)
					submit(x, fut, err)
				}
			case 2, 3, 4: // a periodic task; c%10 == 4 fails on some run
				if len(m.tasks) == maxTasks {
					continue
				}
				x := &fzTask{id: len(m.tasks), fixed: c&16 == 0}
				d := fzDelay(r)
				if d > time.Hour {
					d = time.Hour // keep the window reachable for catch-up runs
				}
				x.period = time.Duration(r.byte()%32+1) * fzUnit
				x.when = m.now + int64(max(d, 0))
				if c%10 == 4 {
					x.failOn = int(r.byte()%4) + 1
				}
				id, failOn := x.id, x.failOn
				runs := 0
				body := func(context.Context) error {
					h.record(id)
					runs++ // a periodic task never overlaps itself
					if runs == failOn {
						return errFzRun
					}
					return nil
				}
				var fut ScheduledFuture
				var err error
				if x.fixed {
					op = fmt.Sprintf("ScheduleAtFixedRate(task %d, %v, %v, failOn %d)", x.id, d, x.period, x.failOn)
					fut, err = s.ScheduleAtFixedRate(body, d, x.period)
				} else {
					op = fmt.Sprintf("ScheduleWithFixedDelay(task %d, %v, %v, failOn %d)", x.id, d, x.period, x.failOn)
					fut, err = s.ScheduleWithFixedDelay(body, d, x.period)
				}
				submit(x, fut, err)
			case 5: // cancel
				x := pick()
				if x == nil {
					continue
				}
				interrupt := c&16 != 0
				op = fmt.Sprintf("Cancel(task %d, %v)", x.id, interrupt)
				want := x.state == fzQueued || x.state == fzRemoved
				if got := x.f.Cancel(interrupt); got != want {
					t.Fatalf("step %d: %s = %v, want %v", step, op, got, want)
				}
				if want {
					x.state = fzCanceled
					m.canceled++
					if m.removeOnC {
						x.queued = false
					}
				}
			case 6: // remove
				x := pick()
				if x == nil {
					continue
				}
				op = fmt.Sprintf("Remove(task %d)", x.id)
				want := x.queued
				if got := s.Remove(x.f); got != want {
					t.Fatalf("step %d: %s = %v, want %v", step, op, got, want)
				}
				if want {
					x.queued = false
					if x.state == fzQueued {
						x.state = fzRemoved
					}
				}
			case 7: // advance the clock
				b := r.byte()
				d := time.Duration(b) * fzUnit
				if c&16 != 0 {
					d = time.Duration(b) // a few nanoseconds
				}
				op = fmt.Sprintf("Advance(%v)", d)
				clk.Advance(d)
				m.now += int64(d)
			case 8: // advance exactly to the head's due time
				q := m.queue()
				if len(q) == 0 || q[0].when-m.now > int64(time.Hour) {
					continue
				}
				d := time.Duration(q[0].when - m.now)
				op = fmt.Sprintf("Advance to the head (%v)", d)
				clk.Advance(d)
				m.now += int64(d)
			case 9: // purge
				op = "Purge"
				s.Purge()
				for _, x := range m.tasks {
					if x.state == fzCanceled {
						x.queued = false
					}
				}
			}
			h.settle(step, op)
			m.settle()
			h.check(step, op, m)
		}

		// The end: ShutdownNow, or Shutdown and let the queued one-shots
		// run, or Shutdown without the delayed tasks.
		switch r.byte() % 3 {
		case 0:
			got := s.ShutdownNow()
			want := m.queue()
			if len(got) != len(want) {
				t.Fatalf("ShutdownNow returned %d tasks, model %d queued", len(got), len(want))
			}
			for i, x := range want {
				if got[i] != x.f {
					t.Fatalf("ShutdownNow()[%d] is not task %d", i, x.id)
				}
				x.queued = false
				if x.state == fzQueued {
					x.state = fzHandedBack
				}
			}
			h.settle(-1, "ShutdownNow")
			h.check(-1, "ShutdownNow", m)
		case 1:
			s.Shutdown()
			m.shutdown = true
			for _, x := range m.tasks { // JDK onShutdown with the default policies
				switch {
				case x.queued && x.state == fzCanceled:
					x.queued = false
				case x.queued && x.period != 0:
					x.queued = false
					x.state = fzCanceled
					m.canceled++
				}
			}
			h.settle(-1, "Shutdown")
			h.check(-1, "Shutdown", m)
			if q := m.queue(); len(q) > 0 {
				last := q[len(q)-1]
				if last.when-m.now > int64(time.Hour) {
					break // far-future tasks: the deferred ShutdownNow ends it
				}
				d := time.Duration(last.when - m.now)
				clk.Advance(d)
				m.now += int64(d)
				h.settle(-1, "drain after Shutdown")
				m.settle()
				h.check(-1, "drain after Shutdown", m)
			}
			ctx, cancel := context.WithTimeout(h.ctx, 20*time.Second)
			defer cancel()
			if err := s.AwaitTermination(ctx); err != nil {
				t.Fatalf("AwaitTermination after Shutdown drained the queue: %v", err)
			}
		case 2:
			s.Shutdown()
			s.SetExecuteExistingDelayedTasksAfterShutdownPolicy(false)
			for _, x := range m.tasks { // everything queued is now canceled or removed
				if x.queued {
					x.queued = false
					if x.state == fzQueued {
						x.state = fzCanceled
						m.canceled++
					}
				}
			}
			ctx, cancel := context.WithTimeout(h.ctx, 20*time.Second)
			defer cancel()
			if err := s.AwaitTermination(ctx); err != nil {
				t.Fatalf("AwaitTermination after Shutdown with nothing to run: %v", err)
			}
			h.check(-1, "Shutdown without delayed tasks", m)
		}
	})
}
