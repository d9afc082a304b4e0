package pgdriver_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
	"github.com/go-stpe/scheduler/cluster/pgdriver/internal/pgtest"
)

// The end-to-end tests run cluster nodes (cluster.NewWithDriver) on the
// Postgres driver, each node with a pool of its own on a database of the
// package's shared server, as nodes of separate processes would.

// nodeLease is the lease of the test nodes: short, so that a lost run
// comes back within seconds, yet above the stalls of a busy box under
// -race.
const nodeLease = 2 * time.Second

// nodeOptions are short times for the test nodes.
func nodeOptions() []cluster.Option {
	return []cluster.Option{
		cluster.WithLease(nodeLease),
		cluster.WithWindow(5 * time.Second),
		cluster.WithSweepInterval(time.Second),
		cluster.WithBackoff(func(int) time.Duration { return 5 * time.Millisecond }),
	}
}

// nodePartitions is the number of partitions of the test nodes' stores.
const nodePartitions = 8

// openDriver returns the Postgres driver of the database at url, migrated
// (pgdriver.Open), on a pool of its own closed when t ends.
func openDriver(t *testing.T, url string) *pgdriver.Driver {
	t.Helper()
	d, err := pgdriver.Open(context.Background(), pgtest.NewPool(t, url), pgdriver.Options{Partitions: nodePartitions})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// nodeOn returns a node on a driver of its own on the database at url,
// with the test options and opts, and handlers registered by kind; it is
// stopped when t ends. It returns the driver too, for its Store.
func nodeOn(t *testing.T, url string, handlers map[string]cluster.Handler, opts ...cluster.Option) (*cluster.Node, *pgdriver.Driver) {
	t.Helper()
	d := openDriver(t, url)
	n, err := cluster.NewWithDriver(d, append(nodeOptions(), opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	for kind, h := range handlers {
		if err := n.Handle(kind, h); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(n.StopNow)
	return n, d
}

// startNode starts n.
func startNode(t *testing.T, n *cluster.Node) {
	t.Helper()
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// within waits for a value on ch, failing t after timeout.
func within[T any](t *testing.T, ch <-chan T, timeout time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(timeout):
		t.Fatalf("timed out after %v waiting for %s", timeout, what)
	}
	var zero T
	return zero
}

// eventually polls cond until it holds, failing t after timeout: for
// state that lives in the database or in a node, which no channel
// signals.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// nodeCounts reads the store's counts through n.
func nodeCounts(t *testing.T, n *cluster.Node) cluster.Counts {
	t.Helper()
	c, err := n.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}
