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
// forbids: running now or rescheduling a task that is not pending,
// retrying a task that is not dead, deleting one that is neither dead nor
// done. asynq returns
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

// moveScript sets when a pending task runs next; a task of a paused kind
// keeps waiting, at its new time. KEYS: pending, lease, dead, task. ARGV:
// id, new time (µs, or "now" for Redis's clock), "1" to set the task's due
// time too, channel, prefix. Returns "ok", "missing" or the state that
// forbids the move.
var moveScript = redis.NewScript(luaNow + luaPublish + luaIndex + `
local p = ARGV[5]
local st, kind = task_state(p, KEYS[4], ARGV[1])
if st ~= 'pending' then return st end
local t = ARGV[2]
if t == 'now' then t = now() end
if ARGV[3] == '1' then redis.call('HSET', KEYS[4], 'due', t) end
make_pending(p, ARGV[4], kind, t, ARGV[1])
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
		id, at, set, n.st.channel(), n.st.prefix).Text()
	if err != nil {
		return failed(what+" "+id, err)
	}
	return actionResult(what, id, res)
}

// retryScript moves a dead task back to pending, due at once by Redis's
// clock, with its counts of failed and lost runs reset. KEYS: pending,
// lease, dead, task. ARGV: id, channel, prefix.
var retryScript = redis.NewScript(luaNow + luaPublish + luaIndex + `
local p = ARGV[3]
local st, kind = task_state(p, KEYS[4], ARGV[1])
if st ~= 'dead' then return st end
index_rem(p, 'dead', kind, ARGV[1])
redis.call('HSET', KEYS[4], 'attempt', '0', 'lost', '0')
make_pending(p, ARGV[2], kind, now(), ARGV[1])
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
		id, n.st.channel(), n.st.prefix).Text()
	if err != nil {
		return failed("retry "+id, err)
	}
	return actionResult("retry", id, res)
}

// deleteScript removes a dead task or a done record. KEYS: pending,
// lease, dead, task. ARGV: id, prefix.
var deleteScript = redis.NewScript(luaPublish + luaIndex + `
local p = ARGV[2]
local st, kind = task_state(p, KEYS[4], ARGV[1])
if st ~= 'dead' and st ~= 'done' then return st end
index_rem(p, st, kind, ARGV[1])
redis.call('DEL', KEYS[4])
return 'ok'
`)

// Delete removes the record of a dead task or a done record (asynq's
// Inspector.DeleteTask on an archived or completed task, River's
// JobDelete). A task that is pending or running is refused with
// ErrWrongState (remove it with Cancel), an unknown ID with ErrNotFound.
func (n *Node) Delete(ctx context.Context, id string) error {
	if id == "" {
		return invalid("delete", "empty task ID")
	}
	res, err := deleteScript.Run(ctx, n.st.rdb, []string{n.st.pending(), n.st.lease(), n.st.dead(), n.st.task(id)},
		id, n.st.prefix).Text()
	if err != nil {
		return failed("delete "+id, err)
	}
	return actionResult("delete", id, res)
}

// purgeBatch is how many tasks one purge script removes, so that no script
// holds Redis for long.
const purgeBatch = 500

// purgeScript removes up to a batch of the tasks of a state (dead or done)
// that entered it before a time. KEYS: the state's set. ARGV: time (µs,
// exclusive), batch, prefix, state. Returns how many it removed.
var purgeScript = redis.NewScript(luaPublish + luaIndex + luaTrim + `
local ids = redis.call('ZRANGE', KEYS[1], '-inf', '(' .. ARGV[1], 'BYSCORE', 'LIMIT', 0, tonumber(ARGV[2]))
for _, id in ipairs(ids) do remove_task(ARGV[3], ARGV[4], id) end
return #ids
`)

// Purge removes every dead task that died before before, a batch per
// script, and returns how many it removed (asynq's
// Inspector.DeleteAllArchivedTasks, bounded by time as River's job
// cleaner). A zero before is an error wrapping scheduler.ErrInvalidArgument.
func (n *Node) Purge(ctx context.Context, before time.Time) (int, error) {
	return n.purge(ctx, Dead, before)
}

// PurgeDone removes every done record (WithKeepDone) of a task that
// finished before before, a batch per script, and returns how many it
// removed (asynq's Inspector.DeleteAllCompletedTasks, River's job cleaner).
// A zero before is an error wrapping scheduler.ErrInvalidArgument.
func (n *Node) PurgeDone(ctx context.Context, before time.Time) (int, error) {
	return n.purge(ctx, Done, before)
}

func (n *Node) purge(ctx context.Context, state State, before time.Time) (int, error) {
	what := "purge " + string(state)
	if before.IsZero() {
		return 0, invalid(what, "zero time")
	}
	total := 0
	for {
		k, err := purgeScript.Run(ctx, n.st.rdb, []string{n.st.stateSet(state)},
			before.UnixMicro(), purgeBatch, n.st.prefix, string(state)).Int()
		total += k
		if err != nil {
			return total, failed(what, err)
		}
		if k < purgeBatch {
			return total, nil
		}
	}
}
