package scheduler

import (
	"syscall"
	"time"
)

// preciseSupported says that this OS has a high-resolution sleep that
// WithPreciseTiming can use.
const preciseSupported = true

// highResSleep sleeps d in one nanosleep system call, which wakes within
// the thread's timer slack (50 µs by default) after d, instead of the
// runtime's millisecond-grained netpoller wait. It reports whether the
// whole of d was slept (false if a signal interrupted it).
func highResSleep(d time.Duration) bool {
	ts := syscall.NsecToTimespec(int64(d))
	return syscall.Nanosleep(&ts, nil) == nil
}
