package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the tests if any goroutine outlives them: the demo stops
// its server, scheduler, node, producer and redis-server on return.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestDemoServesBothHalvesAndStopsEverything(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		msg := "redis-server not found on PATH; install it: apt-get install redis-server"
		if os.Getenv("SCHEDULER_REQUIRE_REDIS") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, "127.0.0.1:0", true, func(u string) { urls <- u }) }()
	var base string
	select {
	case base = <-urls:
	case err := <-done:
		cancel()
		t.Fatalf("run returned before serving: %v", err)
	}
	for path, want := range map[string]string{
		"":                            `id="stat-queued"`,
		"queue":                       "send reminder",
		"cluster/":                    `id="count-pending"`,
		"cluster/tasks?state=pending": "email",
	} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %d, want 200 with %q", path, resp.StatusCode, want)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run: %v", err)
	}
}

func TestDemoRefusesANonLoopbackAddress(t *testing.T) {
	err := run(context.Background(), "0.0.0.0:8080", false, func(string) {})
	if err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("run on 0.0.0.0: %v, want a refusal naming loopback", err)
	}
}
