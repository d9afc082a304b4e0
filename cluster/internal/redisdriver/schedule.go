package redisdriver

import (
	"context"
	"fmt"
	"strconv"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/redis/go-redis/v9"
)

// Storing tasks: one task with ScheduleScript, many with one
// ScheduleManyScript per partition's share.

// Schedule stores t with ScheduleScript (driver.Scheduling). Without
// replica acknowledgements, the stores made at the same time share a
// round trip as claims and completions do (coalesce.go): each is still
// its own script. With them, each store waits for its own WAIT on its own
// connection.
func (d *Driver) Schedule(ctx context.Context, t driver.NewTask) (driver.Stored, error) {
	p := d.partOf(t.ID)
	keys := d.taskKeys(p, t.Kind, t.ID)
	args := []any{t.ID, t.Kind, t.Payload, strconv.FormatInt(t.Due.UnixMicro(), 10), t.MaxRetries, fixedFlag(t.FixedID), p.Channel(), t.Metadata}
	var res string
	var err error
	if d.replicaAcks == 0 {
		res, err = d.batches.run(ctx, d.rdb, ScheduleScript, keys, args...).Text()
	} else {
		err = d.Replicated(ctx, p.Task(t.ID), func(rdb redis.Scripter) (err error) {
			res, err = ScheduleScript.Run(ctx, rdb, keys, args...).Text()
			return err
		})
	}
	if err != nil {
		return 0, err
	}
	return storedOf(t.ID, res)
}

// storedOf reads a store script's answer for task id.
func storedOf(id, res string) (driver.Stored, error) {
	switch res {
	case "created":
		return driver.Created, nil
	case "exists":
		return driver.Exists, nil
	case "done":
		return driver.AlreadyDone, nil
	case "conflict":
		return 0, fmt.Errorf("store %q: %w", id, driver.ErrIDConflict)
	}
	return 0, fmt.Errorf("store %q: unexpected answer %q", id, res)
}

// fixedFlag is the scripts' "fixed" field: "1" when the caller chose the
// ID.
func fixedFlag(fixed bool) string {
	if fixed {
		return "1"
	}
	return "0"
}
