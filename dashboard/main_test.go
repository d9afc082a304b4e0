package dashboard_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: every
// test stops its scheduler, server and browser.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
