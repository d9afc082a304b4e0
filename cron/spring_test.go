package cron_test

import (
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cron"
	"github.com/stretchr/testify/require"
)

// The cases of Spring Framework's CronExpressionTests
// (spring-context/src/test/java/org/springframework/scheduling/support/
// CronExpressionTests.java), parsed with the Spring option. Each case
// names its test method. Spring's tests start from LocalDateTime.now()
// with some fields set; here the other fields are fixed (2026, and a time
// of day of 10:20:30 where the test leaves it to the clock), in UTC, which
// a LocalDateTime stands for. Where this package differs from Spring, the
// case says why in note.

// springCase is one ported case: Next from from must give wants in turn.
type springCase struct {
	method string // the test method of CronExpressionTests
	spec   string
	from   string // time.DateTime in UTC, or with an offset in zone
	zone   string // "" for UTC
	wants  []string
	note   string // why this package differs from Spring, if it does
}

// springLayout is how the cases write times without a zone.
const springLayout = time.DateTime

func TestSpringCronExpressionTests(t *testing.T) {
	cases := []springCase{
		{method: "matchAll", spec: "* * * * * *", from: "2026-06-15 10:20:30", wants: []string{"2026-06-15 10:20:31"}},
		{method: "matchLastSecond", spec: "* * * * * *", from: "2026-06-15 10:20:58", wants: []string{"2026-06-15 10:20:59"}},
		{method: "matchSpecificSecond", spec: "10 * * * * *", from: "2026-06-15 10:20:09", wants: []string{"2026-06-15 10:20:10"}},
		{method: "incrementSecondByOne", spec: "11 * * * * *", from: "2026-06-15 10:20:10", wants: []string{"2026-06-15 10:20:11"}},
		{method: "incrementSecondAndRollover", spec: "10 * * * * *", from: "2026-06-15 10:20:11", wants: []string{"2026-06-15 10:21:10"}},
		{method: "secondRange", spec: "10-15 * * * * *", from: "2026-06-15 10:20:09",
			wants: []string{"2026-06-15 10:20:10", "2026-06-15 10:20:11", "2026-06-15 10:20:12", "2026-06-15 10:20:13", "2026-06-15 10:20:14", "2026-06-15 10:20:15"}},
		{method: "incrementMinute", spec: "0 * * * * *", from: "2026-06-15 10:10:30", wants: []string{"2026-06-15 10:11:00", "2026-06-15 10:12:00"}},
		{method: "incrementMinuteByOne", spec: "0 11 * * * *", from: "2026-06-15 10:10:30", wants: []string{"2026-06-15 10:11:00"}},
		{method: "incrementMinuteAndRollover", spec: "0 10 * * * *", from: "2026-06-15 10:11:00", wants: []string{"2026-06-15 11:10:00"}},
		{method: "incrementHour", spec: "0 0 * * * *", from: "2026-10-30 11:01:00", wants: []string{"2026-10-30 12:00:00", "2026-10-30 13:00:00"}},
		{method: "incrementHourAndRollover", spec: "0 0 * * * *", from: "2026-09-10 23:01:00", wants: []string{"2026-09-11 00:00:00"}},
		{method: "incrementDayOfMonth", spec: "0 0 0 * * *", from: "2026-06-01 10:20:30", wants: []string{"2026-06-02 00:00:00", "2026-06-03 00:00:00"}},
		{method: "incrementDayOfMonthByOne", spec: "* * * 10 * *", from: "2026-06-09 10:20:30", wants: []string{"2026-06-10 00:00:00"}},
		{method: "incrementDayOfMonthAndRollover", spec: "* * * 10 * *", from: "2026-06-11 10:20:30", wants: []string{"2026-07-10 00:00:00"}},
		{method: "dailyTriggerInShortMonth", spec: "0 0 0 * * *", from: "2026-09-30 10:20:30", wants: []string{"2026-10-01 00:00:00", "2026-10-02 00:00:00"}},
		{method: "dailyTriggerInLongMonth", spec: "0 0 0 * * *", from: "2026-08-30 10:20:30", wants: []string{"2026-08-31 00:00:00", "2026-09-01 00:00:00"}},
		{method: "dailyTriggerOnDaylightSavingBoundary", spec: "0 0 0 * * *", zone: "CET", from: "2021-10-30 10:20:30 +02:00",
			wants: []string{"2021-10-31 00:00:00 +02:00", "2021-11-01 00:00:00 +01:00"}}, // 2021: clocks go back on October 31st
		{method: "incrementMonth", spec: "0 0 0 1 * *", from: "2026-10-30 10:20:30", wants: []string{"2026-11-01 00:00:00", "2026-12-01 00:00:00"}},
		{method: "incrementMonthAndRollover", spec: "0 0 0 1 * *", from: "2010-12-31 10:20:30", wants: []string{"2011-01-01 00:00:00", "2011-02-01 00:00:00"}},
		{method: "monthlyTriggerInLongMonth", spec: "0 0 0 31 * *", from: "2026-10-30 10:20:30", wants: []string{"2026-10-31 00:00:00"}},
		{method: "monthlyTriggerInShortMonth", spec: "0 0 0 1 * *", from: "2026-10-30 10:20:30", wants: []string{"2026-11-01 00:00:00"}},
		{method: "incrementDayOfWeekByOne", spec: "* * * * * 2", from: "2026-06-15 10:20:30", wants: []string{"2026-06-16 00:00:00"}},       // a Monday
		{method: "incrementDayOfWeekAndRollover", spec: "* * * * * 2", from: "2026-06-17 10:20:30", wants: []string{"2026-06-23 00:00:00"}}, // a Wednesday
		{method: "specificMinuteSecond", spec: "55 5 * * * *", from: "2026-06-15 10:04:54", wants: []string{"2026-06-15 10:05:55", "2026-06-15 11:05:55"}},
		{method: "specificHourSecond", spec: "55 * 10 * * *", from: "2026-06-15 09:20:54", wants: []string{"2026-06-15 10:00:55", "2026-06-15 10:01:55"}},
		{method: "specificMinuteHour", spec: "* 5 10 * * *", from: "2026-06-15 09:04:30", wants: []string{"2026-06-15 10:05:00", "2026-06-15 10:05:01"}},
		{method: "specificDayOfMonthSecond", spec: "55 * * 3 * *", from: "2026-06-02 10:20:54", wants: []string{"2026-06-03 00:00:55", "2026-06-03 00:01:55"}},
		{method: "specificDate", spec: "* * * 3 11 *", from: "2026-10-02 10:20:30", wants: []string{"2026-11-03 00:00:00", "2026-11-03 00:00:01"}},
		{method: "leapYearSpecificDate", spec: "0 0 0 29 2 *", from: "2007-02-10 10:20:30", wants: []string{"2008-02-29 00:00:00", "2012-02-29 00:00:00"}},
		{method: "weekDaySequence", spec: "0 0 7 ? * MON-FRI", from: "2009-09-26 10:20:30", wants: []string{"2009-09-28 07:00:00", "2009-09-29 07:00:00", "2009-09-30 07:00:00"}},
		{method: "monthSequence", spec: "0 30 23 30 1/3 ?", from: "2010-12-30 10:20:30", wants: []string{"2011-01-30 23:30:00", "2011-04-30 23:30:00", "2011-07-30 23:30:00"}},
		// Spring asserts only that the run is a Wednesday the 29th; the
		// day fields must both match, so it is the next such February 29th.
		{method: "fixedDays", spec: "0 0 0 29 2 WED", from: "2012-02-29 01:00:00", wants: []string{"2040-02-29 00:00:00"}},
		// Spring asserts Friday the 13th twice; these are the next two.
		{method: "friday13th", spec: "0 0 0 13 * FRI", from: "2018-07-31 11:47:14", wants: []string{"2019-09-13 00:00:00", "2019-12-13 00:00:00"}},
		{method: "everyTenDays", spec: "0 15 12 */10 1-8 5", from: "2021-04-30 12:14:59", wants: []string{"2021-05-21 12:15:00", "2021-06-11 12:15:00", "2022-01-21 12:15:00"}},
		{method: "yearly", spec: "@yearly", from: "2026-10-10 10:20:30", wants: []string{"2027-01-01 00:00:00", "2028-01-01 00:00:00", "2029-01-01 00:00:00"}},
		{method: "annually", spec: "@annually", from: "2026-10-10 10:20:30", wants: []string{"2027-01-01 00:00:00"}},
		{method: "monthly", spec: "@monthly", from: "2026-10-10 10:20:30", wants: []string{"2026-11-01 00:00:00", "2026-12-01 00:00:00", "2027-01-01 00:00:00"}},
		{method: "weekly", spec: "@weekly", from: "2026-06-17 10:20:30", wants: []string{"2026-06-21 00:00:00", "2026-06-28 00:00:00", "2026-07-05 00:00:00"}},
		{method: "daily", spec: "@daily", from: "2026-06-17 10:20:30", wants: []string{"2026-06-18 00:00:00", "2026-06-19 00:00:00", "2026-06-20 00:00:00"}},
		{method: "midnight", spec: "@midnight", from: "2026-06-17 10:20:30", wants: []string{"2026-06-18 00:00:00"}},
		{method: "hourly", spec: "@hourly", from: "2026-06-17 10:20:30", wants: []string{"2026-06-17 11:00:00", "2026-06-17 12:00:00", "2026-06-17 13:00:00"}},
		{method: "quartzLastDayOfMonth", spec: "0 0 0 L * *", from: "2008-01-04 10:20:30",
			wants: []string{"2008-01-31 00:00:00", "2008-02-29 00:00:00", "2008-03-31 00:00:00", "2008-04-30 00:00:00"}},
		{method: "quartzLastDayOfMonthOffset", spec: "0 0 0 L-3 * *", from: "2008-01-04 10:20:30",
			wants: []string{"2008-01-28 00:00:00", "2008-02-26 00:00:00", "2008-03-28 00:00:00", "2008-04-27 00:00:00"}},
		{method: "quartzLastWeekdayOfMonth", spec: "0 0 0 LW * *", from: "2008-01-04 10:20:30",
			wants: []string{"2008-01-31 00:00:00", "2008-02-29 00:00:00", "2008-03-31 00:00:00", "2008-04-30 00:00:00", "2008-05-30 00:00:00", "2008-06-30 00:00:00",
				"2008-07-31 00:00:00", "2008-08-29 00:00:00", "2008-09-30 00:00:00", "2008-10-31 00:00:00", "2008-11-28 00:00:00", "2008-12-31 00:00:00"}},
		{method: "quartzLastDayOfWeekOffset", spec: "0 0 0 * * 5L", from: "2008-01-04 10:20:30",
			wants: []string{"2008-01-25 00:00:00", "2008-02-29 00:00:00", "2008-03-28 00:00:00", "2008-04-25 00:00:00", "2008-05-30 00:00:00", "2008-06-27 00:00:00",
				"2008-07-25 00:00:00", "2008-08-29 00:00:00", "2008-09-26 00:00:00", "2008-10-31 00:00:00", "2008-11-28 00:00:00", "2008-12-26 00:00:00"}},
		{method: "quartzWeekdayNearestTo15", spec: "0 0 0 15W * ?", from: "2020-01-01 00:00:00",
			wants: []string{"2020-01-15 00:00:00", "2020-02-14 00:00:00", "2020-03-16 00:00:00", "2020-04-15 00:00:00"}},
		{method: "quartzWeekdayNearestTo1", spec: "0 0 0 1W * ?", from: "2019-12-31 00:00:00",
			wants: []string{"2020-01-01 00:00:00", "2020-02-03 00:00:00", "2020-03-02 00:00:00", "2020-04-01 00:00:00"}},
		{method: "quartzWeekdayNearestTo1 (Saturday the 1st)", spec: "0 0 0 1W * ?", from: "2022-01-01 00:00:00", wants: []string{"2022-01-03 00:00:00"}},
		{method: "quartzWeekdayNearestTo1 (Sunday the 1st)", spec: "0 0 0 1W * ?", from: "2021-08-01 00:00:00", wants: []string{"2021-08-02 00:00:00"}},
		{method: "quartzWeekdayNearestTo31", spec: "0 0 0 31W * ?", from: "2020-01-01 00:00:00",
			wants: []string{"2020-01-31 00:00:00", "2020-03-31 00:00:00", "2020-05-29 00:00:00", "2020-07-31 00:00:00", "2020-08-31 00:00:00", "2020-10-30 00:00:00", "2020-12-31 00:00:00"},
			note: "Spring has no run in May 2020, whose 31st is a Sunday: its adjuster moves to Monday June 1st and then rejects it. " +
				"Quartz's W never leaves the month, so the weekday nearest May 31st is Friday May 29th, as here."},
		{method: "quartz2ndFridayOfTheMonth", spec: "0 0 0 ? * 5#2", from: "2020-01-01 00:00:00",
			wants: []string{"2020-01-10 00:00:00", "2020-02-14 00:00:00", "2020-03-13 00:00:00", "2020-04-10 00:00:00"}},
		{method: "quartz2ndFridayOfTheMonthDayName", spec: "0 0 0 ? * FRI#2", from: "2020-01-01 00:00:00",
			wants: []string{"2020-01-10 00:00:00", "2020-02-14 00:00:00", "2020-03-13 00:00:00", "2020-04-10 00:00:00"}},
		{method: "quartzFifthWednesdayOfTheMonth", spec: "0 0 0 ? * 3#5", from: "2020-01-01 00:00:00",
			wants: []string{"2020-01-29 00:00:00", "2020-04-29 00:00:00", "2020-07-29 00:00:00", "2020-09-30 00:00:00", "2020-12-30 00:00:00"}},
		{method: "dayOfMonthListWithQuartz", spec: "0 0 0 1W,15,LW * ?", from: "2019-12-30 00:00:00",
			wants: []string{"2019-12-31 00:00:00", "2020-01-01 00:00:00", "2020-01-15 00:00:00", "2020-01-31 00:00:00"}},
		{method: "dayOfWeekListWithQuartz", spec: "0 0 0 ? * THU#1,THU#3,THU#5", from: "2019-12-31 00:00:00",
			wants: []string{"2020-01-02 00:00:00", "2020-01-16 00:00:00", "2020-01-30 00:00:00"}},
		{method: "quartzLastDayOfMonthEveryHour", spec: "0 0 * L * *", from: "2021-01-30 00:01:00", wants: []string{"2021-01-31 00:00:00", "2021-01-31 01:00:00", "2021-01-31 02:00:00"}},
		{method: "quartzLastDayOfMonthOffsetEveryHour", spec: "0 0 * L-1 * *", from: "2021-01-29 00:01:00", wants: []string{"2021-01-30 00:00:00", "2021-01-30 01:00:00", "2021-01-30 02:00:00"}},
		{method: "quartzFirstWeekdayOfMonthEveryHour", spec: "0 0 * 1W * *", from: "2021-01-31 00:01:00", wants: []string{"2021-02-01 00:00:00", "2021-02-01 01:00:00", "2021-02-01 02:00:00"}},
		{method: "quartzLastWeekdayOfMonthEveryHour", spec: "0 0 * LW * *", from: "2021-01-28 00:01:00", wants: []string{"2021-01-29 00:00:00", "2021-01-29 01:00:00", "2021-01-29 02:00:00"}},
		{method: "quartz5thFridayOfTheMonthEveryHour", spec: "0 0 * ? * FRI#5", from: "2021-01-28 00:01:00", wants: []string{"2021-01-29 00:00:00", "2021-01-29 01:00:00", "2021-01-29 02:00:00"}},
		{method: "quartzLastFridayOfTheMonthEveryHour", spec: "0 0 * ? * FRIL", from: "2021-01-28 00:01:00", wants: []string{"2021-01-29 00:00:00", "2021-01-29 01:00:00", "2021-01-29 02:00:00"}},
		{method: "sundayToFriday", spec: "0 0 0 ? * SUN-FRI", from: "2021-02-25 15:00:00", wants: []string{"2021-02-26 00:00:00", "2021-02-28 00:00:00"}},
		{method: "daylightSaving", spec: "0 0 9 * * *", zone: "Europe/Amsterdam", from: "2021-03-27 09:00:00 +01:00", wants: []string{"2021-03-28 09:00:00 +02:00"}},
		{method: "daylightSaving", spec: "0 0 9 * * *", zone: "Europe/Amsterdam", from: "2021-10-30 09:00:00 +02:00", wants: []string{"2021-10-31 09:00:00 +01:00"}},
		{method: "daylightSaving", spec: "0 10 2 * * *", zone: "Europe/Amsterdam", from: "2013-03-31 01:09:00 +01:00",
			wants: []string{"2013-03-31 03:00:00 +02:00", "2013-04-01 02:10:00 +02:00"},
			note: "Spring skips 02:10 on the day it does not exist and runs next on 2013-04-01 at 02:10. " +
				"This package follows cronie: a fixed-time job whose time the clock skips runs once, at the end of the gap."},
		{method: "daylightSaving", spec: "0 5 0 * * *", zone: "Europe/Amsterdam", from: "2021-03-28 01:00:00 +01:00", wants: []string{"2021-03-29 00:05:00 +02:00"}},
		{method: "various", spec: "3-57 13-28 17,18 1,15 3-12 6#1", from: "2022-09-15 17:44:11", wants: []string{"2022-10-01 17:13:03"}},
		{method: "various", spec: "*/28 56 22 */6 * *", from: "2022-02-27 08:00:42", wants: []string{"2022-03-01 22:56:00"}},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.spec, func(t *testing.T) {
			loc, layout := time.UTC, springLayout
			if c.zone != "" {
				loc, layout = loadZone(t, c.zone), springLayout+" -07:00"
			}
			from, err := time.ParseInLocation(layout, c.from, loc)
			require.NoError(t, err)
			s, err := cron.Parse(c.spec, cron.Spring(), cron.In(loc))
			require.NoError(t, err)
			var got []string
			for range c.wants {
				from = s.Next(from)
				got = append(got, from.Format(layout))
			}
			require.Equal(t, c.wants, got, c.note)
		})
	}
}

