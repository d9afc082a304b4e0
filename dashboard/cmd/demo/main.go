// Command demo serves the dashboard over an in-process Scheduler running a
// few kinds of jobs (fixed rate, fixed delay, a cron trigger, one-shot
// tasks, one that sometimes fails), on 127.0.0.1 only:
//
//	go run ./dashboard/cmd/demo            # http://127.0.0.1:8080/debug/scheduler/
//	go run ./dashboard/cmd/demo -addr 127.0.0.1:9000
//
// It stops on SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cron"
	"github.com/go-stpe/scheduler/dashboard"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "where to listen; the host must be a loopback address")
	flag.Parse()
	if err := run(*addr); err != nil {
		log.Fatal(err)
	}
}

func run(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("demo: -addr %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("demo: -addr %q: the dashboard has no authentication, so the demo listens on a loopback address only", addr)
	}
	s, err := scheduler.New(4)
	if err != nil {
		return err
	}
	if err := scheduleJobs(s); err != nil {
		return err
	}
	h, err := dashboard.New(s)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/debug/scheduler/", http.StripPrefix("/debug/scheduler", h))
	mux.Handle("/{$}", http.RedirectHandler("/debug/scheduler/", http.StatusFound))
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.ListenAndServe() }()
	log.Printf("dashboard on http://%s/debug/scheduler/", addr)
	select {
	case err = <-serveErr:
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdownCtx)
	_ = s.Stop(shutdownCtx)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// scheduleJobs queues one job of each kind, and a thousand one-shot tasks
// so the queue page has something to page through.
func scheduleJobs(s *scheduler.Scheduler) error {
	work := func(d time.Duration) scheduler.Task {
		return func(ctx context.Context) error {
			select {
			case <-time.After(time.Duration(rand.Int64N(int64(d)))):
			case <-ctx.Done():
			}
			return nil
		}
	}
	flaky := func(context.Context) error {
		if rand.IntN(10) == 0 {
			return errors.New("upstream answered 503")
		}
		return nil
	}
	nightly, err := cron.Parse("0 3 * * *")
	if err != nil {
		return err
	}
	steps := []error{}
	add := func(_ scheduler.ScheduledFuture, err error) { steps = append(steps, err) }
	add(s.ScheduleAtFixedRate(work(20*time.Millisecond), 0, 50*time.Millisecond, scheduler.WithName("heartbeat")))
	add(s.ScheduleAtFixedRate(flaky, 0, 200*time.Millisecond, scheduler.WithName("poll upstream"), scheduler.ContinueOnError()))
	add(s.ScheduleWithFixedDelay(work(300*time.Millisecond), 0, time.Second, scheduler.WithName("sync cache")))
	add(s.ScheduleWithTrigger(work(time.Second), nightly, scheduler.WithName("nightly report")))
	for i := range 1000 {
		add(s.Schedule(work(10*time.Millisecond), time.Minute+time.Duration(i)*time.Second, scheduler.WithName(fmt.Sprintf("send reminder %d", i))))
	}
	return errors.Join(steps...)
}
