package scheduler

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestInternalPart2RunsDoNotAllocate: a trigger task's run allocates
// nothing beyond what its trigger does, and neither do jitter, an
// Observe hook, a base context, or CurrentRun in the run (the hot
// path stays allocation-free when these are used, too).
func TestInternalPart2RunsDoNotAllocate(t *testing.T) {
	const runs = 1000
	second := TriggerFunc(func(t time.Time) time.Time { return t.Add(time.Second) })
	for _, tc := range []struct {
		name     string
		step     time.Duration // how far one Advance goes: exactly one run comes due
		opts     []Option
		schedule func(s *Scheduler, task Task) error
	}{
		{"trigger, catch up", time.Second, nil, func(s *Scheduler, task Task) error {
			_, err := s.ScheduleWithTrigger(task, second, WithMissedRuns(CatchUpMissed))
			return err
		}},
		{"trigger, coalesce", time.Second, nil, func(s *Scheduler, task Task) error {
			_, err := s.ScheduleWithTrigger(task, second)
			return err
		}},
		// With jitter, a step of one period may end before due + offset; a
		// slightly longer step drifts, and CoalesceMissed merges the drift
		// so that each step still makes one run.
		{"fixed rate with jitter and coalesce", time.Second + time.Millisecond, nil, func(s *Scheduler, task Task) error {
			_, err := s.ScheduleAtFixedRate(task, time.Second, time.Second,
				WithJitter(time.Millisecond), WithMissedRuns(CoalesceMissed))
			return err
		}},
		{"fixed rate, observed, with a base context", time.Second, []Option{
			WithHooks(Hooks{Observe: func(r RunInfo) { _ = r.Started.Sub(r.Due) }}),
			WithBaseContext(context.WithValue(context.Background(), ctxKeyForTest{}, 1)),
		}, func(s *Scheduler, task Task) error {
			_, err := s.ScheduleAtFixedRate(task, time.Second, time.Second)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newFakeClock()
			ran := make(chan struct{}, 1)
			opts := append([]Option{WithHooks(Hooks{
				AfterExecute: func(ScheduledFuture, error) { ran <- struct{}{} },
			})}, tc.opts...)
			s := newTestScheduler(t, 1, clk, opts...)
			require.NoError(t, tc.schedule(s, func(ctx context.Context) error {
				if _, ok := CurrentRun(ctx); !ok {
					panic("no current run")
				}
				return nil
			}))
			step := func() {
				clk.Advance(tc.step)
				<-ran
			}
			for range 100 {
				step()
			}
			best, all := bestOf(5, func() float64 { return mallocsPerRun(runs, step) })
			t.Logf("%s: best %.4f allocations per run (trials %v)", tc.name, best, all)
			require.Less(t, best, 0.01)
		})
	}
}

type ctxKeyForTest struct{}
