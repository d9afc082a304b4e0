package cluster_test

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Periodic tasks never burst: the occurrences that fall due while the task
// is paused, while every node is down, or while a run goes on follow the
// misfire policy, and two occurrences never run at once unless
// WithOverlap(true). Three nodes share one periodic task ticking every
// misfirePeriod; the handlers record every run, and how many ran at once
// across the nodes. Time passes for real: the period is short, the tests
// wait on the runs recorded, and they assert on the runs, never on how long
// something took.

// misfirePeriod is the tick of the periodic task of these tests.
const misfirePeriod = 100 * time.Millisecond

// misfireTask is the name of the periodic task of these tests.
const misfireTask = "report"

// recordedRun is one run of an occurrence as a handler saw it.
type recordedRun struct {
	due, start time.Time
	node       int
}

// String shows a run in test logs: its occurrence's due time, its node
// and how late it started.
func (r recordedRun) String() string {
	return r.due.Format("15:04:05.000") + " on node " + strconv.Itoa(r.node) + " +" + r.start.Sub(r.due).Round(time.Millisecond).String()
}

// runRecorder records the runs of a periodic task on every node.
type runRecorder struct {
	hold     time.Duration // how long each run takes
	mu       sync.Mutex    // guards runs
	runs     []recordedRun
	inFlight atomic.Int32 // runs going on now, across the nodes
	most     atomic.Int32 // the most that ever went on at once
}

// handler is the handler of node i.
func (r *runRecorder) handler(i int) cluster.Handler {
	return func(ctx context.Context, task cluster.Task) error {
		now := r.inFlight.Add(1)
		defer r.inFlight.Add(-1)
		for {
			most := r.most.Load()
			if now <= most || r.most.CompareAndSwap(most, now) {
				break
			}
		}
		r.mu.Lock()
		r.runs = append(r.runs, recordedRun{due: task.Due, start: time.Now(), node: i})
		r.mu.Unlock()
		if r.hold > 0 {
			select {
			case <-time.After(r.hold):
			case <-ctx.Done():
			}
		}
		return nil
	}
}

// snapshot returns the runs recorded so far, in the order they started.
func (r *runRecorder) snapshot() []recordedRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.runs)
	slices.SortFunc(out, func(a, b recordedRun) int { return a.start.Compare(b.start) })
	return out
}

// startedAfter returns the runs that started after t, in start order.
func (r *runRecorder) startedAfter(t time.Time) []recordedRun {
	var out []recordedRun
	for _, run := range r.snapshot() {
		if run.start.After(t) {
			out = append(out, run)
		}
	}
	return out
}

// dueIn counts the runs of occurrences due in (from, to].
func (r *runRecorder) dueIn(from, to time.Time) int {
	n := 0
	for _, run := range r.snapshot() {
		if run.due.After(from) && !run.due.After(to) {
			n++
		}
	}
	return n
}

// periodicNodes makes count nodes declaring the periodic task with rec's
// handlers and opts, made by mk; it starts them.
func periodicNodes(t *testing.T, count int, rec *runRecorder, mk func() *cluster.Node, opts ...cluster.HandleOption) []*cluster.Node {
	t.Helper()
	nodes := make([]*cluster.Node, count)
	for i := range nodes {
		nodes[i] = mk()
		require.NoError(t, nodes[i].Periodic(misfireTask, everyTick(misfirePeriod), rec.handler(i), opts...))
	}
	for _, n := range nodes {
		start(t, n)
	}
	return nodes
}

// pauseAndResume waits for the task's first runs, pauses it for missed
// ticks, and resumes it. Every occurrence due after paused was missed:
// none could be claimed before resuming.
func pauseAndResume(t *testing.T, n *cluster.Node, rec *runRecorder, missed int) (paused, resuming time.Time) {
	t.Helper()
	ctx := context.Background()
	waitFor(t, 30*time.Second, "the first runs", func() bool { return len(rec.snapshot()) >= 2 })
	require.NoError(t, n.Pause(ctx, "@"+misfireTask))
	paused = time.Now()
	waitFor(t, 30*time.Second, "ticks to fall due while paused", func() bool {
		return time.Since(paused) > time.Duration(missed)*misfirePeriod
	})
	resuming = time.Now()
	require.NoError(t, n.Resume(ctx, "@"+misfireTask))
	return paused, resuming
}

