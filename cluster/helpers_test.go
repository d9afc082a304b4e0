package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// testLease is the lease of the test nodes: short, so that a task lost
// with its node comes back within seconds, yet long enough that the stalls
// of a busy shared CI box (a second and more under -race) do not expire a
// live run's lease.
const testLease = 2 * time.Second

// testOptions are short times for tests.
func testOptions() []cluster.Option {
	return []cluster.Option{
		cluster.WithLease(testLease),
		cluster.WithWindow(5 * time.Second),
		cluster.WithSweepInterval(time.Second),
		cluster.WithBackoff(func(int) time.Duration { return 5 * time.Millisecond }),
	}
}

// client returns a client of srv closed when t ends.
func client(t *testing.T, srv *redistest.Server) *redis.Client {
	t.Helper()
	c := srv.Client()
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// newNode returns a node on srv with the test options and opts, its own
// client, and handlers registered by kind; it is stopped when t ends.
func newNode(t *testing.T, srv *redistest.Server, handlers map[string]cluster.Handler, opts ...cluster.Option) *cluster.Node {
	t.Helper()
	n, err := cluster.New(client(t, srv), append(testOptions(), opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	for kind, h := range handlers {
		if err := n.Handle(kind, h); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(n.StopNow)
	return n
}

// start starts n.
func start(t *testing.T, n *cluster.Node) {
	t.Helper()
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds, failing t after timeout: for state that
// lives in Redis or another process, which no channel can signal.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// recv waits for a value on ch, failing t after timeout.
func recv[T any](t *testing.T, ch <-chan T, timeout time.Duration, what string) T {
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

// skewedClock is the system clock off by a fixed amount: a replica whose
// clock is wrong.
type skewedClock struct {
	scheduler.Clock
	off time.Duration
}

func (c skewedClock) Now() time.Time { return c.Clock.Now().Add(c.off) }

// counts reads the store's counts through n.
func counts(t *testing.T, n *cluster.Node) cluster.Counts {
	t.Helper()
	c, err := n.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}
