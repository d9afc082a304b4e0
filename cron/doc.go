// Package cron parses cron specs into a [scheduler.Trigger] for
// [scheduler.Scheduler.ScheduleWithTrigger]: "at 03:00 Berlin time", "every
// 15 minutes", "weekdays at 9", "the last Friday of the month". It is the
// counterpart of Spring's CronTrigger and CronExpression, Quartz's
// CronTrigger, and robfig/cron's spec parser; like Spring's, it is only a
// trigger, not a second scheduler.
//
//	s, err := cron.Parse("0 3 * * *", cron.In(berlin))
//	future, err := sched.ScheduleWithTrigger(task, s)
//
// # Specs
//
// By default a spec has five fields, minute (0-59), hour (0-23), day of
// month (1-31), month (1-12 or JAN-DEC) and day of week (0-7 or SUN-SAT, 0
// and 7 both Sunday), as in Vixie cron and cronie; [WithSeconds] adds a
// seconds field (0-59) first and [WithYear] an optional year field
// (1970-2199) last. Each field is '*' or a list of values, ranges and
// steps: "1,15", "9-17", "*/15", "1-30/5", and "5/10" meaning "5-59/10".
// Names are three letters in any case. A day-of-week range that ends in
// Sunday's 0 ends on Sunday, as in cronie: "MON-SUN", "5-0" and "1-0/2"
// (Monday, Wednesday, Friday, Sunday). The descriptors @yearly (=
// @annually), @monthly, @weekly, @daily (= @midnight) and @hourly stand
// for "0 0 1 1 *", "0 0 1 * *", "0 0 * * 0", "0 0 * * *" and "0 * * * *",
// in every dialect. A "CRON_TZ=Zone " or "TZ=Zone " prefix names the IANA
// zone the spec is read in, overriding [In]; without either the zone is
// time.Local.
//
// Quartz's and Spring's day forms are accepted in every dialect, alone or
// in lists: in day of month, L (the last day), L-n (n days before it, n up
// to 30), LW (the last weekday, Monday to Friday), L-nW, and dW (the
// weekday nearest day d, never leaving the month: a Saturday 1st moves to
// Monday the 3rd, a Sunday 31st to Friday the 29th; no run in a month
// without day d); in day of week, dL (the month's last weekday d: "5L" and
// "FRIL" are the last Friday) and d#k (its k-th weekday d, k in 1-5:
// "MON#2"); and '?' in either day field, meaning '*'.
//
// Day of month and day of week follow Vixie cron exactly: if either field
// begins with '*' or is '?' (as "*", "*/2" and "?" do), a day must match
// both, and a plain "*" then leaves the other field to decide alone; if
// both are restricted, a day matching either runs. So "0 0 13 * FRI" runs
// on every 13th and on every Friday, and "0 0 */10 * MON" only on Mondays
// that are the 1st, 11th, 21st or 31st.
//
// # Dialects
//
// Where dialects read the same text differently, an option chooses:
//
//   - The default is the Unix five-field form above.
//   - [Quartz]: Quartz's seconds-first form with its optional year, Sunday
//     is 1 and Saturday 7 ("6L" is the last Friday), exactly one day field
//     must be '?' (Quartz rejects the others, and so does Parse), and a
//     backward range wraps around the field's end ("22-2" in hours,
//     "FRI-MON"), where the other dialects reject it.
//   - [Spring]: Spring's six fields, seconds first, Sunday 0 or 7, and a
//     day must match both day fields: Spring's "0 0 0 13 * FRI" is Friday
//     the 13th.
//   - [WithHashKey]: Jenkins's H (below), in any dialect.
//
// robfig/cron's forms need no option: its default five fields, '?', and
// "@every <duration>" are all read as robfig/cron reads them, except
// @every's timing (below).
//
// # Jenkins's H
//
// With [WithHashKey](key), H in any field but the year stands for a value
// hashed from key, so that jobs written alike ("H H * * *") spread over the
// day instead of all starting at midnight. The key must not be empty (it
// would hash every job alike); Jenkins always has the job's name. H picks lo + h mod (hi-lo+1) in
// its range: the field's range, except 1-28 for day of month (every month
// has those days) and one week for day of week. H(a-b) picks in a-b; H/n
// steps by n from lo + h mod n ("H/15" might be minutes 7, 22, 37, 52);
// H(a-b)/n does both. h is the 64-bit FNV-1a hash of the key, a zero byte
// and the field's name ("second", "minute", "hour", "day-of-month",
// "month" or "day-of-week"), mixed by MurmurHash3's 64-bit finalizer
// (h ^= h>>33; h *= 0xff51afd7ed558ccd; h ^= h>>33; h *= 0xc4ceb9fe1a85ec53;
// h ^= h>>33). The formula is part of the API: the same key gives the same
// times in every version. A minute or hour field "H/n" makes a wildcard
// job (see below) as "*/n" does; H and H(a-b) make a fixed-time job.
//
// # @every
//
// "@every 1h30m" runs every 90 minutes, at a fixed rate: the scheduler
// asks the trigger for the run after the previous run's due time, and Next
// returns that time plus the duration, so runs stay on the grid of the
// first run however late each starts (robfig/cron adds the duration to
// the time its runner woke up, rounded to whole seconds). The duration is
// on the absolute time line, so daylight-saving changes do not apply:
// "@every 1h" runs every 60 minutes through both changes. A duration under
// one second, the resolution of a schedule, is an error.
//
// # Errors
//
// [Parse] rejects with an error wrapping [scheduler.ErrInvalidArgument]
// any syntax error, value out of range, unknown zone or wrong number of
// fields, and also a spec that can never run, such as "0 0 30 2 *", "0 0
// 31 4,6,9,11 *" or "0 0 29 2 * 2100" with a year field. The message names
// the field, the column where the bad element starts, and what the field
// accepts:
//
//	cron: minute field "0,61" at column 3: 61 is out of range 0-59
//
// That a spec can run is decided exactly: some allowed month of an allowed
// year (of the Gregorian calendar's 400-year cycle, without a year field)
// must have a day matching the day fields. "0 0 31 2 MON" is valid: it
// runs on Mondays in February.
//
// # Daylight saving time
//
// Run times are wall times in the spec's zone. A wildcard job is one whose
// minute or hour field begins with '*' ("*", "*/15", and @hourly; a
// seconds field does not count) or is Jenkins's "H/n"; every other job is
// a fixed-time job. When the zone's clocks change:
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
// These are cronie's and Debian cron's rules for the ordinary changes of
// up to three hours. For larger jumps they differ: cronie takes a jump of
// more than three hours for the clock being set and runs nothing for the
// times it skipped. This package keeps its rules for every change, however
// large, because a scheduler must not drop a run: when Samoa skipped 30
// December 2011 (Pacific/Apia), a fixed-time job of that day ran once at
// 00:00 on the 31st, and a wildcard job had no run in the day that did not
// exist. The rules hold for every change in the zone's history and rules
// as the time package knows them: shifts at midnight (America/Havana,
// America/Santiago, Asia/Beirut), of 30 minutes (Australia/Lord_Howe), of
// two hours (Antarctica/Troll), and whole skipped days. The day forms (L,
// W, #), H and the year field pick days and times; these rules then apply
// to them unchanged.
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
// The project measured the maintained Go cron libraries in one run against
// the daylight-saving cases above (robfig/cron v3.0.1, gocron v2.21.2 with
// each of its daylight-saving policies, netresearch/go-cron v0.9.1 and
// adhocore/gronx v1.20.4; the program is benchmarks/cronbench, the table
// is in docs/cron.md): each gets at least three of its six cases wrong,
// running a fixed-time job twice in the repeated hour, dropping or moving
// the run of the gap, or not returning from Next on a skipped day. So
// the parser and Next are hand-written, standard library only, and checked
// against an independent brute-force reference by FuzzNext: it scans
// instants minute by minute (second by second with seconds) in UTC, derives
// their wall times with the time package, and applies the rules above as
// worded, over generated specs with every form above, zones with unusual
// transitions and start times from 1970 to 2040. Next allocates nothing
// and, measured side by side in benchmarks/cronbench, is tens of times
// faster than robfig/cron's.
package cron
