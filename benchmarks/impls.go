package main

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/go-stpe/scheduler"
	"github.com/reugn/go-quartz/job"
	"github.com/reugn/go-quartz/quartz"
)

// impl is one way to run delayed and periodic work, as the workloads drive
// it. A job is what prepare made of a func, built once and scheduled many
// times; a handle is what schedule returns, for cancel. Both are opaque to
// the workloads.
type impl interface {
	// prepare turns fn into whatever the implementation schedules.
	prepare(fn func()) any
	// schedule runs job once after d and returns a handle for cancel.
	schedule(job any, d time.Duration) (any, error)
	// cancel stops a task that schedule returned, before it runs.
	cancel(h any) error
	// fixedRate runs job at start+first, then every period at a fixed rate.
	fixedRate(job any, start time.Time, first, period time.Duration) error
	// close stops the implementation and everything still queued.
	close()
}

// peer describes one implementation and the sizes it is run at: the slow
// peers are run at smaller sizes, so that every workload stays bounded.
type peer struct {
	name  string // column title
	label string // short name for the charts
	new   func() (impl, error)

	pending  int // tasks queued before schedule and cancel are timed
	ops      int // schedules (and cancels) timed
	fire     int // zero-delay tasks in the throughput workload
	lateness int // tasks spread over latenessSpread
	note     string
}

// peers returns the implementations compared, at their sizes. scale
// divides every size (the -quick flag).
func peers(scale int) []peer {
	ps := []peer{
		{
			name: "scheduler", label: "scheduler", new: newOurs,
			pending: 1_000_000, ops: 200_000, fire: 1_000_000, lateness: 20_000,
		},
		{
			name: "time.AfterFunc", label: "AfterFunc", new: newAfterFunc,
			pending: 1_000_000, ops: 200_000, fire: 1_000_000, lateness: 20_000,
		},
		{
			name: "gocron v2", label: "gocron", new: newGocron,
			pending: 100_000, ops: 20_000, fire: 100_000, lateness: 20_000,
			note: "gocron is run at 100k pending and 100k fired tasks: 1M takes minutes and gigabytes.",
		},
		{
			name: "go-quartz", label: "go-quartz", new: newQuartz,
			pending: 10_000, ops: 2_000, fire: 10_000, lateness: 2_000,
			note: "go-quartz scans and copies its whole queue on every schedule and cancel (O(n)), " +
				"so it is run at 10k pending, 10k fired tasks and 2k tasks for lateness; " +
				"its outdated-run threshold is raised to 1 h so that late tasks still run rather than being skipped.",
		},
	}
	for i := range ps {
		p := &ps[i]
		p.pending = max(p.pending/scale, 1)
		p.ops = max(p.ops/scale, 1)
		p.fire = max(p.fire/scale, 1)
		p.lateness = max(p.lateness/scale, 1)
	}
	return ps
}

// --- scheduler ---------------------------------------------------------------

type ours struct{ s *scheduler.Scheduler }

func newOurs() (impl, error) {
	s, err := scheduler.New(runtime.GOMAXPROCS(0), scheduler.WithRemoveOnCancel(true))
	if err != nil {
		return nil, err
	}
	return &ours{s: s}, nil
}

func (o *ours) prepare(fn func()) any {
	return scheduler.Task(func(context.Context) error { fn(); return nil })
}

func (o *ours) schedule(j any, d time.Duration) (any, error) {
	return o.s.Schedule(j.(scheduler.Task), d)
}

func (o *ours) cancel(h any) error {
	h.(scheduler.ScheduledFuture).Cancel(false)
	return nil
}

func (o *ours) fixedRate(j any, start time.Time, first, period time.Duration) error {
	_, err := o.s.ScheduleAtFixedRate(j.(scheduler.Task), time.Until(start.Add(first)), period)
	return err
}

func (o *ours) close() {
	o.s.ShutdownNow()
	_ = o.s.AwaitTermination(context.Background())
}

// --- time.AfterFunc -----------------------------------------------------------

// afterFunc schedules with one runtime timer per task; a fixed-rate task
// is a timer that re-arms itself from its callback.
type afterFunc struct {
	stopped  atomic.Bool
	periodic []*rearm
}

func newAfterFunc() (impl, error) { return &afterFunc{}, nil }

func (a *afterFunc) prepare(fn func()) any { return fn }

func (a *afterFunc) schedule(j any, d time.Duration) (any, error) {
	return time.AfterFunc(d, j.(func())), nil
}

