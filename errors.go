package scheduler

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
)

// Errors: the errors callers test with errors.Is, the one shape of every
// error message, and the PanicError a recovered panic becomes.

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

// opError is the one shape of the package's errors: "scheduler: what: why:
// kind", as in "scheduler: Schedule: nil task: invalid argument". what names
// the call or the thing at fault, why says what is wrong (ending with the
// cause's message when there is a cause), and kind is the sentinel
// (ErrInvalidArgument, ErrRejected) in its own words. errors.Is finds the
// sentinel and errors.As the cause.
type opError struct {
	what, why string
	kind      error // a sentinel of this package, or nil
	cause     error // nil, or the error behind this one
}

// invalid returns the error for bad input to what: it wraps
// ErrInvalidArgument.
func invalid(what, format string, args ...any) error {
	return &opError{what: what, why: fmt.Sprintf(format, args...), kind: ErrInvalidArgument}
}

// rejected returns the error for a submission to what that was not
// accepted; it wraps ErrRejected and cause, if not nil.
func rejected(what, why string, cause error) error {
	return &opError{what: what, why: why, kind: ErrRejected, cause: cause}
}

func (e *opError) Error() string {
	var b strings.Builder
	b.WriteString("scheduler: ")
	b.WriteString(e.what)
	b.WriteString(": ")
	b.WriteString(e.why)
	if e.cause != nil {
		b.WriteString(": ")
		b.WriteString(e.cause.Error())
	}
	if e.kind != nil {
		b.WriteString(": ")
		b.WriteString(strings.TrimPrefix(e.kind.Error(), "scheduler: "))
	}
	return b.String()
}

// Unwrap returns the sentinel and the cause, for errors.Is and errors.As.
func (e *opError) Unwrap() []error {
	var errs []error
	if e.kind != nil {
		errs = append(errs, e.kind)
	}
	if e.cause != nil {
		errs = append(errs, e.cause)
	}
	return errs
}

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
