package scheduler

import (
	"errors"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Run history: how many runs ended in each of the last few minutes' seconds
// and how late they started, kept for a page or a health check that asks
// for it (a dashboard's charts). The JDK has no counterpart; it is the
// in-process cousin of what otelscheduler exports as metrics.

const (
	// historySeconds is how far back RunHistory can look: five minutes.
	historySeconds = 300
	// latenessBuckets counts the lateness histogram's buckets: 0, then four
	// per power of two of microseconds from 1 µs up to about 8 s; a
	// lateness beyond that counts in the last bucket.
	latenessBuckets = 1 + 24*4
)

// RunHistory is what [Scheduler.RunHistory] reports: the runs that ended in
// each second of a window, and their start lateness (Started - Due -
// Jitter, as RunInfo gives them) as estimated quantiles. Quantiles come
// from a histogram with four buckets per power of two, so each is an upper
// bound within 25 % of the true value (and exact at 0).
type RunHistory struct {
	// Seconds holds one entry per second of the window, oldest first; the
	// last is the second in progress.
	Seconds []RunSecond
	// Runs and Failed count the runs over the whole window; a failed run
	// returned an error or panicked.
	Runs, Failed int
	// LatenessP50 and LatenessP99 are over the whole window, 0 when there
	// was no run.
	LatenessP50, LatenessP99 time.Duration
	// Failures holds the latest failed runs, newest first: at most
	// RecentFailuresKept of them, whether or not they ended in the window.
	// FailuresRecorded counts every failed run since the recording
	// started, so FailuresRecorded - len(Failures) of them are no longer
	// listed.
	Failures         []RunFailure
	FailuresRecorded int
}

// RecentFailuresKept is how many failed runs RunHistory lists at most.
const RecentFailuresKept = 50

// RunFailure is one failed run: the task, when it ended by the
// scheduler's clock, and why (the error it returned, or the panic with its
// stack).
type RunFailure struct {
	ID    TaskID
	Name  string // WithName's, or ""
	Kind  TaskKind
	Due   time.Time // the run's nominal due time
	Ended time.Time
	Error string // err.Error()
	// Stack is the goroutine's stack when the run panicked ([PanicError]),
	// nil otherwise. It is shared: do not modify it.
	Stack []byte
}

// RunSecond is one second of a [RunHistory].
type RunSecond struct {
	Start                    time.Time // by the scheduler's clock
	Runs, Failed             int
	LatenessP50, LatenessP99 time.Duration
}

// RunHistory returns the runs of the last window (at most five minutes,
// rounded up to whole seconds) by the scheduler's clock. The first call
// switches the recording on and returns an empty history for the time
// before it; from then on every run that ends is counted, at the cost of a
// few atomic additions per run and no allocation. Until the first call a
// run pays one atomic load. It is safe for concurrent use, and holds no
// lock: a run ending at the very turn of a second may be left uncounted.
func (s *Scheduler) RunHistory(window time.Duration) RunHistory {
	h := s.history.Load()
	if h == nil {
		s.history.CompareAndSwap(nil, new(runHistory))
		h = s.history.Load()
	}
	n := int((window + time.Second - 1) / time.Second)
	n = min(max(n, 1), historySeconds)
	now := s.q.now() / int64(time.Second)
	out := RunHistory{Seconds: make([]RunSecond, 0, n)}
	var total [latenessBuckets]uint64
	for sec := now - int64(n) + 1; sec <= now; sec++ {
		rs := RunSecond{Start: s.q.origin.Add(time.Duration(sec) * time.Second)}
		var counts [latenessBuckets]uint64
		if sl := &h.slots[slotOf(sec)]; sec >= 0 && sl.second.Load() == sec+1 {
			rs.Failed = int(sl.failed.Load())
			for i := range counts {
				counts[i] = uint64(sl.late[i].Load())
				total[i] += counts[i]
				rs.Runs += int(counts[i])
			}
		}
		rs.LatenessP50, rs.LatenessP99 = quantile(&counts, 0.50), quantile(&counts, 0.99)
		out.Runs += rs.Runs
		out.Failed += rs.Failed
		out.Seconds = append(out.Seconds, rs)
	}
	out.LatenessP50, out.LatenessP99 = quantile(&total, 0.50), quantile(&total, 0.99)
	out.Failures, out.FailuresRecorded = h.failures.list()
	return out
}

// runHistory holds one slot per second, reused every historySeconds, and
// the latest failed runs.
type runHistory struct {
	slots    [historySeconds]historySlot
	failures failureRing
}

// failureRing keeps the latest RecentFailuresKept failed runs. Only a
// failed run takes its lock; a run that succeeds never touches it.
type failureRing struct {
	mu    sync.Mutex // guards buf, next and total
	buf   [RecentFailuresKept]RunFailure
	next  int // where the next failure goes
	total int // failures added so far
}

func (r *failureRing) add(f RunFailure) {
	r.mu.Lock()
	r.buf[r.next] = f
	r.next = (r.next + 1) % RecentFailuresKept
	r.total++
	r.mu.Unlock()
}

// list returns the failures kept, newest first, and how many were added.
func (r *failureRing) list() ([]RunFailure, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := min(r.total, RecentFailuresKept)
	out := make([]RunFailure, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, r.buf[(r.next-i+RecentFailuresKept)%RecentFailuresKept])
	}
	return out, r.total
}

