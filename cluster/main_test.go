package cluster_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the tests under goleak, or, when the test binary is
// re-executed as a replica by the multi-process tests, that replica.
func TestMain(m *testing.M) {
	if role := os.Getenv(replicaEnv); role != "" {
		os.Exit(replicaMain(role))
	}
	goleak.VerifyTestMain(m)
}
