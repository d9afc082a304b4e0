// Package redisdriver is the Redis driver of the cluster: every key name
// (keys.go), every Lua script (lua/, named in scripts.go) and the
// partition layout of a keyspace, behind the methods of driver.Driver.
// Nothing outside it builds a key or runs a script. It imports package
// driver and go-redis; package cluster imports it for cluster.New.
package redisdriver

import (
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/redis/go-redis/v9"
)

// Driver stores the tasks of one prefix in Redis (one server, Sentinel or
// a Redis Cluster).
type Driver struct {
	rdb   redis.UniversalClient // observed when Options.Observe is set
	plain redis.UniversalClient // the client New was given
	keys  Keys
	parts []Partition

	replicaAcks    int           // replicas a write Replicated runs waits for; 0: none
	replicaTimeout time.Duration // how long it waits at most

	listening listening // the channels its subscriptions follow
	batches   batchers  // the claims and completions made meanwhile (coalesce.go)
	kindKeys  kindKeys  // the scripts' keys per partition and kind (taskkeys.go)
}

var _ driver.Driver = (*Driver)(nil)

// Options configure a Driver.
type Options struct {
	// Prefix is the keyspace: every key starts with it.
	Prefix string
	// Partitions is the number of partitions of the keyspace (at least 1).
	Partitions int
	// Observe, if not nil, is told of every script call.
	Observe Observe
	// ReplicaAcks, if above 0, is how many replicas must acknowledge each
	// write Replicated runs, within ReplicaTimeout (replication.go).
	ReplicaAcks    int
	ReplicaTimeout time.Duration
}

// New returns the driver of the keyspace o names, on rdb.
func New(rdb redis.UniversalClient, o Options) *Driver {
	cluster, _ := rdb.(*redis.ClusterClient)
	return &Driver{
		rdb:   observeRedis(rdb, o.Observe),
		plain: rdb,
		keys:  Keys{Prefix: o.Prefix},
		parts: PartitionsOf(o.Prefix, o.Partitions),

		replicaAcks:    o.ReplicaAcks,
		replicaTimeout: o.ReplicaTimeout,
		batches:        batchers{cluster: cluster},
	}
}

// Partitions is the number of partitions of the keyspace.
func (d *Driver) Partitions() int { return len(d.parts) }

// Addr is the address of the Redis server, or "" for a cluster client (or
// any client that does not say).
func (d *Driver) Addr() string {
	if c, ok := d.plain.(*redis.Client); ok {
		return c.Options().Addr
	}
	return ""
}

// partOf is the partition of task id.
func (d *Driver) partOf(id string) Partition {
	return d.parts[driver.PartitionOf(id, len(d.parts))]
}
