package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestMain fails the tests if a goroutine outlives them: the command shuts
// down every scheduler it makes.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var update = flag.Bool("update", false, "rewrite testdata/simulate.golden")

// TestSimulateOutput checks the command's simulated weekends and outage,
// line by line, against testdata/simulate.golden (read it to see what the
// command prints). The simulations run on manual clocks, so the output is
// the same on every machine.
func TestSimulateOutput(t *testing.T) {
	var out bytes.Buffer
	for _, sc := range scenarios() {
		require.NoError(t, simulate(&out, sc))
	}
	golden := filepath.Join("testdata", "simulate.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, out.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, strings.Split(string(want), "\n"), strings.Split(out.String(), "\n"))
}

// TestRunLive starts the service on the real clock and stops it at once:
// it prints the next three times of each of the three jobs.
func TestRunLive(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, runLive(&out, 0))
	text := out.String()
	for _, want := range []string{`daily-report   "0 3 * * *"`, `quarter-hourly "*/15 * * * *"`, `weekday-digest "0 9 * * MON-FRI"`} {
		require.Contains(t, text, want)
	}
	require.Equal(t, 9, strings.Count(text, " here)"), text)
}
