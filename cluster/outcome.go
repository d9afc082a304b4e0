package cluster

import (
	"context"
	"errors"
	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
	"time"
)

// Recording a run's outcome: complete, fail (retry or dead) and hand back,
// each a script that first checks the caller still owns the task (the
// claim's token), so a run that lost its lease cannot complete or retry a
// task another node now holds (fencing).

// complete records a successful run and returns the script's answer ("" if
// nothing could be written).
func (n *Node) complete(id, kind, token string, expires time.Time) string {
	tl := n.timelineNow()
	res, _ := n.record(id, "complete", expires, func(ctx context.Context) (string, error) {
		return n.st.complete(ctx, id, kind, token, n.cfg.retention, n.cfg.keepDone, tl)
	})
	if res == "done" && n.cfg.keepDone.on {
		kickNow(n.trimKick)
	}
	return res
}

// fail records a failed run: a retry after the backoff, or dead past the
// task's retry limit. It returns the script's answer ("" if nothing could
// be written).
func (n *Node) fail(id, token string, c claimResult, runErr error, expires time.Time) string {
	backoff := n.cfg.backoff(c.attempt + 1)
	outcome := OutcomeFailed
	if errors.Is(runErr, ErrTaskTimeout) {
		outcome = OutcomeTimedOut
	}
	tl := n.timelineNow()
	res, ok := n.record(id, "fail", expires, func(ctx context.Context) (string, error) {
		return n.st.fail(ctx, id, c.kind, token, errorText(runErr), backoff, errors.Is(runErr, ErrSkipRetry), outcome, tl)
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
		return n.st.release(ctx, id, kind, token)
	})
}

// record writes a run's outcome, retrying while Redis does not answer
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

func (s store) complete(ctx context.Context, id, kind, token string, retention time.Duration, keep keepDone, tl timelineRec) (string, error) {
	p := s.partOf(id)
	args := append(append([]any{id, token, retention.Milliseconds()}, keep.args()...), tl.ttlMillis())
	return withKind(kind, func(kind string) (string, error) {
		return redisdriver.CompleteScript.Run(ctx, s.rdb, tl.keys(p, p.TaskKeys(kind, id)), args...).Text()
	})
}

func (s store) fail(ctx context.Context, id, kind, token, msg string, backoff time.Duration, skipRetry bool, outcome Outcome, tl timelineRec) (string, error) {
	skip := "0"
	if skipRetry {
		skip = "1"
	}
	p := s.partOf(id)
	return withKind(kind, func(kind string) (string, error) {
		return redisdriver.FailScript.Run(ctx, s.rdb, tl.keys(p, p.TaskKeys(kind, id)),
			id, token, msg, backoff.Microseconds(), p.Channel(), skip, string(outcome), tl.ttlMillis()).Text()
	})
}

func (s store) release(ctx context.Context, id, kind, token string) (string, error) {
	p := s.partOf(id)
	return withKind(kind, func(kind string) (string, error) {
		return redisdriver.ReleaseScript.Run(ctx, s.rdb, p.TaskKeys(kind, id), id, token, p.Channel()).Text()
	})
}
