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
func (n *Node) complete(id, token string, expires time.Time) string {
	res, _ := n.record(id, "complete", expires, func(ctx context.Context) (string, error) {
		return n.st.complete(ctx, id, token, n.cfg.retention, n.cfg.keepDone)
	})
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
	res, ok := n.record(id, "fail", expires, func(ctx context.Context) (string, error) {
		return n.st.fail(ctx, id, token, errorText(runErr), backoff, errors.Is(runErr, ErrSkipRetry), outcome)
	})
	if ok && res == "dead" {
		n.cfg.logger.Error("cluster: run: task dead after its last retry", "id", id, "kind", c.kind,
			"attempts", c.attempt+1, "err", runErr)
	}
	return res
}

// release hands a claimed task back to pending without counting an
// attempt.
func (n *Node) release(id, token string, expires time.Time) {
	n.record(id, "release", expires, func(ctx context.Context) (string, error) {
		return n.st.release(ctx, id, token)
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
// WithKeepDone, else the task is removed; either way a done marker is left
// when the caller chose its ID. KEYS: lease, task, done. ARGV: id, owner
// token, retention (ms), prefix, keep age (µs), keep max (0: none kept).
// Returns "done", or "lost" if the owner no longer holds the task.
var completeScript = redis.NewScript(luaNow + luaPublish + luaIndex + luaHistory + luaTrim + luaKeepDone + `
local p = ARGV[4]
if redis.call('HGET', KEYS[2], 'owner') ~= ARGV[2] then return 'lost' end
local t = now()
local f = redis.call('HMGET', KEYS[2], 'fixed', 'sum', 'kind')
index_rem(p, 'running', f[3], ARGV[1])
if f[1] == '1' then redis.call('SET', KEYS[3], f[2], 'PX', ARGV[3]) end
add_run(KEYS[2], 'succeeded', t, '')
keep_done(p, KEYS[2], ARGV[1], f[3], t, ARGV[5], ARGV[6])
return 'done'
`)

func (s store) complete(ctx context.Context, id, token string, retention time.Duration, keep keepDone) (string, error) {
	args := append([]any{id, token, retention.Milliseconds(), s.prefix}, keep.args()...)
	return completeScript.Run(ctx, s.rdb, []string{s.lease(), s.task(id), s.done(id)}, args...).Text()
}

// failScript records a failed run: back to pending for a retry at Redis's
// time plus the backoff, or dead. KEYS: lease, pending, dead, task. ARGV:
// id, owner token, error, backoff (µs), channel, "1" to make it dead at
// once (ErrSkipRetry), prefix, outcome (failed or timed out). Returns
// "retry", "dead", or "lost" if the owner no longer holds the task.
var failScript = redis.NewScript(luaNow + luaPublish + luaIndex + luaHistory + `
local p = ARGV[7]
if redis.call('HGET', KEYS[4], 'owner') ~= ARGV[2] then return 'lost' end
local t = now()
local f = redis.call('HMGET', KEYS[4], 'max', 'kind')
index_rem(p, 'running', f[2], ARGV[1])
add_run(KEYS[4], ARGV[8], t, ARGV[3])
redis.call('HDEL', KEYS[4], 'owner', 'next', 'start')
local a = redis.call('HINCRBY', KEYS[4], 'attempt', 1)
redis.call('HSET', KEYS[4], 'err', ARGV[3])
if ARGV[6] == '1' or a > tonumber(f[1]) then
  index_add(p, 'dead', f[2], t, ARGV[1])
  return 'dead'
end
make_pending(p, ARGV[5], f[2], string.format('%.0f', tonumber(t) + tonumber(ARGV[4])), ARGV[1])
return 'retry'
`)

func (s store) fail(ctx context.Context, id, token, msg string, backoff time.Duration, skipRetry bool, outcome Outcome) (string, error) {
	skip := "0"
	if skipRetry {
		skip = "1"
	}
	return failScript.Run(ctx, s.rdb, []string{s.lease(), s.pending(), s.dead(), s.task(id)},
		id, token, msg, backoff.Microseconds(), s.channel(), skip, s.prefix, string(outcome)).Text()
}

// releaseScript hands a claimed task back to pending without counting an
// attempt. It keeps the time the task was pending for (field "next", set
// by the claim), so a task handed back never runs before its due time.
// KEYS: lease, pending, task. ARGV: id, owner token, channel, prefix.
// Returns "released", or "lost" if the owner no longer holds the task.
var releaseScript = redis.NewScript(luaNow + luaPublish + luaIndex + luaHistory + `
local p = ARGV[4]
if redis.call('HGET', KEYS[3], 'owner') ~= ARGV[2] then return 'lost' end
local f = redis.call('HMGET', KEYS[3], 'next', 'kind')
local t = now()
index_rem(p, 'running', f[2], ARGV[1])
add_run(KEYS[3], 'handed_back', t, '')
redis.call('HDEL', KEYS[3], 'owner', 'next', 'start')
make_pending(p, ARGV[3], f[2], f[1] or t, ARGV[1])
return 'released'
`)

func (s store) release(ctx context.Context, id, token string) (string, error) {
	return releaseScript.Run(ctx, s.rdb, []string{s.lease(), s.pending(), s.task(id)},
		id, token, s.channel(), s.prefix).Text()
}
