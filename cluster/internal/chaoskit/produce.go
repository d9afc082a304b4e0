package chaoskit

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
)

// produce schedules a task every 10 ms, due within the next 3 s, and
// cancels about one in ten of them a little later, until ctx ends. With
// flaky, one task in five is of kind "flaky", whose first two runs fail.
func produce(ctx context.Context, producer *cluster.Node, seed uint64, flaky bool, mu *sync.Mutex, h *history) {
	rng := rand.New(rand.NewPCG(seed+1, seed))
	type pendingCancel struct {
		id string
		at time.Time
	}
	var cancels []pendingCancel
	for i := 0; ctx.Err() == nil; i++ {
		id := "t" + strconv.Itoa(i)
		kind := kindWork
		if flaky && rng.IntN(5) == 0 {
			kind = kindFlaky
		}
		due := time.Now().Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := producer.Schedule(sctx, kind, []byte(id), due, cluster.WithID(id))
		cancel()
		if err == nil {
			mu.Lock()
			h.acked[id] = due.Truncate(time.Microsecond)
			mu.Unlock()
			if rng.IntN(10) == 0 {
				cancels = append(cancels, pendingCancel{id, time.Now().Add(time.Duration(rng.IntN(3500)) * time.Millisecond)})
			}
		}
		for len(cancels) > 0 && !cancels[0].at.After(time.Now()) {
			pc := cancels[0]
			cancels = cancels[1:]
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			res, err := producer.Cancel(cctx, pc.id)
			cancel()
			mu.Lock()
			h.cancels[pc.id] = cancelRecord{returned: time.Now(), res: res, err: err}
			mu.Unlock()
		}
		pause(ctx, 10*time.Millisecond)
	}
}

// waitForDrain waits until every acknowledged task not removed by a Cancel
// has run to its end, and every required periodic occurrence has run: a
// store down for seconds leaves a backlog of occurrences, which run one
// after the other (MisfireRunEach, no overlap) once it is back.
func waitForDrain(t *testing.T, ledgerDir string, h *history, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		led, err := readLedger(ledgerDir)
		if err != nil {
			t.Fatal(err)
		}
		runs := led.runs
		seen := *h
		seen.runs, seen.faults = runs, append(slices.Clone(h.faults), led.stalls...)
		ticks := seen.unranOccurrences()
		left := 0
		for id := range h.acked {
			if c, ok := h.cancels[id]; ok && (c.err != nil || c.res.Removed) {
				continue
			}
			if !slices.ContainsFunc(runs[id], func(r *run) bool { return r.ended }) {
				left++
			}
		}
		if left == 0 && ticks == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("after %v, %d acknowledged tasks have not run to their end, %d required periodic occurrences have not run", timeout, left, ticks)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// report logs the figures of the run.
func report(t *testing.T, h *history, v *verdict) {
	kinds := map[string]int{}
	for _, f := range h.faults {
		kinds[f.kind]++
	}
	pct := func(p float64) time.Duration { return percentile(v.lateness, p) }
	t.Logf("faults: %v", kinds)
	t.Logf("tasks acknowledged %d (canceled %d), runs %d (retries after a failed run %d, repeats explained by a fault %d); periodic occurrences %d (required %d, runs %d)",
		v.tasks, v.canceled, v.runs, v.retries, v.explainedRepeats, v.occurrences, v.requiredOccurrences, v.occRuns)
	t.Logf("worker clock skews %v: earliest start before due %v, earliest retry before its backoff %v; first-start lateness p50 %v, p99 %v, max %v",
		skews, -v.earliest, -v.earliestRetry, pct(0.5).Round(time.Millisecond), pct(0.99).Round(time.Millisecond), v.maxLate.Round(time.Millisecond))
	for i, skew := range skews {
		name := "r" + strconv.Itoa(i)
		l := v.latenessBy[name]
		t.Logf("worker %s (clock %+v): first runs %d, lateness p50 %v, p99 %v", name, skew, len(l),
			percentile(l, 0.5).Round(time.Millisecond), percentile(l, 0.99).Round(time.Millisecond))
	}
	if len(v.problems) > 0 {
		t.Logf("%d problems (first 50 below)", len(v.problems))
	}
}

// percentile returns the p-th quantile of ds (sorting ds), or 0 for none.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[int(p*float64(len(ds)-1))]
}
