// Package redisserver starts a real redis-server for the otelcluster
// module's tests: on a free local port, with its own temporary directory,
// no persistence, stopped when the test ends. It is a small copy of the
// cluster module's internal/redistest, which another module cannot import.
//
// Without redis-server on PATH, Start skips the test and says how to install
// it, unless SCHEDULER_REQUIRE_REDIS=1 (set by CI), where it fails the test.
package redisserver

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RequireEnv is the variable that turns a missing redis-server from a skip
// into a failure.
const RequireEnv = "SCHEDULER_REQUIRE_REDIS"

// Start starts a redis-server for tb, stopped when tb ends, and returns its
// address, host:port.
func Start(tb testing.TB) string {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		msg := "redis-server not found on PATH; install it: apt-get install redis-server"
		if os.Getenv(RequireEnv) == "1" {
			tb.Fatal(msg + " (" + RequireEnv + "=1 forbids skipping)")
		}
		tb.Skip(msg)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	dir := tb.TempDir()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cmd := exec.Command(bin,
		"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--protected-mode", "no",
		"--logfile", filepath.Join(dir, "redis.log"))
	if err := cmd.Start(); err != nil {
		tb.Fatalf("redisserver: start redis-server: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	if err := waitReady(addr, dir, exited); err != nil {
		tb.Fatal(err)
	}
	return addr
}

// waitReady polls PING until the server at addr answers, it exits, or 10 s
// pass.
func waitReady(addr, dir string, exited <-chan struct{}) error {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			return fmt.Errorf("redisserver: redis-server exited before answering PING: %s", log)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redisserver: redis-server on %s did not answer PING: %w", addr, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
