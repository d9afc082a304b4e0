package redistest

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A Sentinel for the tests: redis-server in sentinel mode, watching one
// master under a name, so that a client reached through the sentinel
// (go-redis's failover client) is tested against the real thing.

// StartSentinel starts a sentinel that watches master under name (with a
// quorum of 1) and stops it when tb ends. The returned Server's Addr is
// the sentinel's.
func StartSentinel(tb testing.TB, master *Server, name string) *Server {
	tb.Helper()
	bin := SkipOrFail(tb)
	dir := tb.TempDir()
	port, err := freePort()
	if err != nil {
		tb.Fatal(err)
	}
	host, mport, _ := net.SplitHostPort(master.Addr)
	conf := []string{
		"port " + strconv.Itoa(port),
		"bind 127.0.0.1",
		"dir " + dir,
		"logfile " + filepath.Join(dir, "redis.log"),
		fmt.Sprintf("sentinel monitor %s %s %s 1", name, host, mport),
	}
	if master.password != "" {
		conf = append(conf, fmt.Sprintf("sentinel auth-pass %s %s", name, master.password))
	}
	// A sentinel rewrites its configuration file, so it gets one of its own.
	file := filepath.Join(dir, "sentinel.conf")
	if err := os.WriteFile(file, []byte(strings.Join(conf, "\n")+"\n"), 0o600); err != nil {
		tb.Fatal(err)
	}
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: dir, bin: bin, args: []string{file, "--sentinel"}}
	if err := s.start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Stop)
	return s
}
