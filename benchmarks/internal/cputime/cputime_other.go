//go:build !unix

// Package cputime reads the CPU time the process has used, for the
// benchmark commands' CPU-per-run columns.
package cputime

import "time"

// Process is not measured here: it returns -1, and the CPU-per-run columns
// show n/a.
func Process() time.Duration { return -1 }
