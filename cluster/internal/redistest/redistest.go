// Package redistest starts a real redis-server for the cluster module's
// tests and benchmarks: on a free local port, with its own temporary
// directory, stopped on cleanup. It is the one place the tests get Redis
// from; there is no mock.
//
// Without redis-server on PATH, Start skips the test and says how to install
// it, unless SCHEDULER_REQUIRE_REDIS=1 (set by CI), where it fails the test.
package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RequireEnv is the variable that turns a missing redis-server from a skip
// into a failure.
const RequireEnv = "SCHEDULER_REQUIRE_REDIS"

// Server is one redis-server process started for a test.
type Server struct {
	// Addr is host:port of the server.
	Addr string
	// Dir is the server's working directory (its AOF lives there).
	Dir string

	bin      string
	args     []string
	password string // requirepass, "" for none

	mu  sync.Mutex // guards cmd and done: the process of the current incarnation
	cmd *exec.Cmd
	// done is closed when cmd has been waited for.
	done chan struct{}
}

// Options configure Start.
type Options struct {
	// AOF turns on the append-only file with appendfsync always, so that
	// every write acknowledged to a client survives a crash of the server.
	AOF bool
	// Password, if set, is the server's requirepass: every client must
	// AUTH with it (Client does).
	Password string
}

// Binary returns the path of redis-server, or "" if it is not installed.
func Binary() string {
	p, err := exec.LookPath("redis-server")
	if err != nil {
		return ""
	}
	return p
}

// SkipOrFail skips tb (or fails it under SCHEDULER_REQUIRE_REDIS=1) when
// redis-server is not on PATH, and returns its path otherwise.
func SkipOrFail(tb testing.TB) string {
	tb.Helper()
	bin := Binary()
	if bin != "" {
		return bin
	}
	msg := "redis-server not found on PATH; install it: apt-get install redis-server"
	if os.Getenv(RequireEnv) == "1" {
		tb.Fatal(msg + " (" + RequireEnv + "=1 forbids skipping)")
	}
	tb.Skip(msg)
	return ""
}

// Start starts a redis-server for tb and stops it when tb ends.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	bin := SkipOrFail(tb)
	s, err := Launch(bin, tb.TempDir(), opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Stop)
	return s
}

// Launch starts a redis-server from bin in dir on a free port and waits until
// it answers PING. The caller must call Stop. Benchmarks use it directly.
func Launch(bin, dir string, opts Options) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	return launch(bin, dir, port, opts, nil)
}

// launch starts a redis-server on port, with extra arguments, and waits
// until it answers PING.
func launch(bin, dir string, port int, opts Options, extra []string) (*Server, error) {
	args := []string{
		"--bind", "127.0.0.1",
		"--port", strconv.Itoa(port),
		"--dir", dir,
		"--save", "",
		"--daemonize", "no",
		"--protected-mode", "no",
		"--logfile", filepath.Join(dir, "redis.log"),
	}
	if opts.AOF {
		args = append(args, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		args = append(args, "--appendonly", "no")
	}
	if opts.Password != "" {
		args = append(args, "--requirepass", opts.Password)
	}
	args = append(args, extra...)
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: dir, bin: bin, args: args, password: opts.Password}
	if err := s.start(); err != nil {
		return nil, err
	}
	return s, nil
}

// freePort asks the kernel for a port nobody listens on.
func freePort() (int, error) {
	ports, err := freePorts(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

// freePorts asks the kernel for n distinct ports nobody listens on.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		// Held open until all are chosen, so that no port comes twice.
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func (s *Server) start() error {
	cmd := exec.Command(s.bin, s.args...)
	cmd.Stdout = nil
	cmd.Stderr = nil
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("redistest: start redis-server: %w", err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	if err := s.waitReady(done); err != nil {
		_ = cmd.Process.Kill()
		<-done
		return err
	}
	return nil
}

// waitReady polls PING until the server answers, it exits, or 10 s pass.
func (s *Server) waitReady(exited <-chan struct{}) error {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, Password: s.password, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
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
			log, _ := os.ReadFile(filepath.Join(s.Dir, "redis.log"))
			return fmt.Errorf("redistest: redis-server exited before answering PING: %s", log)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redistest: redis-server on %s did not answer PING: %w", s.Addr, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// running reports whether the server's process is up.
func (s *Server) running() bool {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// Client returns a new client of the server; the caller closes it.
func (s *Server) Client() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: s.Addr, Password: s.password})
}

// Kill stops the server with SIGKILL, as a crash would, and waits for it to
// exit. Only what the AOF holds survives.
func (s *Server) Kill() {
	s.signal(syscall.SIGKILL)
}

// Restart starts the server again on the same port and directory (after Kill
// or Stop) and waits until it answers PING.
func (s *Server) Restart() error {
	return s.start()
}

// Stop stops the server with SIGTERM and waits for it to exit (SIGKILL after
// 5 s). Calling it again does nothing.
func (s *Server) Stop() {
	s.signal(syscall.SIGTERM)
}

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	select {
	case <-done:
		return
	default:
	}
	if err := cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		_ = cmd.Process.Kill()
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}
