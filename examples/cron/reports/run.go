package reports

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-stpe/scheduler"
)

// Run is one run of a job (Spring's TriggerContext, Quartz's
// JobExecutionContext): when it was due, when it started, and the span of
// time whose data it covers.
type Run struct {
	// Job is the job's name.
	Job string
	// Due is the time the job's spec gave for this run, in the job's zone:
	// scheduler.CurrentRun's RunInfo.Due, exactly. After an outage a
	// coalesced run is due at the latest of the times it stands for.
	Due time.Time
	// Started is when the scheduler started the run, by its clock: Due, or
	// later if the run was late.
	Started time.Time
	// From and To bound the span [From, To) the run covers. For the daily
	// report it is the Berlin day before Due. For the other jobs To is Due
	// and From is where the last successful run's span ended, so that spans
	// follow one another without gap or overlap, across failures and
	// coalesced outages; the first run after Start covers the last quarter
	// hour (rollup) or the time since the previous weekday's 09:00 (digest).
	From, To time.Time
}

// WorkFunc does the work of one run. It must return soon after ctx ends:
// ctx is canceled by Service.Stop and by scheduler.Scheduler.ShutdownNow.
// An error is logged by the scheduler and counted in Service.Status.
type WorkFunc func(ctx context.Context, r Run) error

// errNotScheduled is returned by a job's task called other than by the
// scheduler, when it cannot know when it was due.
var errNotScheduled = errors.New("reports: job run outside the scheduler")

// task returns the scheduler task of job i.
func (s *Service) task(i int) scheduler.Task {
	j := &s.jobs[i]
	// prevTo is where the last successful run's span ended. Only this
	// task's runs touch it, and they run one at a time, each happening
	// before the next (the scheduler's memory model): no lock needed.
	var prevTo time.Time
	return func(ctx context.Context) error {
		info, ok := scheduler.CurrentRun(ctx)
		if !ok {
			return errNotScheduled
		}
		r := Run{Job: j.Name, Due: info.Due.In(j.Zone), Started: info.Started}
		r.From, r.To = j.span(r.Due, prevTo)
		err := j.work(ctx, r)
		s.record(i, r, err)
		if err != nil {
			return fmt.Errorf("reports: %s due %s: %w", j.Name, r.Due.Format(time.RFC3339), err)
		}
		prevTo = r.To
		return nil
	}
}
