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

// freshPool makes a new database on srv and a pool on it, sized for
// goroutines.
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
	return pgxpool.NewWithConfig(ctx, cfg)
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
// goroutines goroutines.
func storeInsertRate(ctx context.Context, srv *pgserver.Server, n, goroutines int) (insertRun, error) {
	pool, err := freshPool(ctx, srv, goroutines+2)
	if err != nil {
		return insertRun{}, err
	}
	defer pool.Close()
	if _, err := pgdriver.Migrate(ctx, pool); err != nil {
		return insertRun{}, err
	}
	store, err := pgdriver.New(pool, pgdriver.Options{})
	if err != nil {
		return insertRun{}, err
	}
	due := time.Now()
	payload := []byte(`{"seq":0}`)
	return inParallel(n, goroutines, func(i int) error {
		_, err := store.Schedule(ctx, pgdriver.Task{ID: "bench-" + strconv.Itoa(i), Kind: "bench", Payload: payload, Due: due, MaxRetries: 25})
		return err
	})
}
