// Package cron parses cron specs into a [scheduler.Trigger] for
// [scheduler.Scheduler.ScheduleWithTrigger]: "at 03:00 Berlin time", "every
// 15 minutes", "weekdays at 9". It is the counterpart of Spring's
// CronTrigger and CronExpression, Quartz's CronTrigger, and robfig/cron's
// spec parser; like Spring's, it is only a trigger, not a second scheduler.
//
//	s, err := cron.Parse("0 3 * * *", cron.In(berlin))
//	future, err := sched.ScheduleWithTrigger(task, s)
//
// # Specs
//
// A spec has five fields, minute (0-59), hour (0-23), day of month (1-31),
// month (1-12 or JAN-DEC) and day of week (0-7 or SUN-SAT, 0 and 7 both
// Sunday), or six with [WithSeconds], a seconds field (0-59) first. Each
// field is '*' or a list of values, ranges and steps: "1,15", "9-17",
// "*/15", "1-30/5", and "5/10" meaning "5-59/10". Names are three letters
// in any case. The descriptors @yearly (= @annually), @monthly, @weekly,
// @daily (= @midnight) and @hourly stand for "0 0 1 1 *", "0 0 1 * *",
// "0 0 * * 0", "0 0 * * *" and "0 * * * *". A "CRON_TZ=Zone " or
// "TZ=Zone " prefix names the IANA zone the spec is read in, overriding
// [In]; without either the zone is time.Local.
//
// Day of month and day of week follow Vixie cron exactly: if either field
// begins with '*' (as "*" and "*/2" do), a day must match both, and a
// plain "*" then leaves the other field to decide alone; if both are
// restricted, a day matching either runs. So "0 0 13 * FRI" runs on every
// 13th and on every Friday, and "0 0 */10 * MON" only on Mondays that are
// the 1st, 11th, 21st or 31st.
//
// Not supported, and rejected: Quartz's and Spring's ?, L, W and #, a year
// field, @reboot, and robfig/cron's @every (use
// [scheduler.Scheduler.ScheduleAtFixedRate]).
//
// [Parse] rejects with an error wrapping [scheduler.ErrInvalidArgument]
// and naming the field any syntax error, value out of range, unknown zone
// or wrong number of fields, and also a spec that can never run, such as
// "0 0 30 2 *" or "0 0 31 4,6,9,11 *". That is decided exactly: when a day
// must match both day fields, some allowed month must have an allowed day
// (February with 29, so "0 0 29 2 *" is fine), and any such date falls on
// every weekday within the Gregorian calendar's 400-year cycle; when
// either day field may match, every month has every weekday. "0 0 31 2 MON"
// is valid: it runs on Mondays in February.
//
// # Daylight saving time
//
// Run times are wall times in the spec's zone, and when the zone's clocks
// change, this package follows cronie and Debian's cron. A wildcard job is
// one whose minute or hour field begins with '*' ("*", "*/15", and
// @hourly; a seconds field does not count); every other job is a
// fixed-time job.
//
//   - A fixed-time job whose wall time is skipped when clocks go forward
//     runs once, at the first instant after the gap, however many of its
//     times were skipped: "30 2 * * *" in New York runs on 2026-03-08 at
//     03:00 EDT, and on 2026-03-09 at 02:30 again.
//   - A fixed-time job whose wall time occurs twice when clocks go back
//     runs once, at the first occurrence: "30 1 * * *" in New York runs on
//     2026-11-01 at 01:30 EDT only; "0 2 * * *" in Berlin on 2026-10-25 at
//     02:00 CEST only.
//   - A wildcard job runs at every real instant that matches: none in a
//     gap, and both occurrences in a repeated stretch. "*/15 * * * *" runs
//     at 01:45 EST and then at 03:00 EDT on 2026-03-08; "30 * * * *" runs
//     at 00:30 EDT, 01:30 EDT, 01:30 EST and 02:30 EST on 2026-11-01.
//
// The rules hold for every change in the zone's history and rules as the
// time package knows them: shifts at midnight (America/Havana,
// America/Santiago, Asia/Beirut), of 30 minutes (Australia/Lord_Howe), of
// two hours (Antarctica/Troll), and whole skipped days (Pacific/Apia on
// 2011-12-30).
//
// [Schedule.Next] is a pure function of its argument: Next(t) for t after
// the first occurrence of a repeated wall time, even inside the repeated
// hour before the second occurrence, skips the second occurrence of a
// fixed-time job, since its run already happened. It returns an instant in
// the spec's zone whatever the zone of t, and the zero Time when there is
// no run up to the end of year 9999 (a wildcard job whose every time lies
// in a gap, such as "*/30 2 8-14 3 */7" in New York, never runs).
//
// # Why the parser is written here
//
// The project measured the maintained Go cron libraries against the cases
// above (robfig/cron v3.0.1, netresearch/go-cron v0.9.1, adhocore/gronx
// v1.20.4, hashicorp/cronexpr v1.1.3): each gets at least three of the five
// daylight-saving cases of the specification wrong, running twice in the
// repeated hour or skipping the day of the gap; none rejects a spec that
// can never run; and cronexpr's Next is not safe for concurrent use. So
// the parser and Next are hand-written, standard library only, and checked
// against an independent brute-force reference by FuzzNext: it scans
// instants minute by minute (second by second with seconds) in UTC, derives
// their wall times with the time package, and applies the rules above as
// worded, over generated specs, zones with unusual transitions and start
// times from 1970 to 2040.
package cron
