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
// and names the field, the column of the bad element and what is accepted.
func TestParseErrors(t *testing.T) {
	seconds := []cron.Option{cron.WithSeconds()}
	year := []cron.Option{cron.WithYear()}
	hash := []cron.Option{cron.WithHashKey("job")}
	cases := []struct {
		spec string
		opts []cron.Option
		want string // the error text, up to the wrapped ErrInvalidArgument
	}{
		{"61 * * * *", nil, `cron: minute field "61" at column 1: 61 is out of range 0-59`},
		{"* 24 * * *", nil, `cron: hour field "24" at column 3: 24 is out of range 0-23`},
		{"* * 0 * *", nil, `cron: day-of-month field "0" at column 5: 0 is out of range 1-31`},
		{"* * 32 * *", nil, `cron: day-of-month field "32" at column 5: 32 is out of range 1-31`},
		{"* * * 13 *", nil, `cron: month field "13" at column 7: 13 is out of range 1-12`},
		{"* * * * 8", nil, `cron: day-of-week field "8" at column 9: 8 is out of range 0-7`},
		{"* * * FOO *", nil, `cron: month field "FOO" at column 7: "FOO" is neither a number nor a name JAN-DEC (want *, 1-12 or JAN-DEC, a-b, a/n, a-b/n)`},
		{"* * * * MONDAY", nil, `cron: day-of-week field "MONDAY" at column 9: "MONDAY" is neither a number nor a name SUN-SAT (want *, ?, 0-7 (0 and 7 are Sunday) or SUN-SAT, a-b, a/n, a-b/n, dL, d#k)`},
		{"x * * * *", nil, `cron: minute field "x" at column 1: "x" is not a number (want *, 0-59, a-b, a/n, a-b/n)`},
		{"x * * * *", hash, `cron: minute field "x" at column 1: "x" is not a number (want *, 0-59, a-b, a/n, a-b/n, H, H(a-b), H/n, H(a-b)/n)`},
		{"-1 * * * *", nil, `cron: minute field "-1" at column 1: "" is not a number (want *, 0-59, a-b, a/n, a-b/n)`},
		{"5-1 * * * *", nil, `cron: minute field "5-1" at column 1: range "5-1" runs backwards (want a-b with a <= b)`},
		{"0 0 * * 5-1", nil, `cron: day-of-week field "5-1" at column 9: range "5-1" runs backwards (want a-b with a <= b)`},
		{"*/0 * * * *", nil, `cron: minute field "*/0" at column 3: step "0" is not a number in 1-60`},
		{"*/61 * * * *", nil, `cron: minute field "*/61" at column 3: step "61" is not a number in 1-60`},
		{"1-5/x * * * *", nil, `cron: minute field "1-5/x" at column 5: step "x" is not a number in 1-60`},
		{"1,,2 * * * *", nil, `cron: minute field "1,,2" at column 3: empty list element`},
		{"1, * * * *", nil, `cron: minute field "1," at column 3: empty list element`},
		{"0,61 * * * *", nil, `cron: minute field "0,61" at column 3: 61 is out of range 0-59`},
		{"60 * * * * *", seconds, `cron: second field "60" at column 1: 60 is out of range 0-59`},

		// Quartz's and Spring's day forms, written wrong.
		{"? * * * *", nil, `cron: minute field "?" at column 1: ? is accepted only in day-of-month and day-of-week (want *, 0-59, a-b, a/n, a-b/n)`},
		{"0 0 L-31 * *", nil, `cron: day-of-month field "L-31" at column 5: "L-31" is not a last-day form (want L, L-n, LW or L-nW, n in 0-30)`},
		{"0 0 L/2 * *", nil, `cron: day-of-month field "L/2" at column 5: "L/2" is not a last-day form (want L, L-n, LW or L-nW, n in 0-30)`},
		{"0 0 32W * *", nil, `cron: day-of-month field "32W" at column 5: 32 is out of range 1-31 before W (want dW, the weekday nearest day d, d in 1-31)`},
		{"0 0 1-5W * *", nil, `cron: day-of-month field "1-5W" at column 5: "1-5" is not a number before W (want dW, the weekday nearest day d, d in 1-31)`},
		{"0 0 * * 5#6", nil, `cron: day-of-week field "5#6" at column 11: "6" after # is not a number in 1-5 (want d#k, the k-th weekday d of the month)`},
		{"0 0 * * FOO#1", nil, `cron: day-of-week field "FOO#1" at column 9: "FOO" is neither a number nor a name SUN-SAT before # (want d#k, the k-th weekday d of the month)`},
		{"0 0 * * 8L", nil, `cron: day-of-week field "8L" at column 9: 8 is out of range 0-7 before L (want dL, the last weekday d of the month)`},
		{"0 0 * * L", nil, `cron: day-of-week field "L" at column 9: "L" is neither a number nor a name SUN-SAT (want *, ?, 0-7 (0 and 7 are Sunday) or SUN-SAT, a-b, a/n, a-b/n, dL, d#k)`},

		// Jenkins's H.
		{"H * * * *", nil, `cron: minute field "H" at column 1: H needs a key to hash: pass WithHashKey (Jenkins hashes the job's name)`},
		{"H(0-61) * * * *", hash, `cron: minute field "H(0-61)" at column 5: 61 is out of range 0-59 in H(a-b) (want H, H(a-b), H/n or H(a-b)/n)`},
		{"H(5-1) * * * *", hash, `cron: minute field "H(5-1)" at column 1: range "5-1" runs backwards (want a-b with a <= b)`},
		{"H/61 * * * *", hash, `cron: minute field "H/61" at column 3: step "61" is not a number in 1-60`},
		{"H(3) * * * *", hash, `cron: minute field "H(3)" at column 1: "H(3)" has no range a-b in parentheses (want H, H(a-b), H/n or H(a-b)/n)`},
		{"Hx * * * *", hash, `cron: minute field "Hx" at column 1: "Hx" is not an H form (want H, H(a-b), H/n or H(a-b)/n)`},
		{"0 0 1 1 * H", append(year, hash...), `cron: year field "H" at column 11: H is not accepted in the year field (want *, 1970-2199, a-b, a/n, a-b/n)`},

		// The year field and the dialects.
		{"0 0 1 1 * 1969", year, `cron: year field "1969" at column 11: 1969 is out of range 1970-2199`},
		{"0 0 1 1 * 2200", year, `cron: year field "2200" at column 11: 2200 is out of range 1970-2199`},
		{"0 0 1 1 * 2030 x", year, `cron: spec "0 0 1 1 * 2030 x": 7 fields, want 5 or 6 (minute hour day-of-month month day-of-week [year])`},
		{"0 0 12 * * *", []cron.Option{cron.Quartz()}, `cron: day-of-week field "*" at column 12: Quartz wants ? in exactly one of day-of-month "*" and day-of-week "*"`},
		{"0 0 12 ? * ?", []cron.Option{cron.Quartz()}, `cron: day-of-week field "?" at column 12: Quartz wants ? in exactly one of day-of-month "?" and day-of-week "?"`},
		{"0 0 12 ? * 0", []cron.Option{cron.Quartz()}, `cron: day-of-week field "0" at column 12: 0 is out of range 1-7`},
		{"0 0 12 ? * MONDAY", []cron.Option{cron.Quartz()}, `cron: day-of-week field "MONDAY" at column 12: "MONDAY" is neither a number nor a name SUN-SAT (want *, ?, 1-7 (1 is Sunday) or SUN-SAT, a-b, a/n, a-b/n, dL, d#k)`},
		{"0 0 12 * * * *", []cron.Option{cron.Spring()}, `cron: spec "0 0 12 * * * *": 7 fields, want 6 (second minute hour day-of-month month day-of-week)`},

		// The spec as a whole.
		{"* * * *", nil, `cron: spec "* * * *": 4 fields, want 5 (minute hour day-of-month month day-of-week)`},
		{"* * * * * *", nil, `cron: spec "* * * * * *": 6 fields, want 5 (minute hour day-of-month month day-of-week)`},
		{"* * * * *", seconds, `cron: spec "* * * * *": 5 fields, want 6 (second minute hour day-of-month month day-of-week)`},
		{"", nil, `cron: spec "": 0 fields, want 5 (minute hour day-of-month month day-of-week)`},
		{"@every x", nil, `cron: spec "@every x": @every "x" is not a duration (want a Go duration such as 90s, 15m or 1h30m)`},
		{"@every", nil, `cron: spec "@every": @every "" is not a duration (want a Go duration such as 90s, 15m or 1h30m)`},
		{"@every 500ms", nil, `cron: spec "@every 500ms": @every 500ms is under one second, the resolution of a schedule (want 1s or more)`},
		{"@every -1h", nil, `cron: spec "@every -1h": @every -1h0m0s is under one second, the resolution of a schedule (want 1s or more)`},
		{"@reboot", nil, `cron: spec "@reboot": unknown descriptor "@reboot" (want @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or @every <duration>)`},
		{"CRON_TZ=Mars/Olympus 0 0 * * *", nil, `cron: time zone "Mars/Olympus" at column 9: unknown time zone Mars/Olympus (want an IANA zone name such as Europe/Berlin)`},
		{"TZ= 0 0 * * *", nil, `cron: spec "TZ= 0 0 * * *": TZ= with no zone name`},
		{"CRON_TZ=UTC", nil, `cron: spec "CRON_TZ=UTC": 0 fields, want 5 (minute hour day-of-month month day-of-week)`},
		{"CRON_TZ=UTC 0,x 0 * * *", nil, `cron: minute field "0,x" at column 15: "x" is not a number (want *, 0-59, a-b, a/n, a-b/n)`},

		// Specs that can never run.
		{"0 0 30 2 *", nil, `cron: day-of-month field "30" at column 5: no such day in month field "2", the schedule would never run`},
		{"0 0 31 4,6,9,11 *", nil, `cron: day-of-month field "31" at column 5: no such day in month field "4,6,9,11", the schedule would never run`},
		{"0 0 30,31 FEB *", nil, `cron: day-of-month field "30,31" at column 5: no such day in month field "FEB", the schedule would never run`},
		{"0 0 31 APR-JUN/2 *", nil, `cron: day-of-month field "31" at column 5: no such day in month field "APR-JUN/2", the schedule would never run`},
		{"0 0 31 4 */2", nil, `cron: day-of-month field "31" at column 5: no such day in month field "4", the schedule would never run`},
		{"0 0 0 30 2 *", seconds, `cron: day-of-month field "30" at column 7: no such day in month field "2", the schedule would never run`},
		{"0 0 31W 2 *", nil, `cron: day-of-month field "31W" at column 5: no such day in month field "2", the schedule would never run`},
		{"0 0 L-30 2 *", nil, `cron: day-of-month field "L-30" at column 5: no such day in month field "2", the schedule would never run`},
		{"0 0 29 2 * 2100", year, `cron: day-of-month field "29" at column 5: no such day in month field "2" and year field "2100", the schedule would never run`},
		{"0 0 * 2 5#5 2026-2027", year, `cron: day-of-week field "5#5" at column 9: no day matches both it and day-of-month "*" in month field "2" and year field "2026-2027", the schedule would never run`},
		{"0 0 0 31 2 MON", []cron.Option{cron.Spring()}, `cron: day-of-month field "31" at column 7: no such day in month field "2", the schedule would never run`},
		{"0 0 0 13 2 FRI 2027", []cron.Option{cron.Spring(), cron.WithYear()}, `cron: day-of-week field "FRI" at column 12: no day matches both it and day-of-month "13" in month field "2" and year field "2027", the schedule would never run`},
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			s, err := cron.Parse(c.spec, append(c.opts, cron.In(time.UTC))...)
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
	// An empty hash key would hash every job alike: refused, with H in the
	// spec or not, and in every dialect.
	for _, c := range []struct {
		spec string
		opts []cron.Option
	}{
		{"H H * * *", nil}, {"0 0 * * *", nil}, {"H H H ? * *", []cron.Option{cron.Quartz()}}, {"0 H * * * *", []cron.Option{cron.Spring()}},
	} {
		_, err = cron.Parse(c.spec, append(c.opts, cron.WithHashKey(""), cron.In(time.UTC))...)
		require.ErrorIs(t, err, scheduler.ErrInvalidArgument, c.spec)
		require.EqualError(t, err, `cron: WithHashKey(""): an empty key hashes every job alike; pass the job's name, as Jenkins does: scheduler: invalid argument`, c.spec)
	}

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
