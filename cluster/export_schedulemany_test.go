package cluster

import "github.com/go-stpe/scheduler/cluster/internal/redisdriver"

// PartitionKeyer is PartitionKey with the partitions of prefix made once,
// for the tests that name the keys of many tasks.
func PartitionKeyer(prefix string) func(id, name string) string {
	parts := redisdriver.PartitionsOf(prefix, DefaultPartitions)
	return func(id, name string) string { return parts[partitionIndex(id, DefaultPartitions)].Prefix + ":" + name }
}
