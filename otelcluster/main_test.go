package otelcluster_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: every
// test stops its node and redis-server, and shuts down its instrumentation
// and providers.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
