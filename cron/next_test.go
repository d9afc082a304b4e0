package cron_test

import (
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cron"
	"github.com/stretchr/testify/require"
)

// dates returns the dates of the first n runs of spec in UTC after from.
func dates(t *testing.T, spec string, from time.Time, n int) []string {
	t.Helper()
	var out []string
	for _, r := range runs(t, spec, "UTC", from, n) {
		out = append(out, r[:10])
	}
	return out
}

// TestVixieDayRule: when either day field begins with '*' a day must match
// both; otherwise a day matching either runs.
func TestVixieDayRule(t *testing.T) {
	jan1 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) // a Thursday
	// Every 13th and every Friday.
	require.Equal(t, []string{"2026-01-02", "2026-01-09", "2026-01-13", "2026-01-16", "2026-01-23", "2026-01-30", "2026-02-06", "2026-02-13"},
		dates(t, "0 0 13 * FRI", jan1, 8))
	// Only Mondays that are the 1st, 11th, 21st or 31st.
	require.Equal(t, []string{"2026-05-11", "2026-06-01", "2026-08-31", "2026-09-21", "2026-12-21"},
		dates(t, "0 0 */10 * MON", jan1, 5))
	// A plain '*' in either field is just the other field.
	require.Equal(t, []string{"2026-01-05", "2026-01-12"}, dates(t, "0 0 * * MON", jan1, 2))
	require.Equal(t, []string{"2026-01-13", "2026-02-13"}, dates(t, "0 0 13 * *", jan1, 2))
	// A '*/1' weekday field makes the day-of-month field decide alone.
	require.Equal(t, []string{"2026-01-13", "2026-02-13"}, dates(t, "0 0 13 * */1", jan1, 2))
	// Both restricted, a day that never exists still lets the weekday run.
	require.Equal(t, []string{"2026-02-02", "2026-02-09", "2026-02-16", "2026-02-23", "2027-02-01"},
		dates(t, "0 0 31 2 MON", jan1, 5))
}

// TestNextRareSpecs: specs whose runs are years apart or hinge on February
// 29th are found exactly.
func TestNextRareSpecs(t *testing.T) {
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	require.Equal(t, []string{"2028-02-29", "2032-02-29", "2036-02-29"}, dates(t, "0 0 29 2 *", from, 3))
	// Both day fields restricted: February 29th or any Monday in February.
	require.Equal(t, []string{"2026-02-02", "2026-02-09", "2026-02-16", "2026-02-23", "2027-02-01"},
		dates(t, "0 0 29 2 MON", from, 5))
	require.Contains(t, dates(t, "0 0 29 2 MON", time.Date(2028, 2, 20, 0, 0, 0, 0, time.UTC), 3), "2028-02-29")
	// Days 1 and 31 of February: the 1st only.
	require.Equal(t, []string{"2026-02-01", "2027-02-01"}, dates(t, "0 0 */30 2 *", from, 2))
	// February 29th that is a Sunday, a '*' weekday field: must match both.
	// 2100 is no leap year, so the 28-year rhythm breaks after 2088.
	require.Equal(t, []string{"2032-02-29", "2060-02-29", "2088-02-29", "2128-02-29", "2156-02-29"}, dates(t, "0 0 29 2 */7", from, 5))
	// February 1st or 29th that is a Monday, a '*' day-of-month field.
	require.Equal(t, []string{"2027-02-01", "2038-02-01", "2044-02-01", "2044-02-29", "2049-02-01"}, dates(t, "0 0 */28 2 MON", from, 5))
	// The same in a zone with DST: Next's search walks zone transitions.
	require.Equal(t, "2032-02-29 00:00:00 -05:00", runs(t, "0 0 29 2 */7", "America/New_York", from, 1)[0])
}

