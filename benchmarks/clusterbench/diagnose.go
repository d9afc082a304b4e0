package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"runtime/trace"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// diagnostics are the -breakdown and -trace options, and what the current
// pass's cluster nodes note for the breakdown.
type diagnostics struct {
	breakdown bool
	trace     string
	traces    int // traces written so far

	concurrency int // the cluster nodes' WithConcurrency (0: the default)

	// Set by clusterLateness for its pass (one pass runs at a time).
	hook   *claimHook
	starts *starts
}

var diag diagnostics

// passWatch is what one pass is watched with.
type passWatch struct {
	sched *schedWatch
	timer *timerProbe
	trace *os.File

	counts   redisCounts   // INFO commandstats at the start
	redisCPU time.Duration // redis-server's CPU at the start
}

// start begins watching a lateness pass: the processes' scheduling delay,
// a timer probe, Redis's latency monitor, and a Go execution trace.
func (d *diagnostics) start(rdb *redis.Client, srv *redisServer, bs burners) *passWatch {
	d.hook, d.starts = nil, nil
	w := &passWatch{}
	if d.trace != "" {
		d.traces++
		f, err := os.Create(fmt.Sprintf("%s.%d", d.trace, d.traces))
		if err != nil {
			log.Fatal(err)
		}
		if err := trace.Start(f); err != nil {
			log.Fatal(err)
		}
		w.trace = f
	}
	if !d.breakdown {
		return w
	}
	if err := redisLatency(context.Background(), rdb); err != nil {
		log.Fatal(err)
	}
	names, pids := []string{"this process (nodes, producer)", "redis-server"}, []int{os.Getpid(), srv.cmd.Process.Pid}
	for i, p := range bs.pids() {
		names, pids = append(names, fmt.Sprintf("burner %d", i+1)), append(pids, p)
	}
	w.sched = startSchedWatch(names, pids)
	w.counts, _ = readCounts(context.Background(), rdb)
	w.redisCPU = redisCPU(rdb)
	w.timer = startTimerProbe()
	return w
}

// end stops watching and returns what was seen.
func (w *passWatch) end(rdb *redis.Client) string {
	if w.trace != nil {
		trace.Stop()
		_ = w.trace.Close()
	}
	if w.sched == nil {
		return ""
	}
	var b strings.Builder
	late := w.timer.end()
	if diag.hook != nil {
		b.WriteString(breakdownReport(diag.hook, diag.starts, late))
	} else {
		t50, t99 := quantiles(late)
		fmt.Fprintf(&b, "\nTimer probe in the same process (a time.Timer every 5 ms, %d wake-ups): late p50 %s, p99 %s, max %s.\n", len(late), ms(t50), ms(t99), ms(late[len(late)-1]))
	}
	b.WriteString(w.sched.report())
	b.WriteString(redisWork(rdb, w.counts, w.redisCPU))
	b.WriteString(redisLatencyReport(context.Background(), rdb))
	return b.String()
}

// redisWork tells Redis's CPU over the pass and, from INFO commandstats,
// the time its script calls took inside Redis: wall time, so a script
// during which the kernel took the CPU from Redis counts that time too,
// and the sum can pass the CPU.
func redisWork(rdb *redis.Client, before redisCounts, cpu0 time.Duration) string {
	after, err := readCounts(context.Background(), rdb)
	if err != nil {
		return "INFO commandstats: " + err.Error() + "\n"
	}
	cpu := redisCPU(rdb) - cpu0
	d := before.to(after)
	us, calls := d.usecByCommand["evalsha"], d.byCommand["evalsha"]
	per := 0.0
	if calls > 0 {
		per = float64(us) / float64(calls)
	}
	return fmt.Sprintf("Redis over the pass: CPU %v; %d script calls (EVALSHA), %.0f µs each inside Redis (wall), %v in all; %d commands in all.\n",
		cpu.Round(time.Millisecond), calls, per, (time.Duration(us) * time.Microsecond).Round(time.Millisecond), d.commands)
}
