package cron_test

import (
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cron"
	"github.com/stretchr/testify/require"
)

// dstCase is a spec whose runs around a transition are known: the package
// doc's cases and the same rules at shifts of other kinds.
type dstCase struct {
	name  string
	spec  string
	zone  string
	from  time.Time
	opts  []cron.Option
	wants []string
}

func TestDST(t *testing.T) {
	ny, berlin := "America/New_York", "Europe/Berlin"
	cases := []dstCase{
		// The package doc's cases. New York: 2026-03-08 02:00 EST -> 03:00
		// EDT and 2026-11-01 02:00 EDT -> 01:00 EST; Berlin: 2026-03-29
		// 02:00 -> 03:00 and 2026-10-25 03:00 -> 02:00.
		{"NY spring gap, fixed 02:30 runs once at 03:00 EDT", "30 2 * * *", ny, wallIn(t, ny, 2026, 3, 7, 12, 0, 0), nil,
			[]string{"2026-03-08 03:00:00 -04:00", "2026-03-09 02:30:00 -04:00"}},
		{"NY fall repeat, fixed 01:30 runs once at 01:30 EDT", "30 1 * * *", ny, wallIn(t, ny, 2026, 10, 31, 12, 0, 0), nil,
			[]string{"2026-11-01 01:30:00 -04:00", "2026-11-02 01:30:00 -05:00"}},
		{"NY fall repeat, wildcard hour runs in both 01:30s", "30 * * * *", ny, wallIn(t, ny, 2026, 11, 1, 0, 0, 0), nil,
			[]string{"2026-11-01 00:30:00 -04:00", "2026-11-01 01:30:00 -04:00", "2026-11-01 01:30:00 -05:00", "2026-11-01 02:30:00 -05:00"}},
		{"NY spring gap, */15 has no run in the gap", "*/15 * * * *", ny, wallIn(t, ny, 2026, 3, 8, 1, 30, 0), nil,
			[]string{"2026-03-08 01:45:00 -05:00", "2026-03-08 03:00:00 -04:00", "2026-03-08 03:15:00 -04:00"}},
		{"Berlin fall repeat, fixed 02:00 runs once at 02:00 CEST", "0 2 * * *", berlin, wallIn(t, berlin, 2026, 10, 24, 12, 0, 0), nil,
			[]string{"2026-10-25 02:00:00 +02:00", "2026-10-26 02:00:00 +01:00"}},

		// The same rules elsewhere in New York and Berlin.
		{"NY spring gap, four skipped times run once", "0,15,30,45 2 * * *", ny, wallIn(t, ny, 2026, 3, 7, 12, 0, 0), nil,
			[]string{"2026-03-08 03:00:00 -04:00", "2026-03-09 02:00:00 -04:00"}},
		{"NY spring gap, a skipped time and 03:00 run once together", "0 2,3 * * *", ny, wallIn(t, ny, 2026, 3, 7, 12, 0, 0), nil,
			[]string{"2026-03-08 03:00:00 -04:00", "2026-03-09 02:00:00 -04:00"}},
		{"NY spring gap, */15 in hour 2 is a wildcard job: no run that day", "*/15 2 * * *", ny, wallIn(t, ny, 2026, 3, 8, 1, 0, 0), nil,
			[]string{"2026-03-09 02:00:00 -04:00"}},
		{"NY fall repeat, fixed minutes in hour 1 run in the first hour only", "0,30 1 * * *", ny, wallIn(t, ny, 2026, 11, 1, 0, 0, 0), nil,
			[]string{"2026-11-01 01:00:00 -04:00", "2026-11-01 01:30:00 -04:00", "2026-11-02 01:00:00 -05:00"}},
		{"Berlin spring gap, fixed 02:00 runs at 03:00 CEST", "0 2 * * *", berlin, wallIn(t, berlin, 2026, 3, 28, 12, 0, 0), nil,
			[]string{"2026-03-29 03:00:00 +02:00", "2026-03-30 02:00:00 +02:00"}},
		{"Berlin fall repeat, @hourly runs in both 02:00s", "@hourly", berlin, wallIn(t, berlin, 2026, 10, 25, 1, 30, 0), nil,
			[]string{"2026-10-25 02:00:00 +02:00", "2026-10-25 02:00:00 +01:00", "2026-10-25 03:00:00 +01:00"}},

		// Six-field specs: the seconds field does not make a job a wildcard one.
		{"seconds, NY spring gap, fixed 02:30:30 runs at 03:00:00", "30 30 2 * * *", ny, wallIn(t, ny, 2026, 3, 7, 12, 0, 0),
			[]cron.Option{cron.WithSeconds()}, []string{"2026-03-08 03:00:00 -04:00", "2026-03-09 02:30:30 -04:00"}},
		{"seconds, NY spring gap, every 30 s of fixed 02:30 runs once", "*/30 30 2 * * *", ny, wallIn(t, ny, 2026, 3, 7, 12, 0, 0),
			[]cron.Option{cron.WithSeconds()}, []string{"2026-03-08 03:00:00 -04:00", "2026-03-09 02:30:00 -04:00"}},
		{"seconds, NY fall repeat, every 30 s of fixed 01:30 in the first hour", "*/30 30 1 * * *", ny, wallIn(t, ny, 2026, 11, 1, 1, 0, 0),
			[]cron.Option{cron.WithSeconds()}, []string{"2026-11-01 01:30:00 -04:00", "2026-11-01 01:30:30 -04:00", "2026-11-02 01:30:00 -05:00"}},
		{"seconds, NY fall repeat, wildcard minutes run in both hours", "15 */30 1 * * *", ny, time.Date(2026, 11, 1, 5, 20, 0, 0, time.UTC), // 01:20 EDT
			[]cron.Option{cron.WithSeconds()}, []string{"2026-11-01 01:30:15 -04:00", "2026-11-01 01:00:15 -05:00", "2026-11-01 01:30:15 -05:00", "2026-11-02 01:00:15 -05:00"}},

		// Shifts at midnight.
		{"Havana spring gap at midnight, @daily runs at 01:00", "@daily", "America/Havana", wallIn(t, "America/Havana", 2026, 3, 7, 12, 0, 0), nil,
			[]string{"2026-03-08 01:00:00 -04:00", "2026-03-09 00:00:00 -04:00"}},
		{"Havana fall repeat after midnight, fixed 00:30 once", "30 0 * * *", "America/Havana", wallIn(t, "America/Havana", 2026, 10, 31, 12, 0, 0), nil,
			[]string{"2026-11-01 00:30:00 -04:00", "2026-11-02 00:30:00 -05:00"}},
		{"Havana fall repeat, wildcard hour runs twice", "30 * * * *", "America/Havana", wallIn(t, "America/Havana", 2026, 10, 31, 23, 50, 0), nil,
			[]string{"2026-11-01 00:30:00 -04:00", "2026-11-01 00:30:00 -05:00", "2026-11-01 01:30:00 -05:00"}},
		{"Santiago spring gap at midnight, fixed 00:00 runs at 01:00", "0 0 * * *", "America/Santiago", wallIn(t, "America/Santiago", 2026, 9, 5, 12, 0, 0), nil,
			[]string{"2026-09-06 01:00:00 -03:00", "2026-09-07 00:00:00 -03:00"}},
		{"Santiago fall repeat before midnight, fixed 23:30 once", "30 23 * * *", "America/Santiago", wallIn(t, "America/Santiago", 2026, 4, 4, 12, 0, 0), nil,
			[]string{"2026-04-04 23:30:00 -03:00", "2026-04-05 23:30:00 -04:00"}},
		{"Santiago spring gap, */30 skips the gap", "*/30 * * * *", "America/Santiago", wallIn(t, "America/Santiago", 2026, 9, 5, 23, 10, 0), nil,
			[]string{"2026-09-05 23:30:00 -04:00", "2026-09-06 01:00:00 -03:00", "2026-09-06 01:30:00 -03:00"}},
		{"Beirut spring gap at midnight, fixed 00:00 on the 29th runs at 01:00", "0 0 29 3 *", "Asia/Beirut", wallIn(t, "Asia/Beirut", 2026, 3, 1, 0, 0, 0), nil,
			[]string{"2026-03-29 01:00:00 +03:00", "2027-03-29 00:00:00 +03:00"}},
		{"Beirut fall repeat before midnight, fixed 23:00 once", "0 23 * * *", "Asia/Beirut", wallIn(t, "Asia/Beirut", 2026, 10, 24, 12, 0, 0), nil,
			[]string{"2026-10-24 23:00:00 +03:00", "2026-10-25 23:00:00 +02:00"}},

		// 30-minute shifts (Lord Howe: 2026-04-05 02:00 -> 01:30, 2026-10-04 02:00 -> 02:30).
		{"Lord Howe 30-minute gap, fixed 02:15 runs at 02:30", "15 2 * * *", "Australia/Lord_Howe", wallIn(t, "Australia/Lord_Howe", 2026, 10, 3, 12, 0, 0), nil,
			[]string{"2026-10-04 02:30:00 +11:00", "2026-10-05 02:15:00 +11:00"}},
		{"Lord Howe 30-minute repeat, fixed 01:45 once", "45 1 * * *", "Australia/Lord_Howe", wallIn(t, "Australia/Lord_Howe", 2026, 4, 4, 12, 0, 0), nil,
			[]string{"2026-04-05 01:45:00 +11:00", "2026-04-06 01:45:00 +10:30"}},
		{"Lord Howe 30-minute repeat, */15 runs in both", "*/15 * * * *", "Australia/Lord_Howe", wallIn(t, "Australia/Lord_Howe", 2026, 4, 5, 1, 20, 0), nil,
			[]string{"2026-04-05 01:30:00 +11:00", "2026-04-05 01:45:00 +11:00", "2026-04-05 01:30:00 +10:30", "2026-04-05 01:45:00 +10:30", "2026-04-05 02:00:00 +10:30"}},

		// Two-hour shifts (Troll: 2026-03-29 01:00 -> 03:00, 2026-10-25 03:00 -> 01:00).
		{"Troll two-hour gap, fixed 01:00 and 02:00 run once at 03:00", "0 1,2 * * *", "Antarctica/Troll", wallIn(t, "Antarctica/Troll", 2026, 3, 28, 12, 0, 0), nil,
			[]string{"2026-03-29 03:00:00 +02:00", "2026-03-30 01:00:00 +02:00"}},
		{"Troll two-hour repeat, fixed 02:30 once", "30 2 * * *", "Antarctica/Troll", wallIn(t, "Antarctica/Troll", 2026, 10, 24, 12, 0, 0), nil,
			[]string{"2026-10-25 02:30:00 +02:00", "2026-10-26 02:30:00 +00:00"}},
		{"Troll two-hour repeat, @hourly runs in both hours", "@hourly", "Antarctica/Troll", wallIn(t, "Antarctica/Troll", 2026, 10, 25, 0, 30, 0), nil,
			[]string{"2026-10-25 01:00:00 +02:00", "2026-10-25 02:00:00 +02:00", "2026-10-25 01:00:00 +00:00", "2026-10-25 02:00:00 +00:00", "2026-10-25 03:00:00 +00:00"}},

		// A whole skipped day: Samoa moved west of the date line, 2011-12-30 never happened.
		{"Apia skipped day, fixed runs of the 30th run once at the jump", "0 9,17 30 12 *", "Pacific/Apia", wallIn(t, "Pacific/Apia", 2011, 12, 29, 12, 0, 0), nil,
			[]string{"2011-12-31 00:00:00 +14:00", "2012-12-30 09:00:00 +14:00"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.wants, runs(t, c.spec, c.zone, c.from, len(c.wants), c.opts...))
		})
	}
}

