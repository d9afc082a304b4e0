package redisdriver

import (
	"context"
	"fmt"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/redis/go-redis/v9"
)

// Replica acknowledgements. Redis replicates asynchronously: a master
// answers a write before its replicas have it, so a failover that promotes
// a replica can lose the writes acknowledged in the last moments before the
// master died. With Options.ReplicaAcks the writes a caller counts on
// (storing and canceling tasks: the Scheduling methods say which) are each
// followed, on the same connection, by Redis's WAIT, and return only once
// enough replicas hold them, or an error wrapping driver.ErrNotReplicated.
// A promoted replica that acknowledged a write has it (Redis elects the
// replica with the most replicated data; with one replica per master, that
// one). This is how the rule crosses the seam: the cluster says, once, at
// New, how many replicas a write it counts on needs (WithReplicaAcks), and
// the driver keeps it on those writes; Postgres's counterpart is
// synchronous_commit, which a Postgres driver leaves to its server.

// CanWaitForReplicas reports whether rdb can run WAIT on the master that
// holds a key: a *redis.Client or a *redis.ClusterClient.
func CanWaitForReplicas(rdb redis.UniversalClient) bool {
	switch rdb.(type) {
	case *redis.Client, *redis.ClusterClient:
		return true
	}
	return false
}

// Replicated runs write, a script on the master that holds key, then, with
// Options.ReplicaAcks, waits on the same connection until enough replicas
// acknowledged it (an error wrapping driver.ErrNotReplicated when too few
// did within Options.ReplicaTimeout). Without it, write runs on the
// driver's client. Either way its script calls are observed
// (Options.Observe).
func (d *Driver) Replicated(ctx context.Context, key string, write func(redis.Scripter) error) error {
	if d.replicaAcks == 0 {
		return write(d.rdb)
	}
	var master *redis.Client
	// The plain client: an observed one hides its type.
	switch c := d.plain.(type) {
	case *redis.Client:
		master = c
	case *redis.ClusterClient:
		m, err := c.MasterForKey(ctx, key)
		if err != nil {
			return err
		}
		master = m
	default:
		return fmt.Errorf("replica acks need a *redis.Client or *redis.ClusterClient, not %T", d.plain)
	}
	// WAIT counts the writes of its own connection, so the write and the
	// WAIT share one.
	conn := master.Conn()
	defer conn.Close()
	if err := write(d.observed(conn)); err != nil {
		return err
	}
	got, err := conn.Wait(ctx, d.replicaAcks, d.replicaTimeout).Result()
	if err != nil {
		return err
	}
	if got < int64(d.replicaAcks) {
		return fmt.Errorf("%w: %d of %d replicas within %v", driver.ErrNotReplicated, got, d.replicaAcks, d.replicaTimeout)
	}
	return nil
}
