package main

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-stpe/scheduler/cluster/pgdriver"
	"github.com/go-stpe/scheduler/cluster/pgdriver/pgserver"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// benchArgs are the jobs' arguments: a sequence number, and the time the
// job was made available, for the lateness runs.
type benchArgs struct {
	Seq int `json:"seq"`
}

func (benchArgs) Kind() string { return "bench" }

// dbSeq numbers the databases the runs make.
var dbSeq atomic.Int64

// freshPool makes a new database on srv and a warm pool of conns
// connections on it.
func freshPool(ctx context.Context, srv *pgserver.Server, conns int) (*pgxpool.Pool, error) {
	name := "bench_" + strconv.FormatInt(dbSeq.Add(1), 10)
	if err := srv.CreateDatabase(name); err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(srv.URL(name))
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = int32(conns)
	return warmPool(ctx, cfg)
}

// warmPool is a pool of cfg with all its connections made, so that no
// run pays for starting the server's backends (a process each) in its
// first second, as a long-running client would not.
func warmPool(ctx context.Context, cfg *pgxpool.Config) (*pgxpool.Pool, error) {
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	conns := make([]*pgxpool.Conn, 0, cfg.MaxConns)
	defer func() {
		for _, c := range conns {
			c.Release()
		}
	}()
	for range cfg.MaxConns {
		c, err := pool.Acquire(ctx)
		if err != nil {
			pool.Close()
			return nil, err
		}
		conns = append(conns, c)
	}
	return pool, nil
}

// riverPool is a fresh database migrated by River's rivermigrate.
func riverPool(ctx context.Context, srv *pgserver.Server, conns int) (*pgxpool.Pool, error) {
	pool, err := freshPool(ctx, srv, conns)
	if err != nil {
		return nil, err
	}
	m, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err == nil {
		_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	}
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("riverbench: river migrate: %w", err)
	}
	return pool, nil
}

// inParallel runs insert(i) for i in [0, n) from goroutines goroutines
// and returns how long it took, or the first error.
func inParallel(n, goroutines int, insert func(i int) error) (insertRun, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	start := time.Now()
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := insert(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return insertRun{}, err
	}
	return insertRun{n: n, elapsed: elapsed}, nil
}

// riverInsertRate inserts n jobs, one per Client.Insert, from goroutines
// goroutines, with an insert-only client.
func riverInsertRate(ctx context.Context, srv *pgserver.Server, n, goroutines int) (insertRun, error) {
	pool, err := riverPool(ctx, srv, goroutines+2)
	if err != nil {
		return insertRun{}, err
	}
	defer pool.Close()
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	if err != nil {
		return insertRun{}, err
	}
	return inParallel(n, goroutines, func(i int) error {
		_, err := client.Insert(ctx, benchArgs{Seq: i}, nil)
		return err
	})
}

// storeInsertRate schedules n tasks, one per Store.Schedule, from
// goroutines goroutines. Without notices, the insert trigger is disabled
// on the run's database: how much the notices cost, not a way to run.
func storeInsertRate(ctx context.Context, srv *pgserver.Server, n, goroutines int, notices bool) (insertRun, error) {
	store, closeStore, err := insertStore(ctx, srv, goroutines, notices)
	if err != nil {
		return insertRun{}, err
	}
	defer closeStore()
	due := time.Now()
	payload := []byte(`{"seq":0}`)
	return inParallel(n, goroutines, func(i int) error {
		_, err := store.Schedule(ctx, pgdriver.Task{ID: "bench-" + strconv.Itoa(i), Kind: "bench", Payload: payload, Due: due, MaxRetries: 25})
		return err
	})
}

// insertStore is a Store on a fresh migrated database, its pool sized
// for goroutines; without notices the insert trigger is disabled.
func insertStore(ctx context.Context, srv *pgserver.Server, goroutines int, notices bool) (*pgdriver.Store, func(), error) {
	pool, err := freshPool(ctx, srv, goroutines+2)
	if err != nil {
		return nil, nil, err
	}
	if _, err := pgdriver.Migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, nil, err
	}
	if !notices {
		if _, err := pool.Exec(ctx, `ALTER TABLE stpe_tasks DISABLE TRIGGER stpe_tasks_inserted`); err != nil {
			pool.Close()
			return nil, nil, err
		}
	}
	store, err := pgdriver.New(pool, pgdriver.Options{})
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	return store, pool.Close, nil
}

// manyChunk is the number of jobs of each InsertMany and ScheduleMany
// call of the batch insert runs.
const manyChunk = 1000

// riverInsertManyRate inserts n jobs by InsertMany calls of manyChunk,
// one goroutine.
func riverInsertManyRate(ctx context.Context, srv *pgserver.Server, n int) (insertRun, error) {
	pool, err := riverPool(ctx, srv, 4)
	if err != nil {
		return insertRun{}, err
	}
	defer pool.Close()
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	if err != nil {
		return insertRun{}, err
	}
	return inChunks(n, func(from, to int) error {
		params := make([]river.InsertManyParams, 0, to-from)
		for i := from; i < to; i++ {
			params = append(params, river.InsertManyParams{Args: benchArgs{Seq: i}})
		}
		_, err := client.InsertMany(ctx, params)
		return err
	})
}

// storeScheduleManyRate schedules n tasks by ScheduleMany calls of
// manyChunk, one goroutine.
func storeScheduleManyRate(ctx context.Context, srv *pgserver.Server, n int) (insertRun, error) {
	store, closeStore, err := insertStore(ctx, srv, 2, true)
	if err != nil {
		return insertRun{}, err
	}
	defer closeStore()
	due := time.Now()
	payload := []byte(`{"seq":0}`)
	return inChunks(n, func(from, to int) error {
		tasks := make([]pgdriver.Task, 0, to-from)
		for i := from; i < to; i++ {
			tasks = append(tasks, pgdriver.Task{ID: "many-" + strconv.Itoa(i), Kind: "bench", Payload: payload, Due: due, MaxRetries: 25})
		}
		_, err := store.ScheduleMany(ctx, tasks)
		return err
	})
}

// inChunks calls insert on [from, to) chunks of manyChunk covering
// [0, n), one after another, and returns how long it took.
func inChunks(n int, insert func(from, to int) error) (insertRun, error) {
	start := time.Now()
	for from := 0; from < n; from += manyChunk {
		if err := insert(from, min(n, from+manyChunk)); err != nil {
			return insertRun{}, err
		}
	}
	return insertRun{n: n, elapsed: time.Since(start)}, nil
}
