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
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/redis/go-redis/v9"
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

// quiet drops the nodes' logs.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// fleet is n started nodes, each with its own client, as n replicas of a
// service would be, all running kind "k"; trips counts the round trips of
// all their clients, scripts their script calls by script name.
type fleet struct {
	nodes   []*cluster.Node
	clients []redis.UniversalClient
	trips   *tripCounter
	scripts *tripCounter
}

func startFleet(d *deployment, n int, tally *runTally) (*fleet, error) {
	f := &fleet{trips: newTripCounter(), scripts: newTripCounter()}
	observer := cluster.Observer{
		Ended: func(_ context.Context, e cluster.RunEnd) {
			tally.ran(e.Task.ID, e.Outcome == cluster.OutcomeSucceeded, string(e.Outcome))
		},
		RedisCall: func(c cluster.RedisCall) { f.scripts.add(c.Script) },
	}
	for range n {
		c := counted(d, f.trips)
		f.clients = append(f.clients, c)
		node, err := cluster.New(c, cluster.WithLogger(quiet), cluster.WithConcurrency(*concurrency), cluster.WithObserver(observer))
		if err != nil {
			f.stop()
			return nil, err
		}
		if err := node.Handle("k", func(context.Context, cluster.Task) error { return nil }); err != nil {
			f.stop()
			return nil, err
		}
		if err := node.Start(context.Background()); err != nil {
			f.stop()
			return nil, err
		}
		f.nodes = append(f.nodes, node)
	}
	return f, nil
}

func (f *fleet) stop() {
	for _, n := range f.nodes {
		_ = n.Stop(context.Background())
	}
	for _, c := range f.clients {
		_ = c.Close()
	}
}

// producer returns a node that is not started, on a client of its own
// whose calls are not counted: it stores the tasks of a drain pass or of
// the key spread.
func producer(d *deployment) (*cluster.Node, func(), error) {
	c := d.client()
	node, err := cluster.New(c, cluster.WithLogger(quiet))
	if err != nil {
		_ = c.Close()
		return nil, nil, err
	}
	return node, func() { node.StopNow(); _ = c.Close() }, nil
}

// payload is a task's payload: its number, padded to -payload bytes.
func payload(i int) []byte {
	p := []byte(fmt.Sprintf("%d", i))
	for len(p) < *payloadSize {
		p = append(p, '.')
	}
	return p
}

