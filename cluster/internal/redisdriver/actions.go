package redisdriver

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/redis/go-redis/v9"
)

// The actions on one task: each is one script on the task's partition,
// given the keys of the kind the caller believes (an action by ID alone
// names none: the script answers with the stored kind, and withKind runs
// it again with that one). Each answers "ok", "missing" or the state that
// forbids the action.

// RunNow runs MoveScript with the time "now" (Redis's TIME), keeping the
// task's due time.
func (d *Driver) RunNow(ctx context.Context, id string) error {
	return d.move(ctx, id, "now", "0")
}

// Reschedule runs MoveScript with due, which it sets as the task's due
// time too.
func (d *Driver) Reschedule(ctx context.Context, id string, due time.Time) error {
	return d.move(ctx, id, strconv.FormatInt(due.UnixMicro(), 10), "1")
}

func (d *Driver) move(ctx context.Context, id, at, setDue string) error {
	p := d.partOf(id)
	return d.action(ctx, id, func(kind string) *redis.Cmd {
		return MoveScript.Run(ctx, d.rdb, p.TaskKeys(kind, id), id, at, setDue, p.Channel())
	})
}

// Retry runs RetryScript.
func (d *Driver) Retry(ctx context.Context, id string) error {
	p := d.partOf(id)
	return d.action(ctx, id, func(kind string) *redis.Cmd {
		return RetryScript.Run(ctx, d.rdb, p.TaskKeys(kind, id), id, p.Channel())
	})
}

// Delete runs DeleteScript.
func (d *Driver) Delete(ctx context.Context, id string) error {
	p := d.partOf(id)
	return d.action(ctx, id, func(kind string) *redis.Cmd {
		return DeleteScript.Run(ctx, d.rdb, p.TaskKeys(kind, id), id)
	})
}

// action runs the script of an action on task id, built by run for a kind,
// first with no kind then, if the task is stored, with its own; and turns
// its answer into nil, ErrNotFound or a *driver.StateError.
func (d *Driver) action(ctx context.Context, id string, run func(kind string) *redis.Cmd) error {
	res, err := withKind("", func(kind string) (string, error) {
		return run(kind).Text()
	})
	switch {
	case err != nil:
		return err
	case res == "ok":
		return nil
	case res == "missing":
		return fmt.Errorf("task %s: %w", id, driver.ErrNotFound)
	default:
		return &driver.StateError{ID: id, State: driver.State(res)}
	}
}
