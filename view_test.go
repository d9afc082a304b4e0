package scheduler_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
)

// The views a page uses: PeekQueue, Running and TaskByID.

func TestPeekQueueIsTheHeadOfQueueWithoutCopyingIt(t *testing.T) {
	s, _ := newManual(t, 1)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		// Many ties: PeekQueue must break them by submission, as Queue.
		delay := time.Duration(rng.IntN(200)) * time.Second
		_, err := s.Schedule(nop, time.Hour+delay, scheduler.WithName("t"+string(rune('a'+i%26))))
		require.NoError(t, err)
	}
	all := s.Queue()
	for _, limit := range []int{1, 2, 7, 100, 1999, 2000, 5000} {
		got := s.PeekQueue(limit)
		want := all[:min(limit, len(all))]
		require.Len(t, got, len(want), "limit %d", limit)
		for i := range want {
			require.Same(t, want[i], got[i].Future, "limit %d, slot %d", limit, i)
			require.Equal(t, want[i].Name(), got[i].Name)
		}
		for i := 1; i < len(got); i++ {
			require.False(t, got[i].Due.Before(got[i-1].Due), "due order at %d", i)
		}
	}
	require.Nil(t, s.PeekQueue(0))
	require.Nil(t, s.PeekQueue(-1))
}

func TestPeekQueueDescribesEachKind(t *testing.T) {
	s, clk := newManual(t, 1)
	trig := scheduler.TriggerFunc(func(t time.Time) time.Time { return t.Add(time.Hour).Truncate(time.Hour) })
	once, err := s.Schedule(nop, time.Minute, scheduler.WithName("once"))
	require.NoError(t, err)
	rate, err := s.ScheduleAtFixedRate(nop, 2*time.Minute, 10*time.Second)
	require.NoError(t, err)
	delay, err := s.ScheduleWithFixedDelay(nop, 3*time.Minute, 20*time.Second)
	require.NoError(t, err)
	cal, err := s.ScheduleWithTrigger(nop, trig)
	require.NoError(t, err)
	gone, err := s.Schedule(nop, 4*time.Minute)
	require.NoError(t, err)
	require.True(t, gone.Cancel(false))

	got := s.PeekQueue(10)
	require.Len(t, got, 5)
	now := clk.Now()
	want := []scheduler.QueuedTask{
		{Future: once, Name: "once", Kind: scheduler.KindOneShot, Due: now.Add(time.Minute)},
		{Future: rate, Kind: scheduler.KindFixedRate, Due: now.Add(2 * time.Minute), Period: 10 * time.Second},
		{Future: delay, Kind: scheduler.KindFixedDelay, Due: now.Add(3 * time.Minute), Period: 20 * time.Second},
		{Future: gone, Kind: scheduler.KindOneShot, Due: now.Add(4 * time.Minute), Canceled: true},
		{Future: cal, Kind: scheduler.KindTrigger, Due: now.Add(time.Hour).Truncate(time.Hour)},
	}
	for i := range want {
		g := got[i]
		require.Same(t, want[i].Future, g.Future, "slot %d", i)
		require.Equal(t, want[i].Name, g.Name)
		require.Equal(t, want[i].Kind, g.Kind)
		require.True(t, want[i].Due.Equal(g.Due), "slot %d: due %v, want %v", i, g.Due, want[i].Due)
		require.Equal(t, want[i].Period, g.Period)
		require.Equal(t, want[i].Canceled, g.Canceled)
		f, ok := s.TaskByID(g.ID)
		require.True(t, ok)
		require.Same(t, g.Future, f, "TaskByID finds slot %d", i)
	}
	require.NotNil(t, got[4].Trigger)
	require.Nil(t, got[0].Trigger)
	require.Equal(t, "one-shot", scheduler.KindOneShot.String())
	require.Equal(t, "fixed rate", scheduler.KindFixedRate.String())
	require.Equal(t, "fixed delay", scheduler.KindFixedDelay.String())
	require.Equal(t, "trigger", scheduler.KindTrigger.String())
	require.Equal(t, "TaskKind(9)", scheduler.TaskKind(9).String())
}

func TestRunningAndTaskByID(t *testing.T) {
	s, clk := newManual(t, 2)
	g := newTaskGate(t)
	a := g.Start(t, s, g.Task)
	b := g.Start(t, s, g.Task)
	queued, err := s.Schedule(nop, time.Hour)
	require.NoError(t, err)
	id := s.PeekQueue(1)[0].ID

	runs := s.Running()
	require.Len(t, runs, 2)
	var futures []scheduler.ScheduledFuture
	for _, r := range runs {
		futures = append(futures, r.Future)
		require.True(t, r.Started.Equal(clk.Now()))
		require.True(t, r.Due.Equal(clk.Now()))
	}
	require.ElementsMatch(t, []scheduler.ScheduledFuture{a, b}, futures)

	f, ok := s.TaskByID(id)
	require.True(t, ok)
	require.Same(t, queued, f)
	require.True(t, f.Cancel(false), "a page cancels through the future it found")

	g.Open()
	require.NoError(t, a.Wait(testCtx(t)))
	require.NoError(t, b.Wait(testCtx(t)))
	idle(t, s)
	require.Empty(t, s.Running())
	_, ok = s.TaskByID(id + 1000)
	require.False(t, ok, "an unknown ID")
}

func TestTaskByIDFindsARunningTask(t *testing.T) {
	s, _ := newManual(t, 1)
	started := make(chan struct{})
	release, open := gate(t)
	f, err := s.Submit(func(ctx context.Context) error { hold(ctx, started, release); return nil })
	require.NoError(t, err)
	recv(t, started)
	_, err = s.Schedule(nop, time.Hour) // the next ID
	require.NoError(t, err)
	next := s.PeekQueue(1)[0].ID
	got, ok := s.TaskByID(next - 1) // IDs are handed out in submission order
	require.True(t, ok)
	require.Same(t, f, got)
	open()
	require.NoError(t, f.Wait(testCtx(t)))
}
