package cluster

import (
	"context"
	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
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
	sc, err := n.scheduleConfigOf(kind, opts)
	if err != nil {
		return "", err
	}
	return n.store(ctx, kind, payload, due, sc)
}

// scheduleConfigOf applies opts and checks kind as Schedule takes it: a
// valid kind, not of a periodic task, and known under WithStrictKinds.
func (n *Node) scheduleConfigOf(kind string, opts []ScheduleOption) (scheduleConfig, error) {
	sc := scheduleConfig{maxRetries: n.cfg.maxRetries}
	for _, o := range opts {
		if o == nil {
			return sc, invalid("schedule "+kind, "nil option")
		}
		o.applySchedule(&sc)
	}
	if err := validKind(kind); err != nil {
		return sc, err
	}
	if strings.HasPrefix(kind, "@") {
		return sc, invalid("schedule "+kind, "the @ prefix is kept for periodic tasks")
	}
	n.mu.Lock()
	_, known := n.handlers[kind]
	n.mu.Unlock()
	if !known && n.cfg.strictKinds {
		return sc, invalid("schedule "+kind, "unknown kind: register its handler with Handle first (WithStrictKinds)")
	}
	return sc, nil
}

// newTask is a task checked and ready to store: its ID chosen, its due
// time in µs and the observer's metadata made.
type newTask struct {
	id, kind   string
	payload    []byte
	due        int64
	maxRetries int
	fixed      bool // the caller chose the ID (WithID)
	meta       string
}

// prepare checks a task's payload, due time and options, and picks its ID.
func (n *Node) prepare(ctx context.Context, kind string, payload []byte, due time.Time, sc scheduleConfig) (newTask, error) {
	what := "schedule " + kind
	switch {
	case len(payload) > n.cfg.maxPayload:
		return newTask{}, invalid(what, "payload of %d bytes exceeds the limit of %d", len(payload), n.cfg.maxPayload)
	case due.IsZero():
		return newTask{}, invalid(what, "zero due time")
	case sc.maxRetries < 0:
		return newTask{}, invalid(what, "max retries %d < 0", sc.maxRetries)
	case len(sc.id) > 512:
		return newTask{}, invalid(what, "task ID of %d bytes exceeds 512", len(sc.id))
	}
	t := newTask{id: sc.id, kind: kind, payload: payload, due: due.UnixMicro(), maxRetries: sc.maxRetries, fixed: sc.id != ""}
	if !t.fixed {
		t.id = randomID()
	}
	meta, err := n.metadataOf(ctx, what, kind)
	if err != nil {
		return newTask{}, err
	}
	t.meta = meta
	return t, nil
}

// store validates and stores a task, and offers it to this node's window.
func (n *Node) store(ctx context.Context, kind string, payload []byte, due time.Time, sc scheduleConfig) (string, error) {
	t, err := n.prepare(ctx, kind, payload, due, sc)
	if err != nil {
		return "", err
	}
	var res string
	err = n.replicated(ctx, n.st.partOf(t.id).Task(t.id), func(rdb redis.Scripter) (err error) {
		res, err = n.st.schedule(ctx, rdb, t)
		return err
	})
	if err != nil {
		n.followFailover(err)
		return "", failed("schedule "+kind, err)
	}
	return n.stored(ctx, t, res)
}

// stored follows the answer res of the script that stored t: it reports
// a task created to the observer, offers a pending one to this node's
// window, and turns a conflict into its error.
func (n *Node) stored(ctx context.Context, t newTask, res string) (string, error) {
	switch res {
	case "conflict":
		return "", failed("schedule "+t.kind+" as "+strconv.Quote(t.id), &conflictError{})
	case "created", "exists":
		if res == "created" {
			n.observeScheduled(ctx, t.kind)
		}
		n.offer(t.id, t.kind, t.due)
	}
	return t.id, nil
}

// conflictError is ErrIDConflict and scheduler.ErrInvalidArgument at once.
type conflictError struct{}

func (*conflictError) Error() string { return "task ID already used by a different task" }

func (*conflictError) Unwrap() []error {
	return []error{ErrIDConflict, scheduler.ErrInvalidArgument}
}

func (s store) schedule(ctx context.Context, rdb redis.Scripter, t newTask) (string, error) {
	p := s.partOf(t.id)
	return redisdriver.ScheduleScript.Run(ctx, rdb, p.TaskKeys(t.kind, t.id), t.id, t.kind, t.payload,
		strconv.FormatInt(t.due, 10), t.maxRetries, fixedFlag(t.fixed), p.Channel(), t.meta).Text()
}

// fixedFlag is the scripts' "fixed" field: "1" when the caller chose the
// ID.
func fixedFlag(fixed bool) string {
	if fixed {
		return "1"
	}
	return "0"
}
