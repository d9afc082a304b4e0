// Command dashboard serves the dashboard over an in-process Scheduler
// running a few kinds of jobs (fixed rate, fixed delay, a cron trigger,
// one-shot tasks, one that sometimes fails) and, when redis-server is on
// PATH, over a cluster node on a redis-server of its own (started on a free
// port, stopped on exit) with a few kinds of tasks, some failing until they
// are dead, and a periodic task. It listens on 127.0.0.1 only. From the
// repository's root:
//
//	go run ./examples/dashboard            # http://127.0.0.1:8080/debug/scheduler/
//	go run ./examples/dashboard -addr 127.0.0.1:9000
//	go run ./examples/dashboard -cluster=false
//
// It stops on SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/dashboard"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "where to listen; the host must be a loopback address")
	withCluster := flag.Bool("cluster", true, "also run a cluster node on a redis-server of its own, if redis-server is on PATH")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, *addr, *withCluster, func(url string) { log.Printf("dashboard on %s", url) })
	if err != nil {
		log.Fatal(err)
	}
}

// run serves the demo on addr until ctx ends, then stops everything it
// started. ready gets the dashboard's URL once it is listening.
func run(ctx context.Context, addr string, withCluster bool, ready func(url string)) error {
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
	defer stopScheduler(s)
	if err := scheduleJobs(s); err != nil {
		return err
	}
	var opts []dashboard.Option
	if withCluster {
		c, err := startCluster(ctx)
		switch {
		case errors.Is(err, errNoRedis):
			log.Printf("%v: serving the in-process scheduler only", err)
		case err != nil:
			return err
		default:
			defer c.stop()
			opts = append(opts, dashboard.WithCluster(c.node))
		}
	}
	h, err := dashboard.New(s, opts...)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/debug/scheduler/", http.StripPrefix("/debug/scheduler", h))
	mux.Handle("/{$}", http.RedirectHandler("/debug/scheduler/", http.StatusFound))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("demo: listen: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(l) }()
	ready("http://" + l.Addr().String() + "/debug/scheduler/")
	select {
	case err = <-serveErr:
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdownCtx)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func stopScheduler(s *scheduler.Scheduler) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.Stop(ctx) // the reminders not yet due are dropped: it is a demo
}
