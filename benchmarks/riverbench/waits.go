package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// waitSampler tallies what the server's busy client backends are doing,
// from pg_stat_activity every 50 ms: where the Store's time goes.
type waitSampler struct {
	mu      sync.Mutex // guards tally and samples
	tally   map[string]int
	samples int
	stopped chan struct{}
}

// sampleWaits samples on pool until ctx ends.
func sampleWaits(ctx context.Context, pool *pgxpool.Pool) *waitSampler {
	w := &waitSampler{tally: map[string]int{}, stopped: make(chan struct{})}
	go func() {
		defer close(w.stopped)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			rows, err := pool.Query(ctx, `
SELECT coalesce(wait_event_type || ':' || wait_event, 'on CPU') || ' ' || state || ' ' || left(regexp_replace(query, '\s+', ' ', 'g'), 24)
FROM pg_stat_activity WHERE backend_type = 'client backend' AND state <> 'idle' AND pid <> pg_backend_pid()`)
			if err != nil {
				continue
			}
			w.mu.Lock()
			w.samples++
			for rows.Next() {
				var s string
				if rows.Scan(&s) == nil {
					w.tally[s]++
				}
			}
			w.mu.Unlock()
			rows.Close()
		}
	}()
	return w
}

// String is the average number of backends in each activity, the most
// common first.
func (w *waitSampler) String() string {
	<-w.stopped
	type kv struct {
		k string
		n int
	}
	var all []kv
	for k, n := range w.tally {
		all = append(all, kv{k, n})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].n > all[j].n })
	var b strings.Builder
	for i, e := range all {
		if i == 8 {
			break
		}
		fmt.Fprintf(&b, "\n    %.2f %s", float64(e.n)/float64(max(1, w.samples)), e.k)
	}
	return b.String()
}
