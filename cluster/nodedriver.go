package cluster

import (
	"github.com/go-stpe/scheduler/cluster/driver"
)

// NewWithDriver returns a Node that keeps its tasks in the store d
// implements (package driver), such as the Postgres driver of the module
// github.com/go-stpe/scheduler/cluster/pgdriver; New is the same on
// Redis. River's counterpart is river.NewClient(riverpgxv5.New(pool),
// config): the driver carries the store's own settings, the options
// only the node's. It starts nothing: a node that only schedules need not
// be started. Every node sharing a store must use the same kind of
// driver on it, with the same number of partitions.
//
// The driver fixes the number of partitions: WithPartitions may be given
// only with the driver's own number. WithPrefix and WithReplicaAcks are
// settings of the Redis driver that New makes, and Observer.RedisCall is
// never called on a node made here (its store reports its calls its own
// way); the node does none of New's Redis-only work either (following a
// Redis Cluster failover, the warning about a small connection pool).
//
// A nil d, a nil option, WithPrefix, WithReplicaAcks, WithPartitions of
// another number than d.Partitions(), or a bad option is an error
// wrapping scheduler.ErrInvalidArgument.
func NewWithDriver(d driver.Driver, opts ...Option) (*Node, error) {
	if d == nil {
		return nil, invalid("NewWithDriver", "nil driver")
	}
	cfg, err := configure(opts)
	if err != nil {
		return nil, err
	}
	parts := d.Partitions()
	switch {
	case cfg.prefixSet:
		return nil, invalid("NewWithDriver", "WithPrefix is a setting of the Redis driver New makes; a driver given here names its own store")
	case cfg.replicaAcksSet:
		return nil, invalid("NewWithDriver", "WithReplicaAcks is a setting of the Redis driver New makes; a driver given here keeps its own durability")
	case cfg.partitionsSet && cfg.partitions != parts:
		return nil, invalid("NewWithDriver", "WithPartitions(%d) differs from the driver's %d partitions; the driver fixes the number", cfg.partitions, parts)
	}
	if validatePartitions(parts) != nil {
		return nil, invalid("NewWithDriver", "the driver has %d partitions: must be between 1 and %d", parts, MaxPartitions)
	}
	cfg.partitions = parts
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return newNode(cfg, d)
}