// historySlot counts the runs of one second. A run is counted once, in its
// lateness bucket: the number of runs is the buckets' sum, which saves an
// atomic addition per run (BenchmarkPeriodicRunHistory).
type historySlot struct {
	// second is the second (clock seconds since the origin) the counts
	// below are of, plus one; 0 for a slot never used. The first run of a
	// new second claims the slot (claim): it marks it as being cleared for
	// that second (the negated value), clears the counts, then publishes
	// the second; the runs of that second meanwhile wait, so none is
	// counted and then cleared away.
	second atomic.Int64
	failed atomic.Uint32
	late   [latenessBuckets]atomic.Uint32
}

func slotOf(sec int64) int { return int(uint64(sec) % historySeconds) }

// claim makes the slot count second (a second plus one, above 0), clearing
// it first if it held an earlier second, and reports false if it holds a
// later second, whose counts stay.
func (sl *historySlot) claim(second int64) bool {
	for {
		old := sl.second.Load()
		switch {
		case old == second:
			return true
		case old == -second:
			runtime.Gosched() // another run of this second is clearing the slot
			continue
		case old > second || -old > second:
			return false
		}
		if !sl.second.CompareAndSwap(old, -second) {
			continue
		}
		sl.failed.Store(0)
		for i := range sl.late {
			sl.late[i].Store(0)
		}
		// A run of a later second may have taken the slot meanwhile; then
		// the counts are its own.
		return sl.second.CompareAndSwap(-second, second)
	}
}

// recordRun counts a run that ended, if the history is on. rec is the
// run's record: its start and due say when it ran and how late.
func (s *Scheduler) recordRun(rec *runRecord, err error) {
	h := s.history.Load()
	if h == nil {
		return
	}
	if err != nil {
		h.failures.add(s.runFailure(rec, err))
	}
	sec := rec.started / int64(time.Second)
	if sec < 0 {
		return
	}
	sl := &h.slots[slotOf(sec)]
	if !sl.claim(sec + 1) {
		return // a later second owns the slot
	}
	if err != nil {
		sl.failed.Add(1)
	}
	sl.late[latenessBucket(rec.started-rec.due-rec.jitter)].Add(1)
}

// runFailure describes rec's run, which failed with err.
func (s *Scheduler) runFailure(rec *runRecord, err error) RunFailure {
	f := RunFailure{
		ID:    TaskID(rec.t.seq),
		Name:  rec.t.Name(),
		Kind:  rec.t.kind(),
		Due:   s.q.origin.Add(time.Duration(rec.due)),
		Ended: s.q.origin.Add(time.Duration(s.q.now())),
		Error: err.Error(),
	}
	var pe *PanicError
	if errors.As(err, &pe) {
		f.Stack = pe.Stack
	}
	return f
}

// latenessBucket returns the histogram bucket of a lateness of late
// nanoseconds: 0 for none, else four buckets per power of two of
// microseconds.
func latenessBucket(late int64) int {
	us := uint64(max(late, 0)) / 1000
	if us == 0 {
		return 0
	}
	e := bits.Len64(us) - 1 // us is in [2^e, 2^(e+1))
	sub := 0
	if e >= 2 {
		sub = int(us>>(e-2)) & 3
	} else {
		sub = int(us<<(2-e)) & 3
	}
	return min(1+e*4+sub, latenessBuckets-1)
}

// bucketUpper returns the upper bound of bucket b, the value a quantile
// falling in it is reported as.
func bucketUpper(b int) time.Duration {
	if b == 0 {
		return 0
	}
	e, sub := (b-1)/4, (b-1)%4
	// The bucket holds [ (4+sub) * 2^e / 4, (5+sub) * 2^e / 4 ) µs.
	return time.Duration((5+sub)<<e) * time.Microsecond / 4
}

// quantile returns the upper bound of the bucket holding quantile q of the
// counts, 0 when there are none.
func quantile(counts *[latenessBuckets]uint64, q float64) time.Duration {
	var n uint64
	for _, c := range counts {
		n += c
	}
	if n == 0 {
		return 0
	}
	rank := uint64(q*float64(n-1)) + 1 // 1-based rank of the quantile
	var seen uint64
	for b, c := range counts {
		seen += c
		if seen >= rank {
			return bucketUpper(b)
		}
	}
	return bucketUpper(latenessBuckets - 1)
}
