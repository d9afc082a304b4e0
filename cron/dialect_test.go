package cron_test

import (
	"fmt"
	"hash/fnv"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cron"
	"github.com/stretchr/testify/require"
)

// daysOfRuns returns the weekday and day of month of the runs of spec in
// UTC during the two weeks from Monday 2026-06-01.
func daysOfRuns(t *testing.T, spec string, opts ...cron.Option) []string {
	t.Helper()
	s, err := cron.Parse(spec, append(opts, cron.In(time.UTC))...)
	require.NoError(t, err, spec)
	day := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	var got []string
	for next := s.Next(day.Add(-time.Second)); next.Before(day.AddDate(0, 0, 14)); next = s.Next(next) {
		got = append(got, next.Format("Mon 2"))
	}
	return got
}

// TestDayOfWeekRangeEndingInSunday is the regression test for ranges such
// as MON-SUN, sat-0 and 5-0, which Parse rejected as running backwards:
// cronie and Vixie cron read a day-of-week range whose end is Sunday's 0
// as ending on Sunday (7). A step counts from the range's start, so 1-0/2
// is Monday, Wednesday, Friday and Sunday, the days a reader expects.
func TestDayOfWeekRangeEndingInSunday(t *testing.T) {
	everyDay := []string{"Mon 1", "Tue 2", "Wed 3", "Thu 4", "Fri 5", "Sat 6", "Sun 7", "Mon 8", "Tue 9", "Wed 10", "Thu 11", "Fri 12", "Sat 13", "Sun 14"}
	require.Equal(t, everyDay, daysOfRuns(t, "0 9 * * Mon-Sun"))
	require.Equal(t, everyDay, daysOfRuns(t, "0 9 * * 1-0"))
	require.Equal(t, []string{"Sat 6", "Sun 7", "Sat 13", "Sun 14"}, daysOfRuns(t, "0 0 * * sat-0"))
	require.Equal(t, []string{"Fri 5", "Sat 6", "Sun 7", "Fri 12", "Sat 13", "Sun 14"}, daysOfRuns(t, "0 0 * * 5-0"))
	require.Equal(t, []string{"Fri 5", "Sat 6", "Sun 7", "Fri 12", "Sat 13", "Sun 14"}, daysOfRuns(t, "0 0 * * FRI-SUN"))
	require.Equal(t, []string{"Mon 1", "Wed 3", "Fri 5", "Sun 7", "Mon 8", "Wed 10", "Fri 12", "Sun 14"}, daysOfRuns(t, "0 0 * * 1-0/2"))
	require.Equal(t, []string{"Sun 7", "Sun 14"}, daysOfRuns(t, "0 0 * * 0-0"))
	// Spring reads SUN as 7 too.
	require.Equal(t, []string{"Sat 6", "Sun 7", "Sat 13", "Sun 14"}, daysOfRuns(t, "0 0 0 * * SAT-SUN", cron.Spring()))
	// Other backward ranges stay errors. Quartz numbers Sunday 1 and wraps
	// every backward range, so its 6-1 is Friday to Sunday.
	_, err := cron.Parse("0 0 * * 5-1")
	require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
	require.Equal(t, []string{"Fri 5", "Sat 6", "Sun 7", "Fri 12", "Sat 13", "Sun 14"}, daysOfRuns(t, "0 0 0 ? * 6-1", cron.Quartz()))
}

