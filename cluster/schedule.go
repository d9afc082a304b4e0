package cluster

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster/driver"
)

// Storing tasks: Node.Schedule checks a task and has the driver store it
// unless its ID is taken (driver.Scheduling).

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

// prepare checks a task's payload, due time and options, picks its ID
// and makes the observer's metadata: the task ready to store.
func (n *Node) prepare(ctx context.Context, kind string, payload []byte, due time.Time, sc scheduleConfig) (driver.NewTask, error) {
	what := "schedule " + kind
	switch {
	case len(payload) > n.cfg.maxPayload:
		return driver.NewTask{}, invalid(what, "payload of %d bytes exceeds the limit of %d", len(payload), n.cfg.maxPayload)
	case due.IsZero():
		return driver.NewTask{}, invalid(what, "zero due time")
	case sc.maxRetries < 0:
		return driver.NewTask{}, invalid(what, "max retries %d < 0", sc.maxRetries)
	case len(sc.id) > 512:
		return driver.NewTask{}, invalid(what, "task ID of %d bytes exceeds 512", len(sc.id))
	}
	t := driver.NewTask{ID: sc.id, Kind: kind, Payload: payload, Due: time.UnixMicro(due.UnixMicro()), MaxRetries: sc.maxRetries, FixedID: sc.id != ""}
	if !t.FixedID {
		t.ID = randomID()
	}
	meta, err := n.metadataOf(ctx, what, kind)
	if err != nil {
		return driver.NewTask{}, err
	}
	t.Metadata = meta
	return t, nil
}

// store validates and stores a task, and offers it to this node's window.
func (n *Node) store(ctx context.Context, kind string, payload []byte, due time.Time, sc scheduleConfig) (string, error) {
	t, err := n.prepare(ctx, kind, payload, due, sc)
	if err != nil {
		return "", err
	}
	res, err := n.drv.Schedule(ctx, t)
	if err != nil && !errors.Is(err, driver.ErrIDConflict) {
		n.followFailover(err)
		return "", failed("schedule "+kind, err)
	}
	return n.stored(ctx, t, res, err)
}

// stored follows what storing t found (res, or err, ErrIDConflict): it
// reports a task created to the observer, offers a pending one to this
// node's window, and turns a conflict into its error.
func (n *Node) stored(ctx context.Context, t driver.NewTask, res driver.Stored, err error) (string, error) {
	if errors.Is(err, driver.ErrIDConflict) {
		return "", failed("schedule "+t.Kind+" as "+strconv.Quote(t.ID), &conflictError{})
	}
	switch res {
	case driver.Created, driver.Exists:
		if res == driver.Created {
			n.observeScheduled(ctx, t.Kind)
		}
		n.offer(t.ID, t.Kind, t.Due.UnixMicro())
	}
	return t.ID, nil
}

// conflictError is ErrIDConflict and scheduler.ErrInvalidArgument at once.
type conflictError struct{}

func (*conflictError) Error() string { return "task ID already used by a different task" }

func (*conflictError) Unwrap() []error {
	return []error{ErrIDConflict, scheduler.ErrInvalidArgument}
}