// TestDSTNextFromInsideRepeat: a fixed-time job's time that occurs twice
// runs at the first occurrence only, so Next from any point after the first
// occurrence (inside the repeated hour, in either offset) is the next day's
// run; Next is stateless and needs no memory of what ran. A wildcard job
// still has its second occurrence ahead.
func TestDSTNextFromInsideRepeat(t *testing.T) {
	ny := loadZone(t, "America/New_York")
	fixed := cron.MustParse("30 1 * * *", cron.In(ny))
	wildcard := cron.MustParse("30 * * * *", cron.In(ny))
	firstOccurrence := time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC) // 01:30 EDT
	for _, from := range []time.Time{
		time.Date(2026, 11, 1, 5, 40, 0, 0, time.UTC), // 01:40 EDT
		time.Date(2026, 11, 1, 6, 20, 0, 0, time.UTC), // 01:20 EST, before the second 01:30
		time.Date(2026, 11, 1, 6, 40, 0, 0, time.UTC), // 01:40 EST
	} {
		require.Equal(t, "2026-11-02 01:30:00 -05:00", fixed.Next(from).Format(runLayout), "fixed from %v", from.In(ny))
	}
	require.Equal(t, "2026-11-01 01:30:00 -04:00", fixed.Next(firstOccurrence.Add(-time.Second)).Format(runLayout))
	require.Equal(t, "2026-11-01 01:30:00 -05:00", wildcard.Next(time.Date(2026, 11, 1, 5, 40, 0, 0, time.UTC)).Format(runLayout))
	require.Equal(t, "2026-11-01 01:30:00 -05:00", wildcard.Next(time.Date(2026, 11, 1, 6, 20, 0, 0, time.UTC)).Format(runLayout))
}

