package scheduler_test

// One behavioural suite, two kinds of test time.
//
// Every case in suiteCases runs on a schedulertest.ManualClock that the test
// moves with AdvanceAndSettle and AwaitIdle, and on the system clock inside a
// testing/synctest bubble, whose fake time moves when every goroutine in the
// bubble is durably blocked; in the bubble once plainly and once with
// WithPreciseTiming(true), which must notice the bubble and fall back to the
// plain timer. All must record exactly the same (virtual time, event)
// list: the manual clock's recipe claims to move time the way real time
// would, and the bubble is real time made deterministic, so a divergence is
// a bug in the scheduler or in the recipe.

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/schedulertest"
)

// clockDriver runs a test body on one kind of test time.
type clockDriver interface {
	// name names the driver's subtests.
	name() string
	// run calls body with a fresh suiteClock of this kind; the synctest
	// driver calls it inside a bubble.
	run(t *testing.T, body func(t *testing.T, c suiteClock))
}

// suiteClock is the time a case runs on. Its methods are called from the
// test goroutine, except work, which tasks call.
type suiteClock interface {
	// newScheduler returns a scheduler on this time, shut down and awaited
	// when the test ends. A case makes at most one.
	newScheduler(t *testing.T, pool int, opts ...scheduler.Option) *scheduler.Scheduler
	// elapsed returns the virtual time since the case began.
	elapsed() time.Duration
	// advance lets d of virtual time pass the way real time would, and
	// returns once everything that came due on the way is done.
	advance(t *testing.T, d time.Duration)
	// work is called by a running task to take d of virtual time, like a
	// slow call. It returns nil once d has passed, or ctx.Err() if ctx
	// ends first. On the manual clock it is exact only with a pool of one
	// (see suiteManualClock).
	work(ctx context.Context, d time.Duration) error
	// ctx returns a context for waits such as AwaitTermination.
	ctx(t *testing.T) context.Context
}

// suiteEpoch is the manual clock's start; cases only see offsets from it.
var suiteEpoch = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

// --- the manual clock driver ---

type suiteManualDriver struct{}

func (suiteManualDriver) name() string { return "manual" }

func (suiteManualDriver) run(t *testing.T, body func(t *testing.T, c suiteClock)) {
	m := &suiteManualClock{clk: schedulertest.NewManualClock(suiteEpoch), changed: make(chan struct{})}
	body(t, m)
}

// suiteManualClock moves a ManualClock with schedulertest.AdvanceAndSettle,
// which steps from timer to timer and calls AwaitIdle at each one. It is
// itself the idler it passes: its AwaitIdle is the scheduler's, except while
// a task is inside work.
//
// A task in work waits on a timer of the manual clock, so the step to its end
// is one more timer for AdvanceAndSettle. But that task is running, and the
// scheduler's AwaitIdle would wait for it forever: the clock only moves when
// AwaitIdle returns. So AwaitIdle here returns as soon as a task is blocked
// in work with its end still ahead. That is exact when the pool has one
// worker: with the only worker inside the task, nothing else can happen in
// the scheduler until the clock moves. With more workers another one could
// still be busy at that instant, so work needs a pool of one (checked).
type suiteManualClock struct {
	clk *schedulertest.ManualClock

	mu   sync.Mutex // guards the fields below
	s    *scheduler.Scheduler
	pool int
	// works holds the tasks blocked in work.
	works []*suiteWork
	// changed is closed, and replaced, whenever works changes.
	changed chan struct{}
}

// suiteWork is one task blocked in work until the clock reads until.
type suiteWork struct {
	ctx   context.Context
	until time.Time
}

func (m *suiteManualClock) newScheduler(t *testing.T, pool int, opts ...scheduler.Option) *scheduler.Scheduler {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	require.Nil(t, m.s, "a case makes one scheduler")
	// WithClock last, so that it wins.
	s, err := scheduler.New(pool, append(opts, scheduler.WithClock(m.clk))...)
	require.NoError(t, err)
	m.s, m.pool = s, pool
	shutdownAtEnd(t, s)
	return s
}

func (m *suiteManualClock) elapsed() time.Duration { return m.clk.Now().Sub(suiteEpoch) }

func (m *suiteManualClock) advance(t *testing.T, d time.Duration) {
	t.Helper()
	ctx := m.ctx(t)
	// AdvanceAndSettle settles first, so a worker that has not armed its
	// timer yet is seen (TestAdvanceAndSettleSettlesBeforeFirstStep).
	require.NoError(t, schedulertest.AdvanceAndSettle(ctx, m.clk, m, d))
}

