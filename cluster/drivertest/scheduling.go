package drivertest

import "testing"

// runScheduling checks the driver's Scheduling methods.
func runScheduling(t *testing.T, h Harness) {
}
