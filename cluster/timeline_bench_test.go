package cluster_test

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// BenchmarkTimelineCost measures what recording the timeline costs Redis
// per task: b.N tasks scheduled due now and run by one node (concurrency
// 16), with recording off (WithTimelineRetention(0)) and on (the default),
// on one redis-server shared by both, flushed between passes. Run it with
// -count to interleave the passes. It reports per task, from Redis's INFO:
// redis-cpu-µs (used_cpu_user + used_cpu_sys), script-µs (the usec of
// EVALSHA and EVAL in commandstats), redis-cmds (every command Redis ran,
// the scripts' own included), and in-B and out-B (total_net_input_bytes,
// total_net_output_bytes).
func BenchmarkTimelineCost(b *testing.B) {
	srv := redistest.Start(b, redistest.Options{})
	for _, bc := range []struct {
		name string
		keep time.Duration
	}{{"off", 0}, {"on", cluster.DefaultTimelineRetention}} {
		b.Run(bc.name, func(b *testing.B) { benchmarkTimelinePass(b, srv, bc.keep) })
	}
}

// redisWork is what INFO says Redis did so far.
type redisWork struct {
	cpu, scripts  time.Duration
	cmds, in, out int64
}

// readRedisWork reads redisWork from rdb's INFO (the INFO itself is left
// out of the commands).
func readRedisWork(b *testing.B, rdb *redis.Client) redisWork {
	b.Helper()
	info, err := rdb.Info(context.Background(), "cpu", "stats", "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	var w redisWork
	for _, line := range strings.Split(info, "\n") {
		name, val, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch name {
		case "used_cpu_user", "used_cpu_sys":
			f, _ := strconv.ParseFloat(val, 64)
			w.cpu += time.Duration(f * float64(time.Second))
		case "total_net_input_bytes":
			w.in, _ = strconv.ParseInt(val, 10, 64)
		case "total_net_output_bytes":
			w.out, _ = strconv.ParseInt(val, 10, 64)
		}
		if !strings.HasPrefix(name, "cmdstat_") || name == "cmdstat_info" {
			continue
		}
		fields := map[string]string{}
		for _, kv := range strings.Split(val, ",") {
			k, v, _ := strings.Cut(kv, "=")
			fields[k] = v
		}
		calls, _ := strconv.ParseInt(fields["calls"], 10, 64)
		w.cmds += calls
		if name == "cmdstat_evalsha" || name == "cmdstat_eval" {
			usec, _ := strconv.ParseInt(fields["usec"], 10, 64)
			w.scripts += time.Duration(usec) * time.Microsecond
		}
	}
	return w
}

func benchmarkTimelinePass(b *testing.B, srv *redistest.Server, keep time.Duration) {
	ctx := context.Background()
	stats := srv.Client()
	defer stats.Close()
	if err := stats.FlushAll(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	rdb := srv.Client()
	defer rdb.Close()
	done := make(chan struct{}, 1024)
	n, err := cluster.New(rdb, cluster.WithTimelineRetention(keep), cluster.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		b.Fatal(err)
	}
	defer n.StopNow()
	if err := n.Handle("k", func(context.Context, cluster.Task) error { done <- struct{}{}; return nil }); err != nil {
		b.Fatal(err)
	}
	if err := n.Start(ctx); err != nil {
		b.Fatal(err)
	}
	before := readRedisWork(b, stats)
	b.ResetTimer()
	go func() {
		for range b.N {
			if _, err := n.Schedule(ctx, "k", nil, time.Now()); err != nil {
				b.Error(err)
				return
			}
		}
	}()
	for range b.N {
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			b.Fatal("a run did not come")
		}
	}
	// The last completions are written after their handlers returned.
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := n.Counts(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if c == (cluster.Counts{}) {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("tasks left: %+v", c)
		}
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	after := readRedisWork(b, stats)
	per := float64(b.N)
	b.ReportMetric(float64((after.cpu-before.cpu).Microseconds())/per, "redis-cpu-µs/op")
	b.ReportMetric(float64((after.scripts-before.scripts).Microseconds())/per, "script-µs/op")
	b.ReportMetric(float64(after.cmds-before.cmds)/per, "redis-cmds/op")
	b.ReportMetric(float64(after.in-before.in)/per, "in-B/op")
	b.ReportMetric(float64(after.out-before.out)/per, "out-B/op")
}