func (m *suiteManualClock) ctx(t *testing.T) context.Context { return testCtx(t) }

func (m *suiteManualClock) work(ctx context.Context, d time.Duration) error {
	tm := m.clk.NewTimer(d)
	w := &suiteWork{ctx: ctx, until: m.clk.Now().Add(d)}
	m.mu.Lock()
	m.works = append(m.works, w)
	m.notifyLocked()
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.works = slices.DeleteFunc(m.works, func(x *suiteWork) bool { return x == w })
		m.notifyLocked()
		m.mu.Unlock()
	}()
	select {
	case <-tm.C():
		return nil
	case <-ctx.Done():
		tm.Stop()
		return ctx.Err()
	}
}

func (m *suiteManualClock) notifyLocked() {
	close(m.changed)
	m.changed = make(chan struct{})
}

// inWorkLocked reports whether a task is blocked in work, neither
// interrupted nor at its end: then only a move of the clock can make
// anything happen.
func (m *suiteManualClock) inWorkLocked() bool {
	now := m.clk.Now()
	for _, w := range m.works {
		if w.ctx.Err() == nil && now.Before(w.until) {
			return true
		}
	}
	return false
}

// AwaitIdle returns once the scheduler is idle or its task is in work; it
// is what AdvanceAndSettle calls at each step.
func (m *suiteManualClock) AwaitIdle(ctx context.Context) error {
	m.mu.Lock()
	s := m.s
	m.mu.Unlock()
	if s == nil {
		return nil
	}
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	var idle chan error // the scheduler's AwaitIdle, started on first need
	for {
		m.mu.Lock()
		inWork, pool, changed := m.inWorkLocked(), m.pool, m.changed
		m.mu.Unlock()
		if inWork {
			if idle != nil {
				cancel()
				<-idle
			}
			if pool != 1 {
				return fmt.Errorf("suite: work needs a pool of one on the manual clock, not %d", pool)
			}
			return nil
		}
		if idle == nil {
			idle = make(chan error, 1)
			go func() { idle <- s.AwaitIdle(ictx) }()
		}
		select {
		case err := <-idle:
			return err
		case <-changed:
		}
	}
}

// --- the synctest driver ---

// suiteBubbleDriver runs the case in a bubble; with precise set, the
// scheduler has WithPreciseTiming(true), which must notice the bubble and
// fall back to the plain timer.
type suiteBubbleDriver struct{ precise bool }

func (d suiteBubbleDriver) name() string {
	if d.precise {
		return "synctest+precise"
	}
	return "synctest"
}

func (d suiteBubbleDriver) run(t *testing.T, body func(t *testing.T, c suiteClock)) {
	synctest.Test(t, func(t *testing.T) {
		body(t, &suiteBubbleClock{start: time.Now(), precise: d.precise})
	})
}

// suiteBubbleClock is the system clock inside a synctest bubble: time.Now is
// the bubble's fake time, and it moves only when every goroutine in the
// bubble is durably blocked.
type suiteBubbleClock struct {
	start   time.Time
	precise bool // the scheduler gets WithPreciseTiming(true)
}

func (b *suiteBubbleClock) newScheduler(t *testing.T, pool int, opts ...scheduler.Option) *scheduler.Scheduler {
	t.Helper()
	if b.precise {
		opts = append(opts, scheduler.WithPreciseTiming(true))
	}
	s, err := scheduler.New(pool, opts...) // the system clock: the bubble's
	require.NoError(t, err)
	shutdownAtEnd(t, s) // the cleanup runs inside the bubble, on its clock
	return s
}

func (b *suiteBubbleClock) elapsed() time.Duration { return time.Since(b.start) }

func (b *suiteBubbleClock) advance(t *testing.T, d time.Duration) {
	time.Sleep(d)   // virtual: the bubble's clock jumps from timer to timer
	synctest.Wait() // everything woken by the last timer is done
}

func (b *suiteBubbleClock) work(ctx context.Context, d time.Duration) error {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *suiteBubbleClock) ctx(t *testing.T) context.Context { return t.Context() }

// --- recording ---

// suiteEvent is one thing that happened, at a virtual time.
type suiteEvent struct {
	at   time.Duration
	what string
}