// TestQuartzDayFormsInUnixDialect: L, L-n, LW, dW, dL and d#k in five-field
// specs, joined to the other day field by Vixie's rule.
func TestQuartzDayFormsInUnixDialect(t *testing.T) {
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) // a Thursday
	require.Equal(t, []string{"2026-01-31", "2026-02-28", "2026-03-31", "2026-04-30"}, dates(t, "0 0 L * *", from, 4))
	require.Equal(t, []string{"2026-01-28", "2026-02-25", "2026-03-28"}, dates(t, "0 0 L-3 * *", from, 3))
	// January 31st 2026 is a Saturday, May 31st a Sunday.
	require.Equal(t, []string{"2026-01-30", "2026-02-27", "2026-03-31", "2026-04-30", "2026-05-29"}, dates(t, "0 0 LW * *", from, 5))
	// February 15th 2026 is a Sunday, March 15th too, August 15th a Saturday.
	require.Equal(t, []string{"2026-01-15", "2026-02-16", "2026-03-16", "2026-04-15"}, dates(t, "0 0 15W * *", from, 4))
	require.Equal(t, []string{"2026-01-30", "2026-02-27", "2026-03-27"}, dates(t, "0 0 * * 5L", from, 3))
	require.Equal(t, []string{"2026-01-30", "2026-02-27", "2026-03-27"}, dates(t, "0 0 * * friL", from, 3))
	require.Equal(t, []string{"2026-01-12", "2026-02-09", "2026-03-09"}, dates(t, "0 0 * * MON#2", from, 3))
	require.Equal(t, []string{"2026-01-29", "2026-04-30", "2026-07-30"}, dates(t, "0 0 * * 4#5", from, 3))
	// Both day fields restricted: a day matching either runs.
	require.Equal(t, []string{"2026-01-05", "2026-01-12", "2026-01-19", "2026-01-26", "2026-01-31", "2026-02-02"}, dates(t, "0 0 L * MON", from, 6))
	// '?' is '*' for Vixie's rule.
	require.Equal(t, dates(t, "0 0 * * 5L", from, 3), dates(t, "0 0 ? * 5L", from, 3))
	// In Spring's dialect a day must match both: the last day when it is a
	// Saturday (January, February and October 2026).
	s := cron.MustParse("0 0 0 L * SAT", cron.Spring(), cron.In(time.UTC))
	require.Equal(t, "2026-01-31", s.Next(from).Format(time.DateOnly))
	require.Equal(t, "2026-02-28", s.Next(s.Next(from)).Format(time.DateOnly))
	require.Equal(t, "2026-10-31", s.Next(s.Next(s.Next(from))).Format(time.DateOnly))
}

// TestYearField: WithYear's optional seventh (or sixth) field.
func TestYearField(t *testing.T) {
	from := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	s := cron.MustParse("0 0 1 1 * 2027-2029", cron.WithYear(), cron.In(time.UTC))
	next := from
	for _, want := range []string{"2027-01-01", "2028-01-01", "2029-01-01"} {
		next = s.Next(next)
		require.Equal(t, want, next.Format(time.DateOnly))
	}
	require.True(t, s.Next(next).IsZero(), "no run after the last year")
	require.Equal(t, []string{"2028-02-29", "2032-02-29"}, runDates(t, cron.MustParse("0 0 29 2 * 2028/4", cron.WithYear(), cron.In(time.UTC)), from, 2))
	// Without a year, or with '*', every year runs, past 2199 too.
	require.Equal(t, "2300-01-01", cron.MustParse("@yearly", cron.WithYear(), cron.In(time.UTC)).Next(time.Date(2299, 6, 1, 0, 0, 0, 0, time.UTC)).Format(time.DateOnly))
	require.Equal(t, "2300-01-01", cron.MustParse("0 0 1 1 * *", cron.WithYear(), cron.In(time.UTC)).Next(time.Date(2299, 6, 1, 0, 0, 0, 0, time.UTC)).Format(time.DateOnly))
	require.Equal(t, "2199-12-31", cron.MustParse("0 0 31 12 * 2199", cron.WithYear(), cron.In(time.UTC)).Next(from).Format(time.DateOnly))
	require.True(t, cron.MustParse("0 0 1 1 * 1999", cron.WithYear(), cron.In(time.UTC)).Next(from).IsZero(), "a past year never runs")
}

// runDates returns the dates of s's first n runs after from.
func runDates(t *testing.T, s *cron.Schedule, from time.Time, n int) []string {
	t.Helper()
	var out []string
	for range n {
		from = s.Next(from)
		require.False(t, from.IsZero())
		out = append(out, from.Format(time.DateOnly))
	}
	return out
}

