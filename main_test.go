package scheduler_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: every
// test must shut its schedulers down.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
