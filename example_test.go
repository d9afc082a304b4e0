package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/schedulertest"
)

// A one-shot task with a result, on real time.
func ExampleScheduleCallable() {
	s, _ := scheduler.New(1)
	defer s.ShutdownNow()

	f, err := scheduler.ScheduleCallable(s, func(ctx context.Context) (string, error) {
		return "hello", nil
	}, 10*time.Millisecond)
	if err != nil {
		panic(err)
	}
	v, err := f.Get(context.Background())
	fmt.Println(v, err)
	// Output: hello <nil>
}

// Fixed-rate runs driven by a manual clock: each Advance makes one run due,
// and AwaitIdle returns once it has happened.
func ExampleScheduler_ScheduleAtFixedRate() {
	clk := schedulertest.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s, _ := scheduler.New(1, scheduler.WithClock(clk))
	defer s.ShutdownNow()
	ctx := context.Background()

	_, _ = s.ScheduleAtFixedRate(func(ctx context.Context) error {
		fmt.Println("tick at", clk.Now().Format("15:04"))
		return nil
	}, 0, time.Hour)

	for range 3 {
		_ = s.AwaitIdle(ctx)
		clk.Advance(time.Hour)
	}
	_ = s.AwaitIdle(ctx)
	// Output:
	// tick at 00:00
	// tick at 01:00
	// tick at 02:00
	// tick at 03:00
}

// A fixed-rate task that falls behind catches up with back-to-back runs,
// never skipping one (the JDK's rule): one jump of three periods gives three
// runs at once.
func ExampleScheduler_ScheduleAtFixedRate_catchUp() {
	clk := schedulertest.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s, _ := scheduler.New(1, scheduler.WithClock(clk))
	defer s.ShutdownNow()
	ctx := context.Background()

	runs := 0
	_, _ = s.ScheduleAtFixedRate(func(ctx context.Context) error {
		runs++
		return nil
	}, time.Minute, time.Minute)

	clk.Advance(3 * time.Minute)
	_ = s.AwaitIdle(ctx)
	fmt.Println("runs after 3 minutes:", runs)
	// Output: runs after 3 minutes: 3
}

// A periodic task stops at its first failed run, and its future reports the
// error: no silent death.
func ExampleScheduler_ScheduleWithFixedDelay() {
	clk := schedulertest.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	// The failed run is also logged; a discarding logger keeps the log out
	// of this example's output.
	s, _ := scheduler.New(1, scheduler.WithClock(clk), scheduler.WithLogger(slog.New(slog.DiscardHandler)))
	defer s.ShutdownNow()
	ctx := context.Background()

	errFull := errors.New("disk full")
	n := 0
	f, _ := s.ScheduleWithFixedDelay(func(ctx context.Context) error {
		n++
		if n == 3 {
			return errFull
		}
		return nil
	}, 0, time.Second)

	_ = schedulertest.AdvanceAndSettle(ctx, clk, s, 10*time.Second)
	fmt.Println("runs:", n, "stopped by disk full:", errors.Is(f.Wait(ctx), errFull))
	// Output: runs: 3 stopped by disk full: true
}

// Cancel before the task is due: it never runs.
func ExampleScheduledFuture_Cancel() {
	s, _ := scheduler.New(1)
	defer s.ShutdownNow()

	f, _ := s.Schedule(func(ctx context.Context) error {
		fmt.Println("never printed")
		return nil
	}, time.Hour)
	fmt.Println(f.Cancel(false), f.IsCanceled(), f.IsDone())
	fmt.Println(errors.Is(f.Wait(context.Background()), scheduler.ErrCanceled))
	// Output:
	// true true true
	// true
}

// Graceful shutdown: queued one-shot tasks still run, periodic ones are
// canceled, and AwaitTermination waits for the workers to exit.
func ExampleScheduler_Shutdown() {
	s, _ := scheduler.New(2)
	done, _ := s.Schedule(func(ctx context.Context) error { return nil }, 10*time.Millisecond)
	periodic, _ := s.ScheduleAtFixedRate(func(ctx context.Context) error { return nil }, time.Hour, time.Hour)

	s.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fmt.Println(s.AwaitTermination(ctx))
	fmt.Println("one-shot ran:", done.IsDone() && !done.IsCanceled())
	fmt.Println("periodic canceled:", periodic.IsCanceled())
	// Output:
	// <nil>
	// one-shot ran: true
	// periodic canceled: true
}

// ShutdownNow hands back the tasks that never started, so nothing accepted
// is lost.
func ExampleScheduler_ShutdownNow() {
	s, _ := scheduler.New(1)
	_, _ = s.Schedule(func(ctx context.Context) error { return nil }, time.Hour, scheduler.WithName("report"))
	_, _ = s.Schedule(func(ctx context.Context) error { return nil }, 2*time.Hour, scheduler.WithName("cleanup"))

	for _, f := range s.ShutdownNow() {
		fmt.Println("not started:", f.Name())
	}
	fmt.Println(s.AwaitTermination(context.Background()))
	// Output:
	// not started: report
	// not started: cleanup
	// <nil>
}

// A panic in a task is recovered: the future holds a *PanicError and the
// worker goes on.
func ExamplePanicError() {
	// The panic is also logged; a discarding logger keeps the log out of
	// this example's output.
	s, _ := scheduler.New(1, scheduler.WithLogger(slog.New(slog.DiscardHandler)))
	defer s.ShutdownNow()

	f, _ := s.Submit(func(ctx context.Context) error { panic("boom") })
	var pe *scheduler.PanicError
	fmt.Println(errors.As(f.Wait(context.Background()), &pe), pe.Value)

	g, _ := scheduler.SubmitCallable(s, func(ctx context.Context) (int, error) { return 7, nil })
	fmt.Println(g.Get(context.Background()))
	// Output:
	// true boom
	// 7 <nil>
}

// InvokeAny returns the first success and cancels the rest.
func ExampleInvokeAny() {
	s, _ := scheduler.New(2)
	defer s.ShutdownNow()

	v, err := scheduler.InvokeAny(context.Background(), s, []scheduler.Callable[string]{
		func(ctx context.Context) (string, error) { return "", errors.New("replica down") },
		func(ctx context.Context) (string, error) { return "replica 2", nil },
	})
	fmt.Println(v, err)
	// Output: replica 2 <nil>
}