// TestEvery: "@every d" runs at the previous due time plus d, from the
// first, on the absolute time line: daylight-saving changes do not move it,
// and a fraction of a second is kept, not rounded.
func TestEvery(t *testing.T) {
	ny := loadZone(t, "America/New_York")
	s := cron.MustParse("@every 1h30m", cron.In(ny))
	from := time.Date(2026, 3, 8, 0, 30, 0, 250e6, ny) // 00:30:00.25 EST
	var got []string
	for range 3 {
		from = s.Next(from)
		require.Same(t, ny, from.Location())
		got = append(got, from.Format("15:04:05.00 MST"))
	}
	// 02:00 EST does not exist: 90 minutes after 00:30 EST is 03:00 EDT.
	require.Equal(t, []string{"03:00:00.25 EDT", "04:30:00.25 EDT", "06:00:00.25 EDT"}, got)
	fallBack := time.Date(2026, 11, 1, 5, 0, 0, 0, time.UTC) // 01:00 EDT
	hourly := cron.MustParse("@every 1h", cron.In(ny))
	require.Equal(t, "01:00 EST", hourly.Next(fallBack).Format("15:04 MST"), "the repeated hour runs again")
	require.Equal(t, "2026-11-01 05:00:00 +0000 UTC", cron.MustParse("CRON_TZ=UTC @every 20h").Next(fallBack.Add(-20*time.Hour)).String())
	require.True(t, s.Next(time.Date(9999, 12, 31, 23, 0, 0, 0, time.UTC)).IsZero(), "no run after year 9999")
	require.Equal(t, time.Second, cron.MustParse("@every 1s").Next(time.Time{}).Sub(time.Time{}))
}

// jenkinsHash is the hash the package doc states for H: the 64-bit FNV-1a
// hash of the key, a zero byte and the field's name, mixed by MurmurHash3's
// 64-bit finalizer; it is written here from the doc.
func jenkinsHash(key, field string) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%s", key, field)
	x := h.Sum64()
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// TestHash: Jenkins's H picks values from the key by the documented hash;
// the same key gives the same times, and different keys spread.
func TestHash(t *testing.T) {
	from := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	parse := func(spec, key string) *cron.Schedule {
		s, err := cron.Parse(spec, cron.WithHashKey(key), cron.In(time.UTC))
		require.NoError(t, err, spec)
		return s
	}
	for _, key := range []string{"nightly-backup", "job-7", "\x00"} {
		s := parse("H H * * *", key)
		next := s.Next(from)
		require.Equal(t, int(jenkinsHash(key, "minute")%60), next.Minute(), key)
		require.Equal(t, int(jenkinsHash(key, "hour")%24), next.Hour(), key)
		require.Equal(t, next, parse("H H * * *", key).Next(from), "the same key, the same time")

		// H/15: every 15 minutes from an offset below 15.
		quarter := parse("H/15 * * * *", key)
		offset := int(jenkinsHash(key, "minute") % 15)
		var minutes []int
		for n := quarter.Next(from.Add(-time.Second)); n.Before(from.Add(time.Hour)); n = quarter.Next(n) {
			minutes = append(minutes, n.Minute())
		}
		require.Equal(t, []int{offset, offset + 15, offset + 30, offset + 45}, minutes, key)

		// H(0-29)/10: every 10 minutes within 0-29, from an offset below 10.
		half := parse("H(0-29)/10 * * * *", key)
		offset = int(jenkinsHash(key, "minute") % 10)
		minutes = minutes[:0]
		for n := half.Next(from.Add(-time.Second)); n.Before(from.Add(time.Hour)); n = half.Next(n) {
			minutes = append(minutes, n.Minute())
		}
		require.Equal(t, []int{offset, offset + 10, offset + 20}, minutes, key)

		// H in day-of-month picks 1-28, in day-of-week one day a week,
		// in H(a-b) a value in a-b.
		monthly := parse("0 0 H * *", key).Next(from)
		require.Equal(t, 1+int(jenkinsHash(key, "day-of-month")%28), monthly.Day(), key)
		weekly := parse("0 0 * * H", key).Next(from)
		require.Equal(t, time.Weekday(jenkinsHash(key, "day-of-week")%7), weekly.Weekday(), key)
		business := parse("0 H(9-16) * * *", key).Next(from)
		require.Equal(t, 9+int(jenkinsHash(key, "hour")%8), business.Hour(), key)
	}
	// A thousand jobs written "H H * * *" do not start at the same time.
	distinct := map[time.Time]bool{}
	for i := range 1000 {
		distinct[parse("H H * * *", fmt.Sprintf("job-%d", i)).Next(from)] = true
	}
	require.Greater(t, len(distinct), 500)
}

