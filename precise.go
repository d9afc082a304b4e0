package scheduler

import (
	"runtime"
	"sync/atomic"
	"time"
)

// Precise timing: finishing each timed wait with a high-resolution wait.
// There is no JDK counterpart: a JVM's timed park is already
// high-resolution on Linux, Go's runtime timers are not.
//
// Go's runtime timers wake late on Linux, by up to about a millisecond: the
// netpoller blocks in epoll_wait, whose timeout is in whole milliseconds.
// With precise timing on, the leader arms its timer a margin before the
// head is due, and the worker that wakes becomes the fine waiter (q.fine):
// it waits for the head in one futex wait with a timeout (fineSleep), its
// thread's timer slack lowered to 1 ns for that call, so the wait ends when
// the hardware timer fires, not up to 50 µs later; a head due within
// preciseSpin it waits for by spinning on the clock instead. When the head
// is due it takes it, runs it, and comes back for the next: it takes every
// task that is due itself, one after the other, and the other workers are
// not woken for them.
//
// The wake-ups, not the tasks, are what precise timing costs in CPU: each
// is a context switch and three system calls. So a fine wait never ends
// sooner than preciseGap after the last one ended, whatever the heads: due
// times closer together than that share one wake-up, and a dense load costs
// at most 1/preciseGap wake-ups a second (docs/precise-timing.md has the
// cost model and the measurements).
//
// Beside the fine waiter, one worker leads as in the default mode, its
// timer armed preciseWatchdog after the head: if the fine waiter runs a long
// task, the leader takes the tasks that come due meanwhile, about as late
// as without precise timing; the other workers follow. So the rule of one
// timed waiter becomes "one timed waiter plus one fine waiter". A new head
// due before the fine waiter's wait ends wakes it (wakeFineLocked), and so
// does an event that concerns every worker (shutdown, a smaller pool).

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
	// preciseGap is the shortest time between two wake-ups of the fine
	// waiter: a head due sooner than that after the last wake-up waits
	// for the next one, so that due times closer together than that share
	// one wake-up. It bounds the wake-ups at 1/preciseGap per second
	// whatever the task rate, at a cost of up to preciseGap of lateness
	// for tasks due that close to the previous ones.
	preciseGap = 60 * time.Microsecond
	// preciseSpin is the longest wait the fine waiter spins instead of
	// sleeping: shorter than a sleep's own wake-up latency on a VM, and
	// cheaper in CPU than the wake-up.
	preciseSpin = 3 * time.Microsecond
	// preciseWatchdog is how long after the head is due the leader's
	// timer fires while a fine waiter waits for that head. The fine waiter
	// takes the head first; the leader is there for when the worker that
	// was the fine waiter runs a long task, and then takes the tasks that
	// come due meanwhile about preciseWatchdog (plus the runtime timer's
	// lateness) late. Waking it later than the head saves a wake-up per
	// millisecond or so on dense loads.
	preciseWatchdog = preciseMargin
)

// WithPreciseTiming makes the scheduler start tasks within tens of
// microseconds of their trigger time instead of up to a millisecond late
// (default off). The leader's timed wait for the head ends 1.5 ms early, and
// the worker finishes it in one high-resolution wait (a futex wait with a
// 1 ns timer slack), then runs every task that is due itself; it never
// starts a task before its trigger time. On Linux, with the system clock,
// this gives start lateness of a few tens of microseconds at the median,
// where Go's runtime timers, and so time.AfterFunc and this scheduler by
// default, give about 0.5 ms; see docs/precise-timing.md and
// benchmarks/README.md. There is no JDK counterpart: the JVM's timed waits
// are high-resolution already.
//
// It has no effect with a Clock other than SystemClock, and on systems
// other than Linux (the plain timer is used there). Inside a
// testing/synctest bubble a real wait does not move the bubble's fake
// time: the first fine wait that sees the clock stand still across a
// completed wait (or a spin) turns precise timing off for the scheduler
// and wakes the leader, whose timer was armed for precise timing, to arm
// it again for the head itself. Every wait after that is the plain
// timer's, so tests in a bubble see exactly the behaviour of the default:
// each task runs at its due instant of the bubble's clock.
//
// The costs, which are why it is opt-in:
//
//   - CPU: a wake-up per distinct due time, at most one per 60 µs, instead
//     of one per millisecond tick. A wake-up is a context switch and three
//     system calls, tens of microseconds of CPU on a VM, so a scheduler
//     running 100,000 short tasks a second uses more CPU than the default
//     (BenchmarkPreciseLateness, load=fixedrate, reports it); sparse tasks
//     cost one wake-up each.
//   - Other goroutines: a wait of up to 200 µs keeps the worker's P, so
//     that the runtime's monitor thread does not poll every 20 µs to take
//     it back, and a longer one gives the P back only when that monitor
//     notices (after 20 µs to 10 ms). With GOMAXPROCS=1 the worker yields
//     before each wait, but other goroutines still wait longer while tasks
//     are about to come due. BenchmarkPreciseNeighbour measures it: the
//     latency of a channel hand-off between two other goroutines while a
//     scheduler runs 20,000 tasks over 2 s, at GOMAXPROCS 1 and 2.
func WithPreciseTiming(on bool) Option {
	return optionFunc(func(c *config) { c.preciseTiming = on })
}

