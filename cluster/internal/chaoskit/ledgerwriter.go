package chaoskit

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/go-stpe/scheduler/cluster"
)

// The ledger, written by the workers and read by the test (ledger.go):
// one file per worker process, one line per write,
//
//	<event> <id> <due µs> <at µs> <worker> <attempt> <lost>
//
// with event "start" when a handler starts, "end" when it has done its
// work and returns nil, "fail" when it returns an error of its own (the
// flaky kind), "abort" when its ctx ended first; and
//
//	stall - <from µs> <to µs> <worker> 0 0
//
// when the process itself got no CPU for more than stallThreshold (a
// loaded machine can starve a process past its lease, which is a fault
// like a SIGSTOP). Times are the host's clock, which on one machine is
// the store's clock too.

// ledgerWriter writes a worker's runs to its file.
type ledgerWriter struct {
	mu   sync.Mutex // guards writes to f, one line each
	f    *os.File
	name string
}

func (l *ledgerWriter) write(event string, t cluster.Task) {
	line := fmt.Sprintf("%s %s %d %d %s %d %d\n", event, t.ID, t.Due.UnixMicro(), time.Now().UnixMicro(), l.name, t.Attempt, t.Lost)
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.f.WriteString(line)
}

// stallThreshold is the longest gap between two ticks of watchStalls
// that is not written to the ledger as a stall.
const stallThreshold = 500 * time.Millisecond

// watchStalls ticks every 100 ms until stop is closed, and writes a stall
// whenever a tick comes more than stallThreshold after the one before.
func (l *ledgerWriter) watchStalls(stop <-chan struct{}) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		now := time.Now()
		if now.Sub(last) > stallThreshold {
			line := fmt.Sprintf("stall - %d %d %s 0 0\n", last.UnixMicro(), now.UnixMicro(), l.name)
			l.mu.Lock()
			_, _ = l.f.WriteString(line)
			l.mu.Unlock()
		}
		last = now
	}
}

// handler records its start, works for up to 200 ms, and records its end;
// it always succeeds unless its ctx ends first.
func (l *ledgerWriter) handler(ctx context.Context, t cluster.Task) error {
	return l.work(ctx, t, "end", nil)
}

// errFlaky is the failure of a flaky task's early attempts.
var errFlaky = errors.New("chaos: a flaky task's early attempt fails")

// flakyHandler is handler, except that the attempts before flakyFailures
// fail after their work, and are recorded as failed.
func (l *ledgerWriter) flakyHandler(ctx context.Context, t cluster.Task) error {
	if t.Attempt >= flakyFailures {
		return l.handler(ctx, t)
	}
	return l.work(ctx, t, "fail", errFlaky)
}

// work records the run's start, works for up to 200 ms, then records
// event and returns result; if ctx ends first it records an abort.
func (l *ledgerWriter) work(ctx context.Context, t cluster.Task, event string, result error) error {
	l.write("start", t)
	select {
	case <-time.After(time.Duration(rand.IntN(200)) * time.Millisecond):
		l.write(event, t)
		return result
	case <-ctx.Done():
		l.write("abort", t)
		return context.Cause(ctx)
	}
}
