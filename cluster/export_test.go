package cluster

import "github.com/go-stpe/scheduler/cluster/internal/redisdriver"

// PartitionKey names a key of the partition of task id under prefix, with
// DefaultPartitions ("lease", "pending", "t:" + id ...), for the tests
// that read Redis directly.
func PartitionKey(prefix, id, name string) string {
	return redisdriver.PartitionsOf(prefix, DefaultPartitions)[partitionIndex(id, DefaultPartitions)].Prefix + ":" + name
}

// SetRunHooks makes n call claimed when it won a claim of a task (before
// the run is set up; it may hold the run), heard once it heard and applied
// a cancel of a task, and deciding when a run is about to decide whether
// to call the handler. Call it before Start.
func SetRunHooks(n *Node, claimed, heard, deciding func(id string)) {
	n.hooks = &testHooks{claimed: claimed, heard: heard, deciding: deciding}
}

// layoutKey is the layout record's key of prefix, for the tests that read
// it.
func layoutKey(prefix string) string { return redisdriver.LayoutKey(prefix) }
