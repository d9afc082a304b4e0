package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-stpe/scheduler/cluster/pgdriver/pgserver"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// latencies collects how late each job started.
type latencies struct {
	mu   sync.Mutex // guards late and done
	late []time.Duration
	done chan struct{} // closed when want jobs started
	want int
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.late = append(l.late, d)
	if len(l.late) == l.want {
		close(l.done)
	}
}

// String is the percentiles of the lateness.
func (l *latencies) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := slices.Clone(l.late)
	slices.Sort(s)
	if len(s) == 0 {
		return "no job started"
	}
	at := func(q float64) time.Duration {
		return s[min(len(s)-1, int(q*float64(len(s))))].Round(100 * time.Microsecond)
	}
	return fmt.Sprintf("%d jobs: p50 %v, p90 %v, p99 %v, max %v", len(s), at(0.5), at(0.9), at(0.99), s[len(s)-1].Round(100*time.Microsecond))
}

// latenessWorker records, for each job, how long after its ScheduledAt
// (the time it became available: the insert's, or the one it was
// scheduled for) its worker started.
type latenessWorker struct {
	river.WorkerDefaults[benchArgs]
	l *latencies
}

func (w *latenessWorker) Work(ctx context.Context, job *river.Job[benchArgs]) error {
	w.l.add(time.Since(job.ScheduledAt))
	return nil
}

// riverLateness inserts rate jobs a second for duration into a started
// River client (maxWorkers workers; default fetch settings, LISTEN/NOTIFY
// plus a poll every second, or with shortest the shortest River allows,
// a fetch cooldown and a poll of 1 ms), each available at once (ahead 0) or scheduled ahead
// in the future, and returns how late their workers started.
func riverLateness(ctx context.Context, srv *pgserver.Server, rate int, duration, ahead time.Duration, shortest bool) (*latencies, error) {
	pool, err := riverPool(ctx, srv, 40)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	n := int(float64(rate) * duration.Seconds())
	l := &latencies{done: make(chan struct{}), want: n}
	workers := river.NewWorkers()
	river.AddWorker(workers, &latenessWorker{l: l})
	client, stop, err := startRiver(ctx, pool, &river.Config{Workers: workers}, shortest)
	if err != nil {
		return nil, err
	}
	defer stop()
	if err := paced(ctx, rate, n, func(i int) error {
		var opts *river.InsertOpts
		if ahead > 0 {
			opts = &river.InsertOpts{ScheduledAt: time.Now().Add(ahead)}
		}
		_, err := client.Insert(ctx, benchArgs{Seq: i}, opts)
		return err
	}); err != nil {
		return nil, err
	}
	return l, l.wait(ahead)
}

// startRiver starts a River client on pool with cfg, maxWorkers workers
// on the default queue and, with shortest, the shortest fetch intervals
// River allows; stop stops it, waiting at most 30 s.
func startRiver(ctx context.Context, pool *pgxpool.Pool, cfg *river.Config, shortest bool) (client *river.Client[pgx.Tx], stop func(), err error) {
	cfg.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: maxWorkers}}
	if shortest {
		cfg.FetchCooldown, cfg.FetchPollInterval = river.FetchCooldownMin, river.FetchPollIntervalMin
	}
	client, err = river.NewClient(riverpgxv5.New(pool), cfg)
	if err != nil {
		return nil, nil, err
	}
	if err := client.Start(ctx); err != nil {
		return nil, nil, err
	}
	return client, func() {
		stopCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		_ = client.Stop(stopCtx)
	}, nil
}

// wait waits until every job started, or for ahead and a minute more.
func (l *latencies) wait(ahead time.Duration) error {
	select {
	case <-l.done:
		return nil
	case <-time.After(ahead + time.Minute):
		return fmt.Errorf("riverbench: only %s within a minute", l)
	}
}

// paced calls insert(i) for i in [0, n) at rate calls a second, from
// eight goroutines so that a slow insert does not hold up the pace.
func paced(ctx context.Context, rate, n int, insert func(i int) error) error {
	tokens := make(chan int, n)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range tokens {
				if err := insert(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	start := time.Now()
	sent := 0
	tick := time.NewTicker(time.Millisecond)
	for sent < n {
		<-tick.C
		for due := min(n, int(time.Since(start).Seconds()*float64(rate))); sent < due; sent++ {
			tokens <- sent
		}
	}
	tick.Stop()
	close(tokens)
	wg.Wait()
	close(errs)
	return <-errs
}

// maxWorkers is the lateness runs' River MaxWorkers: with the default
// FetchCooldown of 100 ms, one fetch every 100 ms takes at most this many
// jobs, so 100 workers would cap River at exactly 1,000 jobs a second.
const maxWorkers = 500
