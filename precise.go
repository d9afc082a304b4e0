package scheduler

import (
	"runtime"
	"time"
)

// Precise timing: finishing each timed wait with a high-resolution
// sleep. There is no JDK counterpart: a JVM's timed park is already
// high-resolution on Linux, Go's runtime timers are not.
//
// Go's runtime timers wake late on Linux, by up to about a millisecond: the
// netpoller blocks in epoll_wait, whose timeout is in whole milliseconds.
// With precise timing on, the leader arms its timer a margin before the
// head is due, and the worker that wakes finishes the last stretch in the
// fine wait below: short high-resolution sleeps (nanosleep, whose only
// lateness is the kernel's timer slack, 50 µs by default) until the head is
// due. The fine waiter is not the leader: while it sleeps, a new head that
// is already due is taken by a follower at once, and one due within the
// margin is picked up by the fine waiter itself, which re-reads the head
// after every step of at most preciseStep. So the rule of one timed waiter
// becomes "one timed waiter plus, for the last stretch, one fine waiter".
//
// On Linux each of those sleeps runs with its thread's timer slack set to
// 1 ns (prctl PR_SET_TIMERSLACK) and put back after it (highResSleep), so
// a sleep ends when the hardware timer fires, not up to 50 µs later; the
// cost is three prctl calls per sleep, each well under a microsecond.

const (
	// preciseMargin is how long before the head's trigger time the
	// leader's timer fires with precise timing on. It must cover the
	// runtime timer's own lateness, so that the fine wait starts before
	// the head is due: time.AfterFunc starts p99 about 1.1 ms late on an
	// idle Linux box (the netpoller waits whole milliseconds;
	// BenchmarkPreciseLateness/impl=afterfunc). A timer later than the
	// margin costs only precision: the task then starts as it would
	// without precise timing, less the margin. It is kept short because a
	// fine waiter holds an OS thread and wakes once per step.
	preciseMargin = 1500 * time.Microsecond
	// preciseStep is the longest single high-resolution sleep: how long a
	// new head due within the margin may wait for the fine waiter to
	// notice it. Between steps the fine waiter yields its P to other
	// goroutines (see WithPreciseTiming on GOMAXPROCS=1).
	preciseStep = 200 * time.Microsecond
	// preciseMinSleep is the shortest high-resolution sleep. A head due
	// sooner than that is served late by up to preciseMinSleep (plus the
	// kernel's wake-up latency), so that due times closer together than
	// that share one wake-up: with the 1 ns timer slack every sleep would
	// otherwise end on its own, and at dense loads (1,000 tasks every
	// 10 ms, 10 µs apart) the wake-ups, not the tasks, would cost the CPU.
	preciseMinSleep = 40 * time.Microsecond
)

// WithPreciseTiming makes the scheduler start tasks within tens of
// microseconds of their trigger time instead of up to a millisecond late
// (default off). Each worker's timed wait for the head ends 1.5 ms early,
// and the worker finishes the wait with high-resolution sleeps (nanosleep
// with a 1 ns timer slack) of 40 to 200 µs, re-reading the head between
// them; it never starts a task before its trigger time. On Linux, with the
// system clock, this gives start lateness of about 45-70 µs at the median,
// where Go's runtime timers, and so time.AfterFunc
// and this scheduler by default, give about 0.5 ms; see
// benchmarks/README.md. There is no JDK counterpart: the JVM's timed waits
// are high-resolution already.
//
// It has no effect with a Clock other than SystemClock, and on systems
// other than Linux (the plain timer is used there). Inside a
// testing/synctest bubble a real sleep does not move the bubble's fake
// time: the first fine wait that sees the clock stand still across a
// completed sleep turns precise timing off for the scheduler, and every
// wait after that is the plain timer's, so tests in a bubble see exactly
// the behaviour of the default.
//
// The costs, which are why it is opt-in:
//
//   - CPU: the worker wakes once per distinct due time instead of once per
//     millisecond tick, so a scheduler running many short tasks uses more
//     CPU per run: 2-3× the default in BenchmarkPreciseLateness (20,000
//     one-shot tasks over 2 s, or 1,000 fixed-rate tasks every 10 ms) on a
//     2-core VM, where a wake-up is expensive. Sparse tasks cost a few
//     sleeps each.
//   - Other goroutines: a fine waiter is blocked in a system call and holds
//     its OS thread, and the Go runtime gives that thread's P to other
//     goroutines only when sysmon notices (after 20 µs to 10 ms). The fine
//     waiter yields (runtime.Gosched) between steps to bound that, but in a
//     program with GOMAXPROCS=1 other goroutines wait longer while tasks
//     are about to come due. BenchmarkPreciseNeighbour measures it: the
//     latency of a channel hand-off between two other goroutines while a
//     scheduler runs 20,000 tasks over 2 s, at GOMAXPROCS 1 and 2; at
//     GOMAXPROCS=1 its p99 rose from about 0.03-0.1 ms to about 0.8 ms
//     with precise timing on (benchmarks/README.md has the numbers).
func WithPreciseTiming(on bool) Option {
	return optionFunc(func(c *config) { c.preciseTiming = on })
}

// preciseLocked reports whether timed waits end with a fine wait: the
// option is on, the clock is the system clock, the OS has a
// high-resolution sleep, and no fine wait has found the clock standing
// still (a synctest bubble).
func (q *delayQueue) preciseLocked() bool {
	return q.precise && q.systemClock && preciseSupported && !q.preciseOff
}

// fineWaitLocked is the fine wait: w sleeps in steps of at most
// preciseStep until the head is due, re-reading the head after every step,
// and returns when the head is due, gone, or no longer within the margin,
// or when precise timing turned itself off. The caller re-takes. w is not
// counted as parked: it is about to run the head.
func (q *delayQueue) fineWaitLocked(w *worker) {
	q.fine = w
	if q.onFineWait != nil {
		q.onFineWait()
	}
	for !q.preciseOff {
		head := q.heap.peek()
		if head == nil {
			break
		}
		now := q.now()
		d := head.when - now
		if d <= 0 || d > q.margin {
			break
		}
		q.mu.Unlock()
		if d > int64(preciseStep) {
			// Not the last step: let other goroutines on this P run
			// first (GOMAXPROCS=1 programs, see WithPreciseTiming).
			runtime.Gosched()
			d = int64(preciseStep)
		}
		if d < int64(preciseMinSleep) {
			d = int64(preciseMinSleep)
		}
		slept := highResSleep(time.Duration(d))
		q.mu.Lock()
		// Outside a synctest bubble the monotonic clock always moves
		// across a sleep that completed; inside one it stands still
		// while any goroutine of the bubble runs.
		if slept && q.now() == now {
			q.preciseOff = true
		}
	}
	q.fine = nil
}
