package scheduler_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: every
// test must shut its schedulers down. Started by BenchmarkGrowThenCancel
// with growChildEnv set, the binary runs one round of it instead.
func TestMain(m *testing.M) {
	if spec := os.Getenv(growChildEnv); spec != "" {
		os.Exit(growChild(spec))
	}
	goleak.VerifyTestMain(m)
}
