package chaoskit

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
)

// Kinds the workers handle: the producer schedules kindWork and
// kindFlaky; periodicTick is the workers' cluster-once periodic task.
const (
	kindWork     = "work"
	kindFlaky    = "flaky"
	periodicTick = "tick"
)

// flakyFailures is how many runs of a flaky task fail before one
// succeeds: fewer than the default retry limit, so none ends dead.
const flakyFailures = 2

// WorkerFlags are the flags Run gives every worker process.
type WorkerFlags struct {
	Name   string        // the worker's name in the ledger
	Ledger string        // the ledger file this process appends to
	Skew   time.Duration // how far the node's clock is off
}

// Register defines the flags on fs.
func (f *WorkerFlags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Name, "name", "", "worker name written to the ledger")
	fs.StringVar(&f.Ledger, "ledger", "", "ledger file")
	fs.DurationVar(&f.Skew, "skew", 0, "how far the node's clock is off")
}

// args is the command line that Register parses back into f.
func (f WorkerFlags) args() []string {
	return []string{"-name", f.Name, "-ledger", f.Ledger, "-skew", f.Skew.String()}
}

// Serve is a worker process's life: it makes the node with newNode,
// passing the chaos options (the skewed clock, the lease, window, sweep
// and backoff), registers the chaos kinds and the periodic task, writes
// every run to the ledger, starts the node and prints "ready", and stops
// it gracefully on SIGTERM or SIGINT.
func Serve(f WorkerFlags, newNode func(opts ...cluster.Option) (*cluster.Node, error)) error {
	file, err := os.OpenFile(f.Ledger, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer file.Close()
	led := &ledgerWriter{f: file, name: f.Name}

	n, err := newNode(
		cluster.WithClock(skewed{scheduler.SystemClock(), f.Skew}),
		cluster.WithLease(lease),
		cluster.WithWindow(window),
		cluster.WithSweepInterval(sweep),
		cluster.WithBackoff(func(int) time.Duration { return backoff }))
	if err != nil {
		return err
	}
	if err := n.Handle(kindWork, led.handler); err != nil {
		return err
	}
	if err := n.Handle(kindFlaky, led.flakyHandler); err != nil {
		return err
	}
	// Every occurrence is checked to run (MisfireRunEach): under the
	// default a tick held up by a fault would coalesce with later ones.
	if err := n.Periodic(periodicTick, everyTick(tick), led.handler, cluster.WithMisfire(cluster.MisfireRunEach)); err != nil {
		return err
	}
	stop := make(chan struct{})
	defer close(stop)
	go led.watchStalls(stop)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	if err := n.Start(context.Background()); err != nil {
		return err
	}
	fmt.Println("ready")
	<-sigs
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return n.Stop(ctx)
}

// skewed is the system clock off by a fixed amount.
type skewed struct {
	scheduler.Clock
	off time.Duration
}

func (c skewed) Now() time.Time { return c.Clock.Now().Add(c.off) }

// everyTick fires at every multiple of d.
func everyTick(d time.Duration) scheduler.Trigger {
	return scheduler.TriggerFunc(func(t time.Time) time.Time { return t.Truncate(d).Add(d) })
}
