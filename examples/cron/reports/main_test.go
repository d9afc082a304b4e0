package reports_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the tests if a goroutine outlives them: every test shuts
// its scheduler down.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
