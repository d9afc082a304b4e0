package cluster_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// BenchmarkRetryAll10000Dead times RetryAll of 10,000 dead tasks spread
// over the default 64 partitions of one redis-server. The dead tasks are
// made once, by a worker whose handler fails them past retrying, and the
// keyspace is copied (DUMP); before each iteration, off the clock, it is
// restored as it was (RESTORE).
func BenchmarkRetryAll10000Dead(b *testing.B) {
	const tasks = 10000
	srv := redistest.Start(b, redistest.Options{})
	ctx := context.Background()
	rdb := srv.Client()
	defer rdb.Close()
	fail := func(context.Context, cluster.Task) error { return fmt.Errorf("broken: %w", cluster.ErrSkipRetry) }
	worker, err := cluster.New(srv.Client(), append(testOptions(), cluster.WithConcurrency(64),
		cluster.WithLogger(slog.New(slog.DiscardHandler)))...)
	if err != nil {
		b.Fatal(err)
	}
	if err := worker.Handle("k", fail); err != nil {
		b.Fatal(err)
	}
	if err := worker.Start(ctx); err != nil {
		b.Fatal(err)
	}
	for i := range tasks {
		if _, err := worker.Schedule(ctx, "k", []byte("payload"), time.Now(), cluster.WithID(fmt.Sprintf("t%05d", i))); err != nil {
			b.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		c, err := worker.Counts(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if c.Dead == tasks {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("only %d of %d tasks dead", c.Dead, tasks)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := worker.Stop(ctx); err != nil {
		b.Fatal(err)
	}
	snapshot := dumpKeys(b, rdb)
	ops, err := cluster.New(srv.Client(), testOptions()...)
	if err != nil {
		b.Fatal(err)
	}
	defer ops.StopNow()
	b.Run("RetryAll", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			restoreKeys(b, rdb, snapshot)
			b.StartTimer()
			res, err := ops.RetryAll(ctx, cluster.Selection{State: cluster.Dead, Kind: "k"})
			if err != nil || res.Changed != tasks {
				b.Fatalf("%+v, %v", res, err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*tasks), "µs/task")
	})
	// The same work as a caller without RetryAll does it: Retry on each
	// ID, one round trip each.
	b.Run("Retry each", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			restoreKeys(b, rdb, snapshot)
			b.StartTimer()
			for i := range tasks {
				if err := ops.Retry(ctx, fmt.Sprintf("t%05d", i)); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*tasks), "µs/task")
	})
}

// dumpKeys copies every key of rdb (DUMP).
func dumpKeys(b *testing.B, rdb *redis.Client) map[string]string {
	ctx := context.Background()
	out := map[string]string{}
	iter := rdb.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		v, err := rdb.Dump(ctx, iter.Val()).Result()
		if err != nil {
			b.Fatal(err)
		}
		out[iter.Val()] = v
	}
	if err := iter.Err(); err != nil {
		b.Fatal(err)
	}
	return out
}

// restoreKeys empties rdb and restores the keys dumpKeys copied.
func restoreKeys(b *testing.B, rdb *redis.Client, keys map[string]string) {
	ctx := context.Background()
	if err := rdb.FlushDB(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	pipe := rdb.Pipeline()
	for k, v := range keys {
		pipe.Restore(ctx, k, 0, v)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		b.Fatal(err)
	}
}
