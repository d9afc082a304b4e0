package main

import "syscall"

// burnerAttrs makes the kernel kill a burner when this process dies, so
// that a crash or a log.Fatal never leaves one running.
func burnerAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
