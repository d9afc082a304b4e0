package reports_test

// The service on a manual clock across Berlin's two daylight-saving changes
// of 2026, moved with schedulertest.AdvanceAndSettle: the clock stops at
// every run's due time, so each run starts exactly when it is due.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler/examples/cron/reports"
	"github.com/go-stpe/scheduler/schedulertest"
)

// TestSpringForward runs the service from Wednesday 2026-03-25 23:50 to
// Wednesday 2026-04-01 00:00 Berlin time. On Sunday 2026-03-29 Berlin's
// clocks go from 02:00 CET to 03:00 CEST: a 23-hour day. New York changed
// three weeks earlier, so 09:00 there is 14:00 in Berlin until that Sunday
// and 15:00 after.
func TestSpringForward(t *testing.T) {
	berlin, newYork := zone(t, "Europe/Berlin"), zone(t, "America/New_York")
	rec := simulate(t, time.Date(2026, 3, 25, 23, 50, 0, 0, berlin), time.Date(2026, 4, 1, 0, 0, 0, 0, berlin))

	// The daily report: at 03:00 every day, once on the short day, where
	// 03:00 CEST is the first instant after the gap; each run reports the
	// day before, 23 hours long on Monday.
	report := rec.of(reports.DailyReport)
	require.Equal(t, []string{
		"Thu 2026-03-26 03:00 CET",
		"Fri 2026-03-27 03:00 CET",
		"Sat 2026-03-28 03:00 CET",
		"Sun 2026-03-29 03:00 CEST",
		"Mon 2026-03-30 03:00 CEST",
		"Tue 2026-03-31 03:00 CEST",
	}, dues(report))
	require.Equal(t, []float64{24, 24, 24, 24, 23, 24}, spanHours(report))
	require.Equal(t, time.Date(2026, 3, 29, 0, 0, 0, 0, berlin), report[4].From)
	require.Equal(t, time.Date(2026, 3, 30, 0, 0, 0, 0, berlin), report[4].To)
	requireOnTime(t, report)

	// The quarter-hourly job: at every real quarter hour, 92 on the
	// 23-hour day, none in the skipped hour.
	rollup := rec.of(reports.QuarterHourly)
	require.Equal(t, map[string]int{
		"2026-03-26": 96, "2026-03-27": 96, "2026-03-28": 96,
		"2026-03-29": 92,
		"2026-03-30": 96, "2026-03-31": 96,
		"2026-04-01": 1, // 00:00, the end of the stretch
	}, perDay(rollup, berlin))
	require.Equal(t, []string{
		"Sun 2026-03-29 01:30 CET",
		"Sun 2026-03-29 01:45 CET",
		"Sun 2026-03-29 03:00 CEST",
		"Sun 2026-03-29 03:15 CEST",
	}, between(rollup, time.Date(2026, 3, 29, 1, 30, 0, 0, berlin), time.Date(2026, 3, 29, 3, 15, 0, 0, berlin)))
	requireEveryQuarterHour(t, rollup)
	requireOnTime(t, rollup)

	// The weekday digest: 09:00 New York time, not on the weekend; Monday's
	// covers the time since Friday's.
	digest := rec.of(reports.WeekdayDigest)
	require.Equal(t, []string{
		"Thu 2026-03-26 09:00 EDT",
		"Fri 2026-03-27 09:00 EDT",
		"Mon 2026-03-30 09:00 EDT",
		"Tue 2026-03-31 09:00 EDT",
	}, dues(digest))
	require.Equal(t, []float64{24, 24, 72, 24}, spanHours(digest))
	require.Equal(t, time.Date(2026, 3, 26, 14, 0, 0, 0, berlin), digest[0].Due.In(berlin))
	require.Equal(t, time.Date(2026, 3, 30, 15, 0, 0, 0, berlin), digest[2].Due.In(berlin))
	require.Equal(t, newYork, digest[0].Due.Location())
	requireOnTime(t, digest)
}

