package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
)

// RunHistory's recent failures: which task failed, when and why.

func TestRunHistoryListsRecentFailuresNewestFirstWithPanicStack(t *testing.T) {
	s, clk := newManual(t, 1)
	s.RunHistory(time.Second)
	_, err := s.Schedule(func(context.Context) error { return errors.New("card declined") }, time.Second, scheduler.WithName("charge"))
	require.NoError(t, err)
	_, err = s.Schedule(func(context.Context) error { panic("nil map") }, 2*time.Second, scheduler.WithName("resize"))
	require.NoError(t, err)
	_, err = s.Schedule(nop, 3*time.Second, scheduler.WithName("fine"))
	require.NoError(t, err)
	advance(t, clk, s, 3*time.Second)
	idle(t, s)

	h := s.RunHistory(time.Minute)
	require.Equal(t, 2, h.FailuresRecorded)
	require.Len(t, h.Failures, 2, "a run that succeeds is no failure")
	resize, charge := h.Failures[0], h.Failures[1]
	require.Equal(t, "resize", resize.Name, "newest first")
	require.Contains(t, resize.Error, "nil map")
	require.Contains(t, string(resize.Stack), "history_failures_test.go", "a panic keeps its stack")
	require.Equal(t, scheduler.KindOneShot, resize.Kind)
	require.True(t, resize.Due.Equal(epoch.Add(2*time.Second)), "due %v", resize.Due)
	require.Equal(t, "charge", charge.Name)
	require.Equal(t, "card declined", charge.Error)
	require.Nil(t, charge.Stack, "an error returned has no stack")
	require.False(t, charge.Ended.Before(epoch.Add(time.Second)))
	require.NotEqual(t, charge.ID, resize.ID)
}

func TestRunHistoryKeepsOnlyTheLatestFailuresAndCountsAll(t *testing.T) {
	s, clk := newManual(t, 1)
	s.RunHistory(time.Second)
	const runs = scheduler.RecentFailuresKept + 7
	for i := range runs {
		_, err := s.Schedule(func(context.Context) error { return fmt.Errorf("failure %d", i) },
			time.Duration(i+1)*time.Millisecond)
		require.NoError(t, err)
	}
	advance(t, clk, s, runs*time.Millisecond)
	idle(t, s)

	h := s.RunHistory(time.Second)
	require.Equal(t, runs, h.FailuresRecorded)
	require.Len(t, h.Failures, scheduler.RecentFailuresKept)
	require.Equal(t, fmt.Sprintf("failure %d", runs-1), h.Failures[0].Error)
	last := h.Failures[len(h.Failures)-1].Error
	require.True(t, strings.HasSuffix(last, fmt.Sprint(runs-scheduler.RecentFailuresKept)), "the oldest kept: %s", last)
}

func TestRunHistoryRecordsNoFailureBeforeItIsOn(t *testing.T) {
	s, clk := newManual(t, 1)
	_, err := s.Schedule(func(context.Context) error { return errors.New("early") }, time.Second)
	require.NoError(t, err)
	advance(t, clk, s, time.Second)
	idle(t, s)
	h := s.RunHistory(time.Second)
	require.Zero(t, h.FailuresRecorded)
	require.Empty(t, h.Failures)
}
