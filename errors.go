package scheduler

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// Errors: the errors callers test with errors.Is, and the PanicError a
// recovered panic becomes.

// ErrInvalidArgument is wrapped by the error of every call given bad input:
// [New] with poolSize < 1, a nil [Task] or [Callable], a period or delay <= 0
// for [Scheduler.ScheduleAtFixedRate] and [Scheduler.ScheduleWithFixedDelay],
// [Scheduler.SetCorePoolSize] with n < 1, a nil element or an empty list for
// [InvokeAny], a nil element for [InvokeAll], and a decorator that returns a
// nil Task. Nothing is queued when it is returned. It stands for the JDK's
// NullPointerException and IllegalArgumentException.
var ErrInvalidArgument = errors.New("scheduler: invalid argument")

// ErrRejected is wrapped by the error that [AbortPolicy] returns for a task
// submitted after [Scheduler.Shutdown] or beyond [WithMaxQueueSize], and so by
// every scheduling method under that policy; also by the error of a
// submission whose decorator or rejection policy panicked. It stands for the
// JDK's RejectedExecutionException.
var ErrRejected = errors.New("scheduler: task rejected")

// ErrCanceled is what [Future.Get] and [ScheduledFuture.Wait] return (and what
// errors.Is finds) once the future was canceled: by Cancel, by Shutdown's
// policies, by a rejection that dropped it, or by a periodic run that ended
// after ShutdownNow. It stands for the JDK's CancellationException.
var ErrCanceled = errors.New("scheduler: task canceled")

// errGoexit completes the future of a task that called runtime.Goexit (for
// example t.FailNow from inside a task): the worker that ran it is replaced.
var errGoexit = errors.New("scheduler: task called runtime.Goexit")

// PanicError is the outcome of a run that panicked (or whose BeforeExecute
// hook panicked): [Future.Get] and [ScheduledFuture.Wait] return it, and
// AfterExecute receives it. Value is what was passed to panic and Stack the
// panicking goroutine's stack. The JDK has no counterpart: a Java exception
// thrown by a task becomes an ExecutionException's cause.
type PanicError struct {
	Value any
	Stack []byte
}

func newPanicError(v any) *PanicError {
	return &PanicError{Value: v, Stack: debug.Stack()}
}

// Error reports the panic value; the stack is in Stack.
func (e *PanicError) Error() string {
	return fmt.Sprintf("scheduler: task panicked: %v", e.Value)
}

// Unwrap returns the panic value when it is an error, so that errors.Is and
// errors.As see through a panic(err); otherwise nil.
func (e *PanicError) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}
