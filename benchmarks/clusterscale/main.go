// Command clusterscale measures what the cluster module costs Redis per
// task as nodes are added, the baseline the partitioning of the store
// starts from. For 1, 3 and 6 nodes, on one redis-server and on a Redis
// Cluster of three masters with one replica each (both started by this
// command on free local ports), it runs 6,000 tasks due over 6 s and
// reports per task: the Redis commands of its whole lifecycle (those
// inside scripts included, from INFO commandstats), the EVALSHA round
// trips, the bytes Redis sent (INFO stats total_net_output_bytes), the
// pub/sub messages published and delivered; and the share of the near-due
// tasks each node holds in its window. A drain pass gives the tasks per
// second. Last, it stores 100,000 tasks on the Redis Cluster and shows how
// their keys spread over the masters.
//
// Run it from the benchmarks folder (redis-server and redis-cli on PATH):
//
//	go run ./clusterscale
//	go run ./clusterscale -tasks 2000 -spread 2s -keys 10000   # a quicker pass
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
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/redis/go-redis/v9"
)

// prefix is the store's prefix, the module's default.
const prefix = "{scheduler}"

func main() {
	tasks := flag.Int("tasks", 6000, "tasks per pass")
	spread := flag.Duration("spread", 6*time.Second, "the tasks fall due evenly over this time")
	drain := flag.Int("drain", 6000, "tasks of the drain pass (tasks per second)")
	keys := flag.Int("keys", 100000, "tasks stored on the Redis Cluster to show how keys spread over the masters")
	flag.Parse()
	log.SetFlags(0)

	fmt.Printf("machine: %s, %d cores (nproc), %s, %s\n\n", cpuModel(), runtime.NumCPU(), runtime.Version(), redisVersion())
	fmt.Printf("| Redis | nodes | commands / task | EVALSHA / task | bytes sent / task | published / task | delivered / task | near-due tasks in each node's window | drain tasks/s | drain EVALSHA / task |\n")
	fmt.Printf("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, start := range []func() (*deployment, error){startSingle, startCluster} {
		d, err := start()
		if err != nil {
			log.Fatal(err)
		}
		for _, nodes := range []int{1, 3, 6} {
			r, err := lifecycle(d, nodes, *tasks, *spread)
			if err != nil {
				d.stop()
				log.Fatal(err)
			}
			rate, drainEval, err := drainRate(d, nodes, *drain)
			if err != nil {
				d.stop()
				log.Fatal(err)
			}
			per := func(k int64) string { return fmt.Sprintf("%.1f", float64(k)/float64(*tasks)) }
			fmt.Printf("| %s | %d | %s | %s | %s | %s | %s | %.0f%% (min %.0f%%) | %.0f | %.1f |\n", d.name, nodes,
				per(r.d.commands), per(r.d.evalsha), per(r.d.outBytes), per(r.d.publishes), per(r.d.publishes*r.subscribers),
				100*r.share, 100*r.minShare, rate, drainEval)
			log.Printf("%s, %d nodes, commands: %v", d.name, nodes, r.d.byCommand)
		}
		if d.cluster {
			if err := keySpread(d, *keys); err != nil {
				d.stop()
				log.Fatal(err)
			}
		}
		d.stop()
	}
}

// quiet drops the nodes' logs.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// fleet is n started nodes, each with its own client, as n replicas of a
// service would be, all running kind "k".
type fleet struct {
	nodes   []*cluster.Node
	clients []redis.UniversalClient
	done    atomic.Int64
}