func (e suiteEvent) String() string { return fmt.Sprintf("%v %s", e.at, e.what) }

// suiteLog records events from any goroutine, stamped with the virtual time.
type suiteLog struct {
	c      suiteClock
	mu     sync.Mutex
	events []suiteEvent
}

func (l *suiteLog) add(what string) {
	e := suiteEvent{at: l.c.elapsed(), what: what}
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

// lines returns the events as "1h0m0s tick" lines; sorted orders events
// of one instant by text, for cases where concurrent workers record them.
func (l *suiteLog) lines(sorted bool) []string {
	l.mu.Lock()
	es := slices.Clone(l.events)
	l.mu.Unlock()
	return suiteLines(es, sorted)
}

// suiteLines returns es as lines; sorted orders them by time, then by text.
func suiteLines(es []suiteEvent, sorted bool) []string {
	if sorted {
		slices.SortStableFunc(es, func(x, y suiteEvent) int {
			return cmp.Or(cmp.Compare(x.at, y.at), cmp.Compare(x.what, y.what))
		})
	}
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.String()
	}
	return out
}

// task returns a task that records what.
func (l *suiteLog) task(what string) scheduler.Task {
	return func(context.Context) error {
		l.add(what)
		return nil
	}
}

// workTask returns a task that records "start", works d on the log's
// clock, and records "end"; an interrupted run records nothing more and
// returns the ctx's error.
func (l *suiteLog) workTask(c suiteClock, d time.Duration) scheduler.Task {
	return func(ctx context.Context) error {
		l.add("start")
		if err := c.work(ctx, d); err != nil {
			return err
		}
		l.add("end")
		return nil
	}
}

// addCanceled records whether tick and report are canceled.
func (l *suiteLog) addCanceled(tick, report scheduler.ScheduledFuture) {
	l.add(fmt.Sprintf("tick canceled=%v, report canceled=%v", tick.IsCanceled(), report.IsCanceled()))
}

// addTerminated waits for s to terminate and records the virtual time its
// Terminated hook ran at (see suiteShutdownAt2h30m).
func (l *suiteLog) addTerminated(t *testing.T, s *scheduler.Scheduler, terminated <-chan time.Duration) {
	t.Helper()
	require.NoError(t, s.AwaitTermination(l.c.ctx(t)))
	l.add(fmt.Sprintf("terminated, hook at %v", <-terminated))
}

// suiteAt builds an expected line.
func suiteAt(at time.Duration, what string) string { return suiteEvent{at, what}.String() }

// suiteEvery builds the expected lines of n runs, the k-th at first+k*every.
func suiteEvery(first, every time.Duration, n int, what string) []string {
	out := make([]string, n)
	for k := range n {
		out[k] = suiteAt(first+time.Duration(k)*every, what)
	}
	return out
}

// --- the cases ---

type suiteCase struct {
	name string
	// sorted: events of one instant may come from concurrent workers, so
	// they are compared sorted by text.
	sorted bool
	body   func(t *testing.T, c suiteClock, log *suiteLog)
	want   []string
}

const (
	suiteMinute = time.Minute
	suiteHour   = time.Hour
)

