package scheduler

import (
	"syscall"
	"time"
)

// preciseSupported says that this OS has a high-resolution sleep that
// WithPreciseTiming can use.
const preciseSupported = true

// The prctl options that read and set the calling thread's timer slack:
// how much later than asked the kernel may end a sleep of that thread so
// as to batch wake-ups (50 µs by default). Package syscall has no names
// for them.
const (
	prSetTimerSlack = 29
	prGetTimerSlack = 30
)

// fineTimerSlack is the timer slack the fine wait sleeps with, in
// nanoseconds: the smallest the kernel accepts, so a sleep ends when the
// hardware timer fires rather than up to 50 µs later.
const fineTimerSlack = 1

// highResSleep sleeps d in one nanosleep system call with the calling
// thread's timer slack lowered to fineTimerSlack for that call, instead of
// the runtime's millisecond-grained netpoller wait, and puts the slack
// back after. A goroutine stays on its OS thread across a system call, so
// the slack is changed and restored on the thread that sleeps, and no
// other goroutine runs on it in between; the goroutine is not locked to
// its thread, because a locked goroutine that blocks on the queue's lock
// or yields costs two thread hand-offs. It reports whether the whole of d
// was slept (false if a signal interrupted it).
func highResSleep(d time.Duration) bool {
	saved, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetTimerSlack, 0, 0)
	lowered := errno == 0 && saved > fineTimerSlack
	if lowered {
		syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, fineTimerSlack, 0)
	}
	ts := syscall.NsecToTimespec(int64(d))
	err := syscall.Nanosleep(&ts, nil)
	if lowered {
		syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, saved, 0)
	}
	return err == nil
}
