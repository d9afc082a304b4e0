package cron_test

import (
	"errors"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cron"
	"github.com/stretchr/testify/require"
)

// TestParseErrors: every bad spec is an error that wraps ErrInvalidArgument
// and names what is wrong.
func TestParseErrors(t *testing.T) {
	cases := []struct {
		spec    string
		seconds bool
		want    string // the error text, up to the wrapped ErrInvalidArgument
	}{
		{"61 * * * *", false, `cron: minute field "61": 61 is out of range 0-59`},
		{"* 24 * * *", false, `cron: hour field "24": 24 is out of range 0-23`},
		{"* * 0 * *", false, `cron: day-of-month field "0": 0 is out of range 1-31`},
		{"* * 32 * *", false, `cron: day-of-month field "32": 32 is out of range 1-31`},
		{"* * * 13 *", false, `cron: month field "13": 13 is out of range 1-12`},
		{"* * * * 8", false, `cron: day-of-week field "8": 8 is out of range 0-7`},
		{"* * * FOO *", false, `cron: month field "FOO": "FOO" is neither a number nor a name JAN-DEC`},
		{"* * * * MONDAY", false, `cron: day-of-week field "MONDAY": "MONDAY" is neither a number nor a name SUN-SAT`},
		{"x * * * *", false, `cron: minute field "x": "x" is not a number`},
		{"-1 * * * *", false, `cron: minute field "-1": "" is not a number`},
		{"5-1 * * * *", false, `cron: minute field "5-1": range "5-1" runs backwards`},
		{"*/0 * * * *", false, `cron: minute field "*/0": step "0" is not a number in 1-60`},
		{"*/61 * * * *", false, `cron: minute field "*/61": step "61" is not a number in 1-60`},
		{"1-5/x * * * *", false, `cron: minute field "1-5/x": step "x" is not a number in 1-60`},
		{"1,,2 * * * *", false, `cron: minute field "1,,2": empty list element`},
		{"1, * * * *", false, `cron: minute field "1,": empty list element`},
		{"0 0 ? * *", false, `cron: day-of-month field "?": "?" is not a number`},
		{"0 0 L * *", false, `cron: day-of-month field "L": "L" is not a number`},
		{"0 0 * * 5#3", false, `cron: day-of-week field "5#3": "5#3" is neither a number nor a name SUN-SAT`},
		{"60 * * * * *", true, `cron: second field "60": 60 is out of range 0-59`},
		{"* * * *", false, `cron: spec "* * * *": 4 fields, want 5 (minute hour day-of-month month day-of-week)`},
		{"* * * * * *", false, `cron: spec "* * * * * *": 6 fields, want 5 (minute hour day-of-month month day-of-week)`},
		{"* * * * *", true, `cron: spec "* * * * *": 5 fields, want 6 (second minute hour day-of-month month day-of-week)`},
		{"", false, `cron: spec "": 0 fields, want 5 (minute hour day-of-month month day-of-week)`},
		{"@every 1h", false, `cron: spec "@every 1h": unknown descriptor "@every 1h" (want @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly)`},
		{"@reboot", false, `cron: spec "@reboot": unknown descriptor "@reboot" (want @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly)`},
		{"CRON_TZ=Mars/Olympus 0 0 * * *", false, `cron: time zone "Mars/Olympus": unknown time zone Mars/Olympus`},
		{"TZ= 0 0 * * *", false, `cron: spec "TZ= 0 0 * * *": TZ= with no zone name`},
		{"CRON_TZ=UTC", false, `cron: spec "CRON_TZ=UTC": 0 fields, want 5 (minute hour day-of-month month day-of-week)`},
		// Specs that can never run.
		{"0 0 30 2 *", false, `cron: day-of-month field "30": no such day in month field "2", the schedule would never run`},
		{"0 0 31 4,6,9,11 *", false, `cron: day-of-month field "31": no such day in month field "4,6,9,11", the schedule would never run`},
		{"0 0 30,31 FEB *", false, `cron: day-of-month field "30,31": no such day in month field "FEB", the schedule would never run`},
		{"0 0 31 APR-JUN/2 *", false, `cron: day-of-month field "31": no such day in month field "APR-JUN/2", the schedule would never run`},
		{"0 0 31 4 */2", false, `cron: day-of-month field "31": no such day in month field "4", the schedule would never run`},
		{"0 0 0 30 2 *", true, `cron: day-of-month field "30": no such day in month field "2", the schedule would never run`},
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			opts := []cron.Option{cron.In(time.UTC)}
			if c.seconds {
				opts = append(opts, cron.WithSeconds())
			}
			s, err := cron.Parse(c.spec, opts...)
			require.Nil(t, s)
			require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
			require.Equal(t, c.want+": "+scheduler.ErrInvalidArgument.Error(), err.Error())
		})
	}
}

// TestParseRareButValid: specs that run seldom are accepted.
func TestParseRareButValid(t *testing.T) {
	for _, spec := range []string{
		"0 0 29 2 *",   // leap years
		"0 0 31 2 MON", // both day fields restricted: any Monday in February
		"0 0 30 2 FRI", // the same
		"0 0 */30 2 *", // days 1 and 31: February 1st
		"0 0 29 2 */7", // February 29th that is a Sunday
		"0 0 31 * *",   // seven months have a 31st
		"0 0 1-31 2 *", // every day of February
	} {
		_, err := cron.Parse(spec, cron.In(time.UTC))
		require.NoError(t, err, spec)
	}
}

