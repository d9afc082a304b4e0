package chaoskit

import (
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
)

// The verdict's rules on ledgers made by hand: each rule flags what it
// must, and lets through what a failure or a fault explains.

var t0 = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// at is t0 plus ms milliseconds.
func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// oneTask is a history of task "t1", due at t0 and acknowledged, run as rs.
func oneTask(faults []fault, rs ...*run) *history {
	for _, r := range rs {
		r.id, r.due = "t1", t0
	}
	return &history{
		runs: map[string][]*run{"t1": rs}, acked: map[string]time.Time{"t1": t0},
		cancels: map[string]cancelRecord{}, faults: faults, lease: lease, backoff: backoff,
		ready: map[string]time.Time{}, tick: tick,
	}
}

func TestVerdictRetryAfterFailure(t *testing.T) {
	v := oneTask(nil,
		&run{replica: "r0", start: at(0), failed: true, finished: at(100), attempt: 0},
		&run{replica: "r1", start: at(100 + 250), ended: true, finished: at(400), attempt: 1},
	).check()
	if len(v.problems) != 0 || v.retries != 1 {
		t.Fatalf("a retry the backoff after a failure: problems %q, retries %d; want none and 1", v.problems, v.retries)
	}
}

func TestVerdictRetryBeforeBackoff(t *testing.T) {
	v := oneTask(nil,
		&run{replica: "r0", start: at(0), failed: true, finished: at(100), attempt: 0},
		&run{replica: "r1", start: at(200), ended: true, finished: at(300), attempt: 1},
	).check()
	if len(v.problems) != 1 || !strings.Contains(v.problems[0], "before the failure on r0 plus the backoff") {
		t.Fatalf("a retry 150 ms before the failure plus the backoff: problems %q", v.problems)
	}
	if v.earliestRetry != -150*time.Millisecond {
		t.Errorf("earliest retry %v, want -150ms", v.earliestRetry)
	}
}

func TestVerdictRepeatOfTheSameAttempt(t *testing.T) {
	// A failed run's task run again at the same attempt: its failure was
	// not stored, which only a fault explains.
	rs := func() []*run {
		return []*run{
			{replica: "r0", start: at(0), failed: true, finished: at(100), attempt: 0},
			{replica: "r1", start: at(5000), ended: true, finished: at(5100), attempt: 0, lost: 1},
		}
	}
	if v := oneTask(nil, rs()...).check(); len(v.problems) != 1 || !strings.Contains(v.problems[0], "with no fault between") {
		t.Fatalf("no fault: problems %q, want the repeat", v.problems)
	}
	cut := []fault{{kind: "partition", replica: "r0", start: at(50), end: at(4000)}}
	if v := oneTask(cut, rs()...).check(); len(v.problems) != 0 || v.explainedRepeats != 1 {
		t.Fatalf("r0 cut off: problems %q, explained %d; want none and 1", v.problems, v.explainedRepeats)
	}
}

func TestVerdictLostAndEarly(t *testing.T) {
	v := oneTask(nil, &run{replica: "r2", start: at(-10), attempt: 0}).check()
	var early, lost bool
	for _, p := range v.problems {
		early = early || strings.Contains(p, "before its due time on r2")
		lost = lost || strings.Contains(p, "never ran to its end")
	}
	if !early || !lost {
		t.Fatalf("a run 10 ms early that never ended: problems %q, want both flagged", v.problems)
	}
}

// TestUnranOccurrences: the drain waits for the required occurrences
// that have not run, and not for one no replica was up for.
func TestUnranOccurrences(t *testing.T) {
	h := &history{
		runs: map[string][]*run{}, tick: tick, upBefore: time.Second,
		ready:    map[string]time.Time{"r0": at(-10000)},
		tickFrom: at(0), tickUntil: at(2000),
		faults: []fault{{kind: "kill", replica: "r0", start: at(1200), end: at(1300)}},
	}
	// Due at 500, 1000, 1500 and 2000 ms; r0 was down from 1200 to 1300,
	// within the second before 1500 and 2000.
	if n := h.unranOccurrences(); n != 2 {
		t.Fatalf("none ran: %d unran, want 2 (the ones due at 500 and 1000 ms)", n)
	}
	h.runs[cluster.OccurrenceID("tick", at(500))] = []*run{{replica: "r0", start: at(600)}}
	if n := h.unranOccurrences(); n != 1 {
		t.Fatalf("the one due at 500 ms ran: %d unran, want 1", n)
	}
}
