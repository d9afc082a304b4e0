package schedulertest_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/schedulertest"
)

// midnight is where the examples' clocks start; their output shows times of
// day, so 00:01 is one minute in.
var midnight = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// The recipe: give the scheduler a manual clock, move the clock, and call
// AwaitIdle before checking anything. Each Advance makes one run due, and
// AwaitIdle returns once it has happened.
func Example() {
	ctx := context.Background()
	clk := schedulertest.NewManualClock(midnight)
	s, err := scheduler.New(1, scheduler.WithClock(clk))
	if err != nil {
		log.Fatal(err)
	}
	defer func() { s.ShutdownNow(); _ = s.AwaitTermination(ctx) }()

	_, err = s.ScheduleAtFixedRate(func(ctx context.Context) error {
		fmt.Println("heartbeat at", clk.Now().Format("15:04:05"))
		return nil
	}, 30*time.Second, 30*time.Second)
	if err != nil {
		log.Fatal(err)
	}

	for range 3 {
		clk.Advance(30 * time.Second)            // one heartbeat falls due...
		if err := s.AwaitIdle(ctx); err != nil { // ...and has been sent
			log.Fatal(err)
		}
	}
	fmt.Println("completed runs:", s.Stats().Completed)
	// Output:
	// heartbeat at 00:00:30
	// heartbeat at 00:01:00
	// heartbeat at 00:01:30
	// completed runs: 3
}

// A manual clock on its own: timers fire only when the clock is moved, in
// due order, and each one receives its own due time.
func ExampleNewManualClock() {
	clk := schedulertest.NewManualClock(midnight)
	later := clk.NewTimer(2 * time.Minute)
	sooner := clk.NewTimer(time.Minute)

	next, _ := clk.NextDue()
	fmt.Println("live timers:", clk.Waiters(), "next due:", next.Format("15:04"))

	clk.Advance(90 * time.Second)
	fmt.Println("sooner received", (<-sooner.C()).Format("15:04:05"))
	select {
	case <-later.C():
		fmt.Println("later fired too early")
	default:
		fmt.Println("later still waits; clock reads", clk.Now().Format("15:04:05"))
	}
	fmt.Println("stopped later:", later.Stop(), "live timers:", clk.Waiters())
	// Output:
	// live timers: 2 next due: 00:01
	// sooner received 00:01:00
	// later still waits; clock reads 00:01:30
	// stopped later: true live timers: 0
}

// Advance fires the timers on the way at their own due times, so an
// AfterFunc callback reads its due time even inside one long jump.
func ExampleManualClock_AfterFunc() {
	clk := schedulertest.NewManualClock(midnight)
	clk.AfterFunc(90*time.Second, func() {
		fmt.Println("callback at", clk.Now().Format("15:04:05"))
	})
	clk.Advance(5 * time.Minute)
	fmt.Println("after Advance", clk.Now().Format("15:04:05"))
	// Output:
	// callback at 00:01:30
	// after Advance 00:05:00
}

// One big Advance is not the same as the same span of real time: the
// scheduler wakes only after Advance has returned, when the clock reads the
// end of the jump. A fixed-rate task catches up with back-to-back runs (the
// JDK's rule); a fixed-delay task counts its delay from the end of its run,
// so it runs once. AdvanceAndSettle moves time the way real time would.
func ExampleManualClock_Advance() {
	ctx := context.Background()
	clk := schedulertest.NewManualClock(midnight)
	s, err := scheduler.New(1, scheduler.WithClock(clk))
	if err != nil {
		log.Fatal(err)
	}
	defer func() { s.ShutdownNow(); _ = s.AwaitTermination(ctx) }()

	var rate, delay []string // run times; AwaitIdle orders the reads after the runs
	_, err = s.ScheduleAtFixedRate(func(ctx context.Context) error {
		rate = append(rate, clk.Now().Format("15:04"))
		return nil
	}, time.Minute, time.Minute)
	if err != nil {
		log.Fatal(err)
	}
	_, err = s.ScheduleWithFixedDelay(func(ctx context.Context) error {
		delay = append(delay, clk.Now().Format("15:04"))
		return nil
	}, time.Minute, time.Minute)
	if err != nil {
		log.Fatal(err)
	}

	clk.Advance(3 * time.Minute)
	if err := s.AwaitIdle(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("fixed rate: ", rate)
	fmt.Println("fixed delay:", delay)
	// Output:
	// fixed rate:  [00:03 00:03 00:03]
	// fixed delay: [00:03]
}

// AdvanceAndSettle steps from timer to timer and lets the scheduler settle
// at each one, so a fixed-delay task (or a task that schedules another)
// runs at the instants it would on a real clock.
func ExampleAdvanceAndSettle() {
	ctx := context.Background()
	clk := schedulertest.NewManualClock(midnight)
	s, err := scheduler.New(1, scheduler.WithClock(clk))
	if err != nil {
		log.Fatal(err)
	}
	defer func() { s.ShutdownNow(); _ = s.AwaitTermination(ctx) }()

	_, err = s.ScheduleWithFixedDelay(func(ctx context.Context) error {
		fmt.Println("fixed delay: run at", clk.Now().Format("15:04"))
		return nil
	}, time.Minute, time.Minute)
	if err != nil {
		log.Fatal(err)
	}

	if err := schedulertest.AdvanceAndSettle(ctx, clk, s, 3*time.Minute); err != nil {
		log.Fatal(err)
	}
	fmt.Println("clock reads", clk.Now().Format("15:04"))
	// Output:
	// fixed delay: run at 00:01
	// fixed delay: run at 00:02
	// fixed delay: run at 00:03
	// clock reads 00:03
}

// Code that waits on the clock itself, not through a scheduler, must have
// armed its timer before the test moves the clock, or the Advance passes it
// by. BlockUntilWaiters waits for that without polling.
func ExampleManualClock_BlockUntilWaiters() {
	ctx := context.Background()
	clk := schedulertest.NewManualClock(midnight)

	woke := make(chan time.Time)
	go func() { // the code under test: waits one minute on clk
		t := clk.NewTimer(time.Minute)
		woke <- <-t.C()
	}()

	if err := clk.BlockUntilWaiters(ctx, 1); err != nil { // its timer is armed
		log.Fatal(err)
	}
	clk.Advance(time.Minute)
	fmt.Println("woke at", (<-woke).Format("15:04"))
	// Output: woke at 00:01
}
