package cluster

// PartitionKeyer is PartitionKey with the partitions of prefix made once,
// for the tests that name the keys of many tasks.
func PartitionKeyer(prefix string) func(id, name string) string {
	st := newStore(nil, prefix, DefaultPartitions)
	return func(id, name string) string { return st.partOf(id).Prefix + ":" + name }
}
