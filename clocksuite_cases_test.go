package scheduler_test

// The clock suite's cases: each one's body and the lines it must record on
// every driver.

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
)

// suiteCase is one case: what it does on a suiteClock and the lines it
// must record.
type suiteCase struct {
	name string
	// sorted: events of one instant may come from concurrent workers, so
	// they are compared sorted by text.
	sorted bool
	body   func(t *testing.T, c suiteClock, log *suiteLog)
	want   []string
}

const (
	suiteMinute = time.Minute
	suiteHour   = time.Hour
)

func suiteCases() []suiteCase {
	const h, m = suiteHour, suiteMinute
	return []suiteCase{
		{
			name: "fixed rate runs 24 times in 24h at exact instants",
			body: func(t *testing.T, c suiteClock, log *suiteLog) {
				s := c.newScheduler(t, 2)
				_, err := s.ScheduleAtFixedRate(log.task("tick"), h, h)
				require.NoError(t, err)
				c.advance(t, 24*h)
			},
			want: suiteEvery(h, h, 24, "tick"),
		},
		{
			name: "fixed rate keeps its rate when each run takes 10 minutes",
			body: func(t *testing.T, c suiteClock, log *suiteLog) {
				s := c.newScheduler(t, 1)
				_, err := s.ScheduleAtFixedRate(log.workTask(c, 10*m), h, h)
				require.NoError(t, err)
				c.advance(t, 3*h+30*m)
			},
			want: []string{
				suiteAt(h, "start"), suiteAt(h+10*m, "end"),
				suiteAt(2*h, "start"), suiteAt(2*h+10*m, "end"),
				suiteAt(3*h, "start"), suiteAt(3*h+10*m, "end"),
			},
		},
		{
			name: "fixed delay counts from the end of a 10-minute run",
			body: func(t *testing.T, c suiteClock, log *suiteLog) {
				s := c.newScheduler(t, 1)
				_, err := s.ScheduleWithFixedDelay(log.workTask(c, 10*m), h, h)
				require.NoError(t, err)
				c.advance(t, 6*h)
			},
			want: []string{
				suiteAt(h, "start"), suiteAt(h+10*m, "end"),
				suiteAt(2*h+10*m, "start"), suiteAt(2*h+20*m, "end"),
				suiteAt(3*h+20*m, "start"), suiteAt(3*h+30*m, "end"),
				suiteAt(4*h+30*m, "start"), suiteAt(4*h+40*m, "end"),
				suiteAt(5*h+40*m, "start"), suiteAt(5*h+50*m, "end"),
			},
		},
		{
			name: "fixed rate catches up back to back after a run of 3 periods",
			body: func(t *testing.T, c suiteClock, log *suiteLog) {
				s := c.newScheduler(t, 1)
				n := 0 // touched by the task's runs only, which never overlap
				_, err := s.ScheduleAtFixedRate(func(ctx context.Context) error {
					n++
					log.add(fmt.Sprintf("run %d", n))
					if n == 1 {
						if err := c.work(ctx, 3*h); err != nil {
							return err
						}
						log.add("run 1 ends")
					}
					return nil
				}, h, h)
				require.NoError(t, err)
				c.advance(t, 6*h+30*m)
			},
			want: []string{
				suiteAt(h, "run 1"), suiteAt(4*h, "run 1 ends"),
				// runs 2 and 3 are late, run 4 is on time: all at 4h
				suiteAt(4*h, "run 2"), suiteAt(4*h, "run 3"), suiteAt(4*h, "run 4"),
				suiteAt(5*h, "run 5"), suiteAt(6*h, "run 6"),
			},
		},
		{
			name: "fixed delay does not catch up after a long run",
			body: func(t *testing.T, c suiteClock, log *suiteLog) {
				s := c.newScheduler(t, 1)
				n := 0
				_, err := s.ScheduleWithFixedDelay(func(ctx context.Context) error {
					n++
					log.add(fmt.Sprintf("run %d", n))
					if n == 1 {
						return c.work(ctx, 3*h)
					}
					return nil
				}, h, h)
				require.NoError(t, err)
				c.advance(t, 6*h+30*m)
			},
			want: []string{
				suiteAt(h, "run 1"), suiteAt(5*h, "run 2"), suiteAt(6*h, "run 3"),
			},
		},
		{
			name: "tasks due at one instant run in submission order",
			body: func(t *testing.T, c suiteClock, log *suiteLog) {
				s := c.newScheduler(t, 1)
				_, err := s.ScheduleAtFixedRate(log.task("tick"), h, h)
				require.NoError(t, err)
				_, err = s.Schedule(log.task("a"), 2*h)
				require.NoError(t, err)
				_, err = s.Schedule(log.task("b"), h)
				require.NoError(t, err)
				_, err = s.Schedule(log.task("c"), 2*h)
				require.NoError(t, err)
				c.advance(t, 2*h+30*m)
			},
			want: []string{
				suiteAt(h, "tick"), suiteAt(h, "b"),
				suiteAt(2*h, "tick"), suiteAt(2*h, "a"), suiteAt(2*h, "c"),
			},
		},
		{
			name: "cancel from another goroutine between runs",
			body: func(t *testing.T, c suiteClock, log *suiteLog) {
				s := c.newScheduler(t, 1)
				f, err := s.ScheduleAtFixedRate(log.task("tick"), h, h)
				require.NoError(t, err)
				c.advance(t, 2*h+30*m)

				canceled := make(chan bool)
				go func() {
					log.add("cancel")
					canceled <- f.Cancel(false)
				}()
				require.True(t, <-canceled)
				require.ErrorIs(t, f.Wait(c.ctx(t)), scheduler.ErrCanceled)

				c.advance(t, 5*h)
				log.add(fmt.Sprintf("canceled=%v queued=%d", f.IsCanceled(), s.Stats().Queued))
			},
			want: []string{
				suiteAt(h, "tick"), suiteAt(2*h, "tick"),
				suiteAt(2*h+30*m, "cancel"),
				suiteAt(7*h+30*m, "canceled=true queued=0"),
			},
		},
		{
			name: "Cancel(true) from another goroutine interrupts the running task",
			body: func(t *testing.T, c suiteClock, log *suiteLog) {
				s := c.newScheduler(t, 1)
				f, err := s.ScheduleWithFixedDelay(func(ctx context.Context) error {
					log.add("start")
					err := c.work(ctx, h)
					log.add(fmt.Sprintf("work: %v", err))
					return err
				}, h, h)
				require.NoError(t, err)
				c.advance(t, h+15*m)

				canceled := make(chan bool)
				go func() {
					log.add("cancel")
					canceled <- f.Cancel(true)
				}()
				require.True(t, <-canceled)
				c.advance(t, 5*h)
				require.ErrorIs(t, f.Wait(c.ctx(t)), scheduler.ErrCanceled)
			},
			want: []string{
				suiteAt(h, "start"),
				suiteAt(h+15*m, "cancel"),
				suiteAt(h+15*m, "work: context canceled"),
			},
		},
		{
			name: "Shutdown cancels periodic tasks and still runs a delayed one-shot at its time",
			body: func(t *testing.T, c suiteClock, log *suiteLog) {
				sd := suiteShutdownAt2h30m(t, c, log)
				log.addCanceled(sd.tick, sd.report)
				c.advance(t, 2*h+30*m) // to 5h, the report's time
				log.addTerminated(t, sd.s, sd.terminated)
				c.advance(t, 5*h)
			},
			want: append(slices.Clone(suiteUntilShutdown),
				suiteAt(2*h+30*m, "tick canceled=true, report canceled=false"),
				suiteAt(5*h, "report"),
				suiteAt(5*h, "terminated, hook at 5h0m0s"),
			),
		},
		{
			name: "Shutdown with execute-existing-delayed false cancels the delayed one-shot",
			body: func(t *testing.T, c suiteClock, log *suiteLog) {
				sd := suiteShutdownAt2h30m(t, c, log, scheduler.WithExecuteExistingDelayedTasksAfterShutdown(false))
				log.addCanceled(sd.tick, sd.report)
				log.addTerminated(t, sd.s, sd.terminated)
				c.advance(t, 5*h)
			},
			want: append(slices.Clone(suiteUntilShutdown),
				suiteAt(2*h+30*m, "tick canceled=true, report canceled=true"),
				suiteAt(2*h+30*m, "terminated, hook at 2h30m0s"),
			),
		},
		{
			name: "Shutdown with continue-existing-periodic true keeps the rate until the policy is cleared",
			body: func(t *testing.T, c suiteClock, log *suiteLog) {
				sd := suiteShutdownAt2h30m(t, c, log, scheduler.WithContinueExistingPeriodicTasksAfterShutdown(true))
				c.advance(t, 2*h) // to 4h30m: ticks at 3h and 4h

				log.add("continue-periodic false")
				sd.s.SetContinueExistingPeriodicTasksAfterShutdownPolicy(false)
				log.addCanceled(sd.tick, sd.report)
				c.advance(t, 30*m) // to 5h: the report still runs
				log.addTerminated(t, sd.s, sd.terminated)
			},
			want: append(slices.Clone(suiteUntilShutdown),
				suiteAt(3*h, "tick"), suiteAt(4*h, "tick"),
				suiteAt(4*h+30*m, "continue-periodic false"),
				suiteAt(4*h+30*m, "tick canceled=true, report canceled=false"),
				suiteAt(5*h, "report"),
				suiteAt(5*h, "terminated, hook at 5h0m0s"),
			),
		},
		{
			name: "ShutdownNow returns the queued tasks and interrupts the running one",
			body: func(t *testing.T, c suiteClock, log *suiteLog) {
				s := c.newScheduler(t, 1)
				tick, err := s.ScheduleAtFixedRate(log.task("tick"), h, h, scheduler.WithName("tick"))
				require.NoError(t, err)
				slow, err := s.Schedule(func(ctx context.Context) error {
					log.add("slow starts")
					log.add(fmt.Sprintf("slow: %v", c.work(ctx, h)))
					return nil // returns nil after the interrupt: completes normally
				}, 2*h, scheduler.WithName("slow"))
				require.NoError(t, err)
				later, err := s.Schedule(log.task("later"), 5*h, scheduler.WithName("later"))
				require.NoError(t, err)
				c.advance(t, 2*h+30*m)

				log.add("shutdownNow")
				queued := s.ShutdownNow()
				require.NoError(t, s.AwaitTermination(c.ctx(t)))
				require.Len(t, queued, 2)
				require.True(t, queued[0] == tick, "the very future Schedule returned")
				require.True(t, queued[1] == later, "the very future Schedule returned")
				for _, f := range queued {
					log.add(fmt.Sprintf("queued %s: delay %v, canceled=%v, done=%v",
						f.Name(), f.Delay(), f.IsCanceled(), f.IsDone()))
				}
				require.NoError(t, slow.Wait(c.ctx(t)))
				c.advance(t, 5*h)
			},
			want: []string{
				suiteAt(h, "tick"),
				suiteAt(2*h, "tick"), // submitted before slow: runs first
				suiteAt(2*h, "slow starts"),
				suiteAt(2*h+30*m, "shutdownNow"),
				suiteAt(2*h+30*m, "slow: context canceled"),
				suiteAt(2*h+30*m, "queued tick: delay 30m0s, canceled=false, done=false"),
				suiteAt(2*h+30*m, "queued later: delay 2h30m0s, canceled=false, done=false"),
			},
		},
	}
}

