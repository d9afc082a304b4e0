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
// per task. Two nodes share one redis-server under two prefixes, one with
// recording off (WithTimelineRetention(0)) and one with it on (the
// default); they take turns running chunks of timelineChunk tasks
// (scheduled due now, run at concurrency 16), so that both see the same
// machine, load and Redis, and Redis's INFO is read around each chunk.
// Each op is one task on each node. It reports per task, for each side:
// redis-cpu-µs (used_cpu_user + used_cpu_sys), script-µs (the usec of
// EVALSHA and EVAL in commandstats), redis-cmds (every command Redis ran,
// the scripts' own included) and in-B (total_net_input_bytes); and the
// on side's extra in % of the off side's.
func BenchmarkTimelineCost(b *testing.B) {
	srv := redistest.Start(b, redistest.Options{})
	stats := srv.Client()
	defer stats.Close()
	off := newTimelineBenchNode(b, srv, "{tl-off}", 0) // prefixes of one length: the same bytes per key
	on := newTimelineBenchNode(b, srv, "{tl-on_}", cluster.DefaultTimelineRetention)
	// A first chunk each loads the scripts and the connections.
	off.runChunk(b, stats, timelineChunk)
	on.runChunk(b, stats, timelineChunk)
	var sumOff, sumOn redisWork
	b.ResetTimer()
	for i, left := 0, b.N; left > 0; i, left = i+1, left-timelineChunk {
		k := min(left, timelineChunk)
		if i%2 == 0 {
			sumOff = sumOff.plus(off.runChunk(b, stats, k))
			sumOn = sumOn.plus(on.runChunk(b, stats, k))
		} else {
			sumOn = sumOn.plus(on.runChunk(b, stats, k))
			sumOff = sumOff.plus(off.runChunk(b, stats, k))
		}
	}
	b.StopTimer()
	per := float64(b.N)
	pct := func(a, b float64) float64 { return (b/a - 1) * 100 }
	for _, m := range []struct {
		unit    string
		off, on float64
	}{
		{"redis-cpu-µs", float64(sumOff.cpu.Microseconds()), float64(sumOn.cpu.Microseconds())},
		{"script-µs", float64(sumOff.scripts.Microseconds()), float64(sumOn.scripts.Microseconds())},
		{"redis-cmds", float64(sumOff.cmds), float64(sumOn.cmds)},
		{"in-B", float64(sumOff.in), float64(sumOn.in)},
	} {
		b.ReportMetric(m.off/per, m.unit+"-off/op")
		b.ReportMetric(m.on/per, m.unit+"-on/op")
		b.ReportMetric(pct(m.off, m.on), m.unit+"-extra-%")
	}
}

// timelineChunk is how many tasks one side runs before the other's turn.
const timelineChunk = 250

// timelineBenchNode is one side of BenchmarkTimelineCost.
type timelineBenchNode struct {
	n    *cluster.Node
	done chan struct{}
}

func newTimelineBenchNode(b *testing.B, srv *redistest.Server, prefix string, keep time.Duration) *timelineBenchNode {
	rdb := srv.Client()
	b.Cleanup(func() { _ = rdb.Close() })
	s := &timelineBenchNode{done: make(chan struct{}, timelineChunk)}
	n, err := cluster.New(rdb, cluster.WithPrefix(prefix), cluster.WithTimelineRetention(keep),
		cluster.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(n.StopNow)
	if err := n.Handle("k", func(context.Context, cluster.Task) error { s.done <- struct{}{}; return nil }); err != nil {
		b.Fatal(err)
	}
	if err := n.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	s.n = n
	return s
}

// runChunk schedules k tasks due now, waits for their completions to be
// written, and returns what Redis did meanwhile.
func (s *timelineBenchNode) runChunk(b *testing.B, stats *redis.Client, k int) redisWork {
	ctx := context.Background()
	before := readRedisWork(b, stats)
	scheduled := make(chan error, 1)
	go func() {
		for range k {
			if _, err := s.n.Schedule(ctx, "k", nil, time.Now()); err != nil {
				scheduled <- err
				return
			}
		}
		scheduled <- nil
	}()
	for range k {
		select {
		case <-s.done:
		case err := <-scheduled:
			if err != nil {
				b.Fatal(err)
			}
			scheduled = nil
			<-s.done
		case <-time.After(30 * time.Second):
			b.Fatal("a run did not come")
		}
	}
	if scheduled != nil {
		if err := <-scheduled; err != nil {
			b.Fatal(err)
		}
	}
	// The last completions are written after their handlers returned.
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := s.n.Counts(ctx)
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
	return readRedisWork(b, stats).minus(before)
}

// redisWork is what INFO says Redis did so far.
type redisWork struct {
	cpu, scripts  time.Duration
	cmds, in, out int64
}

func (w redisWork) plus(o redisWork) redisWork {
	return redisWork{w.cpu + o.cpu, w.scripts + o.scripts, w.cmds + o.cmds, w.in + o.in, w.out + o.out}
}

func (w redisWork) minus(o redisWork) redisWork {
	return redisWork{w.cpu - o.cpu, w.scripts - o.scripts, w.cmds - o.cmds, w.in - o.in, w.out - o.out}
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

// BenchmarkTimelineRead24h reads a whole day of the timeline (every
// minute of every partition, DefaultPartitions of them) from a node, on a
// redis-server whose minutes hold one kind's runs: what a chart of the
// last day costs to draw.
func BenchmarkTimelineRead24h(b *testing.B) {
	srv := redistest.Start(b, redistest.Options{})
	s := newTimelineBenchNode(b, srv, "{tl-read}", cluster.DefaultTimelineRetention)
	stats := srv.Client()
	defer stats.Close()
	s.runChunk(b, stats, timelineChunk)
	ctx := context.Background()
	since := time.Now().Add(-24 * time.Hour)
	b.ResetTimer()
	for range b.N {
		ms, err := s.n.Timeline(ctx, "", since)
		if err != nil {
			b.Fatal(err)
		}
		if len(ms) < 24*60 {
			b.Fatalf("%d minutes", len(ms))
		}
	}
}
