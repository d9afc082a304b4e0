package pgchaos

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// workerEnv, set to 1, makes the test binary a worker process (worker)
// instead of running the tests: the chaos re-executes itself.
const workerEnv = "PGCHAOS_WORKER"

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) == "1" {
		if err := worker(os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "pgchaos worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}
