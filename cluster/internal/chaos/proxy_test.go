package chaos

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// proxy forwards local TCP connections to a target (Redis) and can cut
// them: a network partition of whoever connects through it.
type proxy struct {
	ln     net.Listener
	target string
	wg     sync.WaitGroup // the accept loop and every forwarding goroutine

	mu    sync.Mutex // guards cut and conns
	cut   bool
	conns map[net.Conn]struct{}
}

// startProxy listens on a free loopback port and forwards to target; it
// is closed when t ends.
func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// addr is where clients connect.
func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go p.forward(c)
	}
}

// forward connects c to the target unless the proxy is cut, and copies
// both ways until either side closes.
func (p *proxy) forward(c net.Conn) {
	defer p.wg.Done()
	if !p.track(c) {
		_ = c.Close()
		return
	}
	defer p.untrack(c)
	up, err := net.DialTimeout("tcp", p.target, time.Second)
	if err != nil {
		return
	}
	if !p.track(up) {
		_ = up.Close()
		return
	}
	defer p.untrack(up)
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
	_ = c.Close()
	_ = up.Close()
	<-done
}

// track registers a connection, or reports false if the proxy is cut.
func (p *proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	_ = c.Close()
}

// setCut cuts every connection and refuses new ones (true), or lets them
// through again (false).
func (p *proxy) setCut(cut bool) {
	p.mu.Lock()
	p.cut = cut
	var open []net.Conn
	if cut {
		for c := range p.conns {
			open = append(open, c)
		}
	}
	p.mu.Unlock()
	for _, c := range open {
		_ = c.Close()
	}
}

// close stops the proxy and waits for its goroutines.
func (p *proxy) close() {
	_ = p.ln.Close()
	p.setCut(true)
	p.wg.Wait()
}
