package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/pgdriver"
	"github.com/go-stpe/scheduler/cluster/pgdriver/pgserver"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// The lost-run takeover: a node dies holding running tasks; how long
// until another runs them again. The dead node is played by its last
// act: its claims (the Store) or the rows a River client leaves running
// (state running, attempted by it). The takeover is measured from that
// moment to each task's rerun on the heir: for the Store, a node that
// reaps expired leases every quarter lease (as the cluster node's reaper
// does) and claims what it reaped; for River, a client whose rescuer
// moves jobs running longer than RescueStuckJobsAfter (set to the
// Store's lease) back to be retried.

// takeoverTasks is the number of tasks the dead node holds.
const takeoverTasks = 100

// takeoverLease is the Store's lease, and River's RescueStuckJobsAfter.
const takeoverLease = 5 * time.Second

// storeTakeover measures the Store's takeover of takeoverTasks tasks.
func storeTakeover(ctx context.Context, srv *pgserver.Server) (*latencies, error) {
	pool, err := freshPool(ctx, srv, 8)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	if _, err := pgdriver.Migrate(ctx, pool); err != nil {
		return nil, err
	}
	dead, err := pgdriver.New(pool, pgdriver.Options{Node: "dead"})
	if err != nil {
		return nil, err
	}
	heir, err := pgdriver.New(pool, pgdriver.Options{Node: "heir"})
	if err != nil {
		return nil, err
	}
	tasks := make([]pgdriver.Task, takeoverTasks)
	for i := range tasks {
		tasks[i] = pgdriver.Task{ID: "held-" + strconv.Itoa(i), Kind: "bench", Due: time.Now(), MaxRetries: 3}
	}
	if _, err := dead.ScheduleMany(ctx, tasks); err != nil {
		return nil, err
	}
	for _, t := range tasks {
		if c, err := dead.Claim(ctx, t.ID, newToken(), takeoverLease); err != nil || c.Outcome != pgdriver.ClaimWon {
			return nil, fmt.Errorf("riverbench: the dying node's claim of %s: %v, %v", t.ID, c.Outcome, err)
		}
	}
	killed := time.Now()
	l := &latencies{done: make(chan struct{}), want: takeoverTasks}
	tick := time.NewTicker(takeoverLease / 4)
	defer tick.Stop()
	deadline := time.After(takeoverLease + time.Minute)
	for {
		lost, err := heir.ReapExpired(ctx, nil, 1000, 10, driver.Timeline{})
		if err != nil {
			return nil, err
		}
		for _, r := range lost {
			c, err := heir.Claim(ctx, r.ID, newToken(), takeoverLease)
			if err != nil {
				return nil, err
			}
			if c.Outcome == pgdriver.ClaimWon {
				l.add(time.Since(killed))
			}
		}
		select {
		case <-l.done:
			return l, nil
		case <-deadline:
			return l, fmt.Errorf("riverbench: the heir reran only %s", l)
		case <-tick.C:
		}
	}
}

// takeoverWorker records how long after the dead client's last act each
// job ran again.
type takeoverWorker struct {
	river.WorkerDefaults[benchArgs]
	l      *latencies
	killed time.Time
}

func (w *takeoverWorker) Work(ctx context.Context, job *river.Job[benchArgs]) error {
	w.l.add(time.Since(w.killed))
	return nil
}

// riverTakeover measures River's rescue of takeoverTasks jobs a dead
// client left running, by a client with RescueStuckJobsAfter
// takeoverLease (and, with shortest, the shortest fetch intervals).
func riverTakeover(ctx context.Context, srv *pgserver.Server, shortest bool) (*latencies, error) {
	pool, err := riverPool(ctx, srv, 8)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	inserter, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	if err != nil {
		return nil, err
	}
	params := make([]river.InsertManyParams, takeoverTasks)
	for i := range params {
		params[i] = river.InsertManyParams{Args: benchArgs{Seq: i}}
	}
	if _, err := inserter.InsertMany(ctx, params); err != nil {
		return nil, err
	}
	// What a client leaves behind when it dies while working its jobs.
	if _, err := pool.Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now(), attempted_by = ARRAY['dead']`); err != nil {
		return nil, err
	}
	w := &takeoverWorker{l: &latencies{done: make(chan struct{}), want: takeoverTasks}, killed: time.Now()}
	workers := river.NewWorkers()
	river.AddWorker(workers, w)
	_, stop, err := startRiver(ctx, pool, &river.Config{
		Workers:              workers,
		RescueStuckJobsAfter: takeoverLease,
		JobTimeout:           takeoverLease, // RescueStuckJobsAfter may not be shorter
	}, shortest)
	if err != nil {
		return nil, err
	}
	defer stop()
	return w.l, w.l.wait(takeoverLease)
}

// takeoverRuns measures the takeover of a dead node's running tasks by
// the Store and by River.
func takeoverRuns(ctx context.Context, srv *pgserver.Server, c config) error {
	for _, shortest := range []bool{false, true} {
		l, err := riverTakeover(ctx, srv, shortest)
		if err != nil {
			return err
		}
		settings := "defaults"
		if shortest {
			settings = "FetchCooldown and FetchPollInterval 1 ms"
		}
		fmt.Printf("River rescue of %d jobs a dead client left running, RescueStuckJobsAfter %v (%s): rerun after %s (%s)\n", takeoverTasks, takeoverLease, settings, l, load())
	}
	l, err := storeTakeover(ctx, srv)
	if err != nil {
		return err
	}
	fmt.Printf("pgdriver Store takeover of %d tasks a dead node held, lease %v, reaped every quarter lease: rerun after %s (%s)\n", takeoverTasks, takeoverLease, l, load())
	return nil
}
