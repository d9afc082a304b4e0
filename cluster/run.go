package cluster

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/go-stpe/scheduler"
)

// Running a claimed task: the handler's call, its time limit, and which
// outcome is recorded (outcome.go writes it).

// run is a task this node has claimed and is running.
type run struct {
	token  string
	kind   string // the task's kind, which names its indexes in renewals
	cancel context.CancelCauseFunc
	// expires is a lower bound of the lease's expiry on the monotonic
	// clock: when the claim or the last successful renewal was sent,
	// plus the lease. Guarded by Node.mu.
	expires time.Time
}

// timeoutGrace is how long a handler past its time limit may take to
// return before the node stops renewing its lease and records the failed
// attempt itself: a tenth of the lease.
func (n *Node) timeoutGrace() time.Duration { return n.cfg.lease / 10 }

// run runs a task this node has just claimed (the claim was sent at sent)
// and records the outcome.
func (n *Node) run(id, token string, sent time.Time, c claimResult) {
	n.mu.Lock()
	delete(n.claiming, id)
	h, ok := n.handlers[c.kind]
	if n.state != stateStarted || !ok {
		// Stopping (a claimed task not yet started goes back at
		// once), or the ID now names a kind this node does not handle.
		n.mu.Unlock()
		n.release(id, c.kind, token, sent.Add(n.cfg.lease))
		return
	}
	ctx, cancel := context.WithCancelCause(n.runCtx)
	defer cancel(nil)
	r := &run{token: token, kind: c.kind, cancel: cancel, expires: sent.Add(n.cfg.lease)}
	n.running[id] = r
	n.mu.Unlock()
	task := Task{ID: id, Kind: c.kind, Payload: c.payload, Due: time.UnixMicro(c.due), Attempt: c.attempt, Lost: c.lost}
	obs := n.observeRun(ctx, task, c.meta) // obs.ctx is the handler's ctx

	limit := h.timeout
	if limit == 0 {
		limit = n.cfg.taskTimeout
	}
	started := n.now()
	var watchdog *time.Timer
	abandoned := make(chan struct{})
	if limit > 0 {
		// The watchdog's own copy: a variable this large that a closure
		// captures lives on the heap, and only runs with a limit pay.
		obs := obs
		timeout := fmt.Errorf("cluster: run %s: %w after %v", id, ErrTaskTimeout, limit)
		limitTimer := time.AfterFunc(limit, func() { cancel(timeout) })
		defer limitTimer.Stop()
		watchdog = time.AfterFunc(limit+n.timeoutGrace(), func() {
			defer close(abandoned)
			n.cfg.logger.Warn("cluster: run: handler still running past its time limit and grace; its attempt is recorded as failed",
				"id", id, "kind", c.kind, "limit", limit)
			res := n.fail(id, token, c, timeout, n.forget(id, r))
			obs.recorded(n, OutcomeTimedOut, res, timeout)
			n.notePeriodicRun(c, started, recordedOutcome(OutcomeTimedOut, res), timeout)
		})
	}

	runErr := callHandler(obs.ctx, h.fn, task)

	if watchdog != nil && !watchdog.Stop() {
		// The watchdog recorded the run as failed; this late result
		// is dropped.
		<-abandoned
		return
	}
	expires := n.forget(id, r)
	cause := context.Cause(ctx)
	if ctx.Err() == nil {
		cause = nil
	}
	var (
		out   Outcome
		err   error
		res   string // the answer of the script that recorded the outcome
		wrote bool   // the outcome was written (res is the script's answer)
	)
	switch {
	case errors.Is(cause, errLeaseLost):
		// Reaped or canceled meanwhile: the task is no longer ours to
		// complete or retry.
		n.cfg.logger.Warn("cluster: run: lease lost; its outcome is dropped", "id", id, "kind", c.kind, "err", runErr)
		out, err = lostOutcome(cause), runErr
	case runErr == nil:
		res, wrote = n.complete(id, c.kind, token, expires), true
		out = OutcomeSucceeded
	case errors.Is(cause, errKilled):
		// StopNow: left to the lease.
		out, err = OutcomeLost, runErr
	case errors.Is(cause, errHandBack):
		n.release(id, c.kind, token, expires)
		out, err = OutcomeHandedBack, runErr
	case errors.Is(cause, ErrTaskTimeout):
		res, wrote = n.fail(id, token, c, cause, expires), true
		out, err = OutcomeTimedOut, cause
	default:
		res, wrote = n.fail(id, token, c, runErr, expires), true
		out, err = OutcomeFailed, runErr
	}
	if wrote {
		obs.recorded(n, out, res, err)
		out = recordedOutcome(out, res)
	} else {
		obs.ended(n, out, err)
	}
	n.notePeriodicRun(c, started, out, err)
}

// now is the node's clock corrected by its offset from Redis's.
func (n *Node) now() time.Time {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.nowLocked()
}

// forget stops renewing r's lease and returns its expiry as last known.
func (n *Node) forget(id string, r *run) time.Time {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.running[id] == r {
		delete(n.running, id)
	}
	return r.expires
}

// cancelRun cancels the ctx of this node's run of id, if any: the task was
// canceled.
func (n *Node) cancelRun(id string) {
	n.mu.Lock()
	r := n.running[id]
	n.mu.Unlock()
	if r != nil {
		r.cancel(errTaskCanceled)
	}
}

// callHandler runs h, turning a panic into an error that wraps a
// *scheduler.PanicError holding the panic value and the stack.
func callHandler(ctx context.Context, h Handler, t Task) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("cluster: run %s: handler panicked: %w", t.ID, &scheduler.PanicError{Value: v, Stack: debug.Stack()})
		}
	}()
	return h(ctx, t)
}

// errorText is the text a failed run records as the task's last error: the
// error's message, and for a panic the stack too.
func errorText(err error) string {
	var pe *scheduler.PanicError
	if errors.As(err, &pe) {
		return err.Error() + "\n" + string(pe.Stack)
	}
	return err.Error()
}
