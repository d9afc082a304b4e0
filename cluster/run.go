package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// run runs a task this node has just claimed and records the outcome.
func (n *Node) run(id, token string, c claimed) {
	n.mu.Lock()
	h := n.handlers[c.kind]
	if n.state != stateStarted || h == nil {
		// Stopping (a claimed task not yet started goes back at
		// once), or the ID now names a kind this node does not handle.
		n.mu.Unlock()
		n.record(id, "release", func(ctx context.Context) error {
			_, err := n.st.release(ctx, id, token)
			return err
		})
		return
	}
	ctx, cancel := context.WithCancelCause(n.runCtx)
	n.running[id] = &run{token: token, cancel: cancel}
	n.mu.Unlock()

	runErr := callHandler(ctx, h, Task{ID: id, Kind: c.kind, Payload: c.payload, Due: time.UnixMicro(c.due), Attempt: c.attempt})

	n.mu.Lock()
	delete(n.running, id)
	n.mu.Unlock()
	cause := context.Cause(ctx)
	if ctx.Err() == nil {
		cause = nil
	}
	cancel(nil)

	switch {
	case errors.Is(cause, errLeaseLost):
		// Reaped or canceled meanwhile: the task is no longer ours to
		// complete or retry.
		n.cfg.logger.Warn("cluster: run lost its lease; its outcome is dropped", "id", id, "kind", c.kind, "err", runErr)
	case runErr == nil:
		n.record(id, "complete", func(ctx context.Context) error {
			_, err := n.st.complete(ctx, id, token, n.cfg.retention)
			return err
		})
	case errors.Is(cause, errKilled):
		// StopNow: left to the lease.
	case errors.Is(cause, errHandBack):
		n.record(id, "release", func(ctx context.Context) error {
			_, err := n.st.release(ctx, id, token)
			return err
		})
	default:
		retry := n.cfg.clock.Now().Add(n.cfg.backoff(c.attempt + 1)).UnixMicro()
		n.record(id, "fail", func(ctx context.Context) error {
			res, err := n.st.fail(ctx, id, token, runErr.Error(), retry)
			if res == "dead" {
				n.cfg.logger.Error("cluster: task dead after its last retry", "id", id, "kind", c.kind, "attempts", c.attempt+1, "err", runErr)
			}
			return err
		})
	}
}

// callHandler runs h, turning a panic into an error.
func callHandler(ctx context.Context, h Handler, t Task) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("cluster: handler panicked: %v", v)
		}
	}()
	return h(ctx, t)
}

// record writes a run's outcome, retrying while Redis is unreachable for up
// to a lease: past that the lease has expired and the reaper has the task,
// so it runs again (delivery is at least once).
func (n *Node) record(id, what string, f func(context.Context) error) {
	deadline := time.Now().Add(n.cfg.lease)
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		err := f(ctx)
		cancel()
		if err == nil {
			return
		}
		if time.Now().Add(wait).After(deadline) {
			n.cfg.logger.Error("cluster: could not record a run; the lease will return the task", "id", id, "op", what, "err", err)
			return
		}
		time.Sleep(wait)
	}
}

// heartbeatLoop renews the leases of the running tasks every third of a
// lease, and cancels the ctx of a run whose lease is lost.
func (n *Node) heartbeatLoop(ctx context.Context) {
	defer n.hb.Done()
	every(ctx, n.cfg.lease/3, nil, func() { n.heartbeat(ctx) })
}

// heartbeat is one round of heartbeatLoop.
func (n *Node) heartbeat(ctx context.Context) {
	n.mu.Lock()
	held := make(map[string]string, len(n.running))
	for id, r := range n.running {
		held[id] = r.token
	}
	n.mu.Unlock()
	if len(held) == 0 {
		return
	}
	lost, err := n.st.extend(ctx, n.cfg.lease, held)
	if err != nil {
		if ctx.Err() == nil {
			n.cfg.logger.Warn("cluster: heartbeat failed", "err", err)
		}
		return
	}
	n.mu.Lock()
	for _, id := range lost {
		if r := n.running[id]; r != nil && r.token == held[id] {
			r.cancel(errLeaseLost)
		}
	}
	n.mu.Unlock()
}

// reapBatch is how many expired leases one reap script handles.
const reapBatch = 1000

// reapLoop returns expired leases to pending and renews the node's
// membership every quarter lease. Every node reaps; the script is atomic,
// so they never return a task twice.
func (n *Node) reapLoop(ctx context.Context) {
	defer n.bg.Done()
	every(ctx, n.cfg.lease/4, nil, func() {
		n.refreshMembers(ctx)
		for {
			k, err := n.st.reap(ctx, reapBatch)
			if err != nil {
				if ctx.Err() == nil {
					n.cfg.logger.Warn("cluster: reap failed", "err", err)
				}
				return
			}
			if k < reapBatch {
				return
			}
		}
	})
}

// every calls fn every period, and at once on each value from kick (nil
// for none), until ctx ends. The background loops of a node are this.
func every(ctx context.Context, period time.Duration, kick <-chan struct{}, fn func()) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-kick:
		}
		fn()
	}
}
