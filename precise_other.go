//go:build !linux

package scheduler

import "time"

// preciseSupported is false outside Linux: WithPreciseTiming falls back to
// the plain timer there.
const preciseSupported = false

// highResSleep is never called where preciseSupported is false.
func highResSleep(time.Duration) bool { return false }
