package scheduler

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"time"
)

// Callables and the invoke functions: tasks with a typed result (JDK
// schedule(Callable), submit(Callable), invokeAll, invokeAny). They are
// functions, not methods, because Go methods cannot have type parameters.

// ScheduleCallable runs fn once, delay from now, and returns a Future whose
// Get yields fn's result (JDK schedule(Callable, delay)). Errors are those
// of [Scheduler.Schedule]; a nil s or fn is ErrInvalidArgument.
func ScheduleCallable[T any](s *Scheduler, fn Callable[T], delay time.Duration, opts ...TaskOption) (*Future[T], error) {
	if s == nil || fn == nil {
		return nil, invalid("ScheduleCallable", "nil scheduler or callable")
	}
	f := &Future[T]{}
	body := func(ctx context.Context) error {
		v, err := fn(ctx)
		if err == nil {
			// Read only after the state becomes stateNormal, which
			// complete sets after this body returns.
			f.value = v
		}
		return err
	}
	if err := s.initTask(&f.futureTask, body, KindOneShot, 0, opts, f); err != nil {
		return nil, err
	}
	if _, err := s.delayedExecute(&f.futureTask, delay); err != nil {
		return nil, err
	}
	return f, nil
}

// SubmitCallable runs fn as soon as a worker is free (JDK submit(Callable)).
func SubmitCallable[T any](s *Scheduler, fn Callable[T], opts ...TaskOption) (*Future[T], error) {
	return ScheduleCallable(s, fn, 0, opts...)
}

// InvokeAll runs every fn and waits for all of them (JDK invokeAll). It
// returns their futures, in order, all done. If ctx ends first it cancels
// the unfinished ones (with interrupt) and returns all futures with
// ctx.Err(). A nil element is ErrInvalidArgument and schedules nothing; an
// empty list returns an empty result. If a submission is rejected, the
// futures already made are canceled and the error is returned.
func InvokeAll[T any](ctx context.Context, s *Scheduler, fns []Callable[T]) ([]*Future[T], error) {
	if s == nil {
		return nil, invalid("InvokeAll", "nil scheduler")
	}
	if i := slices.IndexFunc(fns, func(fn Callable[T]) bool { return fn == nil }); i >= 0 {
		return nil, invalid("InvokeAll", "callable %d is nil", i)
	}
	futures := make([]*Future[T], 0, len(fns))
	cancelAll := func() { cancelLastFirst(futures) }
	for _, fn := range fns {
		f, err := SubmitCallable(s, fn)
		if err != nil {
			cancelAll()
			return nil, err
		}
		futures = append(futures, f)
	}
	for _, f := range futures {
		if f.Wait(ctx) != nil && ctx.Err() != nil {
			cancelAll()
			return futures, ctx.Err()
		}
	}
	return futures, nil
}

// cancelLastFirst cancels futures with interrupt, the last submitted first:
// interrupting a running early task frees its worker, which would otherwise
// start a later, still queued task before the sweep reached it.
func cancelLastFirst[T any](futures []*Future[T]) {
	for i := len(futures) - 1; i >= 0; i-- {
		futures[i].Cancel(true)
	}
}

// InvokeAny runs every fn and returns the result of the first that succeeds,
// canceling the rest (JDK invokeAny). If all fail, the error wraps one of
// their errors; if ctx ends first, ctx.Err(). A nil element or an empty list
// is ErrInvalidArgument and schedules nothing.
func InvokeAny[T any](ctx context.Context, s *Scheduler, fns []Callable[T]) (T, error) {
	var zero T
	if s == nil || len(fns) == 0 {
		return zero, invalid("InvokeAny", "nil scheduler or no callables")
	}
	if i := slices.IndexFunc(fns, func(fn Callable[T]) bool { return fn == nil }); i >= 0 {
		return zero, invalid("InvokeAny", "callable %d is nil", i)
	}
	futures := make([]*Future[T], 0, len(fns))
	defer func() { cancelLastFirst(futures) }()
	for _, fn := range fns {
		f, err := SubmitCallable(s, fn)
		if err != nil {
			return zero, err
		}
		futures = append(futures, f)
	}
	// Wait for whichever finishes first, with one select over every Done
	// channel and ctx: no helper goroutine, and a future canceled by some
	// other path is seen as finished too.
	cases := make([]reflect.SelectCase, len(futures)+1)
	cases[0] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())}
	for i, f := range futures {
		cases[i+1] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(f.Done())}
	}
	var lastErr error
	for range futures {
		i, _, _ := reflect.Select(cases)
		if i == 0 {
			return zero, ctx.Err()
		}
		cases[i].Chan = reflect.Value{} // a zero Chan disables the case
		v, err := futures[i-1].Get(ctx)
		if err == nil {
			return v, nil
		}
		lastErr = err
	}
	return zero, fmt.Errorf("scheduler: InvokeAny: all %d tasks failed: %w", len(fns), lastErr)
}
