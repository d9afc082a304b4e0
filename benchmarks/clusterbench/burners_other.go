//go:build !linux

package main

import "syscall"

// burnerAttrs: outside Linux a burner is killed by stop only.
func burnerAttrs() *syscall.SysProcAttr { return nil }
