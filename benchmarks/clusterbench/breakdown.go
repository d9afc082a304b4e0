package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// The breakdown (-breakdown): where each task's start lateness goes, on
// the cluster's pass. A go-redis hook on the started nodes' clients notes
// when each task's claim script went to Redis and when its answer came
// back (and how many calls shared that round trip: the group commit's
// batch); the handler notes when it started. A task's lateness splits
// into:
//
//   - due → claim sent: the node's timer firing late, the path from the
//     timer to the claim, and a wait in the group commit's queue;
//   - claim sent → answered: the round trip, Redis's time and the wake-up
//     of the goroutine that reads the reply;
//   - answered → handler start: the reply's reading and the run's set-up.
//
// A timer probe in the same process (a time.Timer every 5 ms) shows how
// late a sleeping goroutine wakes meanwhile: the share of the first step
// that the machine, not the node, sets.

// claimHook is the hook.
type claimHook struct {
	sha string // the claim script's SHA-1

	mu       sync.Mutex // guards the maps
	sent     map[string]time.Time
	answered map[string]time.Time
	batch    map[string]int
	outcomes map[int64]int // claims by the script's answer code: 1 won, 0 gone (claimed elsewhere), ...
}

func newClaimHook(sha string, n int) *claimHook {
	return &claimHook{sha: sha, sent: make(map[string]time.Time, n), answered: make(map[string]time.Time, n), batch: make(map[string]int, n), outcomes: map[int64]int{}}
}

func (h *claimHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *claimHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		id, ok := h.claimOf(cmd)
		if !ok {
			return next(ctx, cmd)
		}
		t0 := time.Now()
		err := next(ctx, cmd)
		h.note([]string{id}, t0, time.Now(), 1)
		h.count([]redis.Cmder{cmd})
		return err
	}
}

func (h *claimHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		var ids []string
		for _, c := range cmds {
			if id, ok := h.claimOf(c); ok {
				ids = append(ids, id)
			}
		}
		t0 := time.Now()
		err := next(ctx, cmds)
		if len(ids) > 0 {
			h.note(ids, t0, time.Now(), len(cmds))
			h.count(cmds)
		}
		return err
	}
}

// claimOf returns the task ID of a claim script's call: EVALSHA sha
// numkeys keys... id ...
func (h *claimHook) claimOf(cmd redis.Cmder) (string, bool) {
	args := cmd.Args()
	if len(args) < 4 || !strings.EqualFold(cmd.Name(), "evalsha") || fmt.Sprint(args[1]) != h.sha {
		return "", false
	}
	nk, err := strconv.Atoi(fmt.Sprint(args[2]))
	if err != nil || len(args) <= 3+nk {
		return "", false
	}
	id, ok := args[3+nk].(string)
	return id, ok
}

// count counts the claims among cmds by their answer's code.
func (h *claimHook) count(cmds []redis.Cmder) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range cmds {
		if _, ok := h.claimOf(c); !ok {
			continue
		}
		code := int64(-1) // an error: no answer
		if rc, ok := c.(*redis.Cmd); ok {
			if vals, err := rc.Slice(); err == nil && len(vals) > 0 {
				code, _ = vals[0].(int64)
			}
		}
		h.outcomes[code]++
	}
}

func (h *claimHook) note(ids []string, sent, answered time.Time, batch int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range ids {
		if _, again := h.sent[id]; again {
			continue // a second claim of the same task: keep the first
		}
		h.sent[id], h.answered[id], h.batch[id] = sent, answered, batch
	}
}

// starts notes each task's due time, when its Schedule call returned and
// when its handler started.
type starts struct {
	mu    sync.Mutex // guards the maps
	due   map[string]time.Time
	at    map[string]time.Time
	store map[string]time.Time
	runs  int // handler calls, a task's second run included
}

func newStarts(n int) *starts {
	return &starts{due: make(map[string]time.Time, n), at: make(map[string]time.Time, n), store: make(map[string]time.Time, n)}
}

func (s *starts) stored(id string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.store[id] = at
}

func (s *starts) add(id string, due, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs++
	if _, again := s.at[id]; again {
		return // a second run: its first start counts
	}
	s.due[id], s.at[id] = due, at
}

