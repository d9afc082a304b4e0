package drivertest

import "testing"

// runOperations checks the driver's Operations methods.
func runOperations(t *testing.T, h Harness) {
}