func suiteCases() []suiteCase {
	const h, m = suiteHour, suiteMinute
	return []suiteCase{
		{
			name: "fixed rate runs 24 times in 24h at exact instants",
			body: func(t *testing.T, c suiteClock, log *suiteLog) {
				s := c.newScheduler(t, 2)
				_, err := s.ScheduleAtFixedRate(log.task("tick"), h, h)
				require.NoError(t, err)
				c.advance(t, 24*h)
			},
			want: suiteEvery(h, h, 24, "tick"),
		},
		{
			name: "fixed rate keeps its rate when each run takes 10 minutes",
			body: func(t *testing.T, c suiteClock, log *suiteLog) {
				s := c.newScheduler(t, 1)
				_, err := s.ScheduleAtFixedRate(log.workTask(c, 10*m), h, h)
				require.NoError(t, err)
				c.advance(t, 3*h+30*m)
			},
			want: []string{
				suiteAt(h, "start"), suiteAt(h+10*m, "end"),
				suiteAt(2*h, "start"), suiteAt(2*h+10*m, "end"),
				suiteAt(3*h, "start"), suiteAt(3*h+10*m, "end"),
			},
		},
		{
			name: "fixed delay counts from the end of a 10-minute run",
			body: func(t *testing.T, c suiteClock, log *suiteLog) {
				s := c.newScheduler(t, 1)
				_, err := s.ScheduleWithFixedDelay(log.workTask(c, 10*m), h, h)
				require.NoError(t, err)
				c.advance(t, 6*h)
			},
			want: []string{
				suiteAt(h, "start"), suiteAt(h+10*m, "end"),
				suiteAt(2*h+10*m, "start"), suiteAt(2*h+20*m, "end"),
				suiteAt(3*h+20*m, "start"), suiteAt(3*h+30*m, "end"),
				suiteAt(4*h+30*m, "start"), suiteAt(4*h+40*m, "end"),
				suiteAt(5*h+40*m, "start"), suiteAt(5*h+50*m, "end"),
			},
		},
		{
			name: "fixed rate catches up back to back after a run of 3 periods",
			body: func(t *testing.T, c suiteClock, log *suiteLog) {
				s := c.newScheduler(t, 1)
				n := 0 // touched by the task's runs only, which never overlap
				_, err := s.ScheduleAtFixedRate(func(ctx context.Context) error {
					n++
					log.add(fmt.Sprintf("run %d", n))
					if n == 1 {
						if err := c.work(ctx, 3*h); err != nil {
							return err
						}
						log.add("run 1 ends")
					}
					return nil
				}, h, h)
				require.NoError(t, err)
				c.advance(t, 6*h+30*m)
			},
			want: []string{
				suiteAt(h, "run 1"), suiteAt(4*h, "run 1 ends"),
				// runs 2 and 3 are late, run 4 is on time: all at 4h
				suiteAt(4*h, "run 2"), suiteAt(4*h, "run 3"), suiteAt(4*h, "run 4"),
				suiteAt(5*h, "run 5"), suiteAt(6*h, "run 6"),
			},
		},
		{
			name: "fixed delay does not catch up after a long run",
			body: func(t *testing.T, c suiteClock, log *suiteLog) {
				s := c.newScheduler(t, 1)
				n := 0
				_, err := s.ScheduleWithFixedDelay(func(ctx context.Context) error {
					n++
					log.add(fmt.Sprintf("run %d", n))
					if n == 1 {
						return c.work(ctx, 3*h)
					}
					return nil
				}, h, h)
				require.NoError(t, err)
				c.advance(t, 6*h+30*m)
			},
			want: []string{
				suiteAt(h, "run 1"), suiteAt(5*h, "run 2"), suiteAt(6*h, "run 3"),
			},
		},
		{
			name: "tasks due at one instant run in submission order",
			body: func(t *testing.T, c suiteClock, log *suiteLog) {
				s := c.newScheduler(t, 1)
				_, err := s.ScheduleAtFixedRate(log.task("tick"), h, h)
				require.NoError(t, err)
				_, err = s.Schedule(log.task("a"), 2*h)
				require.NoError(t, err)
				_, err = s.Schedule(log.task("b"), h)
				require.NoError(t, err)
				_, err = s.Schedule(log.task("c"), 2*h)
				require.NoError(t, err)
				c.advance(t, 2*h+30*m)
			},
			want: []string{
				suiteAt(h, "tick"), suiteAt(h, "b"),
				suiteAt(2*h, "tick"), suiteAt(2*h, "a"), suiteAt(2*h, "c"),
			},
		},
		{
			name: "cancel from another goroutine between runs",
			body: func(t *testing.T, c suiteClock, log *suiteLog) {
				s := c.newScheduler(t, 1)
				f, err := s.ScheduleAtFixedRate(log.task("tick"), h, h)
				require.NoError(t, err)
				c.advance(t, 2*h+30*m)

				canceled := make(chan bool)
				go func() {
					log.add("cancel")
					canceled <- f.Cancel(false)
				}()
				require.True(t, <-canceled)
				require.ErrorIs(t, f.Wait(c.ctx(t)), scheduler.ErrCanceled)

				c.advance(t, 5*h)
				log.add(fmt.Sprintf("canceled=%v queued=%d", f.IsCanceled(), s.Stats().Queued))
			},
			want: []string{
				suiteAt(h, "tick"), suiteAt(2*h, "tick"),
				suiteAt(2*h+30*m, "cancel"),
				suiteAt(7*h+30*m, "canceled=true queued=0"),
			},
		},
		{
			name: "Cancel(true) from another goroutine interrupts the running task",
			body: func(t *testing.T, c suiteClock, log *suiteLog) {
				s := c.newScheduler(t, 1)
				f, err := s.ScheduleWithFixedDelay(func(ctx context.Context) error {
					log.add("start")
					err := c.work(ctx, h)
					log.add(fmt.Sprintf("work: %v", err))
					return err
				}, h, h)
				require.NoError(t, err)
				c.advance(t, h+15*m)

				canceled := make(chan bool)
				go func() {
					log.add("cancel")
					canceled <- f.Cancel(true)
				}()
				require.True(t, <-canceled)
				c.advance(t, 5*h)
				require.ErrorIs(t, f.Wait(c.ctx(t)), scheduler.ErrCanceled)
			},
			want: []string{
				suiteAt(h, "start"),
				suiteAt(h+15*m, "cancel"),
				suiteAt(h+15*m, "work: context canceled"),
			},
		},
		{
			name: "Shutdown cancels periodic tasks and still runs a delayed one-shot at its time",
			body: func(t *testing.T, c suiteClock, log *suiteLog) {
				sd := suiteShutdownAt2h30m(t, c, log)
				log.addCanceled(sd.tick, sd.report)
				c.advance(t, 2*h+30*m) // to 5h, the report's time
				log.addTerminated(t, sd.s, sd.terminated)
				c.advance(t, 5*h)
			},
			want: append(slices.Clone(suiteUntilShutdown),
				suiteAt(2*h+30*m, "tick canceled=true, report canceled=false"),
				suiteAt(5*h, "report"),
				suiteAt(5*h, "terminated, hook at 5h0m0s"),
			),
		},
		{
			name: "Shutdown with execute-existing-delayed false cancels the delayed one-shot",
			body: func(t *testing.T, c suiteClock, log *suiteLog) {
				sd := suiteShutdownAt2h30m(t, c, log, scheduler.WithExecuteExistingDelayedTasksAfterShutdown(false))
				log.addCanceled(sd.tick, sd.report)
				log.addTerminated(t, sd.s, sd.terminated)
				c.advance(t, 5*h)
			},
			want: append(slices.Clone(suiteUntilShutdown),
				suiteAt(2*h+30*m, "tick canceled=true, report canceled=true"),
				suiteAt(2*h+30*m, "terminated, hook at 2h30m0s"),
			),
		},
		{
			name: "Shutdown with continue-existing-periodic true keeps the rate until the policy is cleared",
			body: func(t *testing.T, c suiteClock, log *suiteLog) {
				sd := suiteShutdownAt2h30m(t, c, log, scheduler.WithContinueExistingPeriodicTasksAfterShutdown(true))
				c.advance(t, 2*h) // to 4h30m: ticks at 3h and 4h

				log.add("continue-periodic false")
				sd.s.SetContinueExistingPeriodicTasksAfterShutdownPolicy(false)
				log.addCanceled(sd.tick, sd.report)
				c.advance(t, 30*m) // to 5h: the report still runs
				log.addTerminated(t, sd.s, sd.terminated)
			},
			want: append(slices.Clone(suiteUntilShutdown),
				suiteAt(3*h, "tick"), suiteAt(4*h, "tick"),
				suiteAt(4*h+30*m, "continue-periodic false"),
				suiteAt(4*h+30*m, "tick canceled=true, report canceled=false"),
				suiteAt(5*h, "report"),
				suiteAt(5*h, "terminated, hook at 5h0m0s"),
			),
		},
		{
			name: "ShutdownNow returns the queued tasks and interrupts the running one",
			body: func(t *testing.T, c suiteClock, log *suiteLog) {
				s := c.newScheduler(t, 1)
				tick, err := s.ScheduleAtFixedRate(log.task("tick"), h, h, scheduler.WithName("tick"))
				require.NoError(t, err)
				slow, err := s.Schedule(func(ctx context.Context) error {
					log.add("slow starts")
					log.add(fmt.Sprintf("slow: %v", c.work(ctx, h)))
					return nil // returns nil after the interrupt: completes normally
				}, 2*h, scheduler.WithName("slow"))
				require.NoError(t, err)
				later, err := s.Schedule(log.task("later"), 5*h, scheduler.WithName("later"))
				require.NoError(t, err)
				c.advance(t, 2*h+30*m)

				log.add("shutdownNow")
				queued := s.ShutdownNow()
				require.NoError(t, s.AwaitTermination(c.ctx(t)))
				require.Len(t, queued, 2)
				require.True(t, queued[0] == tick, "the very future Schedule returned")
				require.True(t, queued[1] == later, "the very future Schedule returned")
				for _, f := range queued {
					log.add(fmt.Sprintf("queued %s: delay %v, canceled=%v, done=%v",
						f.Name(), f.Delay(), f.IsCanceled(), f.IsDone()))
				}
				require.NoError(t, slow.Wait(c.ctx(t)))
				c.advance(t, 5*h)
			},
			want: []string{
				suiteAt(h, "tick"),
				suiteAt(2*h, "tick"), // submitted before slow: runs first
				suiteAt(2*h, "slow starts"),
				suiteAt(2*h+30*m, "shutdownNow"),
				suiteAt(2*h+30*m, "slow: context canceled"),
				suiteAt(2*h+30*m, "queued tick: delay 30m0s, canceled=false, done=false"),
				suiteAt(2*h+30*m, "queued later: delay 2h30m0s, canceled=false, done=false"),
			},
		},
	}
}

