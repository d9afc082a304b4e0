package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// How long the kernel kept each process's threads waiting for a CPU while
// a pass ran: /proc/<pid>/task/*/schedstat gives, per thread, the time on
// a CPU, the time runnable but waiting for one (run delay) and the number
// of times it got one. A thread that ended during the pass is missed.

// schedStat is a process's sums over its threads.
type schedStat struct {
	onCPU, runDelay time.Duration
	slices          int64
}

func readSchedStat(pid int) schedStat {
	var s schedStat
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		fs := strings.Fields(string(b))
		if len(fs) < 3 {
			continue
		}
		cpu, _ := strconv.ParseInt(fs[0], 10, 64)
		wait, _ := strconv.ParseInt(fs[1], 10, 64)
		n, _ := strconv.ParseInt(fs[2], 10, 64)
		s.onCPU += time.Duration(cpu)
		s.runDelay += time.Duration(wait)
		s.slices += n
	}
	return s
}

func (a schedStat) to(b schedStat) schedStat {
	return schedStat{b.onCPU - a.onCPU, b.runDelay - a.runDelay, b.slices - a.slices}
}

// schedWatch reads the schedstat of named processes at a pass's start and
// end.
type schedWatch struct {
	names  []string
	pids   []int
	before []schedStat
	t0     time.Time
}

func startSchedWatch(names []string, pids []int) *schedWatch {
	w := &schedWatch{names: names, pids: pids, t0: time.Now()}
	for _, p := range pids {
		w.before = append(w.before, readSchedStat(p))
	}
	return w
}

// report prints, per process, its CPU, its run delay and the mean wait per
// time it got a CPU, over the pass.
func (w *schedWatch) report() string {
	wall := time.Since(w.t0)
	var b strings.Builder
	fmt.Fprintf(&b, "\nScheduling delay over the pass (%v, /proc/<pid>/task/*/schedstat):\n\n| Process | on CPU | run delay (runnable, waiting for a CPU) | times on a CPU | mean wait per time on a CPU |\n|---|---|---|---|---|\n", wall.Round(time.Millisecond))
	for i, p := range w.pids {
		d := w.before[i].to(readSchedStat(p))
		per := time.Duration(0)
		if d.slices > 0 {
			per = d.runDelay / time.Duration(d.slices)
		}
		fmt.Fprintf(&b, "| %s | %v (%.0f%% of a CPU) | %v | %d | %v |\n", w.names[i], d.onCPU.Round(time.Millisecond),
			100*d.onCPU.Seconds()/wall.Seconds(), d.runDelay.Round(time.Millisecond), d.slices, per.Round(time.Microsecond))
	}
	return b.String()
}

// redisLatency arms Redis's latency monitor (events of 1 ms and more) and
// clears its history, for LATENCY LATEST after a pass.
func redisLatency(ctx context.Context, rdb *redis.Client) error {
	if err := rdb.ConfigSet(ctx, "latency-monitor-threshold", "1").Err(); err != nil {
		return err
	}
	return rdb.Do(ctx, "LATENCY", "RESET").Err()
}

// redisLatencyReport is LATENCY LATEST: per event, its latest and largest
// latency in ms.
func redisLatencyReport(ctx context.Context, rdb *redis.Client) string {
	v, err := rdb.Do(ctx, "LATENCY", "LATEST").Slice()
	if err != nil {
		return "LATENCY LATEST: " + err.Error() + "\n"
	}
	if len(v) == 0 {
		return "Redis LATENCY LATEST: no event of 1 ms or more.\n"
	}
	var b strings.Builder
	b.WriteString("Redis LATENCY LATEST (event: latest ms, max ms):")
	for _, e := range v {
		f, _ := e.([]any)
		if len(f) >= 4 {
			fmt.Fprintf(&b, " %v: %v, %v;", f[0], f[2], f[3])
		}
	}
	b.WriteString("\n")
	return b.String()
}
