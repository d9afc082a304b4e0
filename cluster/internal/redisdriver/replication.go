package redisdriver

import (
	"context"
	"fmt"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/redis/go-redis/v9"
)

// Replica acknowledgements: Redis replicates asynchronously, so a write a
// caller counts on (Schedule, ScheduleMany, Cancel) is followed, on the
// same connection, by Redis's WAIT when Options.ReplicaAcks is above 0.
// The writes on the lease path and the operators' actions do not wait.

// replicated runs write, a script on the master that holds key, then,
// under Options.ReplicaAcks, waits on the same connection until enough
// replicas acknowledged it (WAIT counts the writes of its own connection).
// Without it, write runs on the driver's client. Either way the script
// calls are observed (Options.Observe).
func (d *Driver) replicated(ctx context.Context, key string, write func(redis.Scripter) error) error {
	if d.acks == 0 {
		return write(d.rdb)
	}
	var master *redis.Client
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
	conn := master.Conn()
	defer conn.Close()
	if err := write(observeScripter(conn, d.observe)); err != nil {
		return err
	}
	got, err := conn.Wait(ctx, d.acks, d.ackTimeout).Result()
	if err != nil {
		return err
	}
	if got < int64(d.acks) {
		return fmt.Errorf("%w: %d of %d replicas within %v", driver.ErrNotReplicated, got, d.acks, d.ackTimeout)
	}
	return nil
}