func startFleet(d *deployment, n int, opts ...cluster.Option) (*fleet, error) {
	f := &fleet{}
	for range n {
		c := d.client()
		f.clients = append(f.clients, c)
		node, err := cluster.New(c, append([]cluster.Option{cluster.WithLogger(quiet)}, opts...)...)
		if err != nil {
			f.stop()
			return nil, err
		}
		if err := node.Handle("k", func(context.Context, cluster.Task) error { f.done.Add(1); return nil }); err != nil {
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

// waitDone waits until want tasks ran and the store is empty.
func (f *fleet) waitDone(want int64, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for f.done.Load() < want || !f.empty() {
		if time.Now().After(deadline) {
			return fmt.Errorf("after %v, %d of %d tasks ran", timeout, f.done.Load(), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

func (f *fleet) empty() bool {
	c, err := f.nodes[0].Counts(context.Background())
	return err == nil && c.Pending == 0 && c.Running == 0
}

// scheduleAll stores count tasks through the nodes in turn, eight at a
// time, the i-th due at due(i).
func scheduleAll(nodes []*cluster.Node, count int, due func(i int) time.Time) error {
	var wg sync.WaitGroup
	var next atomic.Int64
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= count {
					return
				}
				if _, err := nodes[i%len(nodes)].Schedule(context.Background(), "k", nil, due(i)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// result is one lifecycle pass.
type result struct {
	d               delta
	subscribers     int64
	share, minShare float64 // of the near-due tasks, each node's window holds (mean over nodes and samples; the lowest sample)
}

// lifecycle runs count tasks due over spread on n nodes and measures what
// Redis did, from before the first Schedule to the store's emptying.
func lifecycle(d *deployment, n, count int, spread time.Duration) (result, error) {
	ctx := context.Background()
	admin := d.admin()
	defer closeAll(admin)
	if err := flush(ctx, admin); err != nil {
		return result{}, err
	}
	f, err := startFleet(d, n)
	if err != nil {
		return result{}, err
	}
	defer f.stop()
	ms, err := masters(ctx, admin)
	if err != nil {
		return result{}, err
	}
	subs, err := subscribers(ctx, admin, prefix+":events")
	if err != nil {
		return result{}, err
	}
	before, err := take(ctx, ms)
	if err != nil {
		return result{}, err
	}

	stopSampling := make(chan struct{})
	var sampled sync.WaitGroup
	var shareSum, samples float64
	minShare := 1.0
	sampled.Go(func() {
		for {
			select {
			case <-stopSampling:
				return
			case <-time.After(50 * time.Millisecond):
			}
			c, err := f.nodes[0].Counts(ctx)
			if err != nil || c.Pending < 100 {
				continue
			}
			for _, node := range f.nodes {
				s := float64(node.Stats().Windowed) / float64(c.Pending)
				shareSum += min(s, 1)
				samples++
				minShare = min(minShare, s)
			}
		}
	})
	first := time.Now().Add(2 * time.Second)
	step := spread / time.Duration(count)
	err = scheduleAll(f.nodes, count, func(i int) time.Time { return first.Add(time.Duration(i) * step) })
	if err == nil {
		err = f.waitDone(int64(count), spread+time.Minute)
	}
	close(stopSampling)
	sampled.Wait()
	if err != nil {
		return result{}, err
	}
	after, err := take(ctx, ms)
	if err != nil {
		return result{}, err
	}
	r := result{d: diff(before, after), subscribers: subs, minShare: minShare}
	if samples > 0 {
		r.share = shareSum / samples
	}
	return r, nil
}

// drainRate stores count overdue tasks, then starts n nodes and returns
// how many tasks per second they ran, from the first start to the last
// completion, and the script round trips (EVALSHA) per task meanwhile.
func drainRate(d *deployment, n, count int) (rate, evalsha float64, err error) {
	ctx := context.Background()
	admin := d.admin()
	defer closeAll(admin)
	if err := flush(ctx, admin); err != nil {
		return 0, 0, err
	}
	c := d.client()
	defer c.Close()
	producer, err := cluster.New(c, cluster.WithLogger(quiet))
	if err != nil {
		return 0, 0, err
	}
	defer producer.StopNow()
	past := time.Now().Add(-time.Second)
	if err := scheduleAll([]*cluster.Node{producer}, count, func(int) time.Time { return past }); err != nil {
		return 0, 0, err
	}
	ms, err := masters(ctx, admin)
	if err != nil {
		return 0, 0, err
	}
	before, err := take(ctx, ms)
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	f, err := startFleet(d, n)
	if err != nil {
		return 0, 0, err
	}
	defer f.stop()
	if err := f.waitDone(int64(count), 5*time.Minute); err != nil {
		return 0, 0, err
	}
	rate = float64(count) / time.Since(start).Seconds()
	after, err := take(ctx, ms)
	if err != nil {
		return 0, 0, err
	}
	return rate, float64(diff(before, after).evalsha) / float64(count), nil
}

// keySpread stores count tasks due in an hour on the Redis Cluster and
// prints how many keys and how much memory each master holds.
func keySpread(d *deployment, count int) error {
	ctx := context.Background()
	admin := d.admin()
	defer closeAll(admin)
	if err := flush(ctx, admin); err != nil {
		return err
	}
	c := d.client()
	defer c.Close()
	producer, err := cluster.New(c, cluster.WithLogger(quiet))
	if err != nil {
		return err
	}
	defer producer.StopNow()
	due := time.Now().Add(time.Hour)
	if err := scheduleAll([]*cluster.Node{producer}, count, func(int) time.Time { return due }); err != nil {
		return err
	}
	ms, err := masters(ctx, admin)
	if err != nil {
		return err
	}
	slot, err := ms[0].ClusterKeySlot(ctx, prefix).Result()
	if err != nil {
		return err
	}
	fmt.Printf("\n%d tasks stored on the Redis Cluster (prefix %s, slot %d):\n\n", count, prefix, slot)
	fmt.Printf("| master | slots | keys | used memory |\n|---|---|---|---|\n")
	for _, m := range ms {
		keys, err := m.DBSize(ctx).Result()
		if err != nil {
			return err
		}
		mem, err := m.Info(ctx, "memory").Result()
		if err != nil {
			return err
		}
		fmt.Printf("| %s | %s | %d | %s |\n", m.Options().Addr, ownSlots(ctx, m), keys, infoField(mem, "used_memory_human"))
	}
	return nil
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
			own = append(own, fmt.Sprintf("%d-%d", r.Start, r.End))
		}
	}
	return strings.Join(own, ", ")
}

func infoField(info, field string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
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
		return strings.TrimSpace(v)
	}
	return runtime.GOARCH
}

// redisVersion is what redis-server --version prints.
func redisVersion() string {
	out, err := exec.Command("redis-server", "--version").Output()
	if err != nil {
		return "redis-server not found"
	}
	return strings.TrimSpace(string(out))
}