// TestParseOptions: In(nil) and a nil Option are errors; In sets the zone;
// a CRON_TZ= or TZ= prefix overrides it; String returns the spec as given.
func TestParseOptions(t *testing.T) {
	_, err := cron.Parse("* * * * *", cron.In(nil))
	require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
	require.Contains(t, err.Error(), "In(nil)")
	_, err = cron.Parse("* * * * *", nil)
	require.ErrorIs(t, err, scheduler.ErrInvalidArgument)

	from := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	tokyo := loadZone(t, "Asia/Tokyo")
	for spec, wantZone := range map[string]string{
		"0 3 * * *":                          "Asia/Tokyo",
		"CRON_TZ=Europe/Berlin 0 3 * * *":    "Europe/Berlin",
		"TZ=America/New_York 0 3 * * *":      "America/New_York",
		"  CRON_TZ=UTC\t0 3 * * *  ":         "UTC",
		"TZ=Australia/Lord_Howe  @daily":     "Australia/Lord_Howe",
		"CRON_TZ=Asia/Kolkata 0 0 3 * * *":   "",
		"CRON_TZ=Asia/Kolkata @hourly extra": "",
	} {
		s, err := cron.Parse(spec, cron.In(tokyo))
		if wantZone == "" {
			require.ErrorIs(t, err, scheduler.ErrInvalidArgument, spec)
			continue
		}
		require.NoError(t, err, spec)
		require.Equal(t, spec, s.String())
		next := s.Next(from)
		require.Equal(t, wantZone, next.Location().String(), spec)
		require.Zero(t, next.Minute(), spec)
	}
	require.Equal(t, "Local", cron.MustParse("@daily").Next(from).Location().String(), "default zone")
}

// TestParseSyntax: each form of a field selects the values it should; the
// runs of one day in UTC show them.
func TestParseSyntax(t *testing.T) {
	day := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC) // a Monday
	minutesOfHour := func(spec string, opts ...cron.Option) []int {
		s, err := cron.Parse(spec, append(opts, cron.In(time.UTC))...)
		require.NoError(t, err, spec)
		var got []int
		for next := s.Next(day.Add(-time.Second)); next.Before(day.Add(time.Hour)); next = s.Next(next) {
			got = append(got, next.Minute())
		}
		return got
	}
	require.Equal(t, []int{0, 15, 30, 45}, minutesOfHour("*/15 * * * *"))
	require.Equal(t, []int{1, 6, 11, 16, 21, 26}, minutesOfHour("1-30/5 * * * *"))
	require.Equal(t, []int{5, 15, 25, 35, 45, 55}, minutesOfHour("5/10 * * * *"), "a/n is a-max/n")
	require.Equal(t, []int{0, 7, 8, 9, 30, 58}, minutesOfHour("0,7-9,30,58 * * * *"))
	require.Equal(t, []int{7}, minutesOfHour("07 * * * *"))
	require.Equal(t, []int{0}, minutesOfHour("*/60 * * * *"))
	require.Len(t, minutesOfHour("* * * * *"), 60)
	require.Len(t, minutesOfHour("*/20 * * * * *", cron.WithSeconds()), 180)

	// Names, in any case, in lists and ranges; 7 and 0 are Sunday.
	daysOf := func(spec string) []string {
		s := cron.MustParse(spec, cron.In(time.UTC))
		var got []string
		for next := s.Next(day.Add(-time.Second)); next.Before(day.AddDate(0, 0, 14)); next = s.Next(next) {
			got = append(got, next.Format("Mon 2"))
		}
		return got
	}
	require.Equal(t, []string{"Sat 6", "Sun 7", "Sat 13", "Sun 14"}, daysOf("0 0 * * sat-7"))
	require.Equal(t, []string{"Sun 7", "Sun 14"}, daysOf("0 0 * * 0"))
	require.Equal(t, []string{"Sun 7", "Sun 14"}, daysOf("0 0 * * 7"))
	require.Equal(t, []string{"Mon 1", "Wed 3", "Fri 5", "Mon 8", "Wed 10", "Fri 12"}, daysOf("0 0 * * Mon-FRI/2"))
	require.Equal(t, []string{"Mon 1", "Fri 5", "Mon 8", "Fri 12"}, daysOf("0 0 * * MON,fri"))
	require.Equal(t, []string{"Mon 1", "Mon 8"}, daysOf("0 0 * JUN mon"))
	require.Empty(t, daysOf("0 0 * jan-may,jul-DEC *"))
}

// TestDescriptors: each descriptor is its five-field equivalent, and is a
// fixed-time job except @hourly.
func TestDescriptors(t *testing.T) {
	from := time.Date(2026, 3, 7, 12, 34, 0, 0, time.UTC)
	for descriptor, std := range map[string]string{
		"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
		"@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *", "@DAILY": "0 0 * * *",
	} {
		d, s := cron.MustParse(descriptor, cron.In(time.UTC)), cron.MustParse(std, cron.In(time.UTC))
		a, b := from, from
		for range 5 {
			a, b = d.Next(a), s.Next(b)
			require.Equal(t, b, a, descriptor)
		}
		withSeconds := cron.MustParse(descriptor, cron.In(time.UTC), cron.WithSeconds())
		require.Equal(t, s.Next(from), withSeconds.Next(from), descriptor+" with seconds")
	}
}

// TestMustParse panics with Parse's error.
func TestMustParse(t *testing.T) {
	require.NotNil(t, cron.MustParse("@daily"))
	defer func() {
		err, ok := recover().(error)
		require.True(t, ok)
		require.True(t, errors.Is(err, scheduler.ErrInvalidArgument))
		require.Contains(t, err.Error(), `minute field "61"`)
	}()
	cron.MustParse("61 * * * *")
	t.Fatal("MustParse did not panic")
}
