// Command clusterbench measures the start lateness of durable delayed tasks
// on Redis: the cluster module with 3 replicas, side by side with asynq
// (github.com/hibiken/asynq) with 3 servers, on one redis-server it starts
// itself, in the same run; and how fast each stores tasks.
//
// Run it from the benchmarks folder (redis-server must be on PATH):
//
//	go run ./clusterbench              # 1,000 tasks/s for 20 s per system
//	go run ./clusterbench -seconds 5   # a quicker pass
//	go run ./clusterbench -stores      # only the store pass: Schedule, ScheduleMany, asynq
//	go run ./clusterbench -lifecycle -seconds 10   # what each step of a task costs
//	go run ./clusterbench -only in-memory,cluster -burners 2 -breakdown -seconds 10 -runs 3 -store 0
//	                                   # beside two CPU burners: where the lateness goes
//
// Start lateness is the time from a task's due time to its handler's start,
// read on the one clock of this process. Every system gets the same task
// stream: one task every millisecond, each due a fixed delay after it is
// stored. Each system has the redis-server to itself while it is measured
// (the others are stopped and the database flushed).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-stpe/scheduler/benchmarks/internal/cputime"
)

func main() {
	seconds := flag.Int("seconds", 20, "how long each system gets 1,000 tasks/s")
	rate := flag.Int("rate", 1000, "tasks per second")
	delay := flag.Duration("delay", time.Second, "how far ahead of its due time each task is stored")
	storeN := flag.Int("store", 20000, "tasks stored for the schedule-throughput pass")
	runs := flag.Int("runs", 3, "passes per system, interleaved; the table shows the median pass (by p99)")
	only := flag.String("only", "", "run only the systems whose name contains this (or one of these, comma-separated)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	stores := flag.Bool("stores", false, "run only the store pass: Schedule, ScheduleMany and asynq's Enqueue, -store tasks each, -runs passes")
	batch := flag.Int("batch", 1000, "tasks per ScheduleMany call in the store pass")
	lifecycleBatch := flag.Int("lifecycle-batch", 0, "in the lifecycle pass, store with ScheduleMany, this many tasks per call (0: Schedule per task)")
	lifecycle := flag.Bool("lifecycle", false, "run only the lifecycle pass: what each step of a task costs, at -rate tasks/s for -seconds")
	nBurners := flag.Int("burners", 0, "run this many CPU burners (yes > /dev/null) beside the whole run")
	flag.BoolVar(&diag.breakdown, "breakdown", false, "after each lateness pass, print where the cluster's lateness goes (due, claim sent, answered, handler start), the scheduling delay of this process, redis-server and the burners, and Redis's LATENCY LATEST")
	flag.StringVar(&diag.trace, "trace", "", "write a Go execution trace of each lateness pass to this file, with .1, .2 ... appended in the order of the passes")
	memprofile := flag.String("memprofile", "", "write an allocation profile of the whole run to this file at its end (every allocation is recorded: slower)")
	flag.IntVar(&diag.concurrency, "concurrency", 0, "the cluster nodes' WithConcurrency (0: the default, 16)")
	flag.Parse()
	log.SetFlags(0)

	bs, err := startBurners(*nBurners)
	if err != nil {
		log.Fatal(err)
	}
	defer bs.stop()

	srv, err := launchRedis()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.stop()
	rdb := redis.NewClient(&redis.Options{Addr: srv.addr})
	defer rdb.Close()

	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	if *memprofile != "" {
		runtime.MemProfileRate = 1 // every allocation, so that counts per task are exact
		defer writeHeapProfile(*memprofile)
	}
	if *lifecycle {
		runLifecycle(rdb, srv.addr, *rate, *seconds, *lifecycleBatch)
		return
	}
	if *stores {
		runStores(rdb, srv.addr, *storeN, *batch, *runs, srv.version)
		return
	}
	w := workload{rate: *rate, seconds: *seconds, delay: *delay}
	var syss []system
	for _, s := range systems(srv.addr) {
		for _, o := range strings.Split(*only, ",") {
			if strings.Contains(s.name, o) {
				syss = append(syss, s)
				break
			}
		}
	}
	passes := make([][]row, len(syss))
	for pass := range max(*runs, 1) {
		for i, sys := range syss {
			if err := rdb.FlushAll(context.Background()).Err(); err != nil {
				log.Fatal(err)
			}
			log.Printf("pass %d, %s: lateness at %d tasks/s for %d s ...", pass+1, sys.name, w.rate, w.seconds)
			cpu0, rcpu0 := cputime.Process(), redisCPU(rdb)
			probe := startRTTProbe(srv.addr)
			watch := diag.start(rdb, srv, bs)
			lat, lag, err := sys.lateness(w)
			rtt := probe.end()
			diagnosis := watch.end(rdb)
			if err != nil {
				log.Fatalf("%s: %v", sys.name, err)
			}
			cpu, rcpu := cputime.Process()-cpu0, redisCPU(rdb)-rcpu0
			if err := rdb.FlushAll(context.Background()).Err(); err != nil {
				log.Fatal(err)
			}
			var tput float64
			if sys.store != nil {
				if tput, err = sys.store(*storeN); err != nil {
					log.Fatalf("%s: %v", sys.name, err)
				}
			}
			r := summarize(sys.name, lat, w.rate*w.seconds, tput)
			r.storeLag, r.cpu, r.redisCPU = lag, cpu, rcpu
			r.rtt50, r.rtt99 = quantiles(rtt)
			log.Printf("pass %d, %s: %s; 1-minute load average %s", pass+1, sys.name, r, loadAverage())
			if diagnosis != "" {
				log.Print(diagnosis)
			}
			passes[i] = append(passes[i], r)
		}
	}
	var rows []row
	for _, ps := range passes {
		sort.Slice(ps, func(i, j int) bool { return ps[i].p99 < ps[j].p99 })
		rows = append(rows, ps[len(ps)/2])
	}
	fmt.Print(table(rows, w, srv.version, *runs, loadAverage()))
}

// writeHeapProfile writes the allocation profile (every allocation since
// the start, sampled) to path.
func writeHeapProfile(path string) {
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		log.Fatal(err)
	}
}