func (a *afterFunc) cancel(h any) error {
	h.(*time.Timer).Stop()
	return nil
}

type rearm struct {
	t       *time.Timer
	next    time.Time
	period  time.Duration
	fn      func()
	stopped *atomic.Bool
}

func (r *rearm) run() {
	r.fn()
	if !r.stopped.Load() {
		r.next = r.next.Add(r.period)
		r.t.Reset(time.Until(r.next))
	}
}

func (a *afterFunc) fixedRate(j any, start time.Time, first, period time.Duration) error {
	r := &rearm{next: start.Add(first), period: period, fn: j.(func()), stopped: &a.stopped}
	r.t = time.AfterFunc(time.Hour, r.run)
	r.t.Stop()
	r.t.Reset(time.Until(r.next))
	a.periodic = append(a.periodic, r)
	return nil
}

func (a *afterFunc) close() {
	a.stopped.Store(true)
	for _, r := range a.periodic {
		r.t.Stop()
	}
}

// --- gocron v2 ---------------------------------------------------------------

type goCron struct{ s gocron.Scheduler }

func newGocron() (impl, error) {
	s, err := gocron.NewScheduler()
	if err != nil {
		return nil, err
	}
	s.Start()
	return &goCron{s: s}, nil
}

func (g *goCron) prepare(fn func()) any { return gocron.NewTask(fn) }

func (g *goCron) schedule(j any, d time.Duration) (any, error) {
	at := gocron.OneTimeJobStartImmediately()
	if d >= time.Millisecond {
		at = gocron.OneTimeJobStartDateTime(time.Now().Add(d))
	}
	return g.s.NewJob(gocron.OneTimeJob(at), j.(gocron.Task))
}

func (g *goCron) cancel(h any) error { return g.s.RemoveJob(h.(gocron.Job).ID()) }

func (g *goCron) fixedRate(j any, start time.Time, first, period time.Duration) error {
	_, err := g.s.NewJob(gocron.DurationJob(period), j.(gocron.Task),
		gocron.WithStartAt(gocron.WithStartDateTime(start.Add(first))))
	return err
}

func (g *goCron) close() { _ = g.s.Shutdown() }

// --- go-quartz ---------------------------------------------------------------

type goQuartz struct {
	s    quartz.Scheduler
	stop context.CancelFunc
	keys atomic.Int64
}

func newQuartz() (impl, error) {
	s, err := quartz.NewStdScheduler(quartz.WithOutdatedThreshold(time.Hour))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.Start(ctx)
	return &goQuartz{s: s, stop: cancel}, nil
}

func (q *goQuartz) prepare(fn func()) any {
	return job.NewFunctionJob(func(context.Context) (struct{}, error) { fn(); return struct{}{}, nil })
}

// key returns a new job key: go-quartz identifies jobs by unique keys.
func (q *goQuartz) key() *quartz.JobKey {
	return quartz.NewJobKey(strconv.FormatInt(q.keys.Add(1), 36))
}

func (q *goQuartz) schedule(j any, d time.Duration) (any, error) {
	k := q.key()
	err := q.s.ScheduleJob(quartz.NewJobDetail(j.(quartz.Job), k), quartz.NewRunOnceTrigger(d))
	return k, err
}

func (q *goQuartz) cancel(h any) error { return q.s.DeleteJob(h.(*quartz.JobKey)) }

// staggeredTrigger fires first at a given instant, then every period at a
// fixed rate: go-quartz's SimpleTrigger can only start one period after
// it is scheduled.
type staggeredTrigger struct {
	first  int64
	period time.Duration
}

func (t *staggeredTrigger) NextFireTime(prev int64) (int64, error) {
	if prev < t.first {
		return t.first, nil
	}
	return prev + int64(t.period), nil
}

func (t *staggeredTrigger) Description() string {
	return fmt.Sprintf("staggered%s%d%s%s", quartz.Sep, t.first, quartz.Sep, t.period)
}

func (q *goQuartz) fixedRate(j any, start time.Time, first, period time.Duration) error {
	// The trigger counts in Unix nanoseconds (quartz.NowNano).
	at := quartz.NowNano() + int64(time.Until(start.Add(first)))
	return q.s.ScheduleJob(quartz.NewJobDetail(j.(quartz.Job), q.key()),
		&staggeredTrigger{first: at, period: period})
}

func (q *goQuartz) close() {
	q.s.Stop()
	q.stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	q.s.Wait(ctx)
}
