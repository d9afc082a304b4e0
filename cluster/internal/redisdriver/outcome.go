package redisdriver

import (
	"context"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// Recording a run's end: CompleteScript, FailScript and ReleaseScript
// each check first that the caller's token still owns the task.

// Complete records a successful run with CompleteScript (driver.Claims).
func (d *Driver) Complete(ctx context.Context, id, kind, owner string, retention time.Duration, keep driver.KeepDone, tl driver.Timeline) (driver.Recorded, error) {
	p := d.partOf(id)
	args := make([]any, 0, 6) // one allocation for the six
	args = append(append(append(args, id, owner, retention.Milliseconds()), keepArgs(keep)...), tl.TTL.Milliseconds())
	return withKind(kind, func(kind string) (driver.Recorded, error) {
		res, err := d.batches.run(ctx, d.rdb, CompleteScript, timelineKeys(p, tl, d.taskKeys(p, kind, id)), args...).Text()
		return driver.Recorded(res), err
	})
}

// Fail records a failed run with FailScript (driver.Claims).
func (d *Driver) Fail(ctx context.Context, f driver.Failure, tl driver.Timeline) (driver.Recorded, error) {
	skip := "0"
	if f.SkipRetry {
		skip = "1"
	}
	p := d.partOf(f.ID)
	return withKind(f.Kind, func(kind string) (driver.Recorded, error) {
		res, err := FailScript.Run(ctx, d.rdb, timelineKeys(p, tl, d.taskKeys(p, kind, f.ID)),
			f.ID, f.Owner, f.Error, f.Backoff.Microseconds(), p.Channel(), skip, string(f.Outcome), tl.TTL.Milliseconds()).Text()
		return driver.Recorded(res), err
	})
}

// Release hands a run back with ReleaseScript (driver.Claims).
func (d *Driver) Release(ctx context.Context, id, kind, owner string) (driver.Recorded, error) {
	p := d.partOf(id)
	return withKind(kind, func(kind string) (driver.Recorded, error) {
		res, err := ReleaseScript.Run(ctx, d.rdb, d.taskKeys(p, kind, id), id, owner, p.Channel()).Text()
		return driver.Recorded(res), err
	})
}