// breakdownReport splits each task's lateness into the three steps and
// prints their quantiles, the same for the slowest 1% of tasks by
// lateness, and the group commit's batches.
func breakdownReport(h *claimHook, s *starts, timerLate []time.Duration) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	type split struct{ total, toSent, trip, toStart, ahead time.Duration }
	var all []split
	var batches []int
	for id, due := range s.due {
		sent, ok := h.sent[id]
		if !ok {
			continue
		}
		at, ans := s.at[id], h.answered[id]
		all = append(all, split{at.Sub(due), sent.Sub(due), ans.Sub(sent), at.Sub(ans), due.Sub(s.store[id])})
		batches = append(batches, h.batch[id])
	}
	if len(all) == 0 {
		return "breakdown: no claim seen\n"
	}
	sort.Slice(all, func(i, j int) bool { return all[i].total < all[j].total })
	var b strings.Builder
	fmt.Fprintf(&b, "\nWhere each task's start lateness goes (%d tasks):\n\n", len(all))
	b.WriteString("| Step | p50 | p90 | p99 | max | mean over the slowest 1% of tasks |\n|---|---|---|---|---|---|\n")
	tail := all[len(all)*99/100:]
	step := func(name string, f func(split) time.Duration) {
		ds := make([]time.Duration, len(all))
		for i, x := range all {
			ds[i] = f(x)
		}
		var sum time.Duration
		for _, x := range tail {
			sum += f(x)
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		q := func(p float64) string { return ms(ds[min(len(ds)-1, int(p*float64(len(ds))))]) }
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", name, q(0.5), q(0.9), q(0.99), ms(ds[len(ds)-1]), ms(sum/time.Duration(len(tail))))
	}
	step("due → claim sent (timer, path, group-commit queue)", func(x split) time.Duration { return x.toSent })
	step("claim sent → answered (round trip)", func(x split) time.Duration { return x.trip })
	step("answered → handler start", func(x split) time.Duration { return x.toStart })
	step("due → handler start (lateness)", func(x split) time.Duration { return x.total })
	step("Schedule returned → due (1 s if stored on time; less: the store was late)", func(x split) time.Duration { return x.ahead })
	inTime := 0
	for _, x := range all {
		if x.ahead > 0 {
			inTime++
		}
	}
	fmt.Fprintf(&b, "\nStored before due: %d of %d tasks.\n", inTime, len(all))
	if len(timerLate) > 0 {
		t50, t99 := quantiles(timerLate)
		fmt.Fprintf(&b, "\nTimer probe in the same process (a time.Timer every 5 ms, %d wake-ups): late p50 %s, p99 %s, max %s.\n",
			len(timerLate), ms(t50), ms(t99), ms(timerLate[len(timerLate)-1]))
	}
	var claims int
	for _, k := range h.outcomes {
		claims += k
	}
	fmt.Fprintf(&b, "Handler runs: %d for %d distinct tasks.\n", s.runs, len(s.at))
	fmt.Fprintf(&b, "Claims sent: %d for %d tasks; won %d, gone (another node's claim won) %d, error %d, other answers %d.\n",
		claims, len(all), h.outcomes[1], h.outcomes[0], h.outcomes[-1], claims-h.outcomes[1]-h.outcomes[0]-h.outcomes[-1])
	sort.Ints(batches)
	alone := sort.SearchInts(batches, 2)
	fmt.Fprintf(&b, "Claims sent alone: %.1f%%; round-trip size (calls) p50 %d, p99 %d, max %d.\n",
		100*float64(alone)/float64(len(batches)), batches[len(batches)/2], batches[len(batches)*99/100], batches[len(batches)-1])
	return b.String()
}

// timerProbe measures how late a time.Timer of 5 ms wakes its goroutine,
// while a pass runs.
type timerProbe struct {
	stop chan struct{}
	done sync.WaitGroup
	late []time.Duration // written by the probe goroutine until done
}

func startTimerProbe() *timerProbe {
	p := &timerProbe{stop: make(chan struct{})}
	p.done.Go(func() {
		const every = 5 * time.Millisecond
		want := time.Now().Add(every)
		t := time.NewTimer(every)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
			}
			p.late = append(p.late, time.Since(want))
			want = time.Now().Add(every)
			t.Reset(every)
		}
	})
	return p
}

func (p *timerProbe) end() []time.Duration {
	close(p.stop)
	p.done.Wait()
	return p.late
}
