package pgserver

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// childrenOf lists the processes whose parent is pid, from /proc.
func childrenOf(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var kids []int
	for _, p := range stats {
		ppid, state, ok := readStat(p)
		if ok && ppid == pid && state != 'Z' {
			if id, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
				kids = append(kids, id)
			}
		}
	}
	return kids
}

// readStat reads the parent and state of the process whose stat file is
// path.
func readStat(path string) (ppid int, state byte, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, false
	}
	// The command name, in parentheses, may hold spaces: the fields
	// after it start past the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+2:])
	if len(f) < 2 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(string(f[1]))
	return ppid, f[0][0], err == nil
}

// waitGone waits until every process of pids has exited (gone, or a
// zombie nobody reaps), for at most ten seconds.
func waitGone(pids []int) {
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for time.Now().Before(deadline) {
			_, state, ok := readStat("/proc/" + strconv.Itoa(pid) + "/stat")
			if !ok || state == 'Z' {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}
