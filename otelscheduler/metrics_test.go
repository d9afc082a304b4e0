package otelscheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/otelscheduler"
	"github.com/go-stpe/scheduler/schedulertest"
)

// TestRunsCountedByOutcome: every run is counted once under its task name and
// outcome (a panic is "panic", an unnamed task "unnamed"), and the duration
// histogram has one count per run under the same attributes.
func TestRunsCountedByOutcome(t *testing.T) {
	e := newEnv(t, 2, nil)
	for _, sub := range []struct {
		task scheduler.Task
		name string
	}{{ok, "ok-task"}, {fails, "failing"}, {panics, "panicking"}, {ok, ""}} {
		_, err := e.s.Schedule(sub.task, 10*time.Millisecond, scheduler.WithName(sub.name))
		require.NoError(t, err)
	}
	_, err := e.s.ScheduleAtFixedRate(ok, 5*time.Millisecond, 10*time.Millisecond, scheduler.WithName("tick"))
	require.NoError(t, err)
	for range 3 { // tick runs at 5, 15 and 25 ms; the others at 10 ms
		e.advance(t, 10*time.Millisecond)
	}

	m := e.collect(t)
	want := map[string]int64{
		"scheduler.run.outcome=ok,scheduler.task.name=ok-task":      1,
		"scheduler.run.outcome=error,scheduler.task.name=failing":   1,
		"scheduler.run.outcome=panic,scheduler.task.name=panicking": 1,
		"scheduler.run.outcome=ok,scheduler.task.name=unnamed":      1,
		"scheduler.run.outcome=ok,scheduler.task.name=tick":         3,
	}
	assert.Equal(t, want, sums(t, m["scheduler.task.runs"]))
	assert.Equal(t, "{run}", m["scheduler.task.runs"].Unit)

	durations := histograms(t, m["scheduler.task.run.duration"])
	require.Len(t, durations, len(want))
	for k, n := range want {
		assert.Equal(t, uint64(n), durations[k].Count, k)
	}
	assert.Equal(t, "s", m["scheduler.task.run.duration"].Unit)

	lateness := histograms(t, m["scheduler.task.run.lateness"])
	assert.Equal(t, uint64(3), lateness["scheduler.task.name=tick"].Count)
	assert.Equal(t, uint64(1), lateness["scheduler.task.name=failing"].Count)
}

// TestDurationAndLatenessValues: a run due at 10 ms that starts at 25 ms and
// takes 30 ms (the task moves the manual clock) is 15 ms late and lasts 30 ms,
// each in the bucket that holds it; the buckets go from 10 µs to 5 min.
func TestDurationAndLatenessValues(t *testing.T) {
	e := newEnv(t, 1, nil)
	_, err := e.s.Schedule(func(context.Context) error {
		e.clk.Advance(30 * time.Millisecond)
		return nil
	}, 10*time.Millisecond, scheduler.WithName("work"))
	require.NoError(t, err)
	e.advance(t, 25*time.Millisecond)

	m := e.collect(t)
	d := histograms(t, m["scheduler.task.run.duration"])["scheduler.run.outcome=ok,scheduler.task.name=work"]
	require.Equal(t, uint64(1), d.Count)
	assert.InDelta(t, 0.030, d.Sum, 1e-12)
	l := histograms(t, m["scheduler.task.run.lateness"])["scheduler.task.name=work"]
	require.Equal(t, uint64(1), l.Count)
	assert.InDelta(t, 0.015, l.Sum, 1e-12)

	bounds := d.Bounds
	require.Equal(t, bounds, l.Bounds)
	assert.Equal(t, 0.00001, bounds[0])
	assert.Equal(t, 300.0, bounds[len(bounds)-1])
	assert.Equal(t, uint64(1), l.BucketCounts[bucketOf(bounds, 0.015)])
	assert.Equal(t, uint64(1), d.BucketCounts[bucketOf(bounds, 0.030)])
}

// bucketOf returns the index of the bucket that holds v: (bounds[i-1], bounds[i]].
func bucketOf(bounds []float64, v float64) int {
	for i, b := range bounds {
		if v <= b {
			return i
		}
	}
	return len(bounds)
}