// suiteShutdown is the start the shutdown cases share: a pool of one whose
// Terminated hook sends the virtual time it ran at, "tick" every hour and a
// one-shot "report" at 5h; at 2h30m it records "shutdown" and calls
// Shutdown.
type suiteShutdown struct {
	s            *scheduler.Scheduler
	tick, report scheduler.ScheduledFuture
	terminated   <-chan time.Duration
}

func suiteShutdownAt2h30m(t *testing.T, c suiteClock, log *suiteLog, opts ...scheduler.Option) suiteShutdown {
	t.Helper()
	terminated := make(chan time.Duration, 1)
	opts = append(opts, scheduler.WithHooks(scheduler.Hooks{
		Terminated: func() { terminated <- c.elapsed() },
	}))
	s := c.newScheduler(t, 1, opts...)
	tick, err := s.ScheduleAtFixedRate(log.task("tick"), suiteHour, suiteHour)
	require.NoError(t, err)
	report, err := s.Schedule(log.task("report"), 5*suiteHour)
	require.NoError(t, err)
	c.advance(t, 2*suiteHour+30*suiteMinute)
	log.add("shutdown")
	s.Shutdown()
	return suiteShutdown{s: s, tick: tick, report: report, terminated: terminated}
}

// suiteUntilShutdown are the lines suiteShutdownAt2h30m records.
var suiteUntilShutdown = []string{
	suiteAt(suiteHour, "tick"), suiteAt(2*suiteHour, "tick"),
	suiteAt(2*suiteHour+30*suiteMinute, "shutdown"),
}

// TestClockSuite runs every case on the manual clock and in a synctest
