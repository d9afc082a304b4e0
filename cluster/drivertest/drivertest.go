// Package drivertest is the conformance suite every driver of package
// driver passes: every step of a task's life, the races of operators'
// actions against claims, the clock rules (nothing runs early by the
// store's clock), retention, and listing with cursors. A driver's tests
// call Run with a Harness that opens the driver on a fresh, empty
// keyspace, as River's drivers run riverdrivertest. The Redis driver runs
// it on one redis-server and on a three-master Redis Cluster.
//
// This package imports package driver, the standard library and testing
// helpers (testify); never a store's client.
package drivertest

import (
	"testing"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// Harness opens the driver under test.
type Harness struct {
	// Open returns a driver on a fresh, empty keyspace of its own with
	// the given number of partitions.
	Open func(t testing.TB, partitions int) driver.Driver
	// Same returns a second driver on the keyspace of d (another node's
	// view of the same store), for the races between nodes.
	Same func(t testing.TB, d driver.Driver) driver.Driver
}

// Run runs the whole suite on the driver h opens.
func Run(t *testing.T, h Harness) {
	t.Run("Scheduling", func(t *testing.T) { runScheduling(t, h) })
	t.Run("Claims", func(t *testing.T) { runClaims(t, h) })
	t.Run("Operations", func(t *testing.T) { runOperations(t, h) })
	t.Run("Coordination", func(t *testing.T) { runCoordination(t, h) })
}
