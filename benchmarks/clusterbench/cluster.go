package main

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/redis/go-redis/v9"
)

// clusterLateness runs the stream on 3 nodes (each with its own client, as
// 3 replicas would have) with the default options, and a fourth, never
// started, that only stores.
func clusterLateness(addr string, w workload) ([]time.Duration, time.Duration, error) {
	rec := newRecorder(w.rate * w.seconds)
	if diag.breakdown {
		diag.hook = newClaimHook(claimSHA(), w.rate*w.seconds)
		diag.starts = newStarts(w.rate * w.seconds)
	}
	handler := func(_ context.Context, t cluster.Task) error {
		now := time.Now()
		rec.add(now.Sub(t.Due))
		if diag.starts != nil {
			diag.starts.add(t.ID, t.Due, now)
		}
		return nil
	}
	var nodes []*cluster.Node
	var clients []*redis.Client
	defer func() {
		for _, n := range nodes {
			_ = n.Stop(context.Background())
		}
		for _, c := range clients {
			_ = c.Close()
		}
	}()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for i := range 4 {
		c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 32})
		clients = append(clients, c)
		if i < 3 && diag.hook != nil {
			c.AddHook(diag.hook)
		}
		opts := []cluster.Option{cluster.WithLogger(quiet)}
		if diag.concurrency > 0 {
			opts = append(opts, cluster.WithConcurrency(diag.concurrency))
		}
		n, err := cluster.New(c, opts...)
		if err != nil {
			return nil, 0, err
		}
		if err := n.Handle("bench", handler); err != nil {
			return nil, 0, err
		}
		nodes = append(nodes, n)
		if i < 3 {
			if err := n.Start(context.Background()); err != nil {
				return nil, 0, err
			}
		}
	}
	producer := nodes[3]
	lag, err := produce(w, func(due time.Time) error {
		id, err := producer.Schedule(context.Background(), "bench", nil, due)
		if err == nil && diag.starts != nil {
			diag.starts.stored(id, time.Now())
		}
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	late, err := rec.wait(w.delay + 30*time.Second)
	return late, lag, err
}

// clusterStore stores n tasks due in an hour through one node.
func clusterStore(addr string, n int) (float64, error) {
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 32})
	defer c.Close()
	node, err := cluster.New(c)
	if err != nil {
		return 0, err
	}
	defer node.Stop(context.Background())
	if err := node.Handle("bench", func(context.Context, cluster.Task) error { return nil }); err != nil {
		return 0, err
	}
	due := time.Now().Add(time.Hour)
	return storeConcurrently(n, func(i int) error {
		_, err := node.Schedule(context.Background(), "bench", []byte(strconv.Itoa(i)), due)
		return err
	})
}

// claimSHA is the SHA-1 of the claim script.
func claimSHA() string {
	for sha, name := range cluster.ScriptNames() {
		if name == "claim" {
			return sha
		}
	}
	panic("clusterbench: no script named claim")
}
