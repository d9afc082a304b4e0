package cron_test

import (
	"fmt"
	"time"

	"github.com/go-stpe/scheduler/cron"
)

// Parse a spec and list its next runs.
func ExampleParse() {
	s, err := cron.Parse("*/15 9-17 * * MON-FRI", cron.In(time.UTC))
	if err != nil {
		panic(err)
	}
	next := time.Date(2026, 7, 3, 17, 50, 0, 0, time.UTC) // a Friday, after the last run
	for range 3 {
		next = s.Next(next)
		fmt.Println(next.Format("Mon 2006-01-02 15:04"))
	}
	// Output:
	// Mon 2026-07-06 09:00
	// Mon 2026-07-06 09:15
	// Mon 2026-07-06 09:30
}

// An invalid spec's error names the field.
func ExampleParse_error() {
	_, err := cron.Parse("0 0 30 2 *")
	fmt.Println(err)
	_, err = cron.Parse("0 61 * * *")
	fmt.Println(err)
	// Output:
	// cron: day-of-month field "30" at column 5: no such day in month field "2", the schedule would never run: scheduler: invalid argument
	// cron: hour field "61" at column 3: 61 is out of range 0-23: scheduler: invalid argument
}

// In reads the spec in a zone; a CRON_TZ= prefix does the same from the
// spec itself.
func ExampleIn() {
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	from := time.Date(2026, 6, 30, 12, 0, 0, 0, time.UTC)
	fmt.Println(cron.MustParse("0 9 * * *", cron.In(tokyo)).Next(from))
	fmt.Println(cron.MustParse("CRON_TZ=Europe/Berlin 0 9 * * *", cron.In(tokyo)).Next(from))
	// Output:
	// 2026-07-01 09:00:00 +0900 JST
	// 2026-07-01 09:00:00 +0200 CEST
}

// Next returns the first run strictly after its argument.
func ExampleSchedule_Next() {
	s := cron.MustParse("0 0 13 * FRI", cron.In(time.UTC)) // every 13th and every Friday
	next := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	for range 4 {
		next = s.Next(next)
		fmt.Println(next.Format("Mon Jan 2"))
	}
	// Output:
	// Fri Feb 6
	// Fri Feb 13
	// Fri Feb 20
	// Fri Feb 27
}

// Across New York's daylight-saving changes of 2026, a fixed-time job runs
// once at the end of the spring gap and once in the repeated autumn hour; a
// wildcard job runs at every real matching instant.
func ExampleSchedule_Next_daylightSaving() {
	ny, _ := time.LoadLocation("America/New_York")
	show := func(spec string, from time.Time, n int) {
		s := cron.MustParse(spec, cron.In(ny))
		for range n {
			from = s.Next(from)
			fmt.Printf("%-12s %s\n", spec, from.Format("Jan 2 15:04 MST"))
		}
	}
	show("30 2 * * *", time.Date(2026, 3, 7, 12, 0, 0, 0, ny), 2)
	show("30 1 * * *", time.Date(2026, 10, 31, 12, 0, 0, 0, ny), 2)
	show("30 * * * *", time.Date(2026, 11, 1, 0, 0, 0, 0, ny), 4)
	// Output:
	// 30 2 * * *   Mar 8 03:00 EDT
	// 30 2 * * *   Mar 9 02:30 EDT
	// 30 1 * * *   Nov 1 01:30 EDT
	// 30 1 * * *   Nov 2 01:30 EST
	// 30 * * * *   Nov 1 00:30 EDT
	// 30 * * * *   Nov 1 01:30 EDT
	// 30 * * * *   Nov 1 01:30 EST
	// 30 * * * *   Nov 1 02:30 EST
}

// String returns the spec as it was given.
func ExampleSchedule_String() {
	fmt.Println(cron.MustParse("CRON_TZ=Europe/Berlin 0 3 * * *"))
	// Output: CRON_TZ=Europe/Berlin 0 3 * * *
}

// Quartz's day forms work in every dialect: the last weekday of the month,
// the weekday nearest the 15th, the second Monday.
func ExampleParse_quartzDayForms() {
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, spec := range []string{"0 18 LW * *", "0 9 15W * *", "0 9 * * MON#2", "0 9 * * 5L"} {
		next := cron.MustParse(spec, cron.In(time.UTC)).Next(from)
		fmt.Printf("%-14s %s\n", spec, next.Format("Mon Jan 2 15:04"))
	}
	// Output:
	// 0 18 LW * *    Fri Jan 30 18:00
	// 0 9 15W * *    Thu Jan 15 09:00
	// 0 9 * * MON#2  Mon Jan 12 09:00
	// 0 9 * * 5L     Fri Jan 30 09:00
}

// Quartz reads a spec as Quartz's CronExpression does: seconds first, an
// optional year, '?' in one day field, and Sunday numbered 1, so 6L is the
// last Friday.
func ExampleQuartz() {
	s := cron.MustParse("0 15 10 ? * 6L 2026-2027", cron.Quartz(), cron.In(time.UTC))
	fmt.Println(s.Next(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)))
	fmt.Println(s.Next(time.Date(2027, 12, 31, 11, 0, 0, 0, time.UTC)).IsZero())
	// Output:
	// 2026-03-27 10:15:00 +0000 UTC
	// true
}

// Spring reads a spec as Spring's CronExpression does: a day must match
// both day fields, so this is Friday the 13th.
func ExampleSpring() {
	s := cron.MustParse("0 0 9 13 * FRI", cron.Spring(), cron.In(time.UTC))
	fmt.Println(s.Next(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)).Format("Mon 2006-01-02 15:04"))
	// Output: Fri 2026-02-13 09:00
}

// WithHashKey spreads jobs written alike, as Jenkins's H does: each key
// gets its own time, and always the same one.
func ExampleWithHashKey() {
	from := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, job := range []string{"backup", "reindex", "report"} {
		s := cron.MustParse("H H(0-5) * * *", cron.WithHashKey(job), cron.In(time.UTC))
		fmt.Printf("%-8s %s\n", job, s.Next(from).Format("15:04"))
	}
	// Output:
	// backup   00:38
	// reindex  03:39
	// report   00:32
}

// "@every" runs at a fixed rate from the first run, on the absolute time
// line: across New York's spring change it stays 90 minutes apart.
func ExampleParse_every() {
	ny, _ := time.LoadLocation("America/New_York")
	s := cron.MustParse("@every 1h30m", cron.In(ny))
	next := time.Date(2026, 3, 8, 0, 0, 0, 0, ny)
	for range 3 {
		next = s.Next(next)
		fmt.Println(next.Format("15:04 MST"))
	}
	// Output:
	// 01:30 EST
	// 04:00 EDT
	// 05:30 EDT
}
