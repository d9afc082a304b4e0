package reports_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler/examples/cron/reports"
	"github.com/go-stpe/scheduler/schedulertest"
)

// TestOutageCatchesUpReportsAndCoalescesRollups stands for a machine that
// slept from Saturday 00:00 to Monday 23:50 (Berlin), over the spring-
// forward night: one jump of the clock, after which the scheduler finds
// every run of those days overdue at once. The report catches up, one run
// per missed day, each reporting its own day; the rollup and the digest run
// once, as their latest missed time, and their spans cover the whole outage.
func TestOutageCatchesUpReportsAndCoalescesRollups(t *testing.T) {
	berlin := zone(t, "Europe/Berlin")
	s, clk := newManual(t, time.Date(2026, 3, 27, 23, 50, 0, 0, berlin))
	rec := &recorder{}
	startService(t, s, rec)
	require.NoError(t, schedulertest.AdvanceAndSettle(t.Context(), clk, s, 10*time.Minute)) // the rollup of Saturday 00:00

	wake := time.Date(2026, 3, 30, 23, 50, 0, 0, berlin)
	clk.Set(wake)
	require.NoError(t, s.AwaitIdle(t.Context()))

	report := rec.of(reports.DailyReport)
	require.Equal(t, []string{
		"Sat 2026-03-28 03:00 CET",
		"Sun 2026-03-29 03:00 CEST",
		"Mon 2026-03-30 03:00 CEST",
	}, dues(report))
	require.Equal(t, []float64{24, 24, 23}, spanHours(report), "each run reports the day before its own due time")
	for _, r := range report {
		require.Equal(t, wake, r.Started, "late, at wake-up")
	}

	rollup := rec.of(reports.QuarterHourly)
	require.Equal(t, []string{
		"Sat 2026-03-28 00:00 CET",
		"Mon 2026-03-30 23:45 CEST", // the latest of the 283 missed quarter hours
	}, dues(rollup))
	require.Equal(t, rollup[0].To, rollup[1].From, "the coalesced run covers the whole outage")
	require.Equal(t, wake, rollup[1].Started)

	digest := rec.of(reports.WeekdayDigest)
	require.Equal(t, []string{"Mon 2026-03-30 09:00 EDT"}, dues(digest))
	require.Equal(t, "Fri 2026-03-27 09:00 EDT", digest[0].From.Format(dayLayout))
	require.Equal(t, wake, digest[0].Started)

	// Back on time: the next runs are the next quarter hour and 03:00.
	require.NoError(t, schedulertest.AdvanceAndSettle(t.Context(), clk, s, 4*time.Hour))
	require.Equal(t, "Tue 2026-03-31 03:00 CEST", rec.of(reports.DailyReport)[3].Due.Format(dayLayout))
	rollup = rec.of(reports.QuarterHourly)
	require.Len(t, rollup, 2+16)
	require.Equal(t, "Tue 2026-03-31 00:00 CEST", rollup[2].Due.Format(dayLayout))
	requireOnTime(t, rollup[2:])
}
