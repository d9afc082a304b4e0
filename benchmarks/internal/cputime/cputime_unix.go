//go:build unix

// Package cputime reads the CPU time the process has used, for the
// benchmark commands' CPU-per-run columns.
package cputime

import (
	"syscall"
	"time"
)

// Process returns the user and system CPU time the process has used, or -1
// when it cannot be read.
func Process() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
