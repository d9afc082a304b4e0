package cluster

import (
	"context"
	"fmt"
	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Storing many tasks in one call: Node.ScheduleMany groups the tasks by
// partition and stores each partition's share with one script, all of
// them in one pipeline.

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

// maxTasksPerScript is the most tasks one script of ScheduleMany stores:
// a partition's larger share is split, so that no script holds Redis up
// for long (a script blocks every other command of its server) and the
// script's arguments stay far below Lua's limit on unpack.
const maxTasksPerScript = 256

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
	prepared := make([]newTask, len(tasks))
	byPart := make([][]int, len(n.st.parts))
	for i, p := range tasks {
		sc, err := n.scheduleConfigOf(p.Kind, p.Opts)
		if err == nil {
			prepared[i], err = n.prepare(ctx, p.Kind, p.Payload, p.Due, sc)
		}
		if err != nil {
			results[i].Err = err
			continue
		}
		pi := partitionIndex(prepared[i].id, len(n.st.parts))
		byPart[pi] = append(byPart[pi], i)
	}
	var batches []storeBatch
	for pi, idx := range byPart {
		for len(idx) > 0 {
			k := min(len(idx), maxTasksPerScript)
			batches = append(batches, storeBatch{part: n.st.parts[pi], tasks: idx[:k]})
			idx = idx[k:]
		}
	}
	answers, errs := n.storeBatches(ctx, batches, prepared)
	for b, batch := range batches {
		for j, i := range batch.tasks {
			t := prepared[i]
			if errs[b] != nil {
				results[i].Err = failed("schedule "+t.kind, errs[b])
				continue
			}
			results[i].ID, results[i].Err = n.stored(ctx, t, answers[b][j])
		}
	}
	return results, manyError(results)
}

// storeBatch is the tasks of one script of ScheduleMany: all of one
// partition, by their index in the call.
type storeBatch struct {
	part  partition
	tasks []int
}

// call is the script call that stores the batch's tasks of all.
func (b storeBatch) call(all []newTask) scriptCall {
	kinds := map[string]int{} // kind -> its number in the call, from 1
	var names []any
	for _, i := range b.tasks {
		if _, ok := kinds[all[i].kind]; !ok {
			names = append(names, all[i].kind)
			kinds[all[i].kind] = len(names)
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
		c.keys = append(c.keys, b.part.Task(t.id))
		if t.fixed {
			c.keys = append(c.keys, b.part.Done(t.id))
		}
		c.args = append(c.args, t.id, kinds[t.kind], t.payload, strconv.FormatInt(t.due, 10), t.maxRetries, fixedFlag(t.fixed), t.meta)
	}
	return c
}

// storeBatches runs the script of each batch and returns, per batch, the
// script's answer per task or the error that stopped it.
func (n *Node) storeBatches(ctx context.Context, batches []storeBatch, all []newTask) ([][]string, []error) {
	answers := make([][]string, len(batches))
	errs := make([]error, len(batches))
	calls := make([]scriptCall, len(batches))
	for b, batch := range batches {
		calls[b] = batch.call(all)
	}
	if n.cfg.replicaAcks > 0 {
		for b, batch := range batches {
			errs[b] = n.replicated(ctx, batch.part.Pending(), func(rdb redis.Scripter) error {
				var err error
				answers[b], err = redisdriver.ScheduleManyScript.Run(ctx, rdb, calls[b].keys, calls[b].args...).StringSlice()
				return err
			})
		}
	} else if len(calls) > 0 {
		cmds, loadErr := evalEach(ctx, n.st.rdb, redisdriver.ScheduleManyScript, calls)
		for b, cmd := range cmds {
			answers[b], errs[b] = cmd.StringSlice()
			if errs[b] != nil && loadErr != nil && redis.HasErrorPrefix(errs[b], "NOSCRIPT") {
				errs[b] = loadErr
			}
		}
	}
	for b := range batches {
		if errs[b] == nil && len(answers[b]) != len(batches[b].tasks) {
			errs[b] = fmt.Errorf("store script answered %d results for %d tasks", len(answers[b]), len(batches[b].tasks))
		}
	}
	for _, err := range errs {
		if err != nil {
			n.followFailover(err)
			break
		}
	}
	return answers, errs
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
