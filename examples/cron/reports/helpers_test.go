package reports_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/examples/cron/reports"
	"github.com/go-stpe/scheduler/schedulertest"
)

// quiet keeps the scheduler's logs of failed runs out of the test output.
var quiet = scheduler.WithLogger(slog.New(slog.DiscardHandler))

// dayLayout shows a run's due time with its weekday and zone abbreviation,
// which tells CET from CEST and EST from EDT.
const dayLayout = "Mon 2006-01-02 15:04 MST"

// zone loads an IANA zone or fails the test.
func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
}

// recorder is the work of all three jobs in a test: it records every run.
type recorder struct {
	// fail, if set, decides which runs fail.
	fail func(r reports.Run) error

	mu   sync.Mutex // guards runs
	runs map[string][]reports.Run
}

func (rec *recorder) work(ctx context.Context, r reports.Run) error {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.runs == nil {
		rec.runs = make(map[string][]reports.Run)
	}
	rec.runs[r.Job] = append(rec.runs[r.Job], r)
	if rec.fail != nil {
		return rec.fail(r)
	}
	return nil
}

func (rec *recorder) config() reports.Config {
	return reports.Config{Report: rec.work, Rollup: rec.work, Digest: rec.work}
}

// of returns the runs of job, in the order they ran.
func (rec *recorder) of(job string) []reports.Run {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]reports.Run(nil), rec.runs[job]...)
}

// dues formats the runs' due times with dayLayout.
func dues(runs []reports.Run) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.Due.Format(dayLayout)
	}
	return out
}

// spanHours returns the length of each run's span in hours.
func spanHours(runs []reports.Run) []float64 {
	out := make([]float64, len(runs))
	for i, r := range runs {
		out[i] = r.To.Sub(r.From).Hours()
	}
	return out
}

// perDay counts the runs by the date of their due time in loc.
func perDay(runs []reports.Run, loc *time.Location) map[string]int {
	out := make(map[string]int)
	for _, r := range runs {
		out[r.Due.In(loc).Format("2006-01-02")]++
	}
	return out
}

// between returns the due times (dayLayout) of the runs due in [from, to].
func between(runs []reports.Run, from, to time.Time) []string {
	var out []string
	for _, r := range runs {
		if !r.Due.Before(from) && !r.Due.After(to) {
			out = append(out, r.Due.Format(dayLayout))
		}
	}
	return out
}

// requireOnTime checks that every run started exactly at its due time, as
// it does when the clock moves from timer to timer.
func requireOnTime(t *testing.T, runs []reports.Run) {
	t.Helper()
	for _, r := range runs {
		require.Truef(t, r.Started.Equal(r.Due), "%s due %s started at %s", r.Job, r.Due, r.Started)
	}
}

// requireEveryQuarterHour checks that the runs are due every 15 minutes of
// real time without a gap, and that their spans follow one another.
func requireEveryQuarterHour(t *testing.T, runs []reports.Run) {
	t.Helper()
	require.NotEmpty(t, runs)
	require.Equal(t, runs[0].Due.Add(-15*time.Minute), runs[0].From)
	for i, r := range runs {
		require.Equal(t, r.Due, r.To)
		if i > 0 {
			require.Equalf(t, 15*time.Minute, r.Due.Sub(runs[i-1].Due), "after %s", runs[i-1].Due)
			require.Truef(t, r.From.Equal(runs[i-1].To), "run due %s starts its span at %s", r.Due, r.From)
		}
	}
}

// newManual returns a scheduler on a manual clock that reads start, shut
// down at the end of the test.
func newManual(t *testing.T, start time.Time) (*scheduler.Scheduler, *schedulertest.ManualClock) {
	t.Helper()
	clk := schedulertest.NewManualClock(start)
	s, err := scheduler.New(2, scheduler.WithClock(clk), quiet)
	require.NoError(t, err)
	t.Cleanup(func() {
		s.ShutdownNow()
		require.NoError(t, s.AwaitTermination(context.Background()))
	})
	return s, clk
}

// startService starts a service recording into rec on s, and lets s settle
// so that its timers are armed.
func startService(t *testing.T, s *scheduler.Scheduler, rec *recorder) *reports.Service {
	t.Helper()
	svc, err := reports.New(rec.config())
	require.NoError(t, err)
	require.NoError(t, svc.Start(s))
	require.NoError(t, s.AwaitIdle(t.Context()))
	return svc
}
