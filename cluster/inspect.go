package cluster

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// Inspecting the store: Node.Get and Node.Counts, read-only.

// State is where a stored task is.
type State string

const (
	// Pending tasks wait for their due time (or their retry).
	Pending State = "pending"
	// Running tasks are claimed by a node and held under a lease.
	Running State = "running"
	// Dead tasks failed past their retry limit, or were lost to faults
	// past the limit of lost runs; they stay until canceled.
	Dead State = "dead"
)

// Info describes a stored task (asynq's TaskInfo, River's JobRow). Its
// Task's Attempt and Lost are the two counts: failed runs, which use up
// MaxRetries, and runs lost to faults, which use up the node's
// WithMaxLostRuns.
type Info struct {
	Task
	State State
	// MaxRetries is the task's retry limit.
	MaxRetries int
	// LastError is the error of the last failed or lost run, or "". For
	// a panic it holds the stack too.
	LastError string
}

// Get reads the stored task id; ok is false if there is none (never
// stored, canceled, or run to completion).
func (n *Node) Get(ctx context.Context, id string) (info Info, ok bool, err error) {
	pipe := n.st.rdb.TxPipeline()
	all := pipe.HGetAll(ctx, n.st.task(id))
	leased := pipe.ZScore(ctx, n.st.lease(), id)
	dead := pipe.ZScore(ctx, n.st.dead(), id)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return Info{}, false, failed("get "+id, err)
	}
	f := all.Val()
	if len(f) == 0 {
		return Info{}, false, nil
	}
	info = infoFromHash(id, f)
	info.State = Pending
	if leased.Err() == nil {
		info.State = Running
	}
	if dead.Err() == nil {
		info.State = Dead
	}
	return info, true, nil
}

// Counts is how many tasks the store holds in each state.
type Counts struct {
	Pending, Running, Dead int64
}

// Counts counts the stored tasks by state, for every node of the prefix.
func (n *Node) Counts(ctx context.Context) (Counts, error) {
	pipe := n.st.rdb.TxPipeline()
	p := pipe.ZCard(ctx, n.st.pending())
	r := pipe.ZCard(ctx, n.st.lease())
	d := pipe.ZCard(ctx, n.st.dead())
	if _, err := pipe.Exec(ctx); err != nil {
		return Counts{}, failed("counts", err)
	}
	return Counts{Pending: p.Val(), Running: r.Val(), Dead: d.Val()}, nil
}
