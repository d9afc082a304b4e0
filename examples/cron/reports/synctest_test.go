package reports_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/examples/cron/reports"
)

// TestSynctestFallBack is the fall-back night in a testing/synctest bubble:
// the scheduler runs on the default clock, which inside the bubble is the
// bubble's fake time, and time.Sleep moves it from timer to timer.
func TestSynctestFallBack(t *testing.T) {
	berlin := zone(t, "Europe/Berlin")
	synctest.Test(t, func(t *testing.T) {
		// A bubble's time starts at 2000-01-01 00:00 UTC: sleep to the
		// evening before the change (virtual: returns at once).
		time.Sleep(time.Until(time.Date(2026, 10, 24, 23, 50, 0, 0, berlin)))
		s, err := scheduler.New(2, quiet)
		require.NoError(t, err)
		t.Cleanup(func() { // runs inside the bubble
			s.ShutdownNow()
			require.NoError(t, s.AwaitTermination(context.Background()))
		})
		rec := &recorder{}
		svc, err := reports.New(rec.config())
		require.NoError(t, err)
		require.NoError(t, svc.Start(s))

		time.Sleep(time.Until(time.Date(2026, 10, 26, 0, 0, 0, 0, berlin)))
		synctest.Wait() // what came due at Monday 00:00 is done

		report := rec.of(reports.DailyReport)
		require.Equal(t, []string{"Sun 2026-10-25 03:00 CET"}, dues(report))
		requireOnTime(t, report)

		rollup := rec.of(reports.QuarterHourly)
		require.Equal(t, map[string]int{"2026-10-25": 100, "2026-10-26": 1}, perDay(rollup, berlin))
		requireEveryQuarterHour(t, rollup)
		requireOnTime(t, rollup)

		require.Empty(t, rec.of(reports.WeekdayDigest), "Sunday")
	})
}
