package scheduler_test

// One behavioural suite, two kinds of test time.
//
// Every case in suiteCases runs on a schedulertest.ManualClock that the test
// moves with AdvanceAndSettle and AwaitIdle, and on the system clock inside a
// testing/synctest bubble, whose fake time moves when every goroutine in the
// bubble is durably blocked; in the bubble once plainly and once with
// WithPreciseTiming(true), which must notice the bubble and fall back to the
// plain timer. All must record exactly the same (virtual time, event)
// list: the manual clock's recipe claims to move time the way real time
// would, and the bubble is real time made deterministic, so a divergence is
// a bug in the scheduler or in the recipe.
//
// This file holds the two interfaces and the test; the drivers, the
// recording and the cases are in the other clocksuite_*_test.go files.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-stpe/scheduler"
)

// clockDriver runs a test body on one kind of test time.
type clockDriver interface {
	// name names the driver's subtests.
	name() string
	// run calls body with a fresh suiteClock of this kind; the synctest
	// driver calls it inside a bubble.
	run(t *testing.T, body func(t *testing.T, c suiteClock))
}

// suiteClock is the time a case runs on. Its methods are called from the
// test goroutine, except work, which tasks call.
type suiteClock interface {
	// newScheduler returns a scheduler on this time, shut down and awaited
	// when the test ends. A case makes at most one.
	newScheduler(t *testing.T, pool int, opts ...scheduler.Option) *scheduler.Scheduler
	// elapsed returns the virtual time since the case began.
	elapsed() time.Duration
	// advance lets d of virtual time pass the way real time would, and
	// returns once everything that came due on the way is done.
	advance(t *testing.T, d time.Duration)
	// work is called by a running task to take d of virtual time, like a
	// slow call. It returns nil once d has passed, or ctx.Err() if ctx
	// ends first. On the manual clock it is exact only with a pool of one
	// (see suiteManualClock).
	work(ctx context.Context, d time.Duration) error
	// ctx returns a context for waits such as AwaitTermination.
	ctx(t *testing.T) context.Context
}

// suiteEpoch is the manual clock's start; cases only see offsets from it.
var suiteEpoch = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

// bubble; each must record the expected events, and so the same on both.
func TestClockSuite(t *testing.T) {
	drivers := []clockDriver{suiteManualDriver{}, suiteBubbleDriver{}, suiteBubbleDriver{precise: true}}
	got := make(map[string]map[string][]string) // case -> driver -> lines
	for _, d := range drivers {
		t.Run(d.name(), func(t *testing.T) {
			for _, tc := range suiteCases() {
				t.Run(tc.name, func(t *testing.T) {
					d.run(t, func(t *testing.T, c suiteClock) {
						log := &suiteLog{c: c}
						tc.body(t, c, log)
						lines := log.lines(tc.sorted)
						if got[tc.name] == nil {
							got[tc.name] = make(map[string][]string)
						}
						got[tc.name][d.name()] = lines
						want := tc.want
						if tc.sorted {
							want = suiteSortLines(want)
						}
						require.Equal(t, want, lines)
					})
				})
			}
		})
	}
	t.Run("drivers agree", func(t *testing.T) {
		for name, byDriver := range got {
			if len(byDriver) == len(drivers) {
				require.Equal(t, byDriver["manual"], byDriver["synctest"], "the drivers diverge on %q", name)
				require.Equal(t, byDriver["synctest"], byDriver["synctest+precise"], "precise timing changes %q in a bubble", name)
			}
		}
	})
}

// suiteSortLines sorts expected lines the way suiteLog.lines(true) sorts
// events: by time, then by text.
func suiteSortLines(lines []string) []string {
	es := make([]suiteEvent, len(lines))
	for i, l := range lines {
		at, what, _ := strings.Cut(l, " ")
		d, err := time.ParseDuration(at)
		if err != nil {
			panic(err)
		}
		es[i] = suiteEvent{d, what}
	}
	return suiteLines(es, true)
}
