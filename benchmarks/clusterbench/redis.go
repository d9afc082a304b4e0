package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisServer is the redis-server this command starts on a free local port
// with a temporary directory (the cluster module's tests do the same in
// cluster/internal/redistest, which another module cannot import).
type redisServer struct {
	addr, dir, version string
	cmd                *exec.Cmd
}

func launchRedis() (*redisServer, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server not found on PATH; install it: apt-get install redis-server")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir, err := os.MkdirTemp("", "clusterbench-redis-")
	if err != nil {
		return nil, err
	}
	s := &redisServer{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir}
	s.cmd = exec.Command(bin, "--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", dir,
		"--save", "", "--appendonly", "no", "--protected-mode", "no")
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	c := redis.NewClient(&redis.Options{Addr: s.addr})
	defer c.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		info, err := c.InfoMap(context.Background(), "server").Result()
		if err == nil {
			s.version = info["Server"]["redis_version"]
			return s, nil
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("redis-server did not answer: %w", err)
		}
	}
}

func (s *redisServer) stop() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	_ = os.RemoveAll(s.dir)
}
