package scheduler_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cron"
	"github.com/go-stpe/scheduler/schedulertest"
)

// BenchmarkTriggerRun measures the scheduler's cost of one run of a
// periodic task, back to back on a manual clock (one Advance of b.N
// periods), so that it is CPU per run, not timing: a fixed-rate task, a
// trigger task with a trivial TriggerFunc, and a trigger task with a cron
// spec. A trigger run should cost a fixed-rate run plus the trigger's own
// Next (cron's BenchmarkNext) and a wall-clock read.
func BenchmarkTriggerRun(b *testing.B) {
	everySecond := scheduler.TriggerFunc(func(t time.Time) time.Time { return t.Add(time.Second) })
	cronSecond := cron.MustParse("* * * * * *", cron.WithSeconds(), cron.In(time.UTC))
	for _, kind := range []struct {
		name     string
		schedule func(s *scheduler.Scheduler, task scheduler.Task) error
	}{
		{"fixed-rate", func(s *scheduler.Scheduler, task scheduler.Task) error {
			_, err := s.ScheduleAtFixedRate(task, time.Second, time.Second)
			return err
		}},
		{"trigger-func", func(s *scheduler.Scheduler, task scheduler.Task) error {
			_, err := s.ScheduleWithTrigger(task, everySecond, scheduler.WithMissedRuns(scheduler.CatchUpMissed))
			return err
		}},
		{"trigger-cron", func(s *scheduler.Scheduler, task scheduler.Task) error {
			_, err := s.ScheduleWithTrigger(task, cronSecond, scheduler.WithMissedRuns(scheduler.CatchUpMissed))
			return err
		}},
	} {
		b.Run("kind="+kind.name, func(b *testing.B) {
			clk := schedulertest.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			s, err := scheduler.New(1, scheduler.WithClock(clk))
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				s.ShutdownNow()
				_ = s.AwaitTermination(context.Background())
			}()
			var n, last atomic.Int64
			done := make(chan struct{}, 1)
			last.Store(-1)
			if err := kind.schedule(s, func(context.Context) error {
				if n.Add(1) == last.Load() {
					done <- struct{}{}
				}
				return nil
			}); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			last.Store(int64(b.N))
			clk.Advance(time.Duration(b.N) * time.Second)
			<-done
		})
	}
}
