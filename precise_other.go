//go:build !linux

package scheduler

import (
	"sync/atomic"
	"time"
)

// preciseSupported is false outside Linux: WithPreciseTiming falls back to
// the plain timer there.
const preciseSupported = false

// fineSleep is never called where preciseSupported is false.
func fineSleep(*atomic.Uint32, uint32, time.Duration) bool { return false }

// fineWake is never called where preciseSupported is false.
func fineWake(*atomic.Uint32) {}
