package cluster

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/redis/go-redis/v9"
)

// Storing tasks: Node.Schedule and the script that stores a task unless
// its ID is taken.

// Schedule stores a task of kind with payload, due at due, and returns its
// ID once Redis has it (asynq's Client.Enqueue with ProcessAt, River's
// Insert with ScheduledAt). One node that handles kind runs it at due, by
// Redis's clock: never before.
//
// A due time in the past means now: the task is stored and runs at once.
// The node need not handle kind nor be started: a kind no live node
// handles waits pending until one does (with WithStrictKinds, a kind with
// no handler on this node is refused). The zero time or a payload beyond
// WithMaxPayload is an error wrapping scheduler.ErrInvalidArgument, and
// nothing is stored. With WithID, scheduling the same task again is a no-op
// that returns nil, and a different task under that ID is ErrIDConflict.
// A Redis error is returned wrapped; the task may or may not be stored
// then, so retry with WithID to be sure of exactly one.
func (n *Node) Schedule(ctx context.Context, kind string, payload []byte, due time.Time, opts ...ScheduleOption) (string, error) {
	sc := scheduleConfig{maxRetries: n.cfg.maxRetries}
	for _, o := range opts {
		if o == nil {
			return "", invalid("schedule "+kind, "nil option")
		}
		o.applySchedule(&sc)
	}
	if err := validKind(kind); err != nil {
		return "", err
	}
	if strings.HasPrefix(kind, "@") {
		return "", invalid("schedule "+kind, "the @ prefix is kept for periodic tasks")
	}
	n.mu.Lock()
	_, known := n.handlers[kind]
	n.mu.Unlock()
	if !known && n.cfg.strictKinds {
		return "", invalid("schedule "+kind, "unknown kind: register its handler with Handle first (WithStrictKinds)")
	}
	return n.store(ctx, kind, payload, due, sc)
}

// store validates and stores a task, and offers it to this node's window.
func (n *Node) store(ctx context.Context, kind string, payload []byte, due time.Time, sc scheduleConfig) (string, error) {
	what := "schedule " + kind
	switch {
	case len(payload) > n.cfg.maxPayload:
		return "", invalid(what, "payload of %d bytes exceeds the limit of %d", len(payload), n.cfg.maxPayload)
	case due.IsZero():
		return "", invalid(what, "zero due time")
	case sc.maxRetries < 0:
		return "", invalid(what, "max retries %d < 0", sc.maxRetries)
	case len(sc.id) > 512:
		return "", invalid(what, "task ID of %d bytes exceeds 512", len(sc.id))
	}
	fixed := sc.id != ""
	id := sc.id
	if !fixed {
		id = randomID()
	}
	meta, err := n.metadataOf(ctx, what, kind)
	if err != nil {
		return "", err
	}
	dueUS := due.UnixMicro()
	var res string
	err = n.replicated(ctx, n.st.partOf(id).task(id), func(rdb redis.Scripter) (err error) {
		res, err = n.st.schedule(ctx, rdb, id, kind, payload, dueUS, sc.maxRetries, fixed, meta)
		return err
	})
	if err != nil {
		n.followFailover(err)
		return "", failed(what, err)
	}
	switch res {
	case "conflict":
		return "", failed(what+" as "+strconv.Quote(id), &conflictError{})
	case "created", "exists":
		if res == "created" {
			n.observeScheduled(ctx, kind)
		}
		n.offer(id, kind, dueUS)
	}
	return id, nil
}

// conflictError is ErrIDConflict and scheduler.ErrInvalidArgument at once.
type conflictError struct{}

func (*conflictError) Error() string { return "task ID already used by a different task" }

func (*conflictError) Unwrap() []error {
	return []error{ErrIDConflict, scheduler.ErrInvalidArgument}
}

// scheduleScript stores a task unless its ID is taken, and indexes it by
// kind. A done record (WithKeepDone) whose done marker is gone does not
// hold its ID: it is replaced, unless it is of another kind (a conflict,
// until the record is trimmed or deleted).
// KEYS: the task's keys (partition.taskKeys). ARGV: id, kind, payload,
// due, max retries, fixed ("1" when the caller chose the ID), channel, the
// observer's metadata ("" for none; not part of the checksum).
// Returns "created", "exists" (the same task is stored), "done" (the same
// task already ran, or was canceled if it is a periodic occurrence) or
// "conflict" (the ID holds a different task).
var scheduleScript = redis.NewScript(luaPublish + luaPart + `
local sum = redis.sha1hex(ARGV[2] .. '\0' .. ARGV[4] .. '\0' .. ARGV[3])
local d = redis.call('GET', MARK)
if d then
  if d == sum then return 'done' end
  return 'conflict'
end
local f = redis.call('HMGET', TASK, 'sum', 'fin', 'kind')
if f[1] then
  if not f[2] then
    if f[1] == sum then return 'exists' end
    return 'conflict'
  end
  if f[3] ~= ARGV[2] then return 'conflict' end
  index_rem(INDEX, 'done', ARGV[1])
  redis.call('DEL', TASK)
end
redis.call('HSET', TASK, 'kind', ARGV[2], 'payload', ARGV[3], 'due', ARGV[4],
  'max', ARGV[5], 'attempt', '0', 'lost', '0', 'sum', sum, 'fixed', ARGV[6])
if ARGV[8] ~= '' then redis.call('HSET', TASK, 'meta', ARGV[8]) end
make_pending(INDEX, ARGV[7], ARGV[2], ARGV[4], ARGV[1])
return 'created'
`)

func (s store) schedule(ctx context.Context, rdb redis.Scripter, id, kind string, payload []byte, due int64, maxRetries int, fixed bool, meta string) (string, error) {
	f := "0"
	if fixed {
		f = "1"
	}
	p := s.partOf(id)
	return scheduleScript.Run(ctx, rdb, p.taskKeys(kind, id),
		id, kind, payload, strconv.FormatInt(due, 10), maxRetries, f, p.channel(), meta).Text()
}