// TestDSTNextFromInsideGap: no instant lies inside a gap, but a time built
// with time.Date from a skipped wall time is normalised by Go (02:30 on
// 2026-03-08 becomes 01:30 EST with Go 1.26; the time package does not
// promise which), and Next works from that instant. From just before the
// jump the gap's run at 03:00 EDT is next; from the jump instant itself it
// is past.
func TestDSTNextFromInsideGap(t *testing.T) {
	ny := loadZone(t, "America/New_York")
	s := cron.MustParse("30 2 * * *", cron.In(ny))
	inGap := time.Date(2026, 3, 8, 2, 30, 0, 0, ny)
	want := "2026-03-08 03:00:00 -04:00"
	if !inGap.Before(time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC)) {
		want = "2026-03-09 02:30:00 -04:00"
	}
	require.Equal(t, want, s.Next(inGap).Format(runLayout), "from %v", inGap)
	jump := time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC)
	require.Equal(t, "2026-03-08 03:00:00 -04:00", s.Next(jump.Add(-time.Nanosecond)).Format(runLayout))
	require.Equal(t, "2026-03-09 02:30:00 -04:00", s.Next(jump).Format(runLayout))
}

// TestDSTWildcardOnlyInGapNeverRuns: a wildcard job whose every time falls
// in New York's spring gap (02:00 and 02:30 on the second Sunday of March,
// days 8-14 that are Sundays) has no real instant: Next searches to the end
// of year 9999 and returns the zero Time. The same spec as a fixed-time job
// runs once a year at the jump.
func TestDSTWildcardOnlyInGapNeverRuns(t *testing.T) {
	ny := loadZone(t, "America/New_York")
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, ny)
	require.True(t, cron.MustParse("*/30 2 8-14 3 */7", cron.In(ny)).Next(from).IsZero())
	require.Equal(t, "2026-03-08 03:00:00 -04:00", cron.MustParse("30 2 8-14 3 */7", cron.In(ny)).Next(from).Format(runLayout))
}

// TestDSTRareSpecInGap: a spec that runs once in years still meets the gap
// rules when its day is the day of the gap: March 8th that is a Sunday is
// New York's spring-forward day (2026, 2037, 2043, ...).
func TestDSTRareSpecInGap(t *testing.T) {
	from := wallIn(t, "America/New_York", 2026, 6, 1, 0, 0, 0)
	require.Equal(t, []string{"2037-03-08 03:00:00 -04:00", "2043-03-08 03:00:00 -04:00"},
		runs(t, "30 2 8 3 */7", "America/New_York", from, 2))
	require.True(t, cron.MustParse("*/30 2 8 3 */7", cron.In(loadZone(t, "America/New_York"))).Next(from).IsZero(),
		"a wildcard job has no run in a gap")
	// The fall-back Sunday is November 1st to 7th: a fixed 01:30 on
	// November 1st that is a Sunday runs at the first occurrence.
	require.Equal(t, []string{"2026-11-01 01:30:00 -04:00", "2037-11-01 01:30:00 -04:00"},
		runs(t, "30 1 1 11 */7", "America/New_York", wallIn(t, "America/New_York", 2026, 1, 1, 0, 0, 0), 2))
}
