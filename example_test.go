package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/schedulertest"
)

// The README's quick start: a service that runs a heartbeat every 30 s and a
// report tomorrow, and on SIGTERM or Ctrl-C stops in one context-bounded
// call, as net/http's Server.Shutdown does. Stop rejects new work, drops the
// queued tasks (the report, which it reports), lets a run in progress finish
// and gives up on it after 10 s. The release rehearsal builds this body as a
// program and checks that it exits 0 on SIGTERM.
func Example_quickStart() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	s, err := scheduler.New(4) // 4 workers, started as tasks arrive
	if err != nil {
		log.Fatal(err)
	}
	heartbeat := func(ctx context.Context) error { log.Print("heartbeat"); return nil }
	report := func(ctx context.Context) error { log.Print("report"); return nil }
	if _, err := s.ScheduleAtFixedRate(heartbeat, 0, 30*time.Second, scheduler.WithName("heartbeat")); err != nil {
		log.Fatal(err)
	}
	if _, err := s.Schedule(report, 24*time.Hour, scheduler.WithName("report")); err != nil {
		log.Fatal(err)
	}

	<-ctx.Done() // SIGTERM or Ctrl-C
	stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Stop(stopCtx); err != nil {
		log.Print(err) // scheduler: stop: 1 one-shot task dropped before it ran
	}
}

// Stop drops what has not started and says which one-shot tasks were lost;
// a periodic task ends with it and is not counted.
func ExampleScheduler_Stop() {
	s, _ := scheduler.New(1)
	_, _ = s.ScheduleAtFixedRate(func(ctx context.Context) error { return nil }, time.Hour, time.Hour, scheduler.WithName("heartbeat"))
	_, _ = s.Schedule(func(ctx context.Context) error { return nil }, 24*time.Hour, scheduler.WithName("report"))

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := s.Stop(ctx)
	fmt.Println(err)
	var se *scheduler.StopError
	if errors.As(err, &se) {
		for _, f := range se.Dropped {
			fmt.Println("dropped:", f.Name(), "canceled:", f.IsCanceled())
		}
	}
	fmt.Println("terminated:", s.IsTerminated())
	// Output:
	// scheduler: stop: 1 one-shot task dropped before it ran
	// dropped: report canceled: true
	// terminated: true
}

// A calendar schedule: a Trigger computes each run's time (here every day at
// 03:00 UTC; package cron parses specs such as "0 3 * * *" into triggers).
// Inside a run, CurrentRun(ctx).Due is the trigger's time exactly. Two days
// pass in a moment on a manual clock.
func ExampleScheduler_ScheduleWithTrigger() {
	clk := schedulertest.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s, _ := scheduler.New(1, scheduler.WithClock(clk))
	defer s.ShutdownNow()

	at3 := scheduler.TriggerFunc(func(t time.Time) time.Time {
		next := t.Truncate(24 * time.Hour).Add(3 * time.Hour)
		if !next.After(t) {
			next = next.Add(24 * time.Hour)
		}
		return next
	})
	_, _ = s.ScheduleWithTrigger(func(ctx context.Context) error {
		r, _ := scheduler.CurrentRun(ctx)
		fmt.Println("nightly run for", r.Due.Format("2006-01-02 15:04"))
		return nil
	}, at3, scheduler.WithName("nightly"))

	_ = schedulertest.AdvanceAndSettle(context.Background(), clk, s, 48*time.Hour)
	// Output:
	// nightly run for 2026-01-01 03:00
	// nightly run for 2026-01-02 03:00
}

// CurrentRun tells a run which due time it serves and how late it started:
// here the clock jumps 90 s, so the run due at 00:01 starts 30 s late.
func ExampleCurrentRun() {
	clk := schedulertest.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s, _ := scheduler.New(1, scheduler.WithClock(clk))
	defer s.ShutdownNow()
	ctx := context.Background()

	_, _ = s.ScheduleAtFixedRate(func(ctx context.Context) error {
		r, ok := scheduler.CurrentRun(ctx)
		fmt.Println(ok, "due", r.Due.Format("15:04:05"), "late", r.Started.Sub(r.Due))
		return nil
	}, 0, time.Minute)

	_ = s.AwaitIdle(ctx)
	clk.Advance(90 * time.Second)
	_ = s.AwaitIdle(ctx)
	_, ok := scheduler.CurrentRun(ctx) // not a run's ctx
	fmt.Println(ok)
	// Output:
	// true due 00:00:00 late 0s
	// true due 00:01:00 late 30s
	// false
}

// Hooks see every run: AfterExecute gets its outcome, Observe its times
// (what otelscheduler turns into metrics). A failed run of a task with
// ContinueOnError does not stop it.
func ExampleWithHooks() {
	clk := schedulertest.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s, _ := scheduler.New(1, scheduler.WithClock(clk),
		scheduler.WithLogger(slog.New(slog.DiscardHandler)), // the failed run is also logged
		scheduler.WithHooks(scheduler.Hooks{
			AfterExecute: func(f scheduler.ScheduledFuture, err error) {
				fmt.Println("after", f.Name(), "err:", err)
			},
			Observe: func(r scheduler.RunInfo) {
				fmt.Println("observed run due", r.Due.Format("15:04"))
			},
		}))
	defer s.ShutdownNow()

	n := 0
	_, _ = s.ScheduleAtFixedRate(func(ctx context.Context) error {
		n++
		if n == 2 {
			return errors.New("disk full")
		}
		return nil
	}, 0, time.Hour, scheduler.WithName("sync"), scheduler.ContinueOnError())

	_ = schedulertest.AdvanceAndSettle(context.Background(), clk, s, 2*time.Hour)
	// Output:
	// after sync err: <nil>
	// observed run due 00:00
	// after sync err: disk full
	// observed run due 01:00
	// after sync err: <nil>
	// observed run due 02:00
}

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
