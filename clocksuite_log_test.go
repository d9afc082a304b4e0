package scheduler_test

// What the clock suite records: each event at its virtual time, as the
// lines the cases compare.

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
)

// suiteEvent is one thing that happened, at a virtual time.
type suiteEvent struct {
	at   time.Duration
	what string
}

func (e suiteEvent) String() string { return fmt.Sprintf("%v %s", e.at, e.what) }

// suiteLog records events from any goroutine, stamped with the virtual time.
type suiteLog struct {
	c      suiteClock
	mu     sync.Mutex // guards events
	events []suiteEvent
}

func (l *suiteLog) add(what string) {
	e := suiteEvent{at: l.c.elapsed(), what: what}
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

// lines returns the events as "1h0m0s tick" lines; sorted orders events
// of one instant by text, for cases where concurrent workers record them.
func (l *suiteLog) lines(sorted bool) []string {
	l.mu.Lock()
	es := slices.Clone(l.events)
	l.mu.Unlock()
	return suiteLines(es, sorted)
}

// suiteLines returns es as lines; sorted orders them by time, then by text.
func suiteLines(es []suiteEvent, sorted bool) []string {
	if sorted {
		slices.SortStableFunc(es, func(x, y suiteEvent) int {
			return cmp.Or(cmp.Compare(x.at, y.at), cmp.Compare(x.what, y.what))
		})
	}
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.String()
	}
	return out
}

// task returns a task that records what.
func (l *suiteLog) task(what string) scheduler.Task {
	return func(context.Context) error {
		l.add(what)
		return nil
	}
}

// workTask returns a task that records "start", works d on the log's
// clock, and records "end"; an interrupted run records nothing more and
// returns the ctx's error.
func (l *suiteLog) workTask(c suiteClock, d time.Duration) scheduler.Task {
	return func(ctx context.Context) error {
		l.add("start")
		if err := c.work(ctx, d); err != nil {
			return err
		}
		l.add("end")
		return nil
	}
}

// addCanceled records whether tick and report are canceled.
func (l *suiteLog) addCanceled(tick, report scheduler.ScheduledFuture) {
	l.add(fmt.Sprintf("tick canceled=%v, report canceled=%v", tick.IsCanceled(), report.IsCanceled()))
}

// addTerminated waits for s to terminate and records the virtual time its
// Terminated hook ran at (see suiteShutdownAt2h30m).
func (l *suiteLog) addTerminated(t *testing.T, s *scheduler.Scheduler, terminated <-chan time.Duration) {
	t.Helper()
	require.NoError(t, s.AwaitTermination(l.c.ctx(t)))
	l.add(fmt.Sprintf("terminated, hook at %v", <-terminated))
}

// suiteAt builds an expected line.
func suiteAt(at time.Duration, what string) string { return suiteEvent{at, what}.String() }

// suiteEvery builds the expected lines of n runs, the k-th at first+k*every.
func suiteEvery(first, every time.Duration, n int, what string) []string {
	out := make([]string, n)
	for k := range n {
		out[k] = suiteAt(first+time.Duration(k)*every, what)
	}
	return out
}
