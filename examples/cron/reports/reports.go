// Package reports is a small service with three calendar jobs on a
// [scheduler.Scheduler]: a daily report at 03:00 Europe/Berlin, a rollup
// every quarter hour, and a digest at 09:00 America/New_York on weekdays.
// It is what a Spring service with three @Scheduled(cron=..., zone=...)
// methods, or a robfig/cron program with three AddFunc calls, looks like
// with this module: the cron package parses the specs into triggers, and
// scheduler.Scheduler.ScheduleWithTrigger runs them on the scheduler's
// pool.
//
// It shows three habits worth copying:
//
//   - A run asks scheduler.CurrentRun when it was due, and works from that
//     time, never from time.Now: a report that starts late, or is caught up
//     after an outage, still reports the right day.
//   - Each job picks its missed-run policy (scheduler.WithMissedRuns) by
//     what a run means: every missed daily report is still wanted (catch
//     up), a single rollup can cover a whole outage (coalesce).
//   - The service does not make its scheduler but is handed one, so tests
//     run it on fake time: dst_test.go drives it across both of Berlin's
//     2026 daylight-saving changes with a schedulertest.ManualClock and
//     schedulertest.AdvanceAndSettle, synctest_test.go through the
//     fall-back night inside a testing/synctest bubble.
//
// The daylight-saving rules are those of the cron package (cronie's and
// Debian's): the 03:00 report runs exactly once on every day, the 23-hour
// and 25-hour days included, while the quarter-hourly job runs at every
// real quarter hour, 92 times on 2026-03-29 and 100 times on 2026-10-25.
package reports

import (
	"errors"
	"fmt"
	"sync"

	"github.com/go-stpe/scheduler"
)

// ErrStarted is returned by [Service.Start] on a service already started.
var ErrStarted = errors.New("reports: already started")

// Config holds the work of the three jobs; a nil field means a job that
// does nothing but be recorded in [Service.Status].
type Config struct {
	// Report builds the report of the Berlin day [r.From, r.To).
	Report WorkFunc
	// Rollup aggregates the data of [r.From, r.To): the last quarter hour,
	// or everything since the last successful rollup.
	Rollup WorkFunc
	// Digest sends the digest of [r.From, r.To): since the previous
	// weekday's digest.
	Digest WorkFunc
}

// Service runs the jobs of [Service.Jobs] on a scheduler it is handed. A
// Service comes only from [New]; its methods are safe for concurrent use.
//
// A failed run is logged by the scheduler and counted in Status; it does
// not stop the job (scheduler.ContinueOnError), and the next run of the
// rollup or the digest covers the failed run's span too.
type Service struct {
	jobs []Job // fixed by New

	// lifecycle serializes Start and Stop, and is held across their calls
	// into the scheduler. Those calls may run a task in the caller (a
	// CallerRunsPolicy), and a run takes mu: so mu is never held across
	// them, and runs never take lifecycle.
	lifecycle sync.Mutex

	mu      sync.Mutex                  // guards futures and status
	futures []scheduler.ScheduledFuture // one per job while started, nil while stopped
	status  []JobStatus                 // one per job, in the order of jobs
}

// New returns a stopped Service whose jobs do cfg's work. It fails if the
// time zone database lacks Europe/Berlin or America/New_York (a program can
// embed one by importing time/tzdata).
func New(cfg Config) (*Service, error) {
	jobs, err := newJobs(cfg)
	if err != nil {
		return nil, err
	}
	status := make([]JobStatus, len(jobs))
	for i, j := range jobs {
		status[i].Job = j
	}
	return &Service{jobs: jobs, status: status}, nil
}

// Jobs returns the service's jobs: DailyReport, QuarterHourly and
// WeekdayDigest, in that order.
func (s *Service) Jobs() []Job {
	return append([]Job(nil), s.jobs...)
}

// Start schedules the jobs on sched, each first at its spec's next time
// after sched's clock reads now. It returns ErrStarted if the service runs
// already, an error wrapping scheduler.ErrInvalidArgument for a nil sched,
// or the scheduler's error (for example after shutdown), in which case no
// job stays scheduled. The caller owns sched: shutting it down also stops
// the service.
func (s *Service) Start(sched *scheduler.Scheduler) error {
	if sched == nil {
		return fmt.Errorf("%w: reports: Start with a nil scheduler", scheduler.ErrInvalidArgument)
	}
	s.lifecycle.Lock()
	defer s.lifecycle.Unlock()
	if s.started() {
		return ErrStarted
	}
	futures := make([]scheduler.ScheduledFuture, 0, len(s.jobs))
	for i := range s.jobs {
		j := &s.jobs[i]
		f, err := sched.ScheduleWithTrigger(s.task(i), j.Schedule,
			scheduler.WithName(j.Name),
			scheduler.WithMissedRuns(j.Missed),
			scheduler.ContinueOnError())
		if err != nil {
			for _, f := range futures {
				f.Cancel(true)
			}
			return fmt.Errorf("reports: start %s: %w", j.Name, err)
		}
		futures = append(futures, f)
	}
	s.mu.Lock()
	s.futures = futures
	s.mu.Unlock()
	return nil
}

// Stop cancels the jobs; a run in progress sees its ctx canceled. It does
// not wait for that run to return. The service may be started again, and
// its first runs then cover their first spans again (see Run.From).
func (s *Service) Stop() {
	s.lifecycle.Lock()
	defer s.lifecycle.Unlock()
	s.mu.Lock()
	futures := s.futures
	s.futures = nil
	s.mu.Unlock()
	for _, f := range futures {
		f.Cancel(true)
	}
}

// started reports whether the jobs are scheduled.
func (s *Service) started() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.futures != nil
}