// TestNextYearCap: the search ends with year 9999; Next then returns the
// zero Time, and from past the cap too.
func TestNextYearCap(t *testing.T) {
	s := cron.MustParse("0 0 29 2 */7", cron.In(time.UTC))
	// The last February 29th that is a Sunday before year 10000.
	last := s.Next(time.Date(9950, 1, 1, 0, 0, 0, 0, time.UTC))
	require.Equal(t, "9976-02-29", last.Format(time.DateOnly))
	require.True(t, s.Next(last).IsZero())
	require.True(t, cron.MustParse("@hourly", cron.In(time.UTC)).Next(time.Date(9999, 12, 31, 23, 0, 0, 0, time.UTC)).IsZero())
	require.True(t, cron.MustParse("@hourly", cron.In(time.UTC)).Next(time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero())
	require.Equal(t, "0001-01-01 01:00:00 +00:00", cron.MustParse("@hourly", cron.In(time.UTC)).Next(time.Time{}).Format(runLayout))
}

// TestNextZeroSchedule: the zero Schedule never runs.
func TestNextZeroSchedule(t *testing.T) {
	var s cron.Schedule
	require.True(t, s.Next(time.Now()).IsZero())
	var nilSchedule *cron.Schedule
	require.True(t, nilSchedule.Next(time.Now()).IsZero())
}

// TestNextFromOtherZone: only t's instant counts; the run is in the spec's
// zone.
func TestNextFromOtherZone(t *testing.T) {
	berlin := loadZone(t, "Europe/Berlin")
	s := cron.MustParse("0 3 * * *", cron.In(berlin))
	tokyo := time.Date(2026, 7, 1, 9, 30, 0, 0, loadZone(t, "Asia/Tokyo")) // 02:30 CEST
	ny := tokyo.In(loadZone(t, "America/New_York"))
	require.Equal(t, "2026-07-01 03:00:00 +02:00", s.Next(tokyo).Format(runLayout))
	require.Equal(t, s.Next(tokyo), s.Next(ny))
	require.Same(t, berlin, s.Next(ny).Location())
}

// TestNextSubSecond: Next is strictly after t; a fraction of a second is
// dropped from the search start but the run is never at or before t.
func TestNextSubSecond(t *testing.T) {
	s := cron.MustParse("* * * * * *", cron.In(time.UTC), cron.WithSeconds())
	base := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	require.Equal(t, base.Add(time.Second), s.Next(base))
	require.Equal(t, base.Add(time.Second), s.Next(base.Add(time.Nanosecond)))
	require.Equal(t, base.Add(time.Second), s.Next(base.Add(999*time.Millisecond)))
	require.Equal(t, base, s.Next(base.Add(-time.Nanosecond)))
	m := cron.MustParse("*/5 * * * *", cron.In(time.UTC))
	require.Equal(t, base.Add(5*time.Minute), m.Next(base))
	require.Equal(t, base, m.Next(base.Add(-time.Nanosecond)))
	// Monotonic readings do not matter.
	now := time.Now()
	require.True(t, m.Next(now).After(now))
	require.Zero(t, m.Next(now).Nanosecond())
}

// TestNextConcurrent: one Schedule serves many goroutines at once (run with
// -race); every goroutine gets the same answers as a single one.
func TestNextConcurrent(t *testing.T) {
	ny := loadZone(t, "America/New_York")
	specs := []*cron.Schedule{
		cron.MustParse("30 2 * * *", cron.In(ny)),
		cron.MustParse("*/15 * * * *", cron.In(ny)),
		cron.MustParse("0 0 29 2 */7", cron.In(ny)),
	}
	from := time.Date(2026, 3, 1, 0, 0, 0, 0, ny)
	want := make([][]time.Time, len(specs))
	for i, s := range specs {
		for next, k := from, 0; k < 200; k++ {
			next = s.Next(next)
			want[i] = append(want[i], next)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan string, 16*len(specs))
	for g := range 16 {
		for i, s := range specs {
			wg.Go(func() {
				next := from
				for k := range 200 {
					if next = s.Next(next); !next.Equal(want[i][k]) {
						errs <- s.String() + ": goroutine " + string(rune('a'+g)) + " got " + next.String()
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestNextAcrossLeapYearEnd: past a zone's listed transitions the time
// package ends the last zone period of a leap year a day early (at Dec 31
// 00:00 UTC); Next must still walk through December 31st to the new year
// and not loop.
func TestNextAcrossLeapYearEnd(t *testing.T) {
	for _, zone := range []string{"America/New_York", "Europe/Berlin", "Australia/Lord_Howe"} {
		loc := loadZone(t, zone)
		s := cron.MustParse("0 * * * *", cron.In(loc))
		next := time.Date(2040, 12, 30, 12, 0, 0, 0, loc)
		for range 72 {
			prev := next
			next = s.Next(prev)
			require.Equal(t, time.Hour, next.Sub(prev), "%s: after %v", zone, prev)
		}
		require.Equal(t, "2041-01-02 12:00", next.Format("2006-01-02 15:04"), zone)
		require.Equal(t, "2040-12-31 09:00", cron.MustParse("0 9 31 12 *", cron.In(loc)).Next(time.Date(2040, 12, 1, 0, 0, 0, 0, loc)).Format("2006-01-02 15:04"), zone)
	}
}

// TestNextAllocatesNothing: Next allocates nothing for any form of spec,
// across a year of runs with both of New York's DST changes, where the
// zone span it caches changes.
func TestNextAllocatesNothing(t *testing.T) {
	ny := loadZone(t, "America/New_York")
	for _, c := range []struct {
		spec string
		opts []cron.Option
	}{
		{"*/15 * * * *", nil}, {"30 2 * * *", nil}, {"0 9 L,15W * FRI#3", nil}, {"0 0 29 2 */7", nil},
		{"H H * * *", []cron.Option{cron.WithHashKey("job")}}, {"0 0 12 ? * 6L 2026-2030", []cron.Option{cron.Quartz()}},
		{"@every 1h30m", nil},
	} {
		s := cron.MustParse(c.spec, append(c.opts, cron.In(ny))...)
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, ny)
		next := start
		allocs := testing.AllocsPerRun(2000, func() {
			if next = s.Next(next); next.IsZero() || next.Year() > 2027 {
				next = start
			}
		})
		require.Zero(t, allocs, c.spec)
	}
}
