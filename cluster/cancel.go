package cluster

import (
	"context"
	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
	"time"

	"github.com/redis/go-redis/v9"
)

// Canceling a stored task: Node.Cancel and its script.

// Cancellation is what Node.Cancel did.
type Cancellation struct {
	// Removed is true if a task was stored under the ID and is now
	// removed: no node claims it again.
	Removed bool
	// WasRunning is true if a node held a claim on it (a run was in
	// flight) when it was removed. That run's ctx is canceled within a
	// third of the lease, if its node can reach Redis, and its outcome is
	// dropped. Its handler is not called if the node heard of the cancel
	// first; it may still start while the notice is in flight.
	WasRunning bool
}

// Cancel removes a stored task, in whatever state (River's JobCancel,
// asynq's Inspector.DeleteTask, Quartz's deleteJob), and says whether there
// was one and whether a run of it was in flight. Once Cancel has returned
// with Removed true, no node claims the task again. A run in flight has its
// ctx canceled with a lost-lease cause: at once on this node, through the
// store's channel on another, and at that node's next renewal (every
// quarter lease) if the message is lost. The ID is free again afterwards,
// except for a periodic occurrence, which is remembered for the retention
// so that no node stores it again: canceling an occurrence skips it. With
// WithKeepDone the canceled task stays as a Done record, its last run
// record saying Canceled, and a done record is removed. An empty ID is an error wrapping scheduler.ErrInvalidArgument; a Redis
// error is returned wrapped, and the task may or may not be removed then.
func (n *Node) Cancel(ctx context.Context, id string) (Cancellation, error) {
	if id == "" {
		return Cancellation{}, invalid("cancel", "empty task ID")
	}
	var res Cancellation
	kind := n.knownKind(id)
	err := n.replicated(ctx, n.st.partOf(id).Task(id), func(rdb redis.Scripter) (err error) {
		res, err = withKind(kind, func(kind string) (Cancellation, error) {
			return n.st.cancel(ctx, rdb, id, kind, n.cfg.retention, n.cfg.keepDone)
		})
		return err
	})
	if err != nil {
		n.followFailover(err)
		return Cancellation{}, n.failed("cancel "+id, err)
	}
	n.unload(id)
	n.cancelRun(id)
	return res, nil
}

// knownKind is the kind of task id if this node has it in its window or
// runs it, else "" (a script told another kind asks again: withKind).
func (n *Node) knownKind(id string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if e := n.loaded[id]; e != nil {
		return e.kind
	}
	if r := n.running[id]; r != nil {
		return r.kind
	}
	return ""
}

func (s store) cancel(ctx context.Context, rdb redis.Scripter, id, kind string, retention time.Duration, keep keepDone) (Cancellation, error) {
	p := s.partOf(id)
	args := append([]any{id, retention.Milliseconds(), p.Channel()}, keep.args()...)
	v, err := redisdriver.CancelScript.Run(ctx, rdb, p.TaskKeys(kind, id), args...).Int64Slice()
	if err != nil {
		return Cancellation{}, err
	}
	return Cancellation{Removed: len(v) > 0 && v[0] == 1, WasRunning: len(v) > 1 && v[1] == 1}, nil
}
