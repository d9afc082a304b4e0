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

// BenchmarkObserver runs tasks one at a time, from Schedule to their
// completion in Redis, on one node: with no observer, and with an observer
// whose every hook is set (doing nearly nothing), to show what the hooks
// cost the node. Besides time and allocations per task it reports, from
// Redis's INFO commandstats, scripts/op, the script calls (EVALSHA, EVAL)
// per task, and redis-cmds/op, every command Redis ran per task, those the
// scripts ran included (the node's background loops add a little to
// both).
func BenchmarkObserver(b *testing.B) {
	hooks := cluster.Observer{
		Metadata:  func(context.Context, string) map[string]string { return nil },
		Scheduled: func(context.Context, string) {},
		Claimed:   func(string, time.Duration) {},
		Run:       func(ctx context.Context, _ cluster.Task, _ map[string]string) context.Context { return ctx },
		Ended:     func(context.Context, cluster.RunEnd) {},
		RedisCall: func(cluster.RedisCall) {},
	}
	for _, bc := range []struct {
		name string
		opts []cluster.Option
	}{
		{"none", nil},
		{"hooks", []cluster.Option{cluster.WithObserver(hooks)}},
	} {
		b.Run(bc.name, func(b *testing.B) { benchmarkRuns(b, bc.opts) })
	}
}

func benchmarkRuns(b *testing.B, opts []cluster.Option) {
	srv := redistest.Start(b, redistest.Options{})
	rdb := srv.Client()
	defer rdb.Close()
	done := make(chan struct{}, 1)
	n, err := cluster.New(rdb, append(opts, cluster.WithLogger(slog.New(slog.DiscardHandler)))...)
	if err != nil {
		b.Fatal(err)
	}
	defer n.StopNow()
	if err := n.Handle("k", func(context.Context, cluster.Task) error {
		done <- struct{}{}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := n.Start(ctx); err != nil {
		b.Fatal(err)
	}
	stats := srv.Client()
	defer stats.Close()
	cmds0, scripts0 := redisCalls(b, stats)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := n.Schedule(ctx, "k", nil, time.Now()); err != nil {
			b.Fatal(err)
		}
		<-done
	}
	// The last completion is written after its handler returned. Each
	// Counts is 5 commands (MULTI, 3 ZCARD, EXEC), not counted below.
	polls := 0
	for deadline := time.Now().Add(10 * time.Second); ; polls++ {
		c, err := n.Counts(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if c == (cluster.Counts{}) {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("tasks left after the benchmark: %+v", c)
		}
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	cmds, scripts := redisCalls(b, stats)
	b.ReportMetric(float64(cmds-cmds0-5*(polls+1))/float64(b.N), "redis-cmds/op")
	b.ReportMetric(float64(scripts-scripts0)/float64(b.N), "scripts/op")
}

// redisCalls sums the calls of every command in INFO commandstats, less
// the INFO calls themselves, and of the script commands alone.
func redisCalls(b *testing.B, rdb *redis.Client) (cmds, scripts int) {
	b.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok || name == "cmdstat_info" {
			continue
		}
		calls, _, _ := strings.Cut(rest, ",")
		k, err := strconv.Atoi(calls)
		if err != nil {
			b.Fatalf("commandstats line %q: %v", line, err)
		}
		cmds += k
		if name == "cmdstat_evalsha" || name == "cmdstat_eval" {
			scripts += k
		}
	}
	return cmds, scripts
}
