package cluster

import (
	"github.com/go-stpe/scheduler/cluster/driver"
)

// Partitions: the tasks of a prefix are spread over P partitions, each
// under a hash tag of its own, so that a Redis Cluster spreads them over
// its shards (Temporal's history shards, Trigger.dev's hash sharding over
// several Redis instances; asynq and BullMQ keep each queue in one slot).
// A task's partition is a hash of its ID, so a fixed ID (WithID) always
// finds the same partition. Every script works on one partition and is
// given every key it touches, as Redis Cluster requires. The cluster-wide
// records (nodes, member records, periodic declarations, the layout) stay
// under the prefix itself, in its one slot.
//
// Partition i's tag is chosen so that its Redis Cluster slot falls in the
// i-th of P equal ranges of the 16,384 slots. A Redis Cluster gives each
// master a contiguous range of slots (redis-cli --cluster create splits
// them evenly, and resharding moves ranges), so P partitions at evenly
// spaced slots land about P/M on each of M masters, whatever M is.

// DefaultPartitions is the number of partitions of a prefix made without
// WithPartitions: 64, which splits evenly enough over up to about 16 Redis
// masters (each holds 4 partitions, ±1) and over as many nodes, while a
// node's sweep and the operations that read every partition (List, Counts,
// Pause) stay one pipelined round trip of 64 small commands. Raise it
// before the first task is stored when more masters or nodes are planned;
// it is fixed for the life of a keyspace.
const DefaultPartitions = 64

// MaxPartitions is the most partitions a prefix may have: with more, the
// slot ranges get narrower than 16 slots, and every sweep and operation
// reads more partitions than a pipeline carries comfortably.
const MaxPartitions = 1024

// WithPartitions sets the number of partitions the tasks of the prefix are
// spread over (default DefaultPartitions, at most MaxPartitions). Every
// node of a prefix must use the same number, for the life of the keyspace:
// the first node to start records it under prefix:layout, and a node with
// another number is refused at Start with ErrLayout. A number below 1 or
// above MaxPartitions is an error wrapping scheduler.ErrInvalidArgument
// at New. A driver given to NewWithDriver fixes the number itself; there
// the option may only repeat it.
func WithPartitions(n int) Option {
	return optionFunc(func(c *config) { c.partitions, c.partitionsSet = n, true })
}

// partitionIndex is the partition of task id among n (driver.PartitionOf).
func partitionIndex(id string, n int) int { return driver.PartitionOf(id, n) }

// validatePartitions checks the setting of WithPartitions.
func validatePartitions(n int) error {
	if n < 1 || n > MaxPartitions {
		return invalid("New", "partitions %d: must be between 1 and %d", n, MaxPartitions)
	}
	return nil
}
