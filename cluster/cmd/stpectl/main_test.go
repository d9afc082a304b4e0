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

// TestMain builds stpectl into a temporary directory (with -race when the
// tests run with it), runs the tests under goleak, and removes the build.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "stpectl-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	stpectlBin = filepath.Join(dir, "stpectl")
	args := []string{"build", "-o", stpectlBin}
	if raceEnabled {
		args = append(args, "-race")
	}
	if out, err := exec.Command("go", append(args, ".")...).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build stpectl: %v\n%s", err, out)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { _ = os.RemoveAll(dir) }))
}
