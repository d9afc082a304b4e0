package cron_test

import (
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cron"
	"github.com/stretchr/testify/require"
)

// The cases of Quartz's CronExpressionTest
// (quartz/src/test/java/org/quartz/CronExpressionTest.java), parsed with
// the Quartz option in UTC. Each case names its test method; where this
// package differs from Quartz, the case says why. Two tests have no
// counterpart: testQtz395_CopyConstructorMustPreserveTimeZone (a Schedule
// never changes, so there is no copy constructor) and the serialization
// tests of SerializationTestSupport.

// quartzSatisfied is Quartz's isSatisfiedBy for whole seconds: s runs at t.
func quartzSatisfied(s *cron.Schedule, t time.Time) bool {
	return s.Next(t.Add(-time.Second)).Equal(t)
}

func quartzParse(t *testing.T, spec string) *cron.Schedule {
	t.Helper()
	s, err := cron.Parse(spec, cron.Quartz(), cron.In(time.UTC))
	require.NoError(t, err, spec)
	return s
}

// TestQuartzIsSatisfiedBy ports testIsSatisfiedBy: the year field limits
// the runs to 2005.
func TestQuartzIsSatisfiedBy(t *testing.T) {
	s := quartzParse(t, "0 15 10 * * ? 2005")
	require.True(t, quartzSatisfied(s, time.Date(2005, 6, 1, 10, 15, 0, 0, time.UTC)))
	require.False(t, quartzSatisfied(s, time.Date(2006, 6, 1, 10, 15, 0, 0, time.UTC)))
	require.False(t, quartzSatisfied(s, time.Date(2005, 6, 1, 10, 16, 0, 0, time.UTC)))
	require.False(t, quartzSatisfied(s, time.Date(2005, 6, 1, 10, 14, 0, 0, time.UTC)))
	// After its last year the spec never runs again.
	require.True(t, s.Next(time.Date(2005, 12, 31, 10, 15, 0, 0, time.UTC)).IsZero())
}

// TestQuartzLastDayOffset ports testLastDayOffset: L-n and L-nW.
func TestQuartzLastDayOffset(t *testing.T) {
	for _, c := range []struct {
		spec      string
		yes, no   int // a day of October 2010 that runs, one that does not (0: none)
		quartzDoc string
	}{
		{"0 15 10 L-2 * ? 2010", 29, 28, "last day - 2"},
		{"0 15 10 L-5W * ? 2010", 26, 0, "last day - 5"},
		{"0 15 10 L-1 * ? 2010", 30, 0, "last day - 1"},
		{"0 15 10 L-1W * ? 2010", 29, 0, "nearest weekday to last day - 1 (29th is a friday in 2010)"},
	} {
		s := quartzParse(t, c.spec)
		require.True(t, quartzSatisfied(s, time.Date(2010, 10, c.yes, 10, 15, 0, 0, time.UTC)), c.spec+": "+c.quartzDoc)
		if c.no != 0 {
			require.False(t, quartzSatisfied(s, time.Date(2010, 10, c.no, 10, 15, 0, 0, time.UTC)), c.spec)
		}
	}
}

// TestQuartz571 ports testQuartz571: months by name, and a trailing space.
func TestQuartz571(t *testing.T) {
	s := quartzParse(t, "19 15 10 4 Apr ? ")
	require.Equal(t, "2027-04-04 10:15:19", s.Next(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)).Format(time.DateTime))
}

