package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// stpectlBin is the command under test, built once by TestMain.
var stpectlBin string

// TestMain builds stpectl into a temporary directory, runs the tests under
// goleak, and removes the build and stops the tests' PostgreSQL server. The command is built without -race: it
// is sequential code over the cluster module, whose own tests run under
// -race, and a race-enabled binary takes ten times as long to start, which
// over the hundred and more runs here costs minutes on a loaded machine.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "stpectl-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	stpectlBin = filepath.Join(dir, "stpectl")
	if out, err := exec.Command("go", "build", "-o", stpectlBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build stpectl: %v\n%s", err, out)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	goleak.VerifyTestMain(stoppingPostgres{m}, goleak.Cleanup(func(int) { _ = os.RemoveAll(dir) }))
}

// stoppingPostgres runs the tests, then stops their PostgreSQL server,
// whose process is waited for by a goroutine: before goleak looks.
type stoppingPostgres struct{ m *testing.M }

func (r stoppingPostgres) Run() int {
	defer stopPostgres()
	return r.m.Run()
}
