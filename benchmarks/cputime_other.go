//go:build !unix

package main

import "time"

// cpuTime is not measured here: the CPU-per-run column shows n/a.
func cpuTime() time.Duration { return -1 }