// TestFallBack runs the service from Wednesday 2026-10-21 23:50 to
// Wednesday 2026-11-04 00:00 Berlin time. On Sunday 2026-10-25 Berlin's
// clocks go from 03:00 CEST back to 02:00 CET: a 25-hour day whose hour
// from 02:00 to 03:00 happens twice. New York falls back a week later, on
// Sunday 2026-11-01.
func TestFallBack(t *testing.T) {
	berlin := zone(t, "Europe/Berlin")
	rec := simulate(t, time.Date(2026, 10, 21, 23, 50, 0, 0, berlin), time.Date(2026, 11, 4, 0, 0, 0, 0, berlin))

	// The daily report: at 03:00 every day, once on the long day; the
	// report of Sunday the 25th covers 25 hours.
	report := rec.of(reports.DailyReport)
	require.Equal(t, []string{
		"Thu 2026-10-22 03:00 CEST",
		"Fri 2026-10-23 03:00 CEST",
		"Sat 2026-10-24 03:00 CEST",
		"Sun 2026-10-25 03:00 CET",
		"Mon 2026-10-26 03:00 CET",
		"Tue 2026-10-27 03:00 CET",
		"Wed 2026-10-28 03:00 CET",
		"Thu 2026-10-29 03:00 CET",
		"Fri 2026-10-30 03:00 CET",
		"Sat 2026-10-31 03:00 CET",
		"Sun 2026-11-01 03:00 CET",
		"Mon 2026-11-02 03:00 CET",
		"Tue 2026-11-03 03:00 CET",
	}, dues(report))
	require.Equal(t, []float64{24, 24, 24, 24, 25, 24, 24, 24, 24, 24, 24, 24, 24}, spanHours(report))
	requireOnTime(t, report)

	// The quarter-hourly job: at every real quarter hour, both passes
	// through 02:00-03:00 included, 100 runs on the 25-hour day.
	rollup := rec.of(reports.QuarterHourly)
	want := map[string]int{"2026-11-04": 1} // 00:00, the end of the stretch
	for d := 22; d <= 34; d++ {
		want[time.Date(2026, 10, d, 0, 0, 0, 0, berlin).Format("2006-01-02")] = 96
	}
	want["2026-10-25"] = 100
	require.Equal(t, want, perDay(rollup, berlin))
	require.Equal(t, []string{
		"Sun 2026-10-25 01:45 CEST",
		"Sun 2026-10-25 02:00 CEST",
		"Sun 2026-10-25 02:15 CEST",
		"Sun 2026-10-25 02:30 CEST",
		"Sun 2026-10-25 02:45 CEST",
		"Sun 2026-10-25 02:00 CET",
		"Sun 2026-10-25 02:15 CET",
		"Sun 2026-10-25 02:30 CET",
		"Sun 2026-10-25 02:45 CET",
		"Sun 2026-10-25 03:00 CET",
	}, between(rollup, time.Date(2026, 10, 25, 1, 45, 0, 0, berlin), time.Date(2026, 10, 25, 3, 0, 0, 0, berlin)))
	requireEveryQuarterHour(t, rollup)
	requireOnTime(t, rollup)

	// The weekday digest: 09:00 New York time on weekdays, EDT until the
	// US change on Sunday 2026-11-01, EST after it; Monday's digest after
	// that weekend covers 73 hours.
	digest := rec.of(reports.WeekdayDigest)
	require.Equal(t, []string{
		"Thu 2026-10-22 09:00 EDT",
		"Fri 2026-10-23 09:00 EDT",
		"Mon 2026-10-26 09:00 EDT",
		"Tue 2026-10-27 09:00 EDT",
		"Wed 2026-10-28 09:00 EDT",
		"Thu 2026-10-29 09:00 EDT",
		"Fri 2026-10-30 09:00 EDT",
		"Mon 2026-11-02 09:00 EST",
		"Tue 2026-11-03 09:00 EST",
	}, dues(digest))
	require.Equal(t, []float64{24, 24, 72, 24, 24, 24, 24, 73, 24}, spanHours(digest))
	requireOnTime(t, digest)
}

// simulate runs the service on a manual clock from start to end, stepping
// timer to timer as real time would, and returns what ran.
func simulate(t *testing.T, start, end time.Time) *recorder {
	t.Helper()
	s, clk := newManual(t, start)
	rec := &recorder{}
	startService(t, s, rec)
	require.NoError(t, schedulertest.AdvanceAndSettle(t.Context(), clk, s, end.Sub(start)))
	return rec
}