// TestHashDaylightSaving: an H job keeps the DST rules. "H H * * *" is a
// fixed-time job, so in New York's repeated hour it runs once; "H/15 * * *
// *" is Jenkins's */15 and, like it, a wildcard job that runs in both.
func TestHashDaylightSaving(t *testing.T) {
	ny := loadZone(t, "America/New_York")
	key := keyWithHour(t, 1)
	fixed := cron.MustParse("H H * * *", cron.WithHashKey(key), cron.In(ny))
	day := time.Date(2026, 11, 1, 4, 0, 0, 0, time.UTC) // 00:00 EDT
	first := fixed.Next(day)
	require.Equal(t, "2026-11-01 -04:00", first.Format("2006-01-02 -07:00"))
	require.Equal(t, "2026-11-02 -05:00", fixed.Next(first).Format("2006-01-02 -07:00"), "not again at the second occurrence")

	quarter := cron.MustParse("H/15 * * * *", cron.WithHashKey(key), cron.In(ny))
	runsInHourOne := 0
	for n := quarter.Next(day); n.Before(day.Add(4 * time.Hour)); n = quarter.Next(n) {
		if n.Hour() == 1 {
			runsInHourOne++
		}
	}
	require.Equal(t, 8, runsInHourOne, "both 01:00-02:00 hours")
}

// keyWithHour returns a key whose H in the hour field is hour.
func keyWithHour(t *testing.T, hour int) string {
	for i := range 10000 {
		key := fmt.Sprintf("k%d", i)
		if int(jenkinsHash(key, "hour")%24) == hour {
			return key
		}
	}
	t.Fatal("no key found")
	return ""
}

// TestQuartzDayFormsDaylightSaving: a day picked by L, W or # keeps the
// DST rules. New York's clocks go forward on the second Sunday of March
// and back on the first Sunday of November.
func TestQuartzDayFormsDaylightSaving(t *testing.T) {
	from := wallIn(t, "America/New_York", 2026, 1, 1, 0, 0, 0)
	require.Equal(t, []string{"2026-03-08 03:00:00 -04:00", "2026-04-12 02:30:00 -04:00"},
		runs(t, "30 2 * 3,4 SUN#2", "America/New_York", from, 2))
	require.Equal(t, []string{"2026-03-08 03:00:00 -04:00", "2026-04-12 02:30:00 -04:00"},
		runs(t, "0 30 2 ? 3,4 1#2", "America/New_York", from, 2, cron.Quartz()))
	require.Equal(t, []string{"2026-11-01 01:30:00 -04:00", "2026-12-06 01:30:00 -05:00"},
		runs(t, "30 1 * 11,12 SUN#1", "America/New_York", from, 2))
	require.Equal(t, []string{"2026-11-01 01:30:00 -04:00", "2026-11-01 01:30:00 -05:00"},
		runs(t, "30 * * 11 SUN#1", "America/New_York", wallIn(t, "America/New_York", 2026, 11, 1, 1, 0, 0), 2))
}

// TestDSTWholeSkippedDay states this package's rule for a whole day the
// zone skipped (Samoa moved west of the date line: Pacific/Apia went from
// 2011-12-29 23:59:59 to 2011-12-31 00:00:00). cronie treats a jump of
// more than three hours as the clock being set and runs nothing for the
// times it skipped; this package keeps its rule for every gap, however
// long: a fixed-time job whose times were skipped runs once, at the end of
// the gap, because a scheduler must not drop a run (a yearly job on
// December 30th would not have run in 2011 at all). A wildcard job runs
// only at real instants, so it has no run in the skipped day.
func TestDSTWholeSkippedDay(t *testing.T) {
	apia := "Pacific/Apia"
	from := wallIn(t, apia, 2011, 12, 29, 12, 0, 0)
	require.Equal(t, []string{"2011-12-31 00:00:00 +14:00", "2012-12-30 09:00:00 +14:00"}, runs(t, "0 9 30 12 *", apia, from, 2))
	require.Equal(t, []string{"2011-12-31 00:00:00 +14:00", "2011-12-31 09:00:00 +14:00"}, runs(t, "0 9 * * *", apia, wallIn(t, apia, 2011, 12, 29, 10, 0, 0), 2))
	require.Equal(t, []string{"2011-12-29 23:00:00 -10:00", "2011-12-31 00:00:00 +14:00"}, runs(t, "0 * * * *", apia, wallIn(t, apia, 2011, 12, 29, 22, 30, 0), 2))
	require.Equal(t, []string{"2012-12-30 00:00:00 +14:00"}, runs(t, "0 */9 30 12 *", apia, from, 1), "a wildcard job's skipped day has no run")
}
