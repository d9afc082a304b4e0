package main

import (
	"fmt"
	"log"
	"os/exec"
)

// burners are CPU burners beside the measured systems (-burners N): N
// `yes` processes writing to /dev/null, as `yes > /dev/null &` in a shell
// would be, each a whole core's worth of demand for the kernel to share
// out. They are killed when the command ends, and by the kernel if this
// process dies first (burnerAttrs).
type burners []*exec.Cmd

// startBurners starts n burners.
func startBurners(n int) (burners, error) {
	var bs burners
	for range n {
		c := exec.Command("yes") // stdout nil: /dev/null
		c.SysProcAttr = burnerAttrs()
		if err := c.Start(); err != nil {
			bs.stop()
			return nil, fmt.Errorf("burner: %w (is yes(1) on PATH?)", err)
		}
		bs = append(bs, c)
	}
	if n > 0 {
		log.Printf("%d CPU burners (yes > /dev/null) started", n)
	}
	return bs, nil
}

// stop kills every burner and waits for it.
func (bs burners) stop() {
	for _, c := range bs {
		_ = c.Process.Kill()
		_ = c.Wait()
	}
}

// pids are the burners' process IDs.
func (bs burners) pids() []int {
	var ps []int
	for _, c := range bs {
		ps = append(ps, c.Process.Pid)
	}
	return ps
}
