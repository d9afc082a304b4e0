package cluster

import (
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
	"github.com/redis/go-redis/v9"
)

// Replica acknowledgements (the Redis driver keeps them: its
// Options.ReplicaAcks, set from WithReplicaAcks at New). Redis replicates asynchronously: a master
// answers a write before its replicas have it, so a failover that promotes
// a replica can lose the writes acknowledged in the last moments before the
// master died. WithReplicaAcks closes that gap for the writes a caller
// counts on, Schedule and Cancel: each is followed, on the same connection,
// by Redis's WAIT, and returns only once enough replicas hold it. A
// promoted replica that acknowledged a write has it (Redis elects the
// replica with the most replicated data; with one replica per master, that
// one).
//
// The writes on the lease path (claim, renewal, completion, failure,
// hand-back, reap) do not wait: losing one in a failover never loses a
// task, only repeats a run (delivery is at least once), and waiting there
// would hold a worker and shorten the lease. Operators' actions (RunNow,
// Reschedule, Retry, Delete, Purge) do not wait either: one lost in a
// failover is undone, and can be done again.

// ErrNotReplicated is wrapped by the error of Node.Schedule or Node.Cancel
// under WithReplicaAcks when fewer replicas than asked acknowledged the
// write within the time limit. The write is on the master and may or may
// not survive a failover; retry the call (Schedule with WithID, so that it
// is stored once) to be sure. asynq and River have no counterpart: asynq
// leaves it to the Redis setup, River to Postgres's synchronous_commit.
var ErrNotReplicated = driver.ErrNotReplicated

// WithReplicaAcks makes Schedule and Cancel wait, after their write, until
// replicas replicas of the Redis master holding the prefix have it
// (Redis's WAIT), for at most timeout. If fewer acknowledge in time, the
// call returns an error wrapping ErrNotReplicated. With it, a task whose
// Schedule returned nil survives the crash of that master and the
// promotion of a replica that acknowledged it, and a Cancel that returned
// is not undone by one. The rdb given to New must then be a
// *redis.Client or a *redis.ClusterClient. 0 replicas (the default) waits
// for nothing; a negative count or a timeout not above zero with replicas
// above zero is an error wrapping scheduler.ErrInvalidArgument. It is a
// setting of New's Redis driver: NewWithDriver refuses it.
func WithReplicaAcks(replicas int, timeout time.Duration) Option {
	return optionFunc(func(c *config) { c.replicaAcks, c.replicaTimeout, c.replicaAcksSet = replicas, timeout, true })
}

// validateReplicaAcks checks WithReplicaAcks against the client.
func validateReplicaAcks(c *config, rdb redis.UniversalClient) error {
	switch {
	case c.replicaAcks < 0:
		return invalid("New", "replica acks %d < 0", c.replicaAcks)
	case c.replicaAcks == 0:
		return nil
	case c.replicaTimeout <= 0:
		return invalid("New", "replica acks timeout %v <= 0", c.replicaTimeout)
	case !redisdriver.CanWaitForReplicas(rdb):
		return invalid("New", "replica acks need a *redis.Client or *redis.ClusterClient, not %T", rdb)
	}
	return nil
}
