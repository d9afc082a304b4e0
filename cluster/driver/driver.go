package driver

// Driver is a store of tasks: every change of a task's state and every
// read a node or an operator makes, each atomic in the store. Its methods
// are safe for concurrent use. Its groups, each in a file of its own:
// Scheduling (storing, canceling, loading what falls due soon, keeping
// done records), Claims (claiming, renewing, ending runs, reaping expired
// claims), Operations (inspection and operators' actions) and Coordination
// (members, periodic declarations, notices, the layout).
type Driver interface {
	// Partitions is the number of partitions of the keyspace, fixed for
	// its life.
	Partitions() int
	// Addr names the store for errors and logs, without credentials.
	Addr() string

	Scheduling
	Claims
	Operations
	Coordination
}
