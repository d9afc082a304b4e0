// Package driver is the seam between the cluster's rules and its store:
// the operations a node and an operator need from a store, in terms of
// tasks and times, never keys or queries.
//
// The rules of a task's life (retries and backoff, lost-run limits,
// periodic misfire and overlap, time limits, partition ownership,
// observation) live in package cluster, written once; a Driver stores and
// changes tasks atomically as the rules decide, and compares times with
// the store's own clock. Package cluster holds the Redis driver
// (cluster/internal/redisdriver, the one cluster.New uses); another store
// joins by implementing Driver and passing the conformance suite in
// package drivertest, as River's drivers implement riverdriver.Executor
// and pass riverdrivertest.
//
// Conventions every method keeps:
//   - Times are time.Time with microsecond precision; a time a driver
//     stamps (a claim's start, a lease's expiry, a retry's time, whether a
//     task is due) comes from the store's clock, never the caller's.
//   - Tasks are spread over the partitions of the keyspace
//     (Driver.Partitions); PartitionOf says which one holds a task, the
//     same for every driver, so that ownership is the same whatever the
//     store.
//   - A missing task is ErrNotFound, a state that forbids a change is
//     ErrWrongState, wrapped with what was asked; errors of the store
//     itself are returned as they come, wrapped with the store's address.
//
// This package imports only the standard library.
package driver
