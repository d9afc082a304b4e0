package otelscheduler_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: every
// test shuts down its scheduler, its instrumentation and its providers.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
