package pgserver

import (
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestWaitReadyWaitsForASlowServer: a server that takes longer than a
// second to answer a connection (a loaded machine) is ready once it
// answers; waitReady does not give up on each slow attempt for a new one.
func TestWaitReadyWaitsForASlowServer(t *testing.T) {
	bin := BinDir()
	if bin == "" {
		if os.Getenv("SCHEDULER_REQUIRE_POSTGRES") == "1" {
			t.Fatal(InstallHint)
		}
		t.Skip(InstallHint)
	}
	s, err := Launch(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	slow := startSlowProxy(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)), 2*time.Second)
	through := &Server{Port: slow}
	if err := through.waitReady(make(chan struct{})); err != nil {
		t.Fatalf("waitReady through a server answering in 2 s: %v", err)
	}
}

// startSlowProxy forwards loopback connections to target, holding back
// the target's first answer on each by delay, and returns its port; it
// stops when t ends.
func startSlowProxy(t *testing.T, target string, delay time.Duration) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		_ = ln.Close()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { forwardSlowly(c, target, delay) })
		}
	})
	return ln.Addr().(*net.TCPAddr).Port
}

// forwardSlowly copies c to target and back, the first answer delay late,
// until either side closes.
func forwardSlowly(c net.Conn, target string, delay time.Duration) {
	defer c.Close()
	up, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer up.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() {
		time.Sleep(delay)
		_, _ = io.Copy(c, up)
		done <- struct{}{}
	}()
	<-done
	_ = c.Close()
	_ = up.Close()
	<-done
}
