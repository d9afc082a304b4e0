package reports

import (
	"context"
	"fmt"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cron"
)

// The names of the service's jobs, also given to their tasks with
// scheduler.WithName.
const (
	// DailyReport builds the report of the previous Berlin day, every day
	// at 03:00 Europe/Berlin.
	DailyReport = "daily-report"
	// QuarterHourly rolls up the data of the last quarter hour, every 15
	// minutes on the quarter hour.
	QuarterHourly = "quarter-hourly"
	// WeekdayDigest sends the morning digest at 09:00 America/New_York,
	// Monday to Friday.
	WeekdayDigest = "weekday-digest"
)

// Job is one calendar job of the service: a cron spec read in a zone (a
// Spring @Scheduled(cron=..., zone=...) method, a Quartz CronTrigger with
// its job). Jobs come from [Service.Jobs]; a Job is a read-only value.
type Job struct {
	// Name is DailyReport, QuarterHourly or WeekdayDigest.
	Name string
	// Spec is the job's cron spec, as given to cron.Parse.
	Spec string
	// Zone is the time zone Spec is read in.
	Zone *time.Location
	// Schedule is the parsed spec: the job's scheduler.Trigger. Its Next
	// says when the job runs after a given instant.
	Schedule *cron.Schedule
	// Missed is what the job does with runs missed while the process was
	// stopped, suspended or busy (scheduler.WithMissedRuns).
	Missed scheduler.MissedRunPolicy

	// span gives the span [from, to) a run due at due covers; prevTo is
	// where the last successful run's span ended, zero before the first
	// (see Run.From).
	span func(due, prevTo time.Time) (from, to time.Time)
	// work is the job's work from Config, never nil.
	work WorkFunc
}

// newJobs parses the three jobs and binds them to cfg's work functions. It
// fails if the time zone database lacks Europe/Berlin or America/New_York.
func newJobs(cfg Config) ([]Job, error) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	newYork, err := time.LoadLocation("America/New_York")
	if err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	jobs := []Job{
		{
			// Each run reports its own day, so after an outage every
			// missed day still gets its report: catch up.
			Name: DailyReport, Spec: "0 3 * * *", Zone: berlin,
			Missed: scheduler.CatchUpMissed,
			span:   previousDay,
			work:   cfg.Report,
		},
		{
			// One rollup after an outage covers the whole outage (its
			// span starts where the last one ended): coalesce.
			Name: QuarterHourly, Spec: "*/15 * * * *", Zone: berlin,
			Missed: scheduler.CoalesceMissed,
			span:   sinceLastRun(func(due time.Time) time.Time { return due.Add(-15 * time.Minute) }),
			work:   cfg.Rollup,
		},
		{
			// A stale digest is worth sending once, not once per missed
			// morning: coalesce.
			Name: WeekdayDigest, Spec: "0 9 * * MON-FRI", Zone: newYork,
			Missed: scheduler.CoalesceMissed,
			span:   sinceLastRun(previousWeekday),
			work:   cfg.Digest,
		},
	}
	for i := range jobs {
		j := &jobs[i]
		if j.Schedule, err = cron.Parse(j.Spec, cron.In(j.Zone)); err != nil {
			return nil, fmt.Errorf("reports: job %s: %w", j.Name, err)
		}
		if j.work == nil {
			j.work = func(context.Context, Run) error { return nil }
		}
	}
	return jobs, nil
}

// previousDay is the daily report's span: the day before due's day, in
// due's zone, 23 hours long on the day clocks go forward and 25 on the day
// they go back.
func previousDay(due, _ time.Time) (from, to time.Time) {
	return previousMidnight(due), midnight(due)
}

// sinceLastRun returns the span of a job whose runs cover the time since
// the last successful run: [prevTo, due), or [first(due), due) on the first
// run after Start.
func sinceLastRun(first func(due time.Time) time.Time) func(due, prevTo time.Time) (from, to time.Time) {
	return func(due, prevTo time.Time) (from, to time.Time) {
		if prevTo.IsZero() {
			return first(due), due
		}
		return prevTo, due
	}
}

// midnight returns the start of t's day in t's zone.
func midnight(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
}

// previousMidnight returns the start of the day before t's day in t's zone.
func previousMidnight(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d-1, 0, 0, 0, 0, t.Location())
}

// previousWeekday returns the same wall time as t on the weekday (Monday to
// Friday) before t's day, in t's zone: the due time of the digest before
// the one due at t.
func previousWeekday(t time.Time) time.Time {
	y, m, d := t.Date()
	for back := 1; ; back++ {
		p := time.Date(y, m, d-back, t.Hour(), t.Minute(), 0, 0, t.Location())
		if wd := p.Weekday(); wd != time.Saturday && wd != time.Sunday {
			return p
		}
	}
}
