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

// testHooks let the package's tests see the steps of a run that no
// outside event shows, and hold a run between them. Each is called only
// if set.
type testHooks struct {
	claimed  func(id string) // a claim was won, before the run is set up
	heard    func(id string) // a cancel of id was heard and applied (cancelRun)
	deciding func(id string) // the run is about to decide whether to call the handler
}

// onClaimed, onHeard and onDeciding call their hook, if the tests set it.
func (h *testHooks) onClaimed(id string) {
	if h != nil && h.claimed != nil {
		h.claimed(id)
	}
}

func (h *testHooks) onHeard(id string) {
	if h != nil && h.heard != nil {
		h.heard(id)
	}
}

func (h *testHooks) onDeciding(id string) {
	if h != nil && h.deciding != nil {
		h.deciding(id)
	}
}

// timeoutGrace is how long a handler past its time limit may take to
// return before the node stops renewing its lease and records the failed
// attempt itself: a tenth of the lease.
func (n *Node) timeoutGrace() time.Duration { return n.cfg.lease / 10 }

// run runs a task this node has just claimed (the claim was sent at sent)
// and has its outcome recorded. It returns when the handler has, and the
// outcome is being written: the worker is free for the next task while
// the write's round trip goes on (recordRun).
func (n *Node) run(id, token string, sent time.Time, c claimResult) {
	n.hooks.onClaimed(id)
	n.mu.Lock()
	canceled := n.endClaimLocked(id)
	h, ok := n.handlers[c.kind]
	if n.state != stateStarted || !ok {
		// Stopping (a claimed task not yet started goes back at
		// once), or the ID now names a kind this node does not handle.
		n.mu.Unlock()
		n.release(id, c.kind, token, sent.Add(n.cfg.lease))
		return
	}
	ctx, cancel := context.WithCancelCause(n.runCtx)
	handOff := false // recordRun cancels ctx once it has used it
	defer func() {
		if !handOff {
			cancel(nil)
		}
	}()
	r := &run{token: token, kind: c.kind, cancel: cancel, expires: sent.Add(n.cfg.lease)}
	n.running[id] = r
	n.mu.Unlock()
	if canceled {
		cancel(errTaskCanceled)
	}
	n.hooks.onDeciding(id)
	if cause := context.Cause(ctx); errors.Is(cause, errLeaseLost) {
		// The node heard the task's cancel (while claiming, or since)
		// or a renewal's answer that the lease is lost: the handler is
		// not called. The hand-back is fenced by the token, so it
		// changes nothing but for a task stored again under its ID
		// after a cancel heard late, which goes back to pending.
		n.cfg.logger.Info("cluster: run: canceled before its handler was called", "id", id, "kind", c.kind, "cause", cause)
		n.release(id, c.kind, token, n.forget(id, r))
		return
	}
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
		timeout := failed("run "+id, fmt.Errorf("%w after %v", ErrTaskTimeout, limit))
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
	handOff = true
	n.outcomes.Go(func() {
		defer cancel(nil)
		n.recordRun(id, token, c, obs, started, runErr, cause, expires)
	})
}

// recordRun writes the outcome of a run whose handler returned runErr,
// its ctx ended by cause (nil if not) and its lease known to last until
// expires, and reports it to the observer and the periodic task. It runs
// on a goroutine of its own, so that the run's worker is free meanwhile:
// a busy node's worker starts a task per claim's round trip, not per
// claim's and completion's. Stop waits for it.
func (n *Node) recordRun(id, token string, c claimResult, obs runObservation, started time.Time, runErr, cause error, expires time.Time) {
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

// endClaimLocked ends the claiming of id, and says whether the node heard
// the task's cancel meanwhile. n.mu must be held.
func (n *Node) endClaimLocked(id string) (canceled bool) {
	canceled = n.canceledClaims[id]
	delete(n.claiming, id)
	delete(n.canceledClaims, id)
	return canceled
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

// cancelRun cancels the ctx of this node's run of id, if any, or marks
// its claim in flight, so that the run, once set up, is canceled before
// its handler is called: the task was canceled.
func (n *Node) cancelRun(id string) {
	n.mu.Lock()
	r := n.running[id]
	if r == nil && n.claiming[id] {
		n.canceledClaims[id] = true
	}
	n.mu.Unlock()
	if r != nil {
		r.cancel(errTaskCanceled)
	}
	n.hooks.onHeard(id)
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
