//go:build clusternode

package main

import (
	"context"
	"flag"
	"fmt"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
)

// Where a real node's start lateness goes (-trace): each node's driver is
// wrapped so that every task's steps are stamped on the harness's clock
// (the notice of the task first heard by any node, the won claim sent and
// answered, the handler's start, the completion sent and answered), and
// the run prints each step's share of the lateness, over all tasks and
// over the latest 1 %, with the Go scheduler's latency of the process.

var asyncCommit = flag.Bool("async-commit", false, "node-lateness: a diagnostic, not a setting to run with: the server's synchronous_commit off for every statement (the bound of what a claim's or a completion's commit wait costs)")

var traceNodes = flag.Bool("trace", false, "node-lateness: print where each task's lateness goes (the driver's calls stamped)")

// taskStamps are the times of one task's steps.
type taskStamps struct {
	due, heard, claimSent, claimDone, start, completeSent, completeDone time.Time
	tries                                                               int // claims sent, the won one included
}

// taskTrace collects the stamps of a run's tasks.
type taskTrace struct {
	mu    sync.Mutex // guards tasks
	tasks map[string]*taskStamps
	sched *metrics.Float64Histogram // the Go scheduler's latencies at the start
	cpu   cpuUse                    // the CPU used before the run
	// machine, if set, is the machine's load over the run.
	machine *machineSampler
}

func newTaskTrace() *taskTrace {
	return &taskTrace{tasks: map[string]*taskStamps{}, sched: schedLatencies()}
}

// stamp runs set on id's stamps under the lock.
func (t *taskTrace) stamp(id string, set func(s *taskStamps)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.tasks[id]
	if s == nil {
		s = &taskStamps{}
		t.tasks[id] = s
	}
	set(s)
}

// traceDriver is a node's driver with its claims, completions and
// notices stamped in trace.
type traceDriver struct {
	driver.Driver
	trace *taskTrace
}

func (d traceDriver) Claim(ctx context.Context, id, kind string, due time.Time, lease time.Duration, owner string) (driver.Claim, error) {
	sent := time.Now()
	c, err := d.Driver.Claim(ctx, id, kind, due, lease, owner)
	done := time.Now()
	d.trace.stamp(id, func(s *taskStamps) {
		s.tries++
		if err == nil && c.Outcome == driver.ClaimWon {
			s.claimSent, s.claimDone = sent, done
		}
	})
	return c, err
}

func (d traceDriver) Complete(ctx context.Context, id, kind, owner string, retention time.Duration, keep driver.KeepDone, tl driver.Timeline) (driver.Recorded, error) {
	sent := time.Now()
	r, err := d.Driver.Complete(ctx, id, kind, owner, retention, keep, tl)
	done := time.Now()
	d.trace.stamp(id, func(s *taskStamps) { s.completeSent, s.completeDone = sent, done })
	return r, err
}

func (d traceDriver) Subscribe(ctx context.Context, on func(driver.Notice)) (driver.Subscription, error) {
	return d.Driver.Subscribe(ctx, func(n driver.Notice) {
		if n.Kind == driver.NoticePending {
			heard := time.Now()
			for _, task := range n.Tasks {
				d.trace.stamp(task.ID, func(s *taskStamps) {
					if s.heard.IsZero() {
						s.heard = heard
					}
				})
			}
		}
		on(n)
	})
}

// started stamps the handler's start of task id, due at due.
func (t *taskTrace) started(id string, due time.Time) {
	now := time.Now()
	t.stamp(id, func(s *taskStamps) { s.due, s.start = due, now })
}

