package clusterops

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/redis/go-redis/v9"
)

// BenchmarkTaskLifecycle runs tasks through one started node: each is
// stored (the schedule script), claimed (the claim script) and completed
// (the complete script), and the benchmark reports, besides the time per
// task, what Redis spent on it: the scripts' calls per task and their
// server-side time per task (INFO commandstats, evalsha), which is where
// the run history and the per-kind indexes cost. The node is the only
// client, so the calls counted are the task's and the node's background
// ones (sweep, membership, reaper).
func BenchmarkTaskLifecycle(b *testing.B) {
	c := startRedis(b)
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	node, err := cluster.New(c, cluster.WithLogger(quiet))
	if err != nil {
		b.Fatal(err)
	}
	ran := make(chan struct{}, 1024)
	if err := node.Handle("k", func(context.Context, cluster.Task) error {
		ran <- struct{}{}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	if err := node.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = node.Stop(ctx) }()
	before := evalStats(b, c)
	b.ResetTimer()
	for range b.N {
		if _, err := node.Schedule(ctx, "k", []byte("payload"), time.Now()); err != nil {
			b.Fatal(err)
		}
		<-ran
	}
	for {
		cnt, err := node.Counts(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if cnt == (cluster.Counts{}) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	after := evalStats(b, c)
	b.ReportMetric(float64(after.calls-before.calls)/float64(b.N), "scripts/task")
	b.ReportMetric(float64(after.usec-before.usec)/float64(b.N), "redis-µs/task")
}

// scriptStats is the evalsha line of INFO commandstats.
type scriptStats struct{ calls, usec int64 }

func evalStats(b *testing.B, c *redis.Client) scriptStats {
	b.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	var s scriptStats
	for line := range strings.SplitSeq(info, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_evalsha:")
		if !ok {
			continue
		}
		for field := range strings.SplitSeq(rest, ",") {
			k, v, _ := strings.Cut(field, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				s.calls = n
			case "usec":
				s.usec = n
			}
		}
	}
	return s
}
