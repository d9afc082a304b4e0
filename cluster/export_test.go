package cluster

// PartitionKey names a key of the partition of task id under prefix, with
// DefaultPartitions ("lease", "pending", "t:" + id ...), for the tests
// that read Redis directly.
func PartitionKey(prefix, id, name string) string {
	return newStore(nil, prefix, DefaultPartitions).partOf(id).prefix + ":" + name
}
