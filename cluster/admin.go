package cluster

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cancel removes a stored task, in whatever state (River's JobCancel,
// asynq's Inspector.DeleteTask, Quartz's deleteJob), and reports whether
// there was one. A run in progress has its ctx canceled (at once on this
// node, at the next heartbeat on another) and its outcome is dropped. The ID
// is free again afterwards.
func (n *Node) Cancel(ctx context.Context, id string) (bool, error) {
	if id == "" {
		return false, invalid("empty task ID")
	}
	ok, err := n.st.cancel(ctx, id)
	if err != nil {
		return false, err
	}
	n.mu.Lock()
	if e := n.loaded[id]; e != nil {
		e.fut.Cancel(false)
		delete(n.loaded, id)
	}
	if r := n.running[id]; r != nil {
		r.cancel(errLeaseLost)
	}
	n.mu.Unlock()
	return ok, nil
}

// State is where a stored task is.
type State string

const (
	// Pending tasks wait for their due time (or their retry).
	Pending State = "pending"
	// Running tasks are claimed by a node and held under a lease.
	Running State = "running"
	// Dead tasks failed past their retry limit; they stay until canceled.
	Dead State = "dead"
)

// Info describes a stored task (asynq's TaskInfo, River's JobRow).
type Info struct {
	Task
	State State
	// MaxRetries is the task's retry limit.
	MaxRetries int
	// LastError is the error of the last failed or lost run, or "".
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
		return Info{}, false, err
	}
	f := all.Val()
	if len(f) == 0 {
		return Info{}, false, nil
	}
	due, _ := parseMicros(f["due"])
	info.ID = id
	info.Kind = f["kind"]
	info.Payload = []byte(f["payload"])
	info.Due = time.UnixMicro(due)
	info.Attempt, _ = strconv.Atoi(f["attempt"])
	info.MaxRetries, _ = strconv.Atoi(f["max"])
	info.LastError = f["err"]
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
		return Counts{}, err
	}
	return Counts{Pending: p.Val(), Running: r.Val(), Dead: d.Val()}, nil
}
