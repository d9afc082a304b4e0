package scheduler

import (
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
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

// The futex operations the fine wait uses, on a word private to this
// process. Package syscall has no names for them.
const (
	futexWaitPrivate = 0 | 128 // FUTEX_WAIT | FUTEX_PRIVATE_FLAG
	futexWakePrivate = 1 | 128 // FUTEX_WAKE | FUTEX_PRIVATE_FLAG
)

// fineTimerSlack is the timer slack the fine wait sleeps with, in
// nanoseconds: the smallest the kernel accepts, so a sleep ends when the
// hardware timer fires rather than up to 50 µs later.
const fineTimerSlack = 1

// fineHoldP is the longest sleep that keeps the goroutine's P. A system
// call made through syscall.Syscall lets the runtime hand the P to another
// thread, but the runtime's monitor thread (sysmon) then polls every 20 µs
// for as long as such calls keep being retaken, which at tens of thousands
// of sleeps a second costs more CPU than the sleeps; a raw system call
// keeps the P, which no other goroutine can use meanwhile. Sleeps up to
// fineHoldP are raw; longer ones let the P go.
const fineHoldP = 200 * time.Microsecond

// defaultTimerSlack is the timer slack of the runtime's threads, read once:
// what fineSleep puts back after each sleep. Threads that run goroutines
// inherit it from the thread that started the program (the runtime starts
// new threads from one without a changed state), so it saves a prctl call
// per sleep to read it once rather than on every sleep.
var defaultTimerSlack = sync.OnceValue(func() uintptr {
	v, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetTimerSlack, 0, 0)
	if errno != 0 {
		return 0
	}
	return v
})

// fineSleep blocks for d at most, in one futex wait on word with the
// calling thread's timer slack lowered to fineTimerSlack, instead of the
// runtime's millisecond-grained netpoller wait. It returns early when
// fineWake is called on word after it was read as val (or if it no longer
// holds val), or on a signal. It reports whether the whole of d elapsed.
//
// The timeout is relative, turned into an absolute deadline by the kernel
// on entry, so the sleep never ends before d has passed since the caller
// read its clock, even if the goroutine was descheduled in between. The
// slack is lowered, and put back to the runtime threads' own
// (defaultTimerSlack), on the thread that sleeps: a goroutine stays on its
// OS thread across a system call, so no other goroutine runs with the
// lowered slack. The goroutine is not locked to its thread, because a
// locked goroutine that blocks on the queue's lock or yields costs two
// thread hand-offs. Each sleep is three system calls; on a VM each costs
// a few microseconds, and the wake-up's context switch costs more.
func fineSleep(word *atomic.Uint32, val uint32, d time.Duration) (elapsed bool) {
	slack := defaultTimerSlack()
	lowered := slack > fineTimerSlack
	if lowered {
		syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, fineTimerSlack, 0)
	}
	ts := syscall.NsecToTimespec(int64(d))
	var errno syscall.Errno
	if d <= fineHoldP {
		_, _, errno = syscall.RawSyscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(word)),
			futexWaitPrivate, uintptr(val), uintptr(unsafe.Pointer(&ts)), 0, 0)
	} else {
		_, _, errno = syscall.Syscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(word)),
			futexWaitPrivate, uintptr(val), uintptr(unsafe.Pointer(&ts)), 0, 0)
	}
	if lowered {
		syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, slack, 0)
	}
	return errno == syscall.ETIMEDOUT
}

// fineWake ends a fineSleep on word: the caller has changed word first, so
// that a sleep about to begin with the old value does not begin at all.
func fineWake(word *atomic.Uint32) {
	syscall.RawSyscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(word)),
		futexWakePrivate, 1, 0, 0, 0)
}
