package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-stpe/scheduler/benchmarks/internal/cputime"
	"github.com/go-stpe/scheduler/cluster"
)

// The lifecycle pass (-lifecycle): what each step of a task's life costs
// on 3 started nodes and a storing node at -rate tasks/s for -seconds.
// Every task is stored 1 s ahead; every tenth fails its first run and is
// retried; every hundredth runs for 60% of the lease, so its lease is
// renewed. Each node's client counts, per step (a script by name, or a
// command), its calls, keys, request and reply bytes and round trips (a
// go-redis hook), and every byte its connections read and wrote, the
// subscriptions' included; Redis's SLOWLOG, logging every command,
// gives each script call's time inside Redis; INFO commandstats gives
// every command, those the scripts call included.

// lifecycleLease is the nodes' lease: a slow task runs for 60% of it.
const lifecycleLease = 2 * time.Second

func runLifecycle(rdb *redis.Client, addr string, rate, seconds, batch int) {
	ctx := context.Background()
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		log.Fatal(err)
	}
	for _, kv := range [][2]string{{"slowlog-log-slower-than", "0"}, {"slowlog-max-len", "1000000"}} {
		if err := rdb.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			log.Fatal(err)
		}
	}
	if err := rdb.SlowLogReset(ctx).Err(); err != nil {
		log.Fatal(err)
	}
	hook := newCallHook(cluster.ScriptNames())
	var netRead, netWritten atomic.Int64
	newClient := func() *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 32,
			Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
				conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				return countingConn{Conn: conn, read: &netRead, written: &netWritten}, nil
			}})
		c.AddHook(hook)
		return c
	}
	n := rate * seconds
	rec := newRecorder(n)
	var failed, slow atomic.Int64
	handler := func(ctx context.Context, t cluster.Task) error {
		late := time.Since(t.Due) // of the first run: a retry starts later by design
		i, _ := strconv.Atoi(string(t.Payload))
		if i%10 == 3 && t.Attempt == 0 {
			failed.Add(1)
			return errors.New("first run fails")
		}
		if i%100 == 7 {
			slow.Add(1)
			select {
			case <-time.After(lifecycleLease * 6 / 10):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		rec.add(late)
		return nil
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var nodes []*cluster.Node
	var clients []*redis.Client
	defer func() {
		for _, nd := range nodes {
			_ = nd.Stop(context.Background())
		}
		for _, c := range clients {
			_ = c.Close()
		}
	}()
	for i := range 4 {
		c := newClient()
		clients = append(clients, c)
		nd, err := cluster.New(c, cluster.WithLogger(quiet), cluster.WithLease(lifecycleLease),
			cluster.WithBackoff(func(int) time.Duration { return 10 * time.Millisecond }))
		if err != nil {
			log.Fatal(err)
		}
		if err := nd.Handle("bench", handler); err != nil {
			log.Fatal(err)
		}
		nodes = append(nodes, nd)
		if i < 3 {
			if err := nd.Start(ctx); err != nil {
				log.Fatal(err)
			}
		}
	}
	before, err := readCounts(ctx, rdb)
	if err != nil {
		log.Fatal(err)
	}
	hook0 := hook.snapshot()
	read0, written0 := netRead.Load(), netWritten.Load()
	cpu0, rcpu0 := cputime.Process(), redisCPU(rdb)
	producer := nodes[3]
	var seq atomic.Int64
	how := "Schedule from 16 goroutines"
	if batch > 0 {
		how = fmt.Sprintf("ScheduleMany, %d tasks every %v", batch, time.Duration(batch)*time.Second/time.Duration(rate))
	}
	log.Printf("lifecycle: %d tasks/s for %d s on 3 nodes, stored by %s ...", rate, seconds, how)
	if batch > 0 {
		produceBatches(producer, rate, n, batch, &seq)
	} else if _, err := produce(workload{rate: rate, seconds: seconds, delay: time.Second}, func(due time.Time) error {
		_, err := producer.Schedule(ctx, "bench", []byte(strconv.FormatInt(seq.Add(1)-1, 10)), due)
		return err
	}); err != nil {
		log.Fatal(err)
	}
	late, err := rec.wait(30 * time.Second)
	if err != nil {
		log.Fatal(err)
	}
	// The wait for the last completions reads the counts through a node
	// of its own, on a client without the hook (its Redis commands are
	// in INFO commandstats: a ZCARD and an SMEMBERS per partition every
	// 50 ms).
	watcher, err := cluster.New(rdb)
	if err != nil {
		log.Fatal(err)
	}
	defer watcher.StopNow()
	for {
		c, err := watcher.Counts(ctx)
		if err != nil {
			log.Fatal(err)
		}
		if c == (cluster.Counts{}) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	cpu, rcpu := cputime.Process()-cpu0, redisCPU(rdb)-rcpu0
	after, err := readCounts(ctx, rdb)
	if err != nil {
		log.Fatal(err)
	}
	steps := hook.snapshot()
	read, written := netRead.Load()-read0, netWritten.Load()-written0
	scriptTimes, err := slowlogByScript(ctx, rdb, cluster.ScriptNames())
	if err != nil {
		log.Fatal(err)
	}
	p50, p99 := quantiles(late)
	per := float64(n) / 1000
	fmt.Printf("\nLifecycle of %d tasks at %d tasks/s, stored by %s (3 started nodes, 1 storing node, one redis-server %s, no AOF; %d failed first runs, %d runs of 60%% of the lease): start lateness p50 %v p99 %v; client CPU %v (%.1f ms / 1k tasks), redis CPU %v (%.1f ms / 1k tasks); 1-minute load average %s.\n",
		n, rate, how, versionOf(rdb), failed.Load(), slow.Load(), p50, p99, cpu, float64(cpu.Milliseconds())/per, rcpu, float64(rcpu.Milliseconds())/per, loadAverage())
	fmt.Printf("\nBytes on the nodes' connections: written %.0f, read %.0f per task (subscriptions' messages included).\n\n", float64(written)/float64(n), float64(read)/float64(n))
	fmt.Print("| Step | calls / 1k tasks | round trips / 1k tasks | keys / call | bytes sent / call | bytes received / call | Redis µs / call, p50 / p99 (SLOWLOG) |\n|---|---|---|---|---|---|---|\n")
	var names []string
	for k, s := range steps {
		if s.calls-hook0[k].calls > 0 {
			names = append(names, k)
		}
	}
	sort.Slice(names, func(i, j int) bool {
		return steps[names[i]].calls-hook0[names[i]].calls > steps[names[j]].calls-hook0[names[j]].calls
	})
	for _, k := range names {
		s, s0 := steps[k], hook0[k]
		calls := float64(s.calls - s0.calls)
		us := "—"
		if name, ok := strings.CutPrefix(k, "script "); ok && len(scriptTimes[name]) > 0 {
			p50, p99 := quantiles(scriptTimes[name])
			us = fmt.Sprintf("%d / %d", p50.Microseconds(), p99.Microseconds())
		}
		fmt.Printf("| %s | %.1f | %.1f | %.1f | %.0f | %.0f | %s |\n", k, calls/per, float64(s.roundTrips-s0.roundTrips)/per,
			float64(s.keys-s0.keys)/calls, float64(s.sent-s0.sent)/calls, float64(s.received-s0.received)/calls, us)
	}
	d := before.to(after)
	fmt.Printf("\nINFO commandstats, every command (those the scripts call included): %.2f commands per task.\n\n", float64(d.commands)/float64(n))
	fmt.Print("| Command | calls / 1k tasks | µs / call |\n|---|---|---|\n")
	var cmds []string
	for k := range d.byCommand {
		cmds = append(cmds, k)
	}
	sort.Slice(cmds, func(i, j int) bool { return d.byCommand[cmds[i]] > d.byCommand[cmds[j]] })
	for _, k := range cmds {
		fmt.Printf("| %s | %.1f | %.2f |\n", k, float64(d.byCommand[k])/per, float64(d.usecByCommand[k])/float64(d.byCommand[k]))
	}
}

// produceBatches stores n tasks at rate per second with ScheduleMany,
// batch tasks per call, due 1 s after their call at 1/rate apart: the
// same stream of due times as Schedule's.
func produceBatches(producer *cluster.Node, rate, n, batch int, seq *atomic.Int64) {
	every := time.Duration(batch) * time.Second / time.Duration(rate)
	start := time.Now()
	for b := 0; b*batch < n; b++ {
		at := start.Add(time.Duration(b) * every)
		time.Sleep(time.Until(at))
		tasks := make([]cluster.ScheduleManyParams, 0, batch)
		interval := time.Second / time.Duration(rate)
		for i := range min(batch, n-b*batch) {
			tasks = append(tasks, cluster.ScheduleManyParams{Kind: "bench",
				Payload: []byte(strconv.FormatInt(seq.Add(1)-1, 10)), Due: at.Add(time.Second + time.Duration(i)*interval)})
		}
		if _, err := producer.ScheduleMany(context.Background(), tasks); err != nil {
			log.Fatal(err)
		}
	}
}

// slowlogByScript collects SLOWLOG's entries (every command, with the
// threshold at 0) by script name: each call's time inside Redis. The
// time is the wall clock: a server preempted by the machine's other load
// mid-script shows in the tail, less in the median.
func slowlogByScript(ctx context.Context, rdb *redis.Client, names map[string]string) (map[string][]time.Duration, error) {
	logs, err := rdb.SlowLogGet(ctx, -1).Result()
	if err != nil {
		return nil, err
	}
	times := map[string][]time.Duration{}
	for _, l := range logs {
		if len(l.Args) < 2 || !strings.EqualFold(l.Args[0], "evalsha") {
			continue
		}
		name, ok := names[l.Args[1]]
		if !ok {
			name = l.Args[1][:8]
		}
		times[name] = append(times[name], l.Duration)
	}
	return times, nil
}

// versionOf is the server's version.
func versionOf(rdb *redis.Client) string {
	info, err := rdb.InfoMap(context.Background(), "server").Result()
	if err != nil {
		return "unknown"
	}
	return info["Server"]["redis_version"]
}