// storeAll calls store(i) for i in [0, count), sixteen at a time, and
// returns the first error.
func storeAll(count int, store func(i int) error) error {
	var wg sync.WaitGroup
	var next atomic.Int64
	var first atomic.Value
	for range 16 {
		wg.Go(func() {
			for first.Load() == nil {
				i := int(next.Add(1)) - 1
				if i >= count {
					return
				}
				if err := store(i); err != nil {
					first.CompareAndSwap(nil, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, ok := first.Load().(error); ok {
		return err
	}
	return nil
}

// lifecycleResult is one lifecycle pass.
type lifecycleResult struct {
	redis      string
	nodes      int
	d          delta
	t          trips
	scripts    trips   // script calls by script name (Observer.RedisCall)
	subs       float64 // mean subscribers per channel
	channels   int
	share      float64 // of the near-due tasks, the fullest node's window: mean over samples
	peakShare  float64 // and the highest sample
	idle       delta   // the fleet's background work over idleTime, before the tasks
	idleTrips  trips
	idleTime   time.Duration
	duplicates int64
}

// lifecycle starts n nodes, measures their background work while idle,
// then stores -tasks tasks due evenly over -spread starting 2 s later,
// through the nodes in turn, and measures what Redis did from before the
// first Schedule to the last task's completion.
func lifecycle(d *deployment, n int) (lifecycleResult, error) {
	ctx := context.Background()
	count := *taskCount
	r := lifecycleResult{redis: d.name, nodes: n}
	admin := d.admin()
	defer closeAll(admin)
	if err := flush(ctx, admin); err != nil {
		return r, err
	}
	tally := newRunTally(count)
	f, err := startFleet(d, n, tally)
	if err != nil {
		return r, err
	}
	defer f.stop()
	ms, err := masters(ctx, admin)
	if err != nil {
		return r, err
	}

	// The nodes' background work (heartbeats, sweeps, renewals) with no
	// task: what a node costs whatever the load.
	idleStart, err := take(ctx, ms)
	if err != nil {
		return r, err
	}
	idleTrips := f.trips.snapshot()
	began := time.Now()
	time.Sleep(*idle)
	idleEnd, err := take(ctx, ms)
	if err != nil {
		return r, err
	}
	r.idleTime = time.Since(began)
	r.idle = diff(idleStart, idleEnd)
	r.idleTrips = tripsBetween(idleTrips, f.trips.snapshot())

	subs, err := channelSubscribers(ctx, admin)
	if err != nil {
		return r, err
	}
	r.subs, r.channels = meanSubscribers(subs), len(subs)

	before, err := take(ctx, ms)
	if err != nil {
		return r, err
	}
	tripsBefore, scriptsBefore := f.trips.snapshot(), f.scripts.snapshot()

	var stored atomic.Int64
	stopSampling := make(chan struct{})
	var sampled sync.WaitGroup
	var shareSum, samples float64
	sampled.Go(func() {
		for {
			select {
			case <-stopSampling:
				return
			case <-time.After(50 * time.Millisecond):
			}
			inStore := stored.Load() - tally.ended.Load()
			if inStore < int64(max(100, count/20)) {
				continue
			}
			fullest := 0.0
			for _, node := range f.nodes {
				fullest = max(fullest, float64(node.Stats().Windowed)/float64(inStore))
			}
			fullest = min(fullest, 1)
			shareSum += fullest
			samples++
			r.peakShare = max(r.peakShare, fullest)
		}
	})
	first := time.Now().Add(2 * time.Second)
	step := *spread / time.Duration(count)
	err = storeAll(count, func(i int) error {
		_, err := f.nodes[i%n].Schedule(ctx, "k", payload(i), first.Add(time.Duration(i)*step))
		if err == nil {
			stored.Add(1)
		}
		return err
	})
	if err == nil {
		err = tally.wait(*spread + 2*time.Minute)
	}
	close(stopSampling)
	sampled.Wait()
	if err != nil {
		return r, err
	}
	after, err := take(ctx, ms)
	if err != nil {
		return r, err
	}
	r.d = diff(before, after)
	r.t = tripsBetween(tripsBefore, f.trips.snapshot())
	r.scripts = tripsBetween(scriptsBefore, f.scripts.snapshot())
	if samples > 0 {
		r.share = shareSum / samples
	}
	r.duplicates = tally.duplicates()
	return r, nil
}

// drainResult is one drain pass.
type drainResult struct {
	redis      string
	system     string
	nodes      int
	rate       float64 // tasks per second, from the first node's start to the last run
	d          delta   // from the first start to the fleet's stop
	t          trips
	duplicates int64
}

// drainModule stores -drain tasks due a second ago, then starts n nodes
// and measures until every task ran.
func drainModule(d *deployment, n int) (drainResult, error) {
	ctx := context.Background()
	count := *drainCount
	r := drainResult{redis: d.name, system: "cluster module", nodes: n}
	admin := d.admin()
	defer closeAll(admin)
	if err := flush(ctx, admin); err != nil {
		return r, err
	}
	p, stopProducer, err := producer(d)
	if err != nil {
		return r, err
	}
	defer stopProducer()
	past := time.Now().Add(-time.Second)
	if err := storeAll(count, func(i int) error {
		_, err := p.Schedule(ctx, "k", payload(i), past)
		return err
	}); err != nil {
		return r, err
	}
	ms, err := masters(ctx, admin)
	if err != nil {
		return r, err
	}
	before, err := take(ctx, ms)
	if err != nil {
		return r, err
	}
	tally := newRunTally(count)
	start := time.Now()
	f, err := startFleet(d, n, tally)
	if err != nil {
		return r, err
	}
	err = tally.wait(5 * time.Minute)
	r.rate = float64(count) / time.Since(start).Seconds()
	f.stop()
	if err != nil {
		return r, err
	}
	after, err := take(ctx, ms)
	if err != nil {
		return r, err
	}
	r.d = diff(before, after)
	r.t = tripsBetween(nil, f.trips.snapshot())
	r.duplicates = tally.duplicates()
	return r, nil
}

// spreadResult is how the keys of the stored tasks spread over the masters.
type spreadResult struct {
	tasks   int
	masters []masterKeys
	memory  int64 // bytes of used_memory the tasks added, over the masters
}

type masterKeys struct {
	slots  string
	keys   int64
	memory string
}

// deviation is the largest distance of a master's key count from the
// mean, as a fraction of the mean.
func (s spreadResult) deviation() float64 {
	var total int64
	for _, m := range s.masters {
		total += m.keys
	}
	mean := float64(total) / float64(len(s.masters))
	worst := 0.0
	for _, m := range s.masters {
		worst = max(worst, abs(float64(m.keys)-mean)/mean)
	}
	return worst
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// keySpread stores count tasks due in an hour on the Redis Cluster and
// reads how many keys and how much memory each master holds.
func keySpread(d *deployment, count int) (spreadResult, error) {
	ctx := context.Background()
	s := spreadResult{tasks: count}
	admin := d.admin()
	defer closeAll(admin)
	if err := flush(ctx, admin); err != nil {
		return s, err
	}
	p, stopProducer, err := producer(d)
	if err != nil {
		return s, err
	}
	defer stopProducer()
	empty, err := usedMemory(ctx, admin)
	if err != nil {
		return s, err
	}
	due := time.Now().Add(time.Hour)
	if err := storeAll(count, func(i int) error {
		_, err := p.Schedule(ctx, "k", payload(i), due)
		return err
	}); err != nil {
		return s, err
	}
	ms, err := masters(ctx, admin)
	if err != nil {
		return s, err
	}
	for _, m := range ms {
		keys, err := m.DBSize(ctx).Result()
		if err != nil {
			return s, err
		}
		mem, err := m.Info(ctx, "memory").Result()
		if err != nil {
			return s, err
		}
		s.masters = append(s.masters, masterKeys{slots: ownSlots(ctx, m), keys: keys, memory: infoField(mem, "used_memory_human")})
	}
	sort.Slice(s.masters, func(i, j int) bool { return s.masters[i].slots < s.masters[j].slots })
	full, err := usedMemory(ctx, admin)
	s.memory = full - empty
	return s, err
}

// usedMemory is INFO memory's used_memory summed over the masters.
func usedMemory(ctx context.Context, admin []*redis.Client) (int64, error) {
	ms, err := masters(ctx, admin)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, m := range ms {
		info, err := m.Info(ctx, "memory").Result()
		if err != nil {
			return 0, err
		}
		var k int64
		if _, err := fmt.Sscan(infoField(info, "used_memory"), &k); err != nil {
			return 0, fmt.Errorf("INFO memory of %s: used_memory: %w", m.Options().Addr, err)
		}
		total += k
	}
	return total, nil
}

// ownSlots returns the slot ranges m serves as master.
func ownSlots(ctx context.Context, m *redis.Client) string {
	slots, err := m.ClusterSlots(ctx).Result()
	if err != nil {
		return "?"
	}
	var own []string
	for _, r := range slots {
		if len(r.Nodes) > 0 && r.Nodes[0].Addr == m.Options().Addr {
			own = append(own, fmt.Sprintf("%05d-%05d", r.Start, r.End))
		}
	}
	sort.Strings(own)
	return strings.Join(own, ", ")
}

func infoField(info, field string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

func closeAll(cs []*redis.Client) {
	for _, c := range cs {
		_ = c.Close()
	}
}

// cpuModel is the processor's model name, from /proc/cpuinfo.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	if v := infoField(strings.ReplaceAll(string(b), "\t", ""), "model name"); v != "?" {
		return v
	}
	return runtime.GOARCH
}

// loadAverage is the 1-, 5- and 15-minute load averages, from /proc/loadavg.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// redisVersion is what redis-server --version prints.
func redisVersion() string {
	out, err := exec.Command("redis-server", "--version").Output()
	if err != nil {
		return "redis-server not found"
	}
	return strings.TrimSpace(string(out))
}
