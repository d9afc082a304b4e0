package scheduler_test

// The interrupt (runcontext.go): a run's ctx is its own, so an interrupt
// does not leak into the next task on the same worker.

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
)

func TestLifeInterruptDoesNotLeakIntoNextTask(t *testing.T) {
	// As in the JDK, an interrupt delivered to one task does not reach the next
	// task on the same worker.
	s, _ := newManual(t, 1)
	gate := newTaskGate(t)
	first := gate.Start(t, s, gate.Task)
	next, err := scheduler.SubmitCallable(s, func(ctx context.Context) (error, error) { return ctx.Err(), nil })
	require.NoError(t, err)

	require.True(t, first.Cancel(true))
	ctxErr, err := next.Get(testCtx(t))
	require.NoError(t, err)
	require.NoError(t, ctxErr, "the next task's ctx is live")
	require.Equal(t, 1, s.Stats().LargestPoolSize, "both ran on the one worker")
}