// suiteShutdown is the start the shutdown cases share: a pool of one whose
// Terminated hook sends the virtual time it ran at, "tick" every hour and a
// one-shot "report" at 5h; at 2h30m it records "shutdown" and calls
// Shutdown.
type suiteShutdown struct {
	s            *scheduler.Scheduler
	tick, report scheduler.ScheduledFuture
	terminated   <-chan time.Duration
}

func suiteShutdownAt2h30m(t *testing.T, c suiteClock, log *suiteLog, opts ...scheduler.Option) suiteShutdown {
	t.Helper()
	terminated := make(chan time.Duration, 1)
	opts = append(opts, scheduler.WithHooks(scheduler.Hooks{
		Terminated: func() { terminated <- c.elapsed() },
	}))
	s := c.newScheduler(t, 1, opts...)
	tick, err := s.ScheduleAtFixedRate(log.task("tick"), suiteHour, suiteHour)
	require.NoError(t, err)
	report, err := s.Schedule(log.task("report"), 5*suiteHour)
	require.NoError(t, err)
	c.advance(t, 2*suiteHour+30*suiteMinute)
	log.add("shutdown")
	s.Shutdown()
	return suiteShutdown{s: s, tick: tick, report: report, terminated: terminated}
}

// suiteUntilShutdown are the lines suiteShutdownAt2h30m records.
var suiteUntilShutdown = []string{
	suiteAt(suiteHour, "tick"), suiteAt(2*suiteHour, "tick"),
	suiteAt(2*suiteHour+30*suiteMinute, "shutdown"),
}

