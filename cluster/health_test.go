package cluster_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
)

// probe serves one request to h and returns the status and body.
func probe(h http.Handler) (int, string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	return rec.Code, rec.Body.String()
}

// TestHealthFollowsStartRedisAndStop probes a node before Start, once its
// heartbeat is current, with its Redis gone, and after StopNow.
func TestHealthFollowsStartRedisAndStop(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	n := newNode(t, srv, map[string]cluster.Handler{"k": func(context.Context, cluster.Task) error { return nil }})
	h := n.HealthHandler(time.Second)

	if code, body := probe(h); code != http.StatusServiceUnavailable || !strings.Contains(body, "not started") {
		t.Fatalf("before Start: %d %q", code, body)
	}
	start(t, n)
	waitFor(t, 10*time.Second, "a healthy node", func() bool {
		code, _ := probe(h)
		return code == http.StatusOK
	})

	srv.Kill()
	got, err := n.Health(ctx, 200*time.Millisecond)
	if err != nil || got.OK || !strings.Contains(got.Reason, "redis did not answer") {
		t.Fatalf("Redis gone: %+v, %v", got, err)
	}

	n.StopNow()
	if code, body := probe(h); code != http.StatusServiceUnavailable || !strings.Contains(body, "stopping or stopped") {
		t.Fatalf("after StopNow: %d %q", code, body)
	}
	if _, err := n.Health(ctx, 0); !errors.Is(err, scheduler.ErrInvalidArgument) {
		t.Fatalf("zero timeout: %v", err)
	}
}
