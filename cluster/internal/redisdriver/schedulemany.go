package redisdriver

import (
	"context"
	"fmt"
	"strconv"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/redis/go-redis/v9"
)

// maxTasksPerScript is the most tasks one script of ScheduleMany stores:
// a partition's larger share is split, so that no script holds Redis up
// for long (a script blocks every other command of its server) and the
// script's arguments stay far below Lua's limit on unpack.
const maxTasksPerScript = 256

// ScheduleMany groups tasks by partition and stores each partition's
// share, up to maxTasksPerScript tasks per script, with ScheduleManyScript,
// which announces them to the partition's owners in one message; the
// scripts go in one pipeline, which a cluster client splits into one round
// trip per master. Under replica acknowledgements, each script is a round
// trip followed by WAIT, one after another (driver.Scheduling).
func (d *Driver) ScheduleMany(ctx context.Context, tasks []driver.NewTask) []driver.ScheduleManyResult {
	results := make([]driver.ScheduleManyResult, len(tasks))
	byPart := make([][]int, len(d.parts))
	for i, t := range tasks {
		pi := d.partOf(t.ID).Index
		byPart[pi] = append(byPart[pi], i)
	}
	var batches []storeBatch
	for pi, idx := range byPart {
		for len(idx) > 0 {
			k := min(len(idx), maxTasksPerScript)
			batches = append(batches, storeBatch{part: d.parts[pi], tasks: idx[:k]})
			idx = idx[k:]
		}
	}
	answers, errs := d.storeBatches(ctx, batches, tasks)
	for b, batch := range batches {
		for j, i := range batch.tasks {
			if errs[b] != nil {
				results[i].Err = errs[b]
				continue
			}
			results[i].Stored, results[i].Err = storedOf(tasks[i].ID, answers[b][j])
		}
	}
	return results
}

// storeBatch is the tasks of one script of ScheduleMany: all of one
// partition, by their index in the call.
type storeBatch struct {
	part  Partition
	tasks []int
}

// call is the script call that stores the batch's tasks of all.
func (b storeBatch) call(all []driver.NewTask) scriptCall {
	kinds := map[string]int{} // kind -> its number in the call, from 1
	var names []any
	for _, i := range b.tasks {
		if _, ok := kinds[all[i].Kind]; !ok {
			names = append(names, all[i].Kind)
			kinds[all[i].Kind] = len(names)
		}
	}
	c := scriptCall{
		keys: make([]string, 0, 6+4*len(names)+2*len(b.tasks)),
		args: make([]any, 0, 2+len(names)+7*len(b.tasks)),
	}
	c.keys = append(c.keys, b.part.FixedKeys()...)
	for _, k := range names {
		c.keys = append(c.keys, b.part.KindKeys(k.(string))...)
	}
	c.args = append(append(c.args, b.part.Channel(), len(names)), names...)
	for _, i := range b.tasks {
		t := all[i]
		c.keys = append(c.keys, b.part.Task(t.ID))
		if t.FixedID {
			c.keys = append(c.keys, b.part.Done(t.ID))
		}
		c.args = append(c.args, t.ID, kinds[t.Kind], t.Payload, strconv.FormatInt(t.Due.UnixMicro(), 10), t.MaxRetries, fixedFlag(t.FixedID), t.Metadata)
	}
	return c
}

// storeBatches runs the script of each batch and returns, per batch, the
// script's answer per task or the error that stopped it.
func (d *Driver) storeBatches(ctx context.Context, batches []storeBatch, all []driver.NewTask) ([][]string, []error) {
	answers := make([][]string, len(batches))
	errs := make([]error, len(batches))
	calls := make([]scriptCall, len(batches))
	for b, batch := range batches {
		calls[b] = batch.call(all)
	}
	if d.replicaAcks > 0 {
		for b, batch := range batches {
			errs[b] = d.Replicated(ctx, batch.part.Pending(), func(rdb redis.Scripter) error {
				var err error
				answers[b], err = ScheduleManyScript.Run(ctx, rdb, calls[b].keys, calls[b].args...).StringSlice()
				return err
			})
		}
	} else {
		evalConcurrently(ctx, d.rdb, ScheduleManyScript, calls, func(b int, cmd *redis.Cmd, loadErr error) {
			answers[b], errs[b] = cmd.StringSlice()
			if errs[b] != nil && loadErr != nil && redis.HasErrorPrefix(errs[b], "NOSCRIPT") {
				errs[b] = loadErr
			}
		})
	}
	for b := range batches {
		if errs[b] == nil && len(answers[b]) != len(batches[b].tasks) {
			errs[b] = fmt.Errorf("store script answered %d results for %d tasks", len(answers[b]), len(batches[b].tasks))
		}
	}
	return answers, errs
}