// TestSpringValidity ports isValidExpression and nonExistentSpecificDate.
func TestSpringValidity(t *testing.T) {
	// isValidExpression: six fields only.
	for spec, valid := range map[string]bool{"": false, "*": false, "* * * * *": false, "* * * * * * *": false, "* * * * * *": true} {
		_, err := cron.Parse(spec, cron.Spring(), cron.In(time.UTC))
		require.Equal(t, valid, err == nil, "%q: %v", spec, err)
	}
	// nonExistentSpecificDate: Spring parses "0 0 0 31 6 *" and its next
	// is null. This package rejects a spec that can never run when it is
	// parsed, where the mistake is made, rather than when it is scheduled.
	_, err := cron.Parse("0 0 0 31 6 *", cron.Spring(), cron.In(time.UTC))
	require.ErrorContains(t, err, `day-of-month field "31" at column 7: no such day in month field "6"`)
}

// TestSpringDescriptorsEqualFields ports yearly, annually, monthly, weekly,
// daily, midnight and hourly's equality checks: each descriptor runs when
// its six-field form does.
func TestSpringDescriptorsEqualFields(t *testing.T) {
	from := time.Date(2026, 6, 17, 10, 20, 30, 0, time.UTC)
	for descriptor, fields := range map[string]string{
		"@yearly": "0 0 0 1 1 *", "@annually": "0 0 0 1 1 *", "@monthly": "0 0 0 1 * *", "@weekly": "0 0 0 * * 0",
		"@daily": "0 0 0 * * *", "@midnight": "0 0 0 * * *", "@hourly": "0 0 * * * *",
	} {
		d := cron.MustParse(descriptor, cron.Spring(), cron.In(time.UTC))
		f := cron.MustParse(fields, cron.Spring(), cron.In(time.UTC))
		a, b := from, from
		for range 5 {
			a, b = d.Next(a), f.Next(b)
			require.Equal(t, b, a, descriptor)
		}
	}
}