// ticks are the task's due times in (from, to].
func ticks(from, to time.Time) []time.Time {
	var out []time.Time
	for d := from.Truncate(misfirePeriod).Add(misfirePeriod); !d.After(to); d = d.Add(misfirePeriod) {
		if d.After(from) {
			out = append(out, d)
		}
	}
	return out
}

// assertCoalesced checks that the occurrences due after from were run by
// one run only, the first that started after since, and that the runs
// after it are on the grid, in order.
func assertCoalesced(t *testing.T, rec *runRecorder, from, since time.Time) {
	t.Helper()
	after := rec.startedAfter(since)
	require.NotEmpty(t, after)
	first := after[0]
	assert.Equal(t, 1, rec.dueIn(from, first.due),
		"runs of the occurrences due from %v to the coalesced one (%v), want 1: %v", from, first.due, after)
	assert.False(t, first.due.Before(since.Add(-misfirePeriod).Truncate(misfirePeriod)),
		"the coalesced run is of %v, not the latest due occurrence (due times missed: %d)", first.due, len(ticks(from, since)))
	for i := 1; i < len(after); i++ {
		assert.True(t, after[i].due.After(after[i-1].due), "run %v after run %v", after[i].due, after[i-1].due)
		assert.True(t, after[i].due.Equal(after[i].due.Truncate(misfirePeriod)), "run %v off the grid", after[i].due)
	}
}

func TestPeriodicPausedThenResumedRunsOneCoalescedOccurrenceThenOnTheGrid(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rec := &runRecorder{}
	nodes := periodicNodes(t, 3, rec, func() *cluster.Node { return newNode(t, srv, nil) })
	paused, resuming := pauseAndResume(t, nodes[0], rec, 12)
	waitFor(t, 30*time.Second, "four runs after the resume", func() bool { return len(rec.startedAfter(resuming)) >= 4 })

	require.GreaterOrEqual(t, len(ticks(paused, resuming)), 12, "the test proves nothing")
	assertCoalesced(t, rec, paused, resuming)
	assert.EqualValues(t, 1, rec.most.Load(), "occurrences ran at once")
	t.Logf("%d occurrences due while paused; runs after the resume: %v", len(ticks(paused, resuming)), rec.startedAfter(resuming))
}

func TestPeriodicAfterEveryNodeWasDownRunsOneOccurrence(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rec := &runRecorder{}
	// A short window, so that the outage outlasts the occurrences stored
	// ahead: the one run after it is made up from the cursor.
	mk := func() *cluster.Node {
		return newNode(t, srv, nil, cluster.WithWindow(time.Second), cluster.WithSweepInterval(300*time.Millisecond))
	}
	first := periodicNodes(t, 3, rec, mk)
	waitFor(t, 30*time.Second, "the first runs", func() bool { return len(rec.snapshot()) >= 2 })
	for _, n := range first {
		require.NoError(t, n.Stop(context.Background()))
	}
	down := time.Now()
	waitFor(t, 30*time.Second, "ticks to fall due while every node is down", func() bool {
		return time.Since(down) > 2*time.Second
	})
	restart := time.Now()
	periodicNodes(t, 3, rec, mk)
	waitFor(t, 30*time.Second, "four runs after the restart", func() bool { return len(rec.startedAfter(restart)) >= 4 })

	assertCoalesced(t, rec, down, restart)
	assert.EqualValues(t, 1, rec.most.Load(), "occurrences ran at once")
	t.Logf("%d occurrences due while down; runs after the restart: %v", len(ticks(down, restart)), rec.startedAfter(restart))
}