// loadAverage reads the 1-minute load average, to show how busy the
// machine was (a shared box's neighbours change the numbers).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Fields(string(b))[0]
}

// workload is the task stream every system gets.
type workload struct {
	rate, seconds int
	delay         time.Duration
}

// system is one contender: lateness runs the task stream on 3 replicas and
// returns each task's start lateness; store stores n tasks due in an hour
// from 16 goroutines and returns tasks per second.
type system struct {
	name     string
	lateness func(workload) (late []time.Duration, storeLag time.Duration, err error)
	store    func(n int) (float64, error)
}

func systems(addr string) []system {
	return []system{
		{"in-memory scheduler only (no Redis)", inMemoryLateness, nil},
		{"cluster (3 replicas)", func(w workload) ([]time.Duration, time.Duration, error) { return clusterLateness(addr, w) },
			func(n int) (float64, error) { return clusterStore(addr, n) }},
		{"asynq, default intervals (3 servers)", func(w workload) ([]time.Duration, time.Duration, error) { return asynqLateness(addr, w, 0, 0) },
			func(n int) (float64, error) { return asynqStore(addr, n) }},
		{"asynq, 100 ms intervals (3 servers)", func(w workload) ([]time.Duration, time.Duration, error) {
			return asynqLateness(addr, w, 100*time.Millisecond, 100*time.Millisecond)
		}, nil},
	}
}

// producers is how many goroutines share the task stream, so that one slow
// store does not hold back the ones after it.
const producers = 16

