package chaos

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// run is one handler run as the ledger tells it.
type run struct {
	id      string
	replica string
	due     time.Time
	start   time.Time
	ended   bool // the handler did its work and returned nil
	attempt int
	lost    int
}

// readLedger reads every ledger file in dir and returns the runs by task ID,
// each task's runs in the order they started.
func readLedger(dir string) (map[string][]*run, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.ledger"))
	if err != nil {
		return nil, err
	}
	runs := map[string][]*run{}
	for _, name := range files {
		if err := readLedgerFile(name, runs); err != nil {
			return nil, err
		}
	}
	for _, rs := range runs {
		sortRuns(rs)
	}
	return runs, nil
}

// readLedgerFile adds one replica process's runs to runs. A start and its
// end or abort are matched within the file: one process runs a task once
// at a time.
func readLedgerFile(name string, runs map[string][]*run) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	open := map[string]*run{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 7 {
			continue // a line cut by SIGKILL
		}
		due, err1 := strconv.ParseInt(fields[2], 10, 64)
		at, err2 := strconv.ParseInt(fields[3], 10, 64)
		attempt, err3 := strconv.Atoi(fields[5])
		lost, err4 := strconv.Atoi(fields[6])
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
			continue
		}
		id := fields[1]
		switch fields[0] {
		case "start":
			r := &run{id: id, replica: fields[4], due: time.UnixMicro(due), start: time.UnixMicro(at), attempt: attempt, lost: lost}
			runs[id] = append(runs[id], r)
			open[id] = r
		case "end":
			if r := open[id]; r != nil {
				r.ended = true
			}
			delete(open, id)
		case "abort":
			delete(open, id)
		}
	}
	return sc.Err()
}

func sortRuns(rs []*run) {
	slices.SortFunc(rs, func(a, b *run) int { return a.start.Compare(b.start) })
}