func TestPeriodicAfterTheNodesWereCutOffFromRedisRunsOneOccurrence(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := client(t, srv)
	rec := &runRecorder{}
	periodicNodes(t, 3, rec, func() *cluster.Node { return newNode(t, srv, nil) })
	waitFor(t, 30*time.Second, "the first runs", func() bool { return len(rec.snapshot()) >= 2 })
	// Redis answers no node for 1.5 s (less than a lease, so that no
	// run in flight is lost): as a network partition would, every call
	// waits or times out meanwhile.
	const cut = 1500 * time.Millisecond
	from := time.Now()
	require.NoError(t, rdb.ClientPause(context.Background(), cut).Err())
	back := from.Add(cut)
	waitFor(t, 30*time.Second, "four runs after Redis answers again", func() bool { return len(rec.startedAfter(back)) >= 4 })

	require.GreaterOrEqual(t, len(ticks(from, back)), 10, "the test proves nothing")
	assertCoalesced(t, rec, from, back)
	assert.EqualValues(t, 1, rec.most.Load(), "occurrences ran at once")
}

func TestPeriodicMisfireSkipRunsNoMissedOccurrence(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rec := &runRecorder{}
	nodes := periodicNodes(t, 3, rec, func() *cluster.Node { return newNode(t, srv, nil) },
		cluster.WithMisfire(cluster.MisfireSkip))
	paused, resuming := pauseAndResume(t, nodes[0], rec, 12)
	waitFor(t, 30*time.Second, "three runs after the resume", func() bool { return len(rec.startedAfter(resuming)) >= 3 })

	// The tick just before the resume may be within the misfire
	// threshold (half the period here), and on time.
	assert.Zero(t, rec.dueIn(paused, resuming.Add(-misfirePeriod/2)), "missed occurrences ran: %v", rec.startedAfter(resuming))
	for _, run := range rec.startedAfter(resuming) {
		assert.False(t, run.due.Before(resuming.Add(-misfirePeriod/2)), "missed occurrence %v ran", run.due)
	}
}

func TestPeriodicMisfireRunEachRunsEveryMissedOccurrenceInOrderOneAtATime(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rec := &runRecorder{}
	nodes := periodicNodes(t, 3, rec, func() *cluster.Node { return newNode(t, srv, nil) },
		cluster.WithMisfire(cluster.MisfireRunEach))
	paused, resuming := pauseAndResume(t, nodes[0], rec, 12)
	assertRanEachInOrder(t, rec, paused, resuming)
}

// assertRanEachInOrder waits for every occurrence due in (from, to] to run
// and checks that each ran once, in order, one at a time.
func assertRanEachInOrder(t *testing.T, rec *runRecorder, from, to time.Time) {
	t.Helper()
	missed := ticks(from, to)
	waitFor(t, 30*time.Second, "every missed occurrence to run", func() bool { return rec.dueIn(from, to) >= len(missed) })
	var dues []time.Time
	for _, run := range rec.startedAfter(to) {
		dues = append(dues, run.due)
	}
	assert.True(t, slices.IsSortedFunc(dues, time.Time.Compare), "runs out of order: %v", dues)
	for _, d := range missed {
		assert.Equal(t, 1, rec.dueIn(d.Add(-1), d), "runs of missed occurrence %v", d)
	}
	assert.EqualValues(t, 1, rec.most.Load(), "occurrences ran at once")
}

func TestPeriodicLongRunsNeverOverlapAcrossNodes(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rec := &runRecorder{hold: 3 * misfirePeriod}
	periodicNodes(t, 3, rec, func() *cluster.Node { return newNode(t, srv, nil) })
	waitFor(t, 30*time.Second, "eight runs", func() bool { return len(rec.snapshot()) >= 8 })
	assert.EqualValues(t, 1, rec.most.Load(), "occurrences ran at once")
	runs := rec.snapshot()
	for i := 1; i < len(runs); i++ {
		assert.True(t, runs[i].due.After(runs[i-1].due), "run %v after run %v", runs[i].due, runs[i-1].due)
	}
}

func TestPeriodicWithOverlapRunsOccurrencesAtOnce(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rec := &runRecorder{hold: 3 * misfirePeriod}
	periodicNodes(t, 3, rec, func() *cluster.Node { return newNode(t, srv, nil) }, cluster.WithOverlap(true))
	waitFor(t, 30*time.Second, "two runs at once", func() bool { return rec.most.Load() >= 2 })
}

