// Command clusterscale measures what the cluster module costs Redis per
// task as nodes are added, and how its work spreads over a Redis Cluster's
// masters. In one run, on servers it starts itself on free local ports (one
// redis-server, then a Redis Cluster of three masters with one replica
// each), it reports:
//
//   - for 1, 3 and 6 nodes, per task lifecycle (schedule, claim, complete),
//     from tasks falling due evenly over a few seconds: the Redis commands
//     (those inside scripts included, INFO commandstats), the client round
//     trips (a go-redis hook on every connection pool the nodes use), the
//     bytes Redis sent to clients and replicas (INFO stats
//     total_net_output_bytes), Redis's CPU
//     (INFO cpu), the pub/sub messages published and delivered; and the
//     share of the near-due tasks the fullest node holds in its window;
//   - the drain rate, tasks per second of a backlog all due now, counted
//     exactly (every task's run, and any second run), for the cluster
//     module's 1, 3 and 6 nodes and asynq's 1, 3 and 6 servers of the same
//     concurrency, on the same servers;
//   - how the keys of 100,000 tasks spread over the cluster's masters;
//   - PASS or FAIL against the targets: at most 3 round trips per task,
//     bytes per task at 6 nodes within 1.2x the 1-node figure, each of N
//     nodes holding at most 2/N of the near-due tasks, and each master
//     within ±10 % of the mean key count.
//
// Run it from the benchmarks folder (redis-server and redis-cli on PATH):
//
//	go run ./clusterscale
//	go run ./clusterscale -tasks 1000 -spread 1s -drain 1000 -keys 5000 -idle 1s   # a quick pass (the idle figures need 10 s: the sweep and heartbeat periods)
package main

import (
	"flag"
	"fmt"
	"log"
	"runtime"
	"strings"
	"time"

	"github.com/go-stpe/scheduler/cluster"
)

// The run's settings, from the flags.
var (
	taskCount   = flag.Int("tasks", 6000, "tasks of each lifecycle pass")
	spread      = flag.Duration("spread", 6*time.Second, "the lifecycle pass's tasks fall due evenly over this time")
	drainCount  = flag.Int("drain", 6000, "tasks of each drain pass (tasks per second)")
	keyCount    = flag.Int("keys", 100000, "tasks stored on the Redis Cluster to show how their keys spread over the masters")
	idle        = flag.Duration("idle", 10*time.Second, "how long the nodes' background work is measured, idle, before each lifecycle pass")
	payloadSize = flag.Int("payload", 64, "bytes of each task's payload")
	concurrency = flag.Int("concurrency", 16, "workers per node (cluster.WithConcurrency) and per asynq server (Concurrency)")
	nodeCounts  = flag.String("nodes", "1,3,6", "the numbers of nodes (and asynq servers) measured")
	windowTasks = flag.Int("window-tasks", 10000, "tasks loaded into one node's window to measure its memory per task")
	withAsynq   = flag.Bool("asynq", true, "measure asynq's drain too")
	onlyRedis   = flag.String("redis", "both", "which Redis: single, cluster or both")
)

// prefix is the store's prefix, the module's default.
const prefix = "{scheduler}"

func main() {
	flag.Parse()
	log.SetFlags(0)
	counts, err := parseCounts(*nodeCounts)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("machine: %s, %d cores (nproc), %s, %s, load average %s\n", cpuModel(), runtime.NumCPU(), runtime.Version(), redisVersion(), loadAverage())
	fmt.Printf("settings: %d tasks per lifecycle pass due over %v, %d per drain, %d for the key spread, payload %d B, concurrency %d, idle %v, cluster.DefaultPartitions %d\n",
		*taskCount, *spread, *drainCount, *keyCount, *payloadSize, *concurrency, *idle, cluster.DefaultPartitions)

	var report report
	var starts []func() (*deployment, error)
	if *onlyRedis != "cluster" {
		starts = append(starts, startSingle)
	}
	if *onlyRedis != "single" {
		starts = append(starts, startCluster)
	}
	for _, start := range starts {
		d, err := start()
		if err != nil {
			log.Fatal(err)
		}
		if err := measure(d, counts, &report); err != nil {
			d.stop()
			log.Fatal(err)
		}
		d.stop()
	}
	report.print(counts)
	fmt.Printf("\nload average after the run: %s\n", loadAverage())
}

// measure runs every pass on d.
func measure(d *deployment, counts []int, rep *report) error {
	for _, n := range counts {
		r, err := lifecycle(d, n)
		if err != nil {
			return fmt.Errorf("%s, lifecycle of %d nodes: %w", d.name, n, err)
		}
		rep.lifecycles = append(rep.lifecycles, r)
		log.Printf("%s, %d nodes: lifecycle measured", d.name, n)
	}
	for _, n := range counts {
		r, err := drainModule(d, n)
		if err != nil {
			return fmt.Errorf("%s, drain of %d nodes: %w", d.name, n, err)
		}
		rep.drains = append(rep.drains, r)
		log.Printf("%s, %d nodes: drain %.0f tasks/s", d.name, n, r.rate)
		if !*withAsynq {
			continue
		}
		r, err = drainAsynq(d, n)
		if err != nil {
			return fmt.Errorf("%s, asynq drain of %d servers: %w", d.name, n, err)
		}
		rep.drains = append(rep.drains, r)
		log.Printf("%s, %d asynq servers: drain %.0f tasks/s", d.name, n, r.rate)
	}
	if !d.cluster && *windowTasks > 0 {
		b, held, err := windowMemory(d, *windowTasks)
		if err != nil {
			return fmt.Errorf("%s, window memory: %w", d.name, err)
		}
		rep.windowBytes, rep.windowHeld = b, held
	}
	if d.cluster {
		s, err := keySpread(d, *keyCount)
		if err != nil {
			return fmt.Errorf("%s, key spread: %w", d.name, err)
		}
		rep.spread = s
	}
	return nil
}

// parseCounts parses -nodes, a comma-separated list of positive numbers.
func parseCounts(s string) ([]int, error) {
	var counts []int
	for _, f := range strings.Split(s, ",") {
		var n int
		if _, err := fmt.Sscan(strings.TrimSpace(f), &n); err != nil || n < 1 {
			return nil, fmt.Errorf("-nodes %q: want a list of positive numbers", s)
		}
		counts = append(counts, n)
	}
	return counts, nil
}
