package cluster

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
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

// completeScript records a successful run: a done record with
// WithKeepDone (the reaper trims the records past the bounds), else the
// task is removed; either way a done marker is left when the caller chose
// its ID. KEYS: the task's keys (partition.taskKeys), then the minute's
// timeline hash if the run is counted (timeline_record.go). ARGV: id,
// owner token, retention (ms), keep age (µs), keep max (0: none kept), the
// timeline hash's time to live (ms). Returns "done", or "lost" if the
// owner no longer holds the task.
var completeScript = redis.NewScript(luaNow + luaPublish + luaPart + luaHistory + luaKeepDone + luaTimeline + `
local f = redis.call('HMGET', TASK, 'owner', 'fixed', 'sum', 'kind', 'next', 'start')
if f[1] ~= ARGV[2] then return 'lost' end
if wrong_kind(f[4]) then return redis.error_reply('KIND ' .. f[4]) end
local t = now()
index_rem(INDEX, 'running', ARGV[1])
if KEYS[13] then count_run(KEYS[13], ARGV[6], f[4], f[5], f[6]) end
if f[2] == '1' then redis.call('SET', MARK, f[3], 'PX', ARGV[3]) end
add_run(TASK, 'succeeded', t, '')
keep_done(TASK, ARGV[1], f[4], t, ARGV[5])
return 'done'
`)

func (s store) complete(ctx context.Context, id, kind, token string, retention time.Duration, keep keepDone, tl timelineRec) (string, error) {
	p := s.partOf(id)
	args := append(append([]any{id, token, retention.Milliseconds()}, keep.args()...), tl.ttlMillis())
	return withKind(kind, func(kind string) (string, error) {
		return completeScript.Run(ctx, s.rdb, tl.keys(p, p.taskKeys(kind, id)), args...).Text()
	})
}

// failScript records a failed run: back to pending for a retry at Redis's
// time plus the backoff, or dead. KEYS: the task's keys
// (partition.taskKeys), then the minute's timeline hash if the run is
// counted. ARGV: id, owner token, error, backoff (µs), channel, "1" to
// make it dead at once (ErrSkipRetry), outcome (failed or timed out), the
// timeline hash's time to live (ms). Returns "retry", "dead", or "lost" if
// the owner no longer holds the task.
var failScript = redis.NewScript(luaNow + luaPublish + luaPart + luaHistory + luaTimeline + `
local f = redis.call('HMGET', TASK, 'owner', 'max', 'kind', 'next', 'start')
if f[1] ~= ARGV[2] then return 'lost' end
if wrong_kind(f[3]) then return redis.error_reply('KIND ' .. f[3]) end
local t = now()
index_rem(INDEX, 'running', ARGV[1])
if KEYS[13] then count_run(KEYS[13], ARGV[8], f[3], f[4], f[5], 'f') end
add_run(TASK, ARGV[7], t, ARGV[3])
redis.call('HDEL', TASK, 'owner', 'next', 'start')
local a = redis.call('HINCRBY', TASK, 'attempt', 1)
redis.call('HSET', TASK, 'err', ARGV[3])
if ARGV[6] == '1' or a > tonumber(f[2]) then
  index_add(INDEX, 'dead', f[3], t, ARGV[1])
  return 'dead'
end
make_pending(INDEX, ARGV[5], f[3], string.format('%.0f', tonumber(t) + tonumber(ARGV[4])), ARGV[1])
return 'retry'
`)

func (s store) fail(ctx context.Context, id, kind, token, msg string, backoff time.Duration, skipRetry bool, outcome Outcome, tl timelineRec) (string, error) {
	skip := "0"
	if skipRetry {
		skip = "1"
	}
	p := s.partOf(id)
	return withKind(kind, func(kind string) (string, error) {
		return failScript.Run(ctx, s.rdb, tl.keys(p, p.taskKeys(kind, id)),
			id, token, msg, backoff.Microseconds(), p.channel(), skip, string(outcome), tl.ttlMillis()).Text()
	})
}

// releaseScript hands a claimed task back to pending without counting an
// attempt. It keeps the time the task was pending for (field "next", set
// by the claim), so a task handed back never runs before its due time.
// KEYS: the task's keys (partition.taskKeys). ARGV: id, owner token,
// channel. Returns "released", or "lost" if the owner no longer holds the
// task.
var releaseScript = redis.NewScript(luaNow + luaPublish + luaPart + luaHistory + `
local f = redis.call('HMGET', TASK, 'owner', 'next', 'kind')
if f[1] ~= ARGV[2] then return 'lost' end
if wrong_kind(f[3]) then return redis.error_reply('KIND ' .. f[3]) end
local t = now()
index_rem(INDEX, 'running', ARGV[1])
add_run(TASK, 'handed_back', t, '')
redis.call('HDEL', TASK, 'owner', 'next', 'start')
make_pending(INDEX, ARGV[3], f[3], f[2] or t, ARGV[1])
return 'released'
`)

func (s store) release(ctx context.Context, id, kind, token string) (string, error) {
	p := s.partOf(id)
	return withKind(kind, func(kind string) (string, error) {
		return releaseScript.Run(ctx, s.rdb, p.taskKeys(kind, id), id, token, p.channel()).Text()
	})
}
