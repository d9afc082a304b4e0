package chaoskit

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
	failed  bool // the handler returned an error of its own (the flaky kind)
	// finished is when the handler returned, if it ended or failed.
	finished time.Time
	attempt  int
	lost     int
}

// ledgerData is what the ledger files hold: the runs by task ID, each
// task's runs in the order they started, and the stalls the workers saw
// of their own process, as faults.
type ledgerData struct {
	runs   map[string][]*run
	stalls []fault
}

// readLedger reads every ledger file in dir.
func readLedger(dir string) (*ledgerData, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.ledger"))
	if err != nil {
		return nil, err
	}
	d := &ledgerData{runs: map[string][]*run{}}
	for _, name := range files {
		if err := d.readFile(name); err != nil {
			return nil, err
		}
	}
	for _, rs := range d.runs {
		sortRuns(rs)
	}
	return d, nil
}

// readFile adds one worker process's runs and stalls. A start and its
// end or abort are matched within the file: one process runs a task once
// at a time.
func (d *ledgerData) readFile(name string) error {
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
			d.runs[id] = append(d.runs[id], r)
			open[id] = r
		case "end", "fail":
			if r := open[id]; r != nil {
				r.ended, r.failed = fields[0] == "end", fields[0] == "fail"
				r.finished = time.UnixMicro(at)
			}
			delete(open, id)
		case "abort":
			delete(open, id)
		case "stall":
			d.stalls = append(d.stalls, fault{kind: "stall", replica: fields[4], start: time.UnixMicro(due), end: time.UnixMicro(at)})
		}
	}
	return sc.Err()
}

func sortRuns(rs []*run) {
	slices.SortFunc(rs, func(a, b *run) int { return a.start.Compare(b.start) })
}