// produce calls schedule(due) once per 1/rate for w.seconds, each due
// w.delay after its slot, and returns the largest time a call ended after
// its slot (if it nears w.delay, tasks were stored late and the lateness
// measures the producer, not the system).
func produce(w workload, schedule func(due time.Time) error) (maxLag time.Duration, err error) {
	interval := time.Second / time.Duration(w.rate)
	start := time.Now().Add(10 * time.Millisecond)
	n := w.rate * w.seconds
	var wg sync.WaitGroup
	var mu sync.Mutex // guards maxLag and err
	for g := range producers {
		wg.Go(func() {
			for i := g; i < n; i += producers {
				at := start.Add(time.Duration(i) * interval)
				if d := time.Until(at); d > 0 {
					time.Sleep(d)
				}
				e := schedule(at.Add(w.delay))
				lag := time.Since(at)
				mu.Lock()
				maxLag = max(maxLag, lag)
				if e != nil && err == nil {
					err = e
				}
				mu.Unlock()
				if e != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	return maxLag, err
}

// recorder collects lateness samples from many handlers.
type recorder struct {
	mu   sync.Mutex // guards late
	late []time.Duration
	all  chan struct{} // closed when want samples are in
	want int
}

func newRecorder(want int) *recorder {
	return &recorder{want: want, all: make(chan struct{}), late: make([]time.Duration, 0, want)}
}

func (r *recorder) add(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.late = append(r.late, d)
	if len(r.late) == r.want {
		close(r.all)
	}
}

// wait waits for every sample or gives up after timeout.
func (r *recorder) wait(timeout time.Duration) ([]time.Duration, error) {
	select {
	case <-r.all:
	case <-time.After(timeout):
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.late) < r.want {
		return nil, fmt.Errorf("only %d of %d tasks ran within %v", len(r.late), r.want, timeout)
	}
	return append([]time.Duration(nil), r.late...), nil
}

// row is one line of the result table.
type row struct {
	name               string
	n                  int
	p50, p99, p999, mx time.Duration
	storePerSec        float64
	storeLag           time.Duration // slowest store after its slot
	rtt50, rtt99       time.Duration // Redis PING round trip during the pass
	cpu, redisCPU      time.Duration // CPU of this process and of redis-server during the lateness pass
}

// quantiles returns the p50 and p99 of ds (sorting it).
func quantiles(ds []time.Duration) (p50, p99 time.Duration) {
	if len(ds) == 0 {
		return 0, 0
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2], ds[min(len(ds)-1, len(ds)*99/100)]
}

func summarize(name string, late []time.Duration, n int, tput float64) row {
	sort.Slice(late, func(i, j int) bool { return late[i] < late[j] })
	q := func(p float64) time.Duration { return late[min(len(late)-1, int(p*float64(len(late))))] }
	return row{name: name, n: n, p50: q(0.50), p99: q(0.99), p999: q(0.999), mx: late[len(late)-1], storePerSec: tput}
}

func (r row) String() string {
	return fmt.Sprintf("p50 %v p99 %v p99.9 %v max %v, slowest store %v, Redis RTT p50 %v p99 %v, CPU %v (redis %v), store %.0f tasks/s",
		r.p50, r.p99, r.p999, r.mx, r.storeLag, r.rtt50, r.rtt99, r.cpu, r.redisCPU, r.storePerSec)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func table(rows []row, w workload, redisVersion string, runs int, load string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nStart lateness of durable delayed tasks: %d tasks/s for %d s (%d tasks), each stored %v before its due time by 16 producer goroutines; 3 replicas in one process on one redis-server %s (no AOF); median of %d interleaved passes by p99; %s, %d CPUs, %s; 1-minute load average at the end %s.\n\n",
		w.rate, w.seconds, w.rate*w.seconds, w.delay, redisVersion, runs, runtime.Version(), runtime.NumCPU(), runtime.GOOS+"/"+runtime.GOARCH, load)
	b.WriteString("| System | p50 | p99 | p99.9 | max | slowest store | Redis RTT p50 / p99 | client CPU / 1k tasks | redis CPU / 1k tasks | store (tasks/s, 16 goroutines) |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		st := "—"
		if r.storePerSec > 0 {
			st = fmt.Sprintf("%.0f", r.storePerSec)
		}
		per := func(d time.Duration) string { return ms(d / time.Duration(r.n/1000)) }
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s / %s | %s | %s | %s |\n", r.name, ms(r.p50), ms(r.p99), ms(r.p999), ms(r.mx), ms(r.storeLag), ms(r.rtt50), ms(r.rtt99), per(r.cpu), per(r.redisCPU), st)
	}
	return b.String()
}

// storeConcurrently runs n calls of f from 16 goroutines and returns calls
// per second.
func storeConcurrently(n int, f func(i int) error) (float64, error) {
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	start := time.Now()
	for g := range 16 {
		wg.Go(func() {
			for i := g; i < n; i += 16 {
				if err := f(i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	el := time.Since(start)
	close(errs)
	for err := range errs {
		return 0, err
	}
	return float64(n) / el.Seconds(), nil
}
