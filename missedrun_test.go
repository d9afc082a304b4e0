package scheduler_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
)

func TestMissedRunsOfAFixedRateTask(t *testing.T) {
	// The example: period 10 s, initial delay 10 s, Advance(35 s).
	for _, tc := range []struct {
		name     string
		opts     []scheduler.TaskOption
		wantDues []time.Duration
	}{
		{"default: catch up", nil, []time.Duration{10 * time.Second, 20 * time.Second, 30 * time.Second}},
		{"CatchUpMissed", []scheduler.TaskOption{scheduler.WithMissedRuns(scheduler.CatchUpMissed)},
			[]time.Duration{10 * time.Second, 20 * time.Second, 30 * time.Second}},
		{"CoalesceMissed", []scheduler.TaskOption{scheduler.WithMissedRuns(scheduler.CoalesceMissed)},
			[]time.Duration{30 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, clk := newManual(t, 1)
			var r dueRecorder
			f, err := s.ScheduleAtFixedRate(r.task, 10*time.Second, 10*time.Second, tc.opts...)
			require.NoError(t, err)
			advance(t, clk, s, 35*time.Second)
			require.Equal(t, tc.wantDues, r.get())
			require.Equal(t, 5*time.Second, f.Delay(), "the next run is due at 40 s: the phase is kept")
			advance(t, clk, s, 5*time.Second)
			require.Equal(t, 40*time.Second, r.get()[len(r.get())-1])
		})
	}
}

func TestMissedRunsOfATriggerTask(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     []scheduler.TaskOption
		wantDues []time.Duration
	}{
		{"default: coalesce", nil, []time.Duration{30 * time.Second}},
		{"CatchUpMissed", []scheduler.TaskOption{scheduler.WithMissedRuns(scheduler.CatchUpMissed)},
			[]time.Duration{10 * time.Second, 20 * time.Second, 30 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, clk := newManual(t, 1)
			var r dueRecorder
			f, err := s.ScheduleWithTrigger(r.task, everyTen, tc.opts...)
			require.NoError(t, err)
			advance(t, clk, s, 35*time.Second)
			require.Equal(t, tc.wantDues, r.get())
			require.Equal(t, 5*time.Second, f.Delay())
		})
	}
}

func TestMissedRunPolicyIsIgnoredForOneShotAndFixedDelayTasks(t *testing.T) {
	s, clk := newManual(t, 1)
	var once, delayed atomic.Int32
	_, err := s.Schedule(countRuns(&once), 10*time.Second, scheduler.WithMissedRuns(scheduler.CoalesceMissed))
	require.NoError(t, err)
	_, err = s.ScheduleWithFixedDelay(countRuns(&delayed), 10*time.Second, 10*time.Second,
		scheduler.WithMissedRuns(scheduler.CoalesceMissed))
	require.NoError(t, err)
	advance(t, clk, s, 35*time.Second)
	require.Equal(t, int32(1), once.Load())
	require.Equal(t, int32(1), delayed.Load(), "fixed delay runs once per jump, as without the option")
}

func TestUnknownMissedRunPolicyIsRejectedForEveryKindOfTask(t *testing.T) {
	s, _ := newManual(t, 1)
	bad := scheduler.WithMissedRuns(scheduler.MissedRunPolicy(7))
	_, err := s.Schedule(nop, 0, bad)
	require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
	_, err = s.ScheduleAtFixedRate(nop, 0, time.Second, bad)
	require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
	_, err = s.ScheduleWithFixedDelay(nop, 0, time.Second, bad)
	require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
	_, err = s.ScheduleWithTrigger(nop, everyTen, bad)
	require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
	_, err = scheduler.ScheduleCallable(s, func(context.Context) (int, error) { return 1, nil }, 0, bad)
	require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
	require.Zero(t, s.Stats().Queued)
	require.Equal(t, "MissedRunPolicy(7)", scheduler.MissedRunPolicy(7).String())
	require.Equal(t, "CoalesceMissed", scheduler.CoalesceMissed.String())
}