// fineSleeper is the state of the fine wait's sleep, kept in the delay
// queue: when the sleeper wakes, the futex word that wakes it early, and
// when it last woke.
type fineSleeper struct {
	// word is the futex word the fine waiter sleeps on: wakeFineLocked
	// changes it, then wakes the sleeper (fineWake).
	word atomic.Uint32
	// until is the instant the fine waiter's sleep ends, or 0 while it is
	// not asleep; q.mu.
	until int64
	// woke is the instant the last fine sleep ended; q.mu. The next one
	// ends preciseGap after it at the earliest.
	woke int64
}

// preciseLocked reports whether timed waits end with a fine wait: the
// option is on, the clock is the system clock, the OS has a
// high-resolution sleep, and no fine wait has found the clock standing
// still (a synctest bubble).
func (q *delayQueue) preciseLocked() bool {
	return q.precise && q.systemClock && preciseSupported && !q.preciseOff
}

// fineWaitLocked is the fine wait: w waits until the head is due, in one
// high-resolution sleep per head (fineSleep), or by spinning when it is
// due within preciseSpin, and returns when the head is due, gone, or no
// longer within the margin, when it was woken (wakeFineLocked), or when
// precise timing turned itself off. The caller re-takes. w is not counted
// as parked: it is about to run the head.
//
// The sleep ends at the head's time, but no sooner than preciseGap after
// the last one ended: due times closer together than that share one
// wake-up, and the worker then takes every task that is due, one after
// the other, without waking another worker for each (meanwhile the
// leader's timer is armed preciseWatchdog after the head, so
// handOffLocked has nobody to signal).
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
		if gap := q.sleeper.woke + int64(preciseGap) - now; gap > d {
			d = gap
		}
		if d <= int64(preciseSpin) {
			q.mu.Unlock()
			moved := spinUntil(q.now, now+d)
			q.mu.Lock()
			if !moved {
				q.preciseOff = true
			}
			continue
		}
		word := q.sleeper.word.Load()
		until := now + d
		q.sleeper.until = until
		q.mu.Unlock()
		if runtime.GOMAXPROCS(0) == 1 {
			// Let the other goroutines run first: a short sleep holds
			// the only P (fineSleep), and a long one holds it until the
			// runtime notices (see WithPreciseTiming). With more Ps,
			// an idle one takes them, and yielding would wake a thread
			// to look for work, a context switch per sleep.
			runtime.Gosched()
		}
		elapsed := false
		if left := until - q.now(); left > 0 {
			elapsed = fineSleep(&q.sleeper.word, word, time.Duration(left))
		}
		q.mu.Lock()
		woken := q.sleeper.until == 0
		q.sleeper.until = 0
		q.sleeper.woke = q.now()
		// Outside a synctest bubble the monotonic clock always moves
		// across a sleep that completed; inside one it stands still
		// while any goroutine of the bubble runs.
		if elapsed && q.sleeper.woke == now {
			q.preciseOff = true
		}
		if woken {
			break
		}
	}
	q.fine = nil
	if q.preciseOff && q.leader != nil {
		// Precise timing turned itself off (a synctest bubble) while a
		// leader waits with its timer armed for precise timing: for the
		// watchdog, past the head, or a margin before it. Woken, it
		// re-takes and arms the plain timer for the head itself.
		q.newHeadLocked()
	}
}

// spinUntil reads now until it reaches until, and reports true; or false if
// now stood still for spinStuck readings in a row, which the monotonic
// clock never does but a synctest bubble's does.
func spinUntil(now func() int64, until int64) bool {
	last, same := now(), 0
	for last-until < 0 {
		t := now()
		if t != last {
			last, same = t, 0
		} else if same++; same == spinStuck {
			return false
		}
	}
	return true
}

// spinStuck is how many equal clock readings in a row make spinUntil give
// up: far more than a real clock's resolution allows.
const spinStuck = 1000

// wakeFineLocked ends the fine waiter's sleep, if it sleeps. The fine
// waiter then re-takes: it finds a new head that is due sooner, or finds
// that it must exit.
func (q *delayQueue) wakeFineLocked() {
	if q.sleeper.until == 0 {
		return
	}
	q.sleeper.until = 0
	q.sleeper.word.Add(1)
	fineWake(&q.sleeper.word)
}
