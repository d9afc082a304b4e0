package drivertest

import "testing"

// runClaims checks the driver's Claims methods.
func runClaims(t *testing.T, h Harness) {
}
