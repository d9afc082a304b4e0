package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// Storing many tasks in one call: Node.ScheduleMany checks each task as
// Schedule does, and the driver stores them all at once, each partition's
// share with one script, all of them in one pipeline.

// ScheduleManyParams is one task of Node.ScheduleMany: the arguments of
// Node.Schedule (River's InsertManyParams, a job of BullMQ's addBulk).
type ScheduleManyParams struct {
	Kind    string
	Payload []byte
	Due     time.Time
	Opts    []ScheduleOption
}

// ScheduleResult is what Node.ScheduleMany did with one task: its ID once
// Redis holds it, or the error Node.Schedule would have returned for it.
type ScheduleResult struct {
	ID  string
	Err error
}

// ScheduleMany stores many tasks in one call and returns, in the order of
// tasks, each one's result: the ID Node.Schedule would have returned, or
// its error (River's InsertMany, BullMQ's addBulk; asynq has no batch).
// Every task has Schedule's guarantees and is checked on its own: a bad
// one (an error wrapping scheduler.ErrInvalidArgument), a conflict under
// WithID (ErrIDConflict) or a partition that could not be written fails
// that task alone, never the others. The same task under one ID twice in
// a batch is stored once, and a different task under an ID used earlier
// in the batch is a conflict.
//
// The tasks are grouped by partition, and each partition's tasks (up to
// 256 per script) are stored by one script, which announces them to the
// nodes that own the partition in one message; the scripts go in one
// pipeline, which a cluster client splits into one round trip per
// master. Under WithReplicaAcks, each script is a round trip followed by
// Redis's WAIT, one after another.
//
// The error is nil if every task was stored (or was already, under
// WithID); otherwise it says how many were not, and wraps the first
// task's error: read each result's Err to know which.
func (n *Node) ScheduleMany(ctx context.Context, tasks []ScheduleManyParams) ([]ScheduleResult, error) {
	results := make([]ScheduleResult, len(tasks))
	prepared := make([]driver.NewTask, 0, len(tasks))
	valid := make([]int, 0, len(tasks)) // the index in tasks of each of prepared
	for i, p := range tasks {
		sc, err := n.scheduleConfigOf(p.Kind, p.Opts)
		var t driver.NewTask
		if err == nil {
			t, err = n.prepare(ctx, p.Kind, p.Payload, p.Due, sc)
		}
		if err != nil {
			results[i].Err = err
			continue
		}
		prepared = append(prepared, t)
		valid = append(valid, i)
	}
	if len(prepared) == 0 {
		return results, manyError(results)
	}
	stored := n.drv.ScheduleMany(ctx, prepared)
	followed := false
	for j, t := range prepared {
		i, r := valid[j], stored[j]
		if r.Err != nil && !errors.Is(r.Err, driver.ErrIDConflict) {
			if !followed {
				n.followFailover(r.Err)
				followed = true
			}
			results[i].Err = failed("schedule "+t.Kind, r.Err)
			continue
		}
		results[i].ID, results[i].Err = n.stored(ctx, t, r.Stored, r.Err)
	}
	return results, manyError(results)
}

// manyError sums up the failures among results: nil if none.
func manyError(results []ScheduleResult) error {
	failures, first := 0, -1
	for i, r := range results {
		if r.Err != nil {
			failures++
			if first < 0 {
				first = i
			}
		}
	}
	if failures == 0 {
		return nil
	}
	return fmt.Errorf("cluster: schedule many: %d of %d tasks not stored; the first, task %d: %w",
		failures, len(results), first, results[first].Err)
}
