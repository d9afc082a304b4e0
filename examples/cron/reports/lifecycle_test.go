package reports_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/examples/cron/reports"
	"github.com/go-stpe/scheduler/schedulertest"
)

func TestJobs(t *testing.T) {
	svc, err := reports.New(reports.Config{})
	require.NoError(t, err)
	jobs := svc.Jobs()
	require.Len(t, jobs, 3)
	for i, want := range []struct {
		name, spec, zone string
		missed           scheduler.MissedRunPolicy
	}{
		{reports.DailyReport, "0 3 * * *", "Europe/Berlin", scheduler.CatchUpMissed},
		{reports.QuarterHourly, "*/15 * * * *", "Europe/Berlin", scheduler.CoalesceMissed},
		{reports.WeekdayDigest, "0 9 * * MON-FRI", "America/New_York", scheduler.CoalesceMissed},
	} {
		require.Equal(t, want.name, jobs[i].Name)
		require.Equal(t, want.spec, jobs[i].Spec)
		require.Equal(t, want.zone, jobs[i].Zone.String())
		require.Equal(t, want.missed, jobs[i].Missed)
	}
	// Schedule is the job's trigger: 03:00 Berlin after Sunday 2026-10-25 00:00 UTC.
	require.Equal(t, time.Date(2026, 10, 25, 2, 0, 0, 0, time.UTC),
		jobs[0].Schedule.Next(time.Date(2026, 10, 25, 0, 0, 0, 0, time.UTC)).UTC())
}

func TestStatusCountsRunsAndFailures(t *testing.T) {
	berlin := zone(t, "Europe/Berlin")
	// Monday 2026-01-05 00:05 Berlin is Sunday 18:05 in New York.
	s, clk := newManual(t, time.Date(2026, 1, 5, 0, 5, 0, 0, berlin))
	errDown := errors.New("warehouse unavailable")
	rec := &recorder{fail: func(r reports.Run) error {
		if r.Job == reports.QuarterHourly && r.Due.Minute() == 30 {
			return errDown
		}
		return nil
	}}
	svc := startService(t, s, rec)

	st := svc.Status()
	require.Equal(t, 2*time.Hour+55*time.Minute, st[0].NextIn, "report at 03:00")
	require.Equal(t, 10*time.Minute, st[1].NextIn, "rollup at 00:15")
	require.Equal(t, 14*time.Hour+55*time.Minute, st[2].NextIn, "digest at 09:00 EST, 15:00 in Berlin")

	require.NoError(t, schedulertest.AdvanceAndSettle(t.Context(), clk, s, 40*time.Minute))

	// The run due at 00:30 failed; the job went on, and the run at 00:45
	// covered the failed run's quarter hour too.
	rollup := rec.of(reports.QuarterHourly)
	require.Equal(t, []string{"Mon 2026-01-05 00:15 CET", "Mon 2026-01-05 00:30 CET", "Mon 2026-01-05 00:45 CET"}, dues(rollup))
	require.Equal(t, []float64{0.25, 0.25, 0.5}, spanHours(rollup))
	require.Equal(t, rollup[0].To, rollup[2].From)

	st = svc.Status()
	require.Equal(t, uint64(3), st[1].Runs)
	require.Equal(t, uint64(1), st[1].Failures)
	require.Equal(t, rollup[2], st[1].Last)
	require.NoError(t, st[1].LastErr)
	require.Equal(t, 15*time.Minute, st[1].NextIn)
	require.Zero(t, st[0].Runs)
	require.Equal(t, time.Time{}, st[0].Last.Due)

	// A failing last run shows in LastErr, wrapped with the job and due time.
	require.NoError(t, schedulertest.AdvanceAndSettle(t.Context(), clk, s, 45*time.Minute)) // to 01:30
	st = svc.Status()
	require.Equal(t, uint64(6), st[1].Runs)
	require.Equal(t, uint64(2), st[1].Failures)
	require.ErrorIs(t, st[1].LastErr, errDown)
}

func TestStartStop(t *testing.T) {
	berlin := zone(t, "Europe/Berlin")
	ctx := t.Context()
	s, clk := newManual(t, time.Date(2026, 1, 5, 0, 5, 0, 0, berlin))
	rec := &recorder{}
	svc := startService(t, s, rec)
	require.ErrorIs(t, svc.Start(s), reports.ErrStarted)

	require.NoError(t, schedulertest.AdvanceAndSettle(ctx, clk, s, 10*time.Minute))
	require.Len(t, rec.of(reports.QuarterHourly), 1)

	svc.Stop()
	svc.Stop() // twice is fine
	require.Zero(t, svc.Status()[1].NextIn, "stopped")
	require.NoError(t, schedulertest.AdvanceAndSettle(ctx, clk, s, 24*time.Hour))
	require.Len(t, rec.of(reports.QuarterHourly), 1, "no run while stopped")
	require.Empty(t, rec.of(reports.DailyReport))

	// Started again, the first rollup covers just its own quarter hour.
	require.NoError(t, svc.Start(s))
	require.NoError(t, schedulertest.AdvanceAndSettle(ctx, clk, s, 15*time.Minute))
	rollup := rec.of(reports.QuarterHourly)
	require.Equal(t, []string{"Mon 2026-01-05 00:15 CET", "Tue 2026-01-06 00:30 CET"}, dues(rollup))
	require.Equal(t, []float64{0.25, 0.25}, spanHours(rollup))
}

func TestStartErrors(t *testing.T) {
	svc, err := reports.New(reports.Config{})
	require.NoError(t, err)
	require.ErrorIs(t, svc.Start(nil), scheduler.ErrInvalidArgument)

	s, err := scheduler.New(1, scheduler.WithClock(schedulertest.NewManualClock(time.Unix(0, 0))), quiet)
	require.NoError(t, err)
	s.Shutdown()
	require.NoError(t, s.AwaitTermination(context.Background()))
	require.ErrorIs(t, svc.Start(s), scheduler.ErrRejected)
	require.Empty(t, s.Queue(), "nothing left scheduled")

	// The failed Start left the service stopped: it starts on another
	// scheduler.
	s2, _ := newManual(t, time.Unix(0, 0))
	require.NoError(t, svc.Start(s2))
	require.Len(t, s2.Queue(), 3)
	svc.Stop()
}

func TestWorkSeesItsCancellation(t *testing.T) {
	// Stop cancels a run in progress: the work's ctx ends.
	berlin := zone(t, "Europe/Berlin")
	s, clk := newManual(t, time.Date(2026, 1, 5, 0, 5, 0, 0, berlin))
	started := make(chan struct{})
	var workErr error
	svc, err := reports.New(reports.Config{Rollup: func(ctx context.Context, r reports.Run) error {
		close(started)
		<-ctx.Done()
		workErr = ctx.Err()
		return workErr
	}})
	require.NoError(t, err)
	require.NoError(t, svc.Start(s))
	require.NoError(t, s.AwaitIdle(t.Context()))

	clk.Advance(10 * time.Minute)
	<-started
	svc.Stop()
	require.NoError(t, s.AwaitIdle(t.Context()))
	require.ErrorIs(t, workErr, context.Canceled)
	require.Equal(t, uint64(1), svc.Status()[1].Failures)
}
