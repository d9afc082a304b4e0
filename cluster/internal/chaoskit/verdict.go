package chaoskit

import (
	"fmt"
	"slices"
	"time"

	"github.com/go-stpe/scheduler/cluster"
)

// The verdict: what the ledger, the producer's records and the fault log
// must show. Every rule flags only what no injected fault can explain, so
// the verdict does not depend on timing luck.

// fault is one injected fault: replica is the worker it hit, or "" for
// the store (which hits every worker). It lasted from start until end (the
// killed worker's restart was ready, the paused one resumed, the cut was
// mended, the store answered again).
type fault struct {
	kind       string
	replica    string
	start, end time.Time
}

// cancelRecord is one Cancel the producer made.
type cancelRecord struct {
	returned time.Time
	res      cluster.Cancellation
	err      error
}

// history is everything the checks read.
type history struct {
	runs      map[string][]*run    // by task ID, in start order
	acked     map[string]time.Time // tasks whose Schedule returned nil, by ID, with their due time
	cancels   map[string]cancelRecord
	faults    []fault // injected, and the stalls the replicas saw
	lease     time.Duration
	backoff   time.Duration        // the workers' retry backoff
	ready     map[string]time.Time // when each replica slot first became ready
	tick      time.Duration        // period of the periodic task
	tickFrom  time.Time            // occurrences checked from here ...
	tickUntil time.Time            // ... to here
	// upBefore is how long a replica must have been up before an
	// occurrence's due time for that occurrence to be required: its
	// window, its clock skew and a sweep.
	upBefore time.Duration
}

// explained reports whether a fault overlaps the time from the claim of
// first (the earlier start) to the start of second, and hit the store or
// the worker of either run: a fault that can make a task run again. The
// ledger has the starts, not the claims, which came before them, by up to
// a lease if a fault struck in between (the claim itself waits at most a
// third of one); so the time taken is from a lease before first's start.
// Either replica counts, because a replica that stalls after its claim
// logs its start late: the run that started second may be the one claimed
// first.
func (h *history) explained(first, second *run) bool {
	from := first.start.Add(-h.lease)
	for _, f := range h.faults {
		hit := f.replica == "" || f.replica == first.replica || f.replica == second.replica
		if hit && !f.start.After(second.start) && !f.end.Before(from) {
			return true
		}
	}
	return false
}

// retried reports whether second is the retry of first: first failed,
// and second runs the next attempt. A retry is due the backoff after the
// failure was stored, by the store's clock, which is after the handler
// returned (the ledger's time of the failure): it must not start sooner.
func (h *history) retried(v *verdict, first, second *run) bool {
	if !first.failed || second.attempt != first.attempt+1 {
		return false
	}
	v.retries++
	if d := second.start.Sub(first.finished.Add(h.backoff)); d < 0 {
		v.problem("%s: retry (attempt %d) started on %s %v before the failure on %s plus the backoff %v",
			second.id, second.attempt, second.replica, -d, first.replica, h.backoff)
		v.earliestRetry = min(v.earliestRetry, d)
	}
	return true
}

// upThroughout reports whether replica was up (started, and neither
// killed, paused nor cut off) from a to b.
func (h *history) upThroughout(replica string, a, b time.Time) bool {
	r, ok := h.ready[replica]
	if !ok || r.After(a) {
		return false
	}
	for _, f := range h.faults {
		if f.replica == replica && !f.start.After(b) && !f.end.Before(a) {
			return false
		}
	}
	return true
}

// verdict is the outcome of the checks: problems (empty when the cluster
// kept every promise) and figures for the log.
type verdict struct {
	problems                     []string
	tasks, canceled, occurrences int
	runs, explainedRepeats       int
	retries                      int // runs that followed a failed run with the next attempt
	maxLate                      time.Duration
	lateness                     []time.Duration            // first start minus due, of every acknowledged task
	latenessBy                   map[string][]time.Duration // the same, by the replica of the first start
	earliest                     time.Duration              // the most negative start minus due seen (0 if none early)
	earliestRetry                time.Duration              // the most negative retry start minus (failure + backoff) seen
	requiredOccurrences, occRuns int
}

