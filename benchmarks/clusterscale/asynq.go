package main

import (
	"context"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// drainAsynq is drainModule for asynq: -drain tasks enqueued for now
// through one client, then n asynq servers of the same concurrency, each
// on a client of its own whose round trips are counted, until every task
// ran. asynq keeps a queue's keys under one hash tag ({default}), so on a
// Redis Cluster they all live on one master.
func drainAsynq(d *deployment, n int) (drainResult, error) {
	ctx := context.Background()
	count := *drainCount
	r := drainResult{redis: d.name, system: "asynq", nodes: n}
	admin := d.admin()
	defer closeAll(admin)
	if err := flush(ctx, admin); err != nil {
		return r, err
	}
	pc := d.client()
	defer pc.Close()
	client := asynq.NewClientFromRedisClient(pc)
	if err := storeAll(count, func(i int) error {
		_, err := client.Enqueue(asynq.NewTask("k", payload(i)), asynq.MaxRetry(0))
		return err
	}); err != nil {
		return r, err
	}
	ms, err := masters(ctx, admin)
	if err != nil {
		return r, err
	}
	before, err := take(ctx, ms)
	if err != nil {
		return r, err
	}
	tally := newRunTally(count)
	mux := asynq.NewServeMux()
	mux.HandleFunc("k", func(_ context.Context, t *asynq.Task) error {
		tally.ran(string(t.Payload()), true, "")
		return nil
	})
	trips := newTripCounter()
	var servers []*asynq.Server
	var clients []redis.UniversalClient
	stop := func() {
		for _, s := range servers {
			s.Shutdown()
		}
		for _, c := range clients {
			_ = c.Close()
		}
	}
	start := time.Now()
	for range n {
		c := counted(d, trips)
		clients = append(clients, c)
		s := asynq.NewServerFromRedisClient(c, asynq.Config{Concurrency: *concurrency, LogLevel: asynq.FatalLevel})
		if err := s.Start(mux); err != nil {
			stop()
			return r, fmt.Errorf("start an asynq server: %w", err)
		}
		servers = append(servers, s)
	}
	err = tally.wait(5 * time.Minute)
	r.rate = float64(count) / time.Since(start).Seconds()
	// Shutdown waits for the active workers, so that their completions
	// are written before the statistics are read.
	stop()
	if err != nil {
		return r, err
	}
	after, err := take(ctx, ms)
	if err != nil {
		return r, err
	}
	r.d = diff(before, after)
	r.t = tripsBetween(nil, trips.snapshot())
	r.duplicates = tally.duplicates()
	return r, nil
}
