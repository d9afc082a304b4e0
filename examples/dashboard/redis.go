package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// errNoRedis is returned by startRedis when redis-server is not on PATH.
var errNoRedis = errors.New("demo: redis-server not found on PATH (apt-get install redis-server)")

// redisServer is a redis-server the demo started for itself: on a free
// port of 127.0.0.1, in a temporary directory, persisting nothing.
type redisServer struct {
	addr   string
	dir    string
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process is waited for
}

// startRedis starts a redis-server and waits until it answers PING.
func startRedis() (*redisServer, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errNoRedis
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("demo: redis-server: free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir, err := os.MkdirTemp("", "dashboard-demo-redis-")
	if err != nil {
		return nil, fmt.Errorf("demo: redis-server: %w", err)
	}
	r := &redisServer{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, exited: make(chan struct{})}
	r.cmd = exec.Command(bin, "--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", filepath.Join(dir, "redis.log"))
	if err := r.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("demo: redis-server: %w", err)
	}
	go func() { _ = r.cmd.Wait(); close(r.exited) }()
	if err := r.waitReady(); err != nil {
		r.stop()
		return nil, err
	}
	return r, nil
}

// waitReady asks PING until the server answers, it exits, or 10 s pass.
func (r *redisServer) waitReady() error {
	c := redis.NewClient(&redis.Options{Addr: r.addr, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("demo: redis-server on %s did not answer PING: %w", r.addr, err)
		}
		select {
		case <-r.exited:
			log, _ := os.ReadFile(filepath.Join(r.dir, "redis.log"))
			return fmt.Errorf("demo: redis-server exited at start: %s", log)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// stop ends the server (SIGTERM, SIGKILL after 5 s) and removes its
// directory.
func (r *redisServer) stop() {
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.exited:
	case <-time.After(5 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.exited
	}
	os.RemoveAll(r.dir)
}
