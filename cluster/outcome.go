package cluster

import (
	"context"
	"errors"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// Recording a run's outcome: complete, fail (retry or dead) and hand back,
// each a step of the driver that first checks the caller still owns the
// task (the claim's token), so a run that lost its lease cannot complete
// or retry a task another node now holds (fencing).

// complete records a successful run and returns the driver's answer ("" if
// nothing could be written).
func (n *Node) complete(id, kind, token string, expires time.Time) string {
	tl := n.timelineNow()
	res, _ := n.record(id, "complete", expires, func(ctx context.Context) (string, error) {
		res, err := n.drv.Complete(ctx, id, kind, token, n.cfg.retention, n.cfg.keepDone.driver(), tl)
		return string(res), err
	})
	if res == "done" && n.cfg.keepDone.on {
		kickNow(n.trimKick)
	}
	return res
}

// fail records a failed run: a retry after the backoff, or dead past the
// task's retry limit. It returns the driver's answer ("" if nothing could
// be written).
func (n *Node) fail(id, token string, c claimResult, runErr error, expires time.Time) string {
	backoff := n.cfg.backoff(c.attempt + 1)
	outcome := OutcomeFailed
	if errors.Is(runErr, ErrTaskTimeout) {
		outcome = OutcomeTimedOut
	}
	tl := n.timelineNow()
	res, ok := n.record(id, "fail", expires, func(ctx context.Context) (string, error) {
		res, err := n.drv.Fail(ctx, driver.Failure{ID: id, Kind: c.kind, Owner: token, Error: errorText(runErr),
			Backoff: backoff, SkipRetry: errors.Is(runErr, ErrSkipRetry), Outcome: outcome}, tl)
		return string(res), err
	})
	if ok && res == "dead" {
		n.cfg.logger.Error("cluster: run: task dead after its last retry", "id", id, "kind", c.kind,
			"attempts", c.attempt+1, "err", runErr)
	}
	return res
}

// release hands a claimed task back to pending without counting an
// attempt.
func (n *Node) release(id, kind, token string, expires time.Time) {
	n.record(id, "release", expires, func(ctx context.Context) (string, error) {
		res, err := n.drv.Release(ctx, id, kind, token)
		return string(res), err
	})
}

// record writes a run's outcome, retrying while the store does not answer
// until the run's lease is spent (but trying for at least a tenth of a
// lease): past that the reaper may have returned the task, so it runs
// again (delivery is at least once) and the lost run counts as lost, not
// failed. ok is false if nothing could be written.
func (n *Node) record(id, what string, expires time.Time, f func(context.Context) (string, error)) (res string, ok bool) {
	deadline := expires
	if floor := time.Now().Add(n.cfg.lease / 10); deadline.Before(floor) {
		deadline = floor
	}
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		res, err := bounded(n, time.Until(deadline), f)
		if err == nil {
			return res, true
		}
		if time.Until(deadline) < wait {
			n.cfg.logger.Error("cluster: "+what+": could not record the run; the lease will return the task", "id", id, "err", err)
			return "", false
		}
		time.Sleep(wait)
	}
}
