package main

// The machine the run is on, for the report's first line.

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// cpuModel is the processor's model name, from /proc/cpuinfo.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	if v := infoField(strings.ReplaceAll(string(b), "\t", ""), "model name"); v != "?" {
		return v
	}
	return runtime.GOARCH
}

// loadAverage is the 1-, 5- and 15-minute load averages, from /proc/loadavg.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// redisVersion is what redis-server --version prints.
func redisVersion() string {
	out, err := exec.Command("redis-server", "--version").Output()
	if err != nil {
		return "redis-server not found"
	}
	return strings.TrimSpace(string(out))
}