func (v *verdict) problem(format string, args ...any) {
	if len(v.problems) < 50 {
		v.problems = append(v.problems, fmt.Sprintf(format, args...))
	}
}

// check applies every rule.
func (h *history) check() *verdict {
	v := &verdict{latenessBy: map[string][]time.Duration{}}
	for id, rs := range h.runs {
		for _, r := range rs {
			v.runs++
			// Nothing starts before its due time by the store's clock
			// (the host's clock, on one machine).
			if d := r.start.Sub(r.due); d < 0 {
				v.problem("%s started %v before its due time on %s", id, -d, r.replica)
				v.earliest = min(v.earliest, d)
			}
		}
		c, canceled := h.cancels[id]
		if canceled && c.err == nil && c.res.Removed {
			// No claim after a successful Cancel; a run claimed
			// before it may start after it only if Cancel said a run
			// was in flight.
			after := 0
			for _, r := range rs {
				if r.start.After(c.returned) {
					after++
				}
			}
			if allowed := map[bool]int{false: 0, true: 1}[c.res.WasRunning]; after > allowed {
				v.problem("%s: %d runs started after Cancel returned %+v", id, after, c.res)
			}
			continue
		}
		// No second run that neither a failed run nor a fault explains.
		for i := 1; i < len(rs); i++ {
			if h.retried(v, rs[i-1], rs[i]) {
				continue
			}
			if !h.explained(rs[i-1], rs[i]) {
				a, b := rs[i-1], rs[i]
				v.problem("%s ran again on %s at %s (attempt %d, lost %d) after a run on %s at %s (attempt %d, lost %d, ended %v), with no fault between",
					id, b.replica, b.start.Format("15:04:05.000"), b.attempt, b.lost,
					a.replica, a.start.Format("15:04:05.000"), a.attempt, a.lost, a.ended)
			} else {
				v.explainedRepeats++
			}
		}
	}
	// Nothing acknowledged is lost: each task ran to its end, unless a
	// Cancel removed it (or may have: a Cancel that failed).
	for id, due := range h.acked {
		v.tasks++
		if c, ok := h.cancels[id]; ok && (c.err != nil || c.res.Removed) {
			v.canceled++
			continue
		}
		rs := h.runs[id]
		if !slices.ContainsFunc(rs, func(r *run) bool { return r.ended }) {
			v.problem("%s (due %s) acknowledged but never ran to its end (%d starts)", id, due.Format("15:04:05.000"), len(rs))
			continue
		}
		late := rs[0].start.Sub(due)
		v.lateness = append(v.lateness, late)
		v.latenessBy[rs[0].replica] = append(v.latenessBy[rs[0].replica], late)
		v.maxLate = max(v.maxLate, late)
	}
	// Every periodic occurrence runs while a replica is up.
	for due := h.tickFrom.Truncate(h.tick).Add(h.tick); !due.After(h.tickUntil); due = due.Add(h.tick) {
		id := cluster.OccurrenceID("tick", due)
		v.occurrences++
		v.occRuns += len(h.runs[id])
		if !h.required(due) {
			continue
		}
		v.requiredOccurrences++
		if len(h.runs[id]) == 0 {
			v.problem("occurrence %s never ran, though a replica was up from %v before it", id, h.upBefore)
		}
	}
	return v
}

// required reports whether the periodic occurrence due at due must run:
// a replica was up throughout the upBefore before it, so it was stored.
func (h *history) required(due time.Time) bool {
	for r := range h.ready {
		if h.upThroughout(r, due.Add(-h.upBefore), due) {
			return true
		}
	}
	return false
}

// unranOccurrences counts the required periodic occurrences with no run
// yet.
func (h *history) unranOccurrences() int {
	n := 0
	for due := h.tickFrom.Truncate(h.tick).Add(h.tick); !due.After(h.tickUntil); due = due.Add(h.tick) {
		if h.required(due) && len(h.runs[cluster.OccurrenceID("tick", due)]) == 0 {
			n++
		}
	}
	return n
}
