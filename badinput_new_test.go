package scheduler_test

// Bad input to New and its options: pool sizes below one and huge ones,
// nil options and task options, and nil or zero option values.

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/stretchr/testify/require"
)

// addBadNewRows adds the rows for New and its options: pool sizes below one
// and huge ones, nil options and task options, and nil or zero option values.
func addBadNewRows(add func(...badCase)) {
	for _, n := range []int{0, -1, math.MinInt} {
		add(badCase{name: fmt.Sprintf("New/poolSize %d: ErrInvalidArgument", n), run: func(t *testing.T, e *badEnv) {
			s, err := scheduler.New(n)
			require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
			require.Nil(t, s)
		}})
	}
	add(badCase{name: "New/huge poolSize: workers still start one per task", run: func(t *testing.T, e *badEnv) {
		s, err := scheduler.New(math.MaxInt, scheduler.WithClock(e.clk))
		require.NoError(t, err)
		f, err := s.Submit(nop)
		require.NoError(t, err)
		require.NoError(t, f.Wait(e.ctx))
		st := s.Stats()
		require.Equal(t, math.MaxInt, st.CorePoolSize)
		require.Equal(t, 1, st.LargestPoolSize)
		s.Shutdown()
		require.NoError(t, s.AwaitTermination(e.ctx))
	}})
	add(badCase{name: "New/nil Option: rejected",
		run: func(t *testing.T, e *badEnv) {
			s, err := scheduler.New(1, scheduler.WithClock(e.clk), nil)
			require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
			require.Nil(t, s)
			require.EqualError(t, err, "scheduler: New: option 1 is nil: invalid argument")
		}})
	add(badCase{name: "Submit/nil TaskOption: rejected, nothing queued",
		run: func(t *testing.T, e *badEnv) {
			f, err := e.s.Submit(nop, scheduler.WithName("named"), nil)
			require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
			require.Nil(t, f)
			require.EqualError(t, err, "scheduler: TaskOption: option 1 is nil: invalid argument")
			require.Zero(t, e.s.Stats().TaskCount)
		}})
	add(badCase{name: "New/WithClock(nil): the system clock",
		opts: []scheduler.Option{scheduler.WithClock(nil)},
		run: func(t *testing.T, e *badEnv) {
			f, err := e.s.Schedule(nop, time.Millisecond)
			require.NoError(t, err)
			require.NoError(t, f.Wait(e.ctx)) // real time: 1ms; the manual clock never moved
		}})
	add(badCase{name: "New/WithLogger(nil): slog.Default at New, a panic still recovered and logged",
		run: func(t *testing.T, e *badEnv) {
			old, oldOut, oldFlags := slog.Default(), log.Writer(), log.Flags()
			defer func() { // SetDefault(old) alone leaves package log writing to e.log
				slog.SetDefault(old)
				log.SetOutput(oldOut)
				log.SetFlags(oldFlags)
			}()
			slog.SetDefault(slog.New(slog.NewJSONHandler(e.log, nil)))
			s, err := scheduler.New(1, scheduler.WithClock(e.clk), scheduler.WithLogger(nil))
			require.NoError(t, err)
			defer func() {
				s.ShutdownNow()
				require.NoError(t, s.AwaitTermination(e.ctx))
			}()
			f, err := s.Submit(func(context.Context) error { panic("to the default logger") }, scheduler.WithName("dflt"))
			require.NoError(t, err)
			var pe *scheduler.PanicError
			require.ErrorAs(t, f.Wait(e.ctx), &pe)
			e.log.requireErrorRecord(t, "dflt", "to the default logger")
		}})
	add(badCase{name: "New/WithRejectionPolicy(nil): AbortPolicy",
		opts: []scheduler.Option{scheduler.WithRejectionPolicy(nil), scheduler.WithMaxQueueSize(1)},
		run: func(t *testing.T, e *badEnv) {
			f, err := e.overflow(t)
			require.ErrorIs(t, err, scheduler.ErrRejected)
			require.Nil(t, f)
			require.Equal(t, uint64(1), e.s.Stats().Rejected)
			e.clear()
		}})
	for _, n := range []int{0, -1, math.MinInt} {
		add(badCase{name: fmt.Sprintf("New/WithMaxQueueSize(%d): unbounded", n),
			opts: []scheduler.Option{scheduler.WithMaxQueueSize(n)},
			run: func(t *testing.T, e *badEnv) {
				for range 100 {
					_, err := e.s.Schedule(nop, time.Hour)
					require.NoError(t, err)
				}
				require.Equal(t, 100, e.s.Stats().Queued)
			}})
	}
	add(badCase{name: "New/WithDecorator(nil) and zero Hooks: no decoration, no hooks",
		opts: []scheduler.Option{scheduler.WithDecorator(nil), scheduler.WithHooks(scheduler.Hooks{})},
		run: func(t *testing.T, e *badEnv) {
			e.requireAnswer(t)
		}})
}