func TestPeriodicRunWhoseNodeDiedHoldsTheNextOnlyUntilItsLeaseExpires(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	stuck := make(chan cluster.Task, 1)
	rec := &runRecorder{}
	a := newNode(t, srv, nil)
	// Node a's runs never end by themselves.
	require.NoError(t, a.Periodic(misfireTask, everyTick(misfirePeriod), func(ctx context.Context, task cluster.Task) error {
		select {
		case stuck <- task:
		default:
		}
		<-ctx.Done()
		return ctx.Err()
	}))
	start(t, a)
	held := recv(t, stuck, 30*time.Second, "a run on node a")
	b := newNode(t, srv, nil)
	require.NoError(t, b.Periodic(misfireTask, everyTick(misfirePeriod), rec.handler(1)))
	start(t, b)
	started := time.Now()
	waitFor(t, 30*time.Second, "ticks to fall due while a's run holds on", func() bool {
		return time.Since(started) > time.Second
	})
	a.StopNow() // its run is left to its lease
	killed := time.Now()
	waitFor(t, 30*time.Second, "a run on node b", func() bool { return len(rec.snapshot()) > 0 })
	first := rec.snapshot()[0]
	assert.True(t, first.start.After(killed), "node b ran %v while node a's run of %v held the lease", first.due, held.Due)
}

func TestPeriodicTasksShowsTheStoredNextOccurrence(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	// A relative trigger, as "@every" is: each time is the one before
	// plus the period. Runs take a while, so that a run's end plus the
	// period is no occurrence.
	rec := &runRecorder{hold: 150 * time.Millisecond}
	n := newNode(t, srv, nil)
	every := everyFrom(300 * time.Millisecond)
	require.NoError(t, n.Periodic(misfireTask, every, rec.handler(0)))
	start(t, n)
	waitFor(t, 30*time.Second, "two runs", func() bool { return len(rec.snapshot()) >= 2 })
	for range 5 {
		ps, err := n.PeriodicTasks(ctx)
		require.NoError(t, err)
		require.Len(t, ps, 1)
		info, ok, err := n.Get(ctx, cluster.OccurrenceID(misfireTask, ps[0].Next))
		require.NoError(t, err)
		if ok && info.State == cluster.Pending {
			assert.Equal(t, cluster.MisfireCoalesce, ps[0].Misfire)
			return
		}
		// The occurrence may have started between the two reads.
	}
	t.Fatal("PeriodicTasks' Next is no stored pending occurrence")
}

// everyFrom is a relative trigger, as cron's "@every" is: each time is the
// one it is asked after plus d.
func everyFrom(d time.Duration) scheduler.Trigger {
	return scheduler.TriggerFunc(func(t time.Time) time.Time { return t.Add(d) })
}

func TestPeriodicOptionsAreRefusedOutsidePeriodicAndWhenUnknown(t *testing.T) {
	n := newNode(t, redistest.Start(t, redistest.Options{}), nil)
	h := func(context.Context, cluster.Task) error { return nil }
	err := n.Handle("mail", h, cluster.WithOverlap(true))
	assert.ErrorIs(t, err, scheduler.ErrInvalidArgument)
	assert.EqualError(t, err, `cluster: handle mail: WithMisfire and WithOverlap are options of Periodic`)
	err = cluster.HandleJSON(n, "json", func(context.Context, struct{}) error { return nil }, cluster.WithMisfire(cluster.MisfireSkip))
	assert.ErrorIs(t, err, scheduler.ErrInvalidArgument)
	err = n.Periodic("report", everyTick(time.Second), h, cluster.WithMisfire(cluster.Misfire(7)))
	assert.ErrorIs(t, err, scheduler.ErrInvalidArgument)
	assert.EqualError(t, err, `cluster: periodic report: misfire policy Misfire(7) unknown`)
	require.NoError(t, n.Periodic("report", everyTick(time.Second), h, cluster.WithMisfire(cluster.MisfireRunEach), cluster.WithOverlap(true)))
	assert.Equal(t, "MisfireCoalesce", cluster.MisfireCoalesce.String())
}
