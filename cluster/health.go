package cluster

import (
	"context"
	"net/http"
	"time"
)

// Health: whether a node can do its work, for liveness and readiness
// probes. asynq's counterpart is the server's health check function
// (Config.HealthCheckFunc); River has none built in.

// Health is what Node.Health found.
type Health struct {
	// OK is true if the node is started, not stopping, its store (Redis,
	// or that of the driver given to NewWithDriver) answered within the
	// deadline and the node renewed its membership within the last
	// lease.
	OK bool
	// Reason says why the node is not healthy, or "" when it is.
	Reason string
}

// Health checks the node: started and not stopping, Redis answering a PING
// within timeout, and its membership (its heartbeat in Redis) renewed
// within the last lease, by the node's clock. A timeout of zero or less is
// an error wrapping scheduler.ErrInvalidArgument.
func (n *Node) Health(ctx context.Context, timeout time.Duration) (Health, error) {
	if timeout <= 0 {
		return Health{}, invalid("health", "timeout %v: want more than 0", timeout)
	}
	n.mu.Lock()
	state, renewed := n.state, n.renewed
	n.mu.Unlock()
	switch state {
	case stateNew:
		return Health{Reason: "node not started"}, nil
	case stateStopping, stateStopped:
		return Health{Reason: "node stopping or stopped"}, nil
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := n.drv.Ping(pctx); err != nil {
		store := "redis"
		if n.rdb == nil {
			store = "the store" // a node made by NewWithDriver
		}
		return Health{Reason: store + " did not answer within " + timeout.String() + ": " + err.Error()}, nil
	}
	if age := n.cfg.clock.Now().Sub(renewed); renewed.IsZero() || age > n.cfg.lease {
		return Health{Reason: "membership not renewed within the lease (last " + age.Round(time.Millisecond).String() + " ago)"}, nil
	}
	return Health{OK: true}, nil
}

// HealthHandler serves Node.Health over HTTP for liveness and readiness
// probes: 200 and "ok" when healthy, 503 and the reason otherwise, each
// check bounded by timeout (at most a second if timeout is zero or less).
func (n *Node) HealthHandler(timeout time.Duration) http.Handler {
	if timeout <= 0 {
		timeout = time.Second
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, err := n.Health(r.Context(), timeout)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		switch {
		case err != nil:
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		case !h.OK:
			http.Error(w, h.Reason, http.StatusServiceUnavailable)
		default:
			_, _ = w.Write([]byte("ok\n"))
		}
	})
}