// TestLatenessExcludesJitter: a jittered run that starts exactly at its due
// time plus its jitter (the clock steps from timer to timer) is not late,
// although it started Jitter after its due time.
func TestLatenessExcludesJitter(t *testing.T) {
	var seen []scheduler.RunInfo // written by Observe, read after AwaitIdle
	e := newEnv(t, 1, nil, scheduler.WithHooks(scheduler.Hooks{
		Observe: func(r scheduler.RunInfo) { seen = append(seen, r) },
	}))
	_, err := e.s.ScheduleAtFixedRate(ok, 10*time.Millisecond, 100*time.Millisecond,
		scheduler.WithName("jittered"), scheduler.WithJitter(50*time.Millisecond))
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, schedulertest.AdvanceAndSettle(ctx, e.clk, e.s, 300*time.Millisecond))

	require.Len(t, seen, 3) // due at 10, 110 and 210 ms (310 is past 300 ms)
	var jittered int
	for _, r := range seen {
		assert.Equal(t, r.Jitter, r.Started.Sub(r.Due), "started at due + jitter")
		if r.Jitter > 0 {
			jittered++
		}
	}
	require.Positive(t, jittered, "no run had jitter")

	l := histograms(t, e.collect(t)["scheduler.task.run.lateness"])["scheduler.task.name=jittered"]
	assert.Equal(t, uint64(3), l.Count)
	assert.Zero(t, l.Sum, "jitter reported as lateness")

	for _, span := range e.spans.Ended() {
		a := spanAttrs(span)
		assert.Zero(t, a[otelscheduler.LatenessKey].AsFloat64())
		_, has := a[otelscheduler.JitterKey]
		assert.True(t, has, "a jittered run's span has its jitter")
	}
}

// TestTaskNamesBounded: beyond WithMaxTaskNames the names are "other", in
// metrics and span names; unnamed tasks do not count against the bound, and
// a span still carries the task's own name.
func TestTaskNamesBounded(t *testing.T) {
	e := newEnv(t, 1, []otelscheduler.Option{otelscheduler.WithMaxTaskNames(2)})
	for i, name := range []string{"a", "b", "", "c", "d", "a", "c"} {
		_, err := e.s.Schedule(ok, time.Duration(i+1)*time.Millisecond, scheduler.WithName(name))
		require.NoError(t, err)
	}
	e.advance(t, 10*time.Millisecond)

	want := map[string]int64{
		"scheduler.run.outcome=ok,scheduler.task.name=a":       2,
		"scheduler.run.outcome=ok,scheduler.task.name=b":       1,
		"scheduler.run.outcome=ok,scheduler.task.name=unnamed": 1,
		"scheduler.run.outcome=ok,scheduler.task.name=other":   3,
	}
	assert.Equal(t, want, sums(t, e.collect(t)["scheduler.task.runs"]))

	names := map[string][]string{} // span name → the task names it carries
	for _, s := range e.spans.Ended() {
		names[s.Name()] = append(names[s.Name()], spanAttrs(s)[otelscheduler.TaskNameKey].AsString())
	}
	assert.Equal(t, map[string][]string{
		"run a":       {"a", "a"},
		"run b":       {"b"},
		"run unnamed": {"unnamed"},
		"run other":   {"c", "d", "c"},
	}, names)
}

// TestBeforeExecutePanicIsAPanicRun: a run whose BeforeExecute hook panicked
// is counted with outcome "panic"; its task did not run, so it has no span.
func TestBeforeExecutePanicIsAPanicRun(t *testing.T) {
	e := newEnv(t, 1, nil, scheduler.WithHooks(scheduler.Hooks{
		BeforeExecute: func(scheduler.ScheduledFuture) { panic("hook") },
	}))
	_, err := e.s.Schedule(ok, time.Millisecond, scheduler.WithName("hooked"))
	require.NoError(t, err)
	e.advance(t, time.Millisecond)

	assert.Equal(t, map[string]int64{"scheduler.run.outcome=panic,scheduler.task.name=hooked": 1},
		sums(t, e.collect(t)["scheduler.task.runs"]))
	assert.Empty(t, e.spans.Ended())
}

