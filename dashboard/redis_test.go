package dashboard_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-stpe/scheduler/cluster"
)

// requireRedisEnv, set to 1 (CI sets it), turns a missing redis-server
// from a skip into a failure.
const requireRedisEnv = "SCHEDULER_REQUIRE_REDIS"

// startRedis starts a redis-server of its own for t, on a free local port
// with a temporary directory and no persistence, and stops it when t ends.
// (The cluster module's starter is internal to that module.)
func startRedis(t *testing.T) *redis.Client {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		msg := "redis-server not found on PATH; install it: apt-get install redis-server"
		if os.Getenv(requireRedisEnv) == "1" {
			t.Fatal(msg + " (" + requireRedisEnv + "=1 forbids skipping)")
		}
		t.Skip(msg)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", filepath.Join(dir, "redis.log"))
	if err := cmd.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	rdb := redis.NewClient(&redis.Options{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), PoolSize: 20})
	t.Cleanup(func() { _ = rdb.Close() })
	if err := waitForRedis(rdb, exited); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
		t.Fatalf("%v\n%s", err, log)
	}
	return rdb
}

// waitForRedis asks PING until the server answers, it exits, or 10 s
// pass: the server's start has no event to wait on but its answer.
func waitForRedis(rdb *redis.Client, exited <-chan struct{}) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := rdb.Ping(ctx).Err()
		cancel()
		switch {
		case err == nil:
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("redis-server did not answer PING: %w", err)
		}
		select {
		case <-exited:
			return errors.New("redis-server exited before answering PING")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// newNode returns a cluster node on rdb, never started (it reads and acts
// for the dashboard, as an operator's process would), stopped when t ends.
func newNode(t *testing.T, rdb *redis.Client) *cluster.Node {
	t.Helper()
	n, err := cluster.New(rdb, cluster.WithLease(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.StopNow)
	return n
}

// newWorker returns a node on rdb with opts, quiet and quick to sweep,
// for the test to give handlers and start; it is stopped (gracefully)
// when t ends, if not before.
func newWorker(t *testing.T, rdb *redis.Client, opts ...cluster.Option) *cluster.Node {
	t.Helper()
	// The worker's log of each dead task is expected here, not news.
	quiet := slog.New(slog.DiscardHandler)
	opts = append([]cluster.Option{cluster.WithLease(2 * time.Second), cluster.WithSweepInterval(100 * time.Millisecond), cluster.WithLogger(quiet)}, opts...)
	worker, err := cluster.New(rdb, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopWorker(t, worker) })
	return worker
}

// startWorker starts a node on rdb that runs the tasks of kind with h,
// with opts; it is stopped (gracefully) when t ends, if not before.
func startWorker(t *testing.T, rdb *redis.Client, kind string, h cluster.Handler, opts ...cluster.Option) *cluster.Node {
	t.Helper()
	worker := newWorker(t, rdb, opts...)
	if err := worker.Handle(kind, h); err != nil {
		t.Fatal(err)
	}
	if err := worker.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return worker
}

// stopWorker stops worker, which waits for its runs' outcomes to be
// written.
func stopWorker(t *testing.T, worker *cluster.Node) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := worker.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

// runTasks runs n tasks of kind on a worker node with opts, each failing
// with errText ("" for success), and stops the worker once they ran: their
// outcomes are written then. Tasks scheduled with no retry left end dead.
func runTasks(t *testing.T, rdb *redis.Client, kind string, n int, errText string, opts ...cluster.Option) {
	t.Helper()
	ran := make(chan struct{}, n)
	worker := startWorker(t, rdb, kind, func(context.Context, cluster.Task) error {
		ran <- struct{}{}
		if errText != "" {
			return errors.New(errText)
		}
		return nil
	}, opts...)
	for range n {
		<-ran
	}
	stopWorker(t, worker)
}

// killTasks makes n tasks of kind, scheduled with no retry left, dead with
// errText.
func killTasks(t *testing.T, rdb *redis.Client, kind string, n int, errText string) {
	t.Helper()
	runTasks(t, rdb, kind, n, errText)
}
