package scheduler_test

// InvokeAll and InvokeAny (callable.go).

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
)

func TestInvokeAllWaitsForEveryTaskAndKeepsOrder(t *testing.T) {
	s, _ := newManual(t, 3)
	lastDone := make(chan struct{})
	fns := []scheduler.Callable[int]{
		func(ctx context.Context) (int, error) {
			// Finishes last: only once the third task has run.
			select {
			case <-lastDone:
			case <-ctx.Done():
			}
			return 10, nil
		},
		func(context.Context) (int, error) { return 0, errBoom },
		func(context.Context) (int, error) { close(lastDone); return 30, nil },
	}
	futures, err := scheduler.InvokeAll(testCtx(t), s, fns)
	require.NoError(t, err, "a failed task is not InvokeAll's error (JDK invokeAll)")
	require.Len(t, futures, 3)
	for i, f := range futures {
		require.True(t, f.IsDone(), "future %d", i)
	}
	v, err := futures[0].Get(testCtx(t))
	require.NoError(t, err)
	require.Equal(t, 10, v)
	_, err = futures[1].Get(testCtx(t))
	require.ErrorIs(t, err, errBoom)
	v, err = futures[2].Get(testCtx(t))
	require.NoError(t, err)
	require.Equal(t, 30, v)
}

func TestInvokeAllCancelsUnfinishedTasksWhenCtxEnds(t *testing.T) {
	s, _ := newManual(t, 2)
	started := make(chan struct{}, 2)
	interrupted := make(chan error, 2)
	finish, openFinish := gate(t)
	var neverRan atomic.Bool
	blocker := func(ctx context.Context) (int, error) {
		started <- struct{}{}
		<-ctx.Done()
		interrupted <- ctx.Err()
		// Hold the worker until the test is done checking, so that the
		// queued fourth task cannot start while InvokeAll is still
		// canceling the futures one by one.
		<-finish
		return 0, ctx.Err()
	}
	fns := []scheduler.Callable[int]{
		func(context.Context) (int, error) { return 1, nil },
		blocker,
		blocker,
		func(context.Context) (int, error) { neverRan.Store(true); return 4, nil }, // queued behind the blockers
	}
	ctx, cancel := context.WithCancel(testCtx(t))
	type result struct {
		futures []*scheduler.Future[int]
		err     error
	}
	res := make(chan result, 1)
	go func() {
		futures, err := scheduler.InvokeAll(ctx, s, fns)
		res <- result{futures, err}
	}()
	recv(t, started)
	recv(t, started)
	cancel()
	r := recv(t, res)
	require.Equal(t, context.Canceled, r.err)
	require.Len(t, r.futures, 4)

	v, err := r.futures[0].Get(testCtx(t))
	require.NoError(t, err)
	require.Equal(t, 1, v)
	for _, i := range []int{1, 2, 3} {
		require.True(t, r.futures[i].IsCanceled(), "future %d", i)
	}
	// With interrupt: the running tasks' ctx was canceled.
	require.ErrorIs(t, recv(t, interrupted), context.Canceled)
	require.ErrorIs(t, recv(t, interrupted), context.Canceled)
	openFinish()
	idle(t, s)
	require.False(t, neverRan.Load(), "the queued task was canceled before it could run")
}

func TestInvokeAnyReturnsFirstSuccessAndCancelsTheRest(t *testing.T) {
	s, _ := newManual(t, 3)
	started := make(chan struct{})
	interrupted := make(chan error, 1)
	fns := []scheduler.Callable[string]{
		func(ctx context.Context) (string, error) {
			close(started)
			<-ctx.Done()
			interrupted <- ctx.Err()
			return "late", nil
		},
		func(context.Context) (string, error) { return "", errBoom },
		func(ctx context.Context) (string, error) {
			select { // succeed once the other is surely running
			case <-started:
			case <-ctx.Done():
			}
			return "winner", nil
		},
	}
	v, err := scheduler.InvokeAny(testCtx(t), s, fns)
	require.NoError(t, err)
	require.Equal(t, "winner", v)
	require.ErrorIs(t, recv(t, interrupted), context.Canceled, "the running loser's ctx was canceled")
}

func TestInvokeAnyFailsWithOneTasksErrorWhenAllFail(t *testing.T) {
	s, _ := newManual(t, 2)
	fns := []scheduler.Callable[int]{
		func(context.Context) (int, error) { return 0, fmt.Errorf("first: %w", errBoom) },
		func(context.Context) (int, error) { return 0, fmt.Errorf("second: %w", errBoom) },
		func(context.Context) (int, error) { panic(fmt.Errorf("third: %w", errBoom)) },
	}
	v, err := scheduler.InvokeAny(testCtx(t), s, fns)
	require.ErrorIs(t, err, errBoom)
	require.NotErrorIs(t, err, scheduler.ErrCanceled)
	require.Zero(t, v)
}

func TestInvokeAnyReturnsCtxErrWhenCtxEndsFirst(t *testing.T) {
	s, _ := newManual(t, 2)
	interrupted := make(chan error, 2)
	blocker := func(ctx context.Context) (int, error) {
		<-ctx.Done()
		interrupted <- ctx.Err()
		return 1, nil
	}
	ctx, cancel := context.WithCancel(testCtx(t))
	cancel()
	v, err := scheduler.InvokeAny(ctx, s, []scheduler.Callable[int]{blocker, blocker})
	require.Equal(t, context.Canceled, err)
	require.Zero(t, v)
	idle(t, s) // the blockers, canceled with interrupt, returned or never ran
}

func TestInvokeRejectsNilElementsAndEmptyLists(t *testing.T) {
	ok := func(context.Context) (int, error) { return 1, nil }
	t.Run("InvokeAll/nil element", func(t *testing.T) {
		s, _ := newManual(t, 1)
		futures, err := scheduler.InvokeAll(testCtx(t), s, []scheduler.Callable[int]{ok, nil, ok})
		require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
		require.Empty(t, futures)
		require.Zero(t, s.Stats().TaskCount, "nothing scheduled")
	})
	t.Run("InvokeAny/nil element", func(t *testing.T) {
		s, _ := newManual(t, 1)
		_, err := scheduler.InvokeAny(testCtx(t), s, []scheduler.Callable[int]{ok, ok, nil})
		require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
		require.Zero(t, s.Stats().TaskCount, "nothing scheduled")
	})
	t.Run("InvokeAny/empty", func(t *testing.T) {
		s, _ := newManual(t, 1)
		_, err := scheduler.InvokeAny(testCtx(t), s, []scheduler.Callable[int]{})
		require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
		_, err = scheduler.InvokeAny[int](testCtx(t), s, nil)
		require.ErrorIs(t, err, scheduler.ErrInvalidArgument)
	})
	t.Run("InvokeAll/empty", func(t *testing.T) {
		s, _ := newManual(t, 1)
		futures, err := scheduler.InvokeAll(testCtx(t), s, []scheduler.Callable[int]{})
		require.NoError(t, err)
		require.Empty(t, futures)
		futures, err = scheduler.InvokeAll[int](testCtx(t), s, nil)
		require.NoError(t, err)
		require.Empty(t, futures)
		require.Zero(t, s.Stats().TaskCount)
	})
}