// TestStatsInstruments: the queue length, active tasks, worker count,
// rejections and cancels are the scheduler's Stats at collection time.
func TestStatsInstruments(t *testing.T) {
	e := newEnv(t, 2, []otelscheduler.Option{otelscheduler.WithSchedulerName("jobs")})
	entered, release := make(chan struct{}), make(chan struct{})
	_, err := e.s.Submit(func(context.Context) error {
		close(entered)
		<-release
		return nil
	})
	require.NoError(t, err)
	var later []scheduler.ScheduledFuture
	for range 3 {
		f, err := e.s.Schedule(ok, time.Hour)
		require.NoError(t, err)
		later = append(later, f)
	}
	<-entered
	require.True(t, later[0].Cancel(false))

	st := e.s.Stats()
	m := e.collect(t)
	const attrs = "scheduler.name=jobs"
	assert.Equal(t, map[string]int64{attrs: 3}, sums(t, m["scheduler.queue.length"]))
	assert.Equal(t, map[string]int64{attrs: 1}, sums(t, m["scheduler.task.active"]))
	assert.Equal(t, map[string]int64{attrs: int64(st.PoolSize)}, sums(t, m["scheduler.worker.count"]))
	assert.Equal(t, 2, st.PoolSize)
	assert.Equal(t, map[string]int64{attrs: 1}, sums(t, m["scheduler.task.canceled"]))
	assert.Equal(t, map[string]int64{attrs: 0}, sums(t, m["scheduler.task.rejected"]))

	close(release)
	require.NoError(t, e.s.AwaitIdle(context.Background()))
	e.s.Shutdown()
	_, err = e.s.Schedule(ok, 0)
	require.ErrorIs(t, err, scheduler.ErrRejected)

	m = e.collect(t)
	assert.Equal(t, map[string]int64{"scheduler.name=jobs,scheduler.run.outcome=ok,scheduler.task.name=unnamed": 1},
		sums(t, m["scheduler.task.runs"]), "run metrics carry scheduler.name")
	require.Len(t, e.spans.Ended(), 1)
	assert.Equal(t, "jobs", spanAttrs(e.spans.Ended()[0])[otelscheduler.SchedulerNameKey].AsString())
	assert.Equal(t, map[string]int64{attrs: 1}, sums(t, m["scheduler.task.rejected"]))
	assert.Equal(t, map[string]int64{attrs: 0}, sums(t, m["scheduler.task.active"]))
	for name, monotonic := range map[string]bool{
		"scheduler.task.rejected": true, "scheduler.task.canceled": true,
		"scheduler.queue.length": false, "scheduler.task.active": false, "scheduler.worker.count": false,
	} {
		assert.Equal(t, monotonic, m[name].Data.(metricdata.Sum[int64]).IsMonotonic, name)
	}
}

// TestCallerRunsRunIsReported: a run that CallerRunsPolicy makes in the
// submitting goroutine is counted and has its span like any other.
func TestCallerRunsRunIsReported(t *testing.T) {
	e := newEnv(t, 1, nil, scheduler.WithMaxQueueSize(1), scheduler.WithRejectionPolicy(scheduler.CallerRunsPolicy))
	_, err := e.s.Schedule(ok, time.Hour, scheduler.WithName("queued"))
	require.NoError(t, err)
	f, err := e.s.Schedule(fails, time.Hour, scheduler.WithName("overflow")) // queue full: runs here, now
	require.NoError(t, err)
	require.ErrorIs(t, f.Wait(context.Background()), errDiskFull)

	assert.Equal(t, map[string]int64{"scheduler.run.outcome=error,scheduler.task.name=overflow": 1},
		sums(t, e.collect(t)["scheduler.task.runs"]))
	run := e.spanNamed(t, "run overflow")
	_, hasDue := spanAttrs(run)[otelscheduler.DueKey]
	assert.True(t, hasDue, "CurrentRun works for a caller's run")
}