// TestClockSuite runs every case on the manual clock and in a synctest
// bubble; each must record the expected events, and so the same on both.
func TestClockSuite(t *testing.T) {
	drivers := []clockDriver{suiteManualDriver{}, suiteBubbleDriver{}, suiteBubbleDriver{precise: true}}
	got := make(map[string]map[string][]string) // case -> driver -> lines
	for _, d := range drivers {
		t.Run(d.name(), func(t *testing.T) {
			for _, tc := range suiteCases() {
				t.Run(tc.name, func(t *testing.T) {
					d.run(t, func(t *testing.T, c suiteClock) {
						log := &suiteLog{c: c}
						tc.body(t, c, log)
						lines := log.lines(tc.sorted)
						if got[tc.name] == nil {
							got[tc.name] = make(map[string][]string)
						}
						got[tc.name][d.name()] = lines
						want := tc.want
						if tc.sorted {
							want = suiteSortLines(want)
						}
						require.Equal(t, want, lines)
					})
				})
			}
		})
	}
	t.Run("drivers agree", func(t *testing.T) {
		for name, byDriver := range got {
			if len(byDriver) == len(drivers) {
				require.Equal(t, byDriver["manual"], byDriver["synctest"], "the drivers diverge on %q", name)
				require.Equal(t, byDriver["synctest"], byDriver["synctest+precise"], "precise timing changes %q in a bubble", name)
			}
		}
	})
}

// suiteSortLines sorts expected lines the way suiteLog.lines(true) sorts
// events: by time, then by text.
func suiteSortLines(lines []string) []string {
	es := make([]suiteEvent, len(lines))
	for i, l := range lines {
		at, what, _ := strings.Cut(l, " ")
		d, err := time.ParseDuration(at)
		if err != nil {
			panic(err)
		}
		es[i] = suiteEvent{d, what}
	}
	return suiteLines(es, true)
}
