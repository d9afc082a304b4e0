package cluster

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// Canceling a stored task: Node.Cancel and its script.

// Cancellation is what Node.Cancel did.
type Cancellation struct {
	// Removed is true if a task was stored under the ID and is now
	// removed: no node claims it again.
	Removed bool
	// WasRunning is true if a node held a claim on it (a run was in
	// flight) when it was removed. That run's ctx is canceled within a
	// third of the lease, if its node can reach Redis, and its outcome is
	// dropped.
	WasRunning bool
}

// Cancel removes a stored task, in whatever state (River's JobCancel,
// asynq's Inspector.DeleteTask, Quartz's deleteJob), and says whether there
// was one and whether a run of it was in flight. Once Cancel has returned
// with Removed true, no node claims the task again. A run in flight has its
// ctx canceled with a lost-lease cause: at once on this node, through the
// store's channel on another, and at that node's next renewal (every
// quarter lease) if the message is lost. The ID is free again afterwards,
// except for a periodic occurrence, which is remembered for the retention
// so that no node stores it again: canceling an occurrence skips it. With
// WithKeepDone the canceled task stays as a Done record, its last run
// record saying Canceled, and a done record is removed. An empty ID is an error wrapping scheduler.ErrInvalidArgument; a Redis
// error is returned wrapped, and the task may or may not be removed then.
func (n *Node) Cancel(ctx context.Context, id string) (Cancellation, error) {
	if id == "" {
		return Cancellation{}, invalid("cancel", "empty task ID")
	}
	var res Cancellation
	err := n.replicated(ctx, n.st.task(id), func(rdb redis.Scripter) (err error) {
		res, err = n.st.cancel(ctx, rdb, id, n.cfg.retention, n.cfg.keepDone)
		return err
	})
	if err != nil {
		n.followFailover(err)
		return Cancellation{}, failed("cancel "+id, err)
	}
	n.unload(id)
	n.cancelRun(id)
	return res, nil
}

// cancelScript removes a task in any state, with its index entries; for a
// periodic occurrence (kind "@...") it leaves the done marker, so that no
// node stores the occurrence again. With WithKeepDone the task is kept as
// a done record whose last run record says canceled (a done record itself
// is removed). KEYS: pending, lease, dead, task, done. ARGV: id, retention
// (ms), channel, prefix, keep age (µs), keep max (0: none kept). Returns
// {removed, was leased}, each 0 or 1.
var cancelScript = redis.NewScript(luaNow + luaPublish + luaIndex + luaHistory + luaTrim + luaKeepDone + `
local p = ARGV[4]
local leased = redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
local f = redis.call('HMGET', KEYS[4], 'kind', 'sum', 'fin')
local kind = f[1]
if not kind then return {0, leased} end
for _, st in ipairs({'pending', 'running', 'dead'}) do
  redis.call('ZREM', kind_key(p, st, kind), ARGV[1])
end
if f[3] then
  index_rem(p, 'done', kind, ARGV[1])
  redis.call('DEL', KEYS[4])
  return {1, 0}
end
if string.sub(kind, 1, 1) == '@' then
  redis.call('SET', KEYS[5], f[2], 'PX', ARGV[2])
end
local t = now()
if tonumber(ARGV[6]) > 0 then add_run(KEYS[4], 'canceled', t, '') end
keep_done(p, KEYS[4], ARGV[1], kind, t, ARGV[5], ARGV[6])
publish_canceled(ARGV[3], ARGV[1])
return {1, leased}
`)

func (s store) cancel(ctx context.Context, rdb redis.Scripter, id string, retention time.Duration, keep keepDone) (Cancellation, error) {
	args := append([]any{id, retention.Milliseconds(), s.channel(), s.prefix}, keep.args()...)
	v, err := cancelScript.Run(ctx, rdb, []string{s.pending(), s.lease(), s.dead(), s.task(id), s.done(id)},
		args...).Int64Slice()
	if err != nil {
		return Cancellation{}, err
	}
	return Cancellation{Removed: len(v) > 0 && v[0] == 1, WasRunning: len(v) > 1 && v[1] == 1}, nil
}