// TestQuartzQtz259 ports testQtz259 and testQtz259LW: L-2 and LW never
// give the same run twice in a row (Quartz's bug QTZ-259); here also each
// run is later than the one before and is the day it should be.
func TestQuartzQtz259(t *testing.T) {
	for spec, wantDay := range map[string]func(time.Time) int{
		"0 0 0 L-2 * ? *": func(t time.Time) int { return lastDay(t) - 2 },
		"0 0 0 LW * ? *": func(t time.Time) int {
			d := lastDay(t)
			for time.Date(t.Year(), t.Month(), d, 0, 0, 0, 0, time.UTC).Weekday()%6 == 0 {
				d--
			}
			return d
		},
	} {
		s := quartzParse(t, spec)
		prev := s.Next(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		for range 25 {
			next := s.Next(prev)
			require.True(t, next.After(prev), "%s: %v after %v", spec, next, prev)
			require.Equal(t, wantDay(next), next.Day(), "%s: %v", spec, next)
			prev = next
		}
	}
}

// lastDay returns the number of days in t's month.
func lastDay(t time.Time) int {
	return time.Date(t.Year(), t.Month()+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// TestQuartzRejected ports the tests that expect a ParseException:
// testQuartz574 (an unknown month), testQuartz621 (no '?' in either day
// field), testQuartz640 (L in a day-of-week list), testQtz96 (32W) and the
// six "...RangeIntervalAfterSlash" tests (a step larger than the
// field, or a '/' with no number after it). Each error names the
// field Quartz's message is about.
func TestQuartzRejected(t *testing.T) {
	for _, c := range []struct {
		method, spec, field string
	}{
		{"testQuartz574", "* * * * Foo ? ", "month"},
		{"testQuartz574", "* * * * Jan-Foo ? ", "month"},
		{"testQuartz621", "0 0 * * * *", "day-of-week"},
		{"testQuartz621", "0 0 * 4 * *", "day-of-week"},
		{"testQuartz621", "0 0 * * * 4", "day-of-week"},
		{"testQuartz640", "0 43 9 ? * SAT,SUN,L", "day-of-week"},
		{"testQuartz640", "0 43 9 ? * 6,7,L", "day-of-week"},
		{"testQtz96", "0/5 * * 32W 1 ?", "day-of-month"},
		{"testSecRangeIntervalAfterSlash", "/120 0 8-18 ? * 2-6", "second"},
		{"testSecRangeIntervalAfterSlash", "0/120 0 8-18 ? * 2-6", "second"},
		{"testSecRangeIntervalAfterSlash", "/ 0 8-18 ? * 2-6", "second"},
		{"testSecRangeIntervalAfterSlash", "0/ 0 8-18 ? * 2-6", "second"},
		{"testMinRangeIntervalAfterSlash", "0 /120 8-18 ? * 2-6", "minute"},
		{"testMinRangeIntervalAfterSlash", "0 0/120 8-18 ? * 2-6", "minute"},
		{"testMinRangeIntervalAfterSlash", "0 / 8-18 ? * 2-6", "minute"},
		{"testMinRangeIntervalAfterSlash", "0 0/ 8-18 ? * 2-6", "minute"},
		{"testHourRangeIntervalAfterSlash", "0 0 /120 ? * 2-6", "hour"},
		{"testHourRangeIntervalAfterSlash", "0 0 0/120 ? * 2-6", "hour"},
		{"testHourRangeIntervalAfterSlash", "0 0 / ? * 2-6", "hour"},
		{"testHourRangeIntervalAfterSlash", "0 0 0/ ? * 2-6", "hour"},
		{"testDayOfMonthRangeIntervalAfterSlash", "0 0 0 /120 * 2-6", "day-of-month"},
		{"testDayOfMonthRangeIntervalAfterSlash", "0 0 0 0/120 * 2-6", "day-of-month"},
		{"testDayOfMonthRangeIntervalAfterSlash", "0 0 0 / * 2-6", "day-of-month"},
		{"testDayOfMonthRangeIntervalAfterSlash", "0 0 0 0/ * 2-6", "day-of-month"},
		{"testMonthRangeIntervalAfterSlash", "0 0 0 ? /120 2-6", "month"},
		{"testMonthRangeIntervalAfterSlash", "0 0 0 ? 0/120 2-6", "month"},
		{"testMonthRangeIntervalAfterSlash", "0 0 0 ? / 2-6", "month"},
		{"testMonthRangeIntervalAfterSlash", "0 0 0 ? 0/ 2-6", "month"},
		{"testDayOfWeekRangeIntervalAfterSlash", "0 0 0 ? * /120", "day-of-week"},
		{"testDayOfWeekRangeIntervalAfterSlash", "0 0 0 ? * 0/120", "day-of-week"},
		{"testDayOfWeekRangeIntervalAfterSlash", "0 0 0 ? * /", "day-of-week"},
		{"testDayOfWeekRangeIntervalAfterSlash", "0 0 0 ? * 0/", "day-of-week"},
	} {
		_, err := cron.Parse(c.spec, cron.Quartz(), cron.In(time.UTC))
		require.ErrorIs(t, err, scheduler.ErrInvalidArgument, "%s %q", c.method, c.spec)
		require.ErrorContains(t, err, "cron: "+c.field+" field ", "%s %q", c.method, c.spec)
	}
}

// TestQuartz640LastInDayOfMonthList ports the first case of testQuartz640,
// where this package differs: Quartz rejects "1,5,29,L" ("Support for
// specifying 'L' and 'LW' with other days of the month is not
// implemented"), and this package accepts it, as Spring does ("1W,15,LW"
// in Spring's dayOfMonthListWithQuartz): the list means what each element
// means. The last case of testQuartz640, "5L", Quartz accepts too.
func TestQuartz640LastInDayOfMonthList(t *testing.T) {
	s := quartzParse(t, "0 43 9 1,5,29,L * ?")
	var got []string
	for next := time.Date(2026, 2, 1, 10, 0, 0, 0, time.UTC); len(got) < 6; {
		next = s.Next(next)
		got = append(got, next.Format(time.DateOnly))
	}
	require.Equal(t, []string{"2026-02-05", "2026-02-28", "2026-03-01", "2026-03-05", "2026-03-29", "2026-03-31"}, got)
	last := quartzParse(t, "0 43 9 ? * 5L") // Quartz numbers Thursday 5
	require.Equal(t, "Thu 2026-02-26 09:43", last.Next(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)).Format("Mon 2006-01-02 15:04"))
}

// TestQuartzDayOfWeekNumbering: in the Quartz dialect Sunday is 1 and
// Saturday 7, in plain values, ranges, nL and n#k, and names mean the
// same as in every dialect.
func TestQuartzDayOfWeekNumbering(t *testing.T) {
	from := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC) // a Monday
	first := func(spec string) string {
		return quartzParse(t, spec).Next(from).Format("Mon 2006-01-02")
	}
	require.Equal(t, "Sun 2026-06-07", first("0 0 0 ? * 1"))
	require.Equal(t, "Sat 2026-06-06", first("0 0 0 ? * 7"))
	require.Equal(t, "Sat 2026-06-06", first("0 0 0 ? * SAT"))
	require.Equal(t, "Tue 2026-06-02", first("0 0 0 ? * 3-5"))
	require.Equal(t, "Fri 2026-06-26", first("0 0 0 ? * 6L"))
	require.Equal(t, "Mon 2026-06-08", first("0 0 0 ? * 2#2"))
	require.Equal(t, "Mon 2026-06-08", first("0 0 0 ? * MON#2"))
	require.Equal(t, "Fri 2026-06-05", first("0 0 0 ? * 6 2026"))
	require.Equal(t, "Fri 2027-06-04", first("0 0 0 ? 6 6 2027"))
}

// TestQuartzWrappingRange: in the Quartz dialect a range whose end is
// before its start wraps around the field's end, as Quartz's
// CronExpression.addToSet does; a step continues across the wrap.
func TestQuartzWrappingRange(t *testing.T) {
	from := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC) // a Monday
	var hours []int
	s := quartzParse(t, "0 0 22-2 * * ?")
	for next := s.Next(from); next.Before(from.AddDate(0, 0, 1)); next = s.Next(next) {
		hours = append(hours, next.Hour())
	}
	require.Equal(t, []int{22, 23, 0, 1, 2}, hours)
	var days []string
	s = quartzParse(t, "0 0 0 ? * FRI-MON")
	for next := s.Next(from); next.Before(from.AddDate(0, 0, 7)); next = s.Next(next) {
		days = append(days, next.Format("Mon"))
	}
	require.Equal(t, []string{"Fri", "Sat", "Sun", "Mon"}, days)
	var seconds []int
	s = quartzParse(t, "50-10/5 0 12 * * ?")
	for next := s.Next(from.Add(-time.Second)); next.Before(from.Add(time.Minute)); next = s.Next(next) {
		seconds = append(seconds, next.Second())
	}
	require.Equal(t, []int{0, 5, 10, 50, 55}, seconds)
	_, err := cron.Parse("0 22-2 * * *", cron.In(time.UTC))
	require.ErrorContains(t, err, `range "22-2" runs backwards`, "the Unix dialect does not wrap")
}
