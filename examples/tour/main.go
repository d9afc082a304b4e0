// Command tour shows the scheduler's main features on real time, in about a
// second: a one-shot delayed task with a typed result, a fixed-rate task, a
// fixed-delay task whose runs take time, a cancel, and a graceful shutdown.
//
//	go run ./examples/tour
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/go-stpe/scheduler"
)

func main() {
	s, err := scheduler.New(4)
	if err != nil {
		log.Fatal(err)
	}
	start := time.Now()
	var mu sync.Mutex // serializes the printing of the tasks
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Printf("%7.1fms  %s\n", float64(time.Since(start).Microseconds())/1000, fmt.Sprintf(format, args...))
	}

	// A one-shot task with a typed result, 100 ms from now.
	answer, err := scheduler.ScheduleCallable(s, func(ctx context.Context) (int, error) {
		say("one-shot: computing the answer")
		return 42, nil
	}, 100*time.Millisecond, scheduler.WithName("answer"))
	if err != nil {
		log.Fatal(err)
	}

	// Fixed rate: runs due every 100 ms from 0, whatever each run takes.
	rate := 0
	ticker, err := s.ScheduleAtFixedRate(func(ctx context.Context) error {
		rate++
		say("fixed rate: run %d", rate)
		return nil
	}, 0, 100*time.Millisecond, scheduler.WithName("ticker"))
	if err != nil {
		log.Fatal(err)
	}

	// Fixed delay: each run takes 50 ms, and the next starts 100 ms after
	// the previous one ended, so runs start about 150 ms apart.
	delayRuns := 0
	poller, err := s.ScheduleWithFixedDelay(func(ctx context.Context) error {
		delayRuns++
		say("fixed delay: run %d starts (takes 50ms)", delayRuns)
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
		return nil
	}, 0, 100*time.Millisecond, scheduler.WithName("poller"))
	if err != nil {
		log.Fatal(err)
	}

	// A task that will never run: canceled before it is due.
	doomed, err := s.Schedule(func(ctx context.Context) error {
		say("this never prints")
		return nil
	}, time.Hour)
	if err != nil {
		log.Fatal(err)
	}

	v, err := answer.Get(context.Background())
	say("one-shot: Get returned %d, %v", v, err)

	say("cancel the hour-long task: %v (canceled: %v)", doomed.Cancel(false), doomed.IsCanceled())

	// Let the periodic tasks run for a while, then stop the fixed-rate one.
	time.Sleep(500 * time.Millisecond)
	say("cancel the fixed-rate task: %v", ticker.Cancel(false))
	if err := ticker.Wait(context.Background()); errors.Is(err, scheduler.ErrCanceled) {
		say("fixed rate: its future reports %v", err)
	}

	// Graceful shutdown: queued periodic tasks are canceled (the JDK's
	// default policy), running ones finish, workers exit.
	s.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.AwaitTermination(ctx); err != nil {
		log.Fatal(err)
	}
	say("shut down: poller canceled=%v, terminated=%v", poller.IsCanceled(), s.IsTerminated())
	st := s.Stats()
	say("stats: %d runs completed, %d canceled, largest pool %d", st.Completed, st.Canceled, st.LargestPoolSize)
}
