package cluster

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Operators' actions on one stored task: run it now, move it to another
// time, retry a dead task, delete a dead task, purge the dead. Each is one
// Lua script that checks the task's state and changes it in the same step,
// so an action never races a claim: either the action finds the task
// pending and the claim then finds it moved (and leaves it), or the claim
// won first and the action is refused. A refused action changes nothing.

// ErrNotFound is wrapped by the error of an action on an ID that names no
// stored task (never stored, canceled, deleted, or run to completion).
// asynq's counterpart is ErrTaskNotFound; River's is ErrNotFound.
var ErrNotFound = errors.New("cluster: no such task")

// ErrWrongState is wrapped by the error of an action the task's state
// forbids: running now or rescheduling a task that is running or dead,
// retrying or deleting a task that is not dead. asynq returns
// FailedPrecondition for these.
var ErrWrongState = errors.New("cluster: task in a state that forbids the action")

// actionError is a refused action: "cluster: what: why", wrapping its
// sentinel.
type actionError struct {
	what, why string
	sentinel  error
}

func (e *actionError) Error() string { return "cluster: " + e.what + ": " + e.why }

func (e *actionError) Unwrap() error { return e.sentinel }

// actionResult turns an action script's answer into nil or a refusal.
func actionResult(what, id, res string) error {
	switch res {
	case "ok":
		return nil
	case "missing":
		return &actionError{what: what + " " + id, why: "no such task", sentinel: ErrNotFound}
	default:
		return &actionError{what: what + " " + id, why: "the task is " + res, sentinel: ErrWrongState}
	}
}

// luaState defines state(): where task id is, "missing" if nowhere.
// KEYS of the callers: pending, lease, dead, task.
const luaState = `
local function state(id)
  if redis.call('EXISTS', KEYS[4]) == 0 then return 'missing' end
  if redis.call('ZSCORE', KEYS[2], id) then return 'running' end
  if redis.call('ZSCORE', KEYS[3], id) then return 'dead' end
  if redis.call('ZSCORE', KEYS[1], id) then return 'pending' end
  return 'missing'
end
`

// moveScript sets when a pending task runs next. KEYS: pending, lease,
// dead, task. ARGV: id, new time (µs, or "now" for Redis's clock), "1" to
// set the task's due time too, channel. Returns "ok", "missing" or the
// state that forbids the move.
var moveScript = redis.NewScript(luaNow + luaPublish + luaState + `
local st = state(ARGV[1])
if st ~= 'pending' then return st end
local t = ARGV[2]
if t == 'now' then t = now() end
redis.call('ZADD', KEYS[1], 'XX', t, ARGV[1])
if ARGV[3] == '1' then redis.call('HSET', KEYS[4], 'due', t) end
publish_pending(ARGV[4], t, redis.call('HGET', KEYS[4], 'kind'), ARGV[1])
return 'ok'
`)

// RunNow makes a pending task due at once, by Redis's clock (asynq's
// Inspector.RunTask, River's JobRetry on an available job). The task keeps
// its due time (Task.Due); only when it runs changes. A task that is
// running or dead is refused with ErrWrongState (retry a dead task with
// Retry), an unknown ID with ErrNotFound.
func (n *Node) RunNow(ctx context.Context, id string) error {
	return n.move(ctx, "run now", id, "now", false)
}

// Reschedule moves a pending task to due: it runs then, and Task.Due says
// due. A task that is running or dead is refused with ErrWrongState, an
// unknown ID with ErrNotFound, a zero due with scheduler.ErrInvalidArgument.
// River has no counterpart; asynq's is deleting and enqueueing again.
func (n *Node) Reschedule(ctx context.Context, id string, due time.Time) error {
	if due.IsZero() {
		return invalid("reschedule "+id, "zero due time")
	}
	return n.move(ctx, "reschedule", id, strconv.FormatInt(due.UnixMicro(), 10), true)
}

