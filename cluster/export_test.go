package cluster

// PartitionKey names a key of the partition of task id under prefix, with
// DefaultPartitions ("lease", "pending", "t:" + id ...), for the tests
// that read Redis directly.
func PartitionKey(prefix, id, name string) string {
	return newStore(nil, prefix, DefaultPartitions).partOf(id).Prefix + ":" + name
}

// SetRunHooks makes n call claimed when it won a claim of a task (before
// the run is set up; it may hold the run), heard once it heard and applied
// a cancel of a task, and deciding when a run is about to decide whether
// to call the handler. Call it before Start.
func SetRunHooks(n *Node, claimed, heard, deciding func(id string)) {
	n.hooks = &testHooks{claimed: claimed, heard: heard, deciding: deciding}
}
