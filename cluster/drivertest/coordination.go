package drivertest

import "testing"

// runCoordination checks the driver's Coordination methods.
func runCoordination(t *testing.T, h Harness) {
}