func (n *Node) move(ctx context.Context, what, id, at string, setDue bool) error {
	if id == "" {
		return invalid(what, "empty task ID")
	}
	set := "0"
	if setDue {
		set = "1"
	}
	res, err := moveScript.Run(ctx, n.st.rdb, []string{n.st.pending(), n.st.lease(), n.st.dead(), n.st.task(id)},
		id, at, set, n.st.channel()).Text()
	if err != nil {
		return failed(what+" "+id, err)
	}
	return actionResult(what, id, res)
}

// retryScript moves a dead task back to pending, due at once by Redis's
// clock, with its counts of failed and lost runs reset. KEYS: pending,
// lease, dead, task. ARGV: id, channel.
var retryScript = redis.NewScript(luaNow + luaPublish + luaState + `
local st = state(ARGV[1])
if st ~= 'dead' then return st end
local t = now()
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('HSET', KEYS[4], 'attempt', '0', 'lost', '0')
redis.call('ZADD', KEYS[1], t, ARGV[1])
publish_pending(ARGV[2], t, redis.call('HGET', KEYS[4], 'kind'), ARGV[1])
return 'ok'
`)

// Retry gives a dead task its retries again and makes it due at once
// (asynq's Inspector.RunTask on an archived task, River's JobRetry on a
// discarded job). Its last error stays until its next run. A task that is
// not dead is refused with ErrWrongState, an unknown ID with ErrNotFound.
func (n *Node) Retry(ctx context.Context, id string) error {
	if id == "" {
		return invalid("retry", "empty task ID")
	}
	res, err := retryScript.Run(ctx, n.st.rdb, []string{n.st.pending(), n.st.lease(), n.st.dead(), n.st.task(id)},
		id, n.st.channel()).Text()
	if err != nil {
		return failed("retry "+id, err)
	}
	return actionResult("retry", id, res)
}

// deleteScript removes a dead task. KEYS: pending, lease, dead, task.
// ARGV: id.
var deleteScript = redis.NewScript(luaState + `
local st = state(ARGV[1])
if st ~= 'dead' then return st end
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('DEL', KEYS[4])
return 'ok'
`)

// Delete removes the record of a dead task (asynq's Inspector.DeleteTask
// on an archived task, River's JobDelete). A task that is pending or
// running is refused with ErrWrongState (remove it with Cancel), an unknown
// ID with ErrNotFound.
func (n *Node) Delete(ctx context.Context, id string) error {
	if id == "" {
		return invalid("delete", "empty task ID")
	}
	res, err := deleteScript.Run(ctx, n.st.rdb, []string{n.st.pending(), n.st.lease(), n.st.dead(), n.st.task(id)},
		id).Text()
	if err != nil {
		return failed("delete "+id, err)
	}
	return actionResult("delete", id, res)
}

// purgeBatch is how many dead tasks one purge script removes, so that no
// script holds Redis for long.
const purgeBatch = 500

// purgeScript removes up to a batch of the dead tasks that died before a
// time. KEYS: dead. ARGV: time (µs, exclusive), batch, task key prefix.
// Returns how many it removed.
var purgeScript = redis.NewScript(`
local ids = redis.call('ZRANGE', KEYS[1], '-inf', '(' .. ARGV[1], 'BYSCORE', 'LIMIT', 0, tonumber(ARGV[2]))
for _, id in ipairs(ids) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('DEL', ARGV[3] .. id)
end
return #ids
`)

// Purge removes every dead task that died before before, a batch per
// script, and returns how many it removed (asynq's
// Inspector.DeleteAllArchivedTasks, bounded by time as River's job
// cleaner). A zero before is an error wrapping scheduler.ErrInvalidArgument.
func (n *Node) Purge(ctx context.Context, before time.Time) (int, error) {
	if before.IsZero() {
		return 0, invalid("purge", "zero time")
	}
	total := 0
	for {
		k, err := purgeScript.Run(ctx, n.st.rdb, []string{n.st.dead()},
			before.UnixMicro(), purgeBatch, n.st.taskPrefix()).Int()
		total += k
		if err != nil {
			return total, failed("purge", err)
		}
		if k < purgeBatch {
			return total, nil
		}
	}
}
