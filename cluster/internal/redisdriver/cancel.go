package redisdriver

import (
	"context"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/redis/go-redis/v9"
)

// Cancel removes task id with CancelScript, asking again with the stored
// kind if kind is not it (driver.Scheduling).
func (d *Driver) Cancel(ctx context.Context, id, kind string, retention time.Duration, keep driver.KeepDone) (removed, wasRunning bool, err error) {
	p := d.partOf(id)
	var v []int64
	err = d.Replicated(ctx, p.Task(id), func(rdb redis.Scripter) (err error) {
		v, err = withKind(kind, func(kind string) ([]int64, error) {
			args := append([]any{id, retention.Milliseconds(), p.Channel()}, keepArgs(keep)...)
			return CancelScript.Run(ctx, rdb, p.TaskKeys(kind, id), args...).Int64Slice()
		})
		return err
	})
	if err != nil {
		return false, false, err
	}
	return len(v) > 0 && v[0] == 1, len(v) > 1 && v[1] == 1, nil
}