// String is the breakdown: for each step, its p50 / p99 / max over the
// tasks, and its mean over the latest 1 % of them.
func (t *taskTrace) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	type step struct {
		name string
		of   func(s *taskStamps) time.Duration
	}
	steps := []step{
		{"lateness (due to handler)", func(s *taskStamps) time.Duration { return s.start.Sub(s.due) }},
		{"due to notice heard", func(s *taskStamps) time.Duration { return s.heard.Sub(s.due) }},
		{"due to won claim sent", func(s *taskStamps) time.Duration { return s.claimSent.Sub(s.due) }},
		{"won claim's round trip", func(s *taskStamps) time.Duration { return s.claimDone.Sub(s.claimSent) }},
		{"claim answered to handler", func(s *taskStamps) time.Duration { return s.start.Sub(s.claimDone) }},
		{"completion's round trip", func(s *taskStamps) time.Duration { return s.completeDone.Sub(s.completeSent) }},
	}
	var all []*taskStamps
	tries := 0
	for _, s := range t.tasks {
		if !s.start.IsZero() && !s.claimSent.IsZero() {
			all = append(all, s)
			tries += s.tries
		}
	}
	if len(all) == 0 {
		return "no task traced"
	}
	slices.SortFunc(all, func(a, b *taskStamps) int { return int(a.start.Sub(a.due) - b.start.Sub(b.due)) })
	tail := all[len(all)*99/100:]
	var b strings.Builder
	fmt.Fprintf(&b, "  where the lateness goes (%d tasks, %.3f claims each; p50 / p99 / max over all, mean over the latest %d):", len(all), float64(tries)/float64(len(all)), len(tail))
	for _, st := range steps {
		d := make([]time.Duration, len(all))
		for i, s := range all {
			d[i] = st.of(s)
		}
		var tailSum time.Duration
		for _, s := range tail {
			tailSum += st.of(s)
		}
		slices.Sort(d)
		q := func(f float64) time.Duration {
			return d[min(len(d)-1, int(f*float64(len(d))))].Round(10 * time.Microsecond)
		}
		fmt.Fprintf(&b, "\n    %-27s %9v / %9v / %9v   tail mean %9v", st.name, q(0.5), q(0.99), d[len(d)-1].Round(10*time.Microsecond), (tailSum / time.Duration(len(tail))).Round(10*time.Microsecond))
	}
	first := all[0].due
	for _, s := range all {
		if s.due.Before(first) {
			first = s.due
		}
	}
	buckets := map[int]int{}
	for _, s := range tail {
		buckets[int(s.due.Sub(first)/(100*time.Millisecond))]++
	}
	keys := make([]int, 0, len(buckets))
	for k := range buckets {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	fmt.Fprintf(&b, "\n    the latest 1 %% by due time (100 ms buckets from the first due: tasks):")
	for _, k := range keys {
		fmt.Fprintf(&b, " %.1fs:%d", float64(k)/10, buckets[k])
	}
	if t.machine != nil {
		fmt.Fprintf(&b, "\n%s", t.machine.around(first, keys))
	}
	fmt.Fprintf(&b, "\n    Go scheduler latency of the process over the run: %s", schedLatencySince(t.sched))
	return b.String()
}

// schedLatencies is the Go runtime's histogram of how long goroutines
// waited to run, since the process started.
func schedLatencies() *metrics.Float64Histogram {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	return s[0].Value.Float64Histogram()
}

// schedLatencySince is the p50 / p99 / p99.9 of the scheduler latencies
// since before.
func schedLatencySince(before *metrics.Float64Histogram) string {
	now := schedLatencies()
	counts := slices.Clone(now.Counts)
	var total uint64
	for i := range counts {
		counts[i] -= before.Counts[i]
		total += counts[i]
	}
	at := func(q float64) time.Duration {
		var seen uint64
		for i, c := range counts {
			seen += c
			if float64(seen) >= q*float64(total) {
				return time.Duration(now.Buckets[i+1] * float64(time.Second)).Round(time.Microsecond)
			}
		}
		return 0
	}
	return fmt.Sprintf("p50 %v, p99 %v, p99.9 %v (upper bounds of the buckets)", at(0.5), at(0.99), at(0.999))
}
