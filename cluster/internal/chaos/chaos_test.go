package chaos

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
)

var durationFlag = flag.Duration("chaos.duration", 0, "how long the faults go on (default 60s, or CLUSTER_CHAOS_DURATION)")

// chaosDuration is how long faults are injected.
func chaosDuration(t *testing.T) time.Duration {
	if *durationFlag > 0 {
		return *durationFlag
	}
	if v := os.Getenv("CLUSTER_CHAOS_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("CLUSTER_CHAOS_DURATION: %v", err)
		}
		return d
	}
	return 60 * time.Second
}

// chaosSeed seeds the choice of faults: CLUSTER_CHAOS_SEED, or the time.
func chaosSeed(t *testing.T) uint64 {
	if v := os.Getenv("CLUSTER_CHAOS_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("CLUSTER_CHAOS_SEED: %v", err)
		}
		return s
	}
	return uint64(time.Now().UnixNano())
}

const (
	lease = 3 * time.Second
	tick  = 500 * time.Millisecond
)

// skews are the replicas' clock errors, one replica each.
var skews = []time.Duration{0, 2 * time.Second, -2 * time.Second, 1500 * time.Millisecond}

// slot is one replica position: its spec, its proxy to Redis, and its
// current process.
type slot struct {
	spec    replicaSpec
	proxies []*proxy // one to each Redis server
	proc    *process
	n       int // incarnations started
}

// setCut cuts the slot's replica off from every Redis server (true), or
// lets it through again (false).
func (s *slot) setCut(cut bool) {
	for _, p := range s.proxies {
		p.setCut(cut)
	}
}

// TestChaos runs the chaos on one redis-server, whose fault is a restart.
func TestChaos(t *testing.T) {
	runChaos(t, singleRedis{redistest.Start(t, redistest.Options{AOF: true})})
}

// TestChaosOnRedisCluster runs the chaos on a Redis Cluster of three
// masters with a replica each, whose fault is the failover of a master.
func TestChaosOnRedisCluster(t *testing.T) {
	runChaos(t, clusterRedis{redistest.StartCluster(t, redistest.ClusterOptions{})})
}

// runChaos runs the chaos on rd and checks the ledger.
func runChaos(t *testing.T, rd chaosRedis) {
	dur := chaosDuration(t)
	seed := chaosSeed(t)
	rng := rand.New(rand.NewPCG(seed, seed>>1|1))
	t.Logf("chaos for %v, seed %d (CLUSTER_CHAOS_SEED=%d replays the faults)", dur, seed, seed)

	bin := buildReplica(t)
	t.Logf("on %s", rd.describe())
	ledgerDir := t.TempDir()
	h := &history{
		acked: map[string]time.Time{}, cancels: map[string]cancelRecord{}, ready: map[string]time.Time{},
		tick: tick, lease: lease, upBefore: 5*time.Second + 2*time.Second + time.Second,
	}

	var slots []*slot
	for i, skew := range skews {
		s := &slot{}
		var reach []string
		s.proxies, reach = rd.proxies(t)
		s.spec = replicaSpec{bin: bin, name: "r" + strconv.Itoa(i), redis: reach, ledgerDir: ledgerDir,
			skew: skew, lease: lease, tick: tick}
		p, err := s.spec.start(0)
		if err != nil {
			t.Fatal(err)
		}
		s.proc, s.n = p, 1
		h.ready[s.spec.name] = time.Now()
		slots = append(slots, s)
	}
	t.Cleanup(func() {
		for _, s := range slots {
			if s.proc != nil {
				s.proc.signal(syscall.SIGCONT)
				s.proc.kill()
				if t.Failed() {
					t.Logf("replica %s stderr:\n%s", s.spec.name, s.proc.stderr)
				}
			}
		}
	})

	rdb, opts := rd.client()
	defer rdb.Close()
	producer, err := cluster.New(rdb, append(opts, cluster.WithPrefix(prefix))...)
	if err != nil {
		t.Fatal(err)
	}
	defer producer.StopNow()
	if err := producer.Handle("work", func(context.Context, cluster.Task) error { return nil }); err != nil {
		t.Fatal(err)
	}

	chaosStart := time.Now()
	h.tickFrom = chaosStart
	ctx, stopProducing := context.WithCancel(context.Background())
	var mu sync.Mutex // guards h.acked and h.cancels while the producer runs
	var produced sync.WaitGroup
	produced.Go(func() { produce(ctx, producer, seed, &mu, h) })

	for time.Since(chaosStart) < dur {
		f, err := inject(rng, slots, rd)
		if err != nil {
			stopProducing()
			produced.Wait()
			t.Fatal(err)
		}
		h.faults = append(h.faults, f)
		t.Logf("%s %s for %v", f.kind, f.replica, f.end.Sub(f.start).Round(time.Millisecond))
		pause(ctx, time.Duration(1000+rng.IntN(2000))*time.Millisecond)
	}
	stopProducing()
	produced.Wait()
	h.tickUntil = time.Now()

	// Every acknowledged task that no Cancel removed must run to its end;
	// the replicas get generous time for the backlog the faults left.
	waitForDrain(t, ledgerDir, h, 3*time.Minute)
	for _, s := range slots {
		if err := s.proc.stop(); err != nil {
			t.Errorf("replica %s: %v", s.spec.name, err)
		}
		s.proc = nil
	}
	c, err := producer.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c.Dead != 0 {
		t.Errorf("%d tasks dead: no handler ever fails, so only faults could have killed them", c.Dead)
	}

	led, err := readLedger(ledgerDir)
	if err != nil {
		t.Fatal(err)
	}
	h.runs = led.runs
	h.faults = append(h.faults, led.stalls...)
	v := h.check()
	report(t, h, v)
	for _, p := range v.problems {
		t.Error(p)
	}
}

// produce schedules a task every 10 ms, due within the next 3 s, and
// cancels about one in ten of them a little later, until ctx ends.
func produce(ctx context.Context, producer *cluster.Node, seed uint64, mu *sync.Mutex, h *history) {
	rng := rand.New(rand.NewPCG(seed+1, seed))
	type pendingCancel struct {
		id string
		at time.Time
	}
	var cancels []pendingCancel
	for i := 0; ctx.Err() == nil; i++ {
		id := "t" + strconv.Itoa(i)
		due := time.Now().Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := producer.Schedule(sctx, "work", []byte(id), due, cluster.WithID(id))
		cancel()
		if err == nil {
			mu.Lock()
			h.acked[id] = due.Truncate(time.Microsecond)
			mu.Unlock()
			if rng.IntN(10) == 0 {
				cancels = append(cancels, pendingCancel{id, time.Now().Add(time.Duration(rng.IntN(3500)) * time.Millisecond)})
			}
		}
		for len(cancels) > 0 && !cancels[0].at.After(time.Now()) {
			pc := cancels[0]
			cancels = cancels[1:]
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			res, err := producer.Cancel(cctx, pc.id)
			cancel()
			mu.Lock()
			h.cancels[pc.id] = cancelRecord{returned: time.Now(), res: res, err: err}
			mu.Unlock()
		}
		pause(ctx, 10*time.Millisecond)
	}
}

// inject makes one fault, chosen at random, waits until it is over and
// returns it.
func inject(rng *rand.Rand, slots []*slot, rd chaosRedis) (fault, error) {
	s := slots[rng.IntN(len(slots))]
	f := fault{replica: s.spec.name, start: time.Now()}
	switch rng.IntN(4) {
	case 0:
		f.kind = "kill"
		s.proc.kill()
		time.Sleep(time.Duration(rng.IntN(1000)) * time.Millisecond)
		p, err := s.spec.start(s.n)
		if err != nil {
			return f, err
		}
		s.proc = p
		s.n++
	case 1:
		f.kind = "pause"
		s.proc.signal(syscall.SIGSTOP)
		time.Sleep(lease + time.Duration(rng.IntN(1500))*time.Millisecond)
		s.proc.signal(syscall.SIGCONT)
	case 2:
		f.kind = "partition"
		s.setCut(true)
		time.Sleep(lease + time.Duration(rng.IntN(1500))*time.Millisecond)
		s.setCut(false)
	case 3:
		f.replica = ""
		kind, err := rd.fault(rng)
		f.kind = kind
		if err != nil {
			return f, err
		}
	}
	f.end = time.Now()
	return f, nil
}

// waitForDrain waits until every acknowledged task not removed by a Cancel
// has run to its end.
func waitForDrain(t *testing.T, ledgerDir string, h *history, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		led, err := readLedger(ledgerDir)
		if err != nil {
			t.Fatal(err)
		}
		runs := led.runs
		left := 0
		for id := range h.acked {
			if c, ok := h.cancels[id]; ok && (c.err != nil || c.res.Removed) {
				continue
			}
			if !slices.ContainsFunc(runs[id], func(r *run) bool { return r.ended }) {
				left++
			}
		}
		if left == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("after %v, %d acknowledged tasks have not run to their end", timeout, left)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// report logs the figures of the run.
func report(t *testing.T, h *history, v *verdict) {
	kinds := map[string]int{}
	for _, f := range h.faults {
		kinds[f.kind]++
	}
	pct := func(p float64) time.Duration { return percentile(v.lateness, p) }
	t.Logf("faults: %v", kinds)
	t.Logf("tasks acknowledged %d (canceled %d), runs %d (repeats explained by a fault %d); periodic occurrences %d (required %d, runs %d)",
		v.tasks, v.canceled, v.runs, v.explainedRepeats, v.occurrences, v.requiredOccurrences, v.occRuns)
	t.Logf("replica clock skews %v: earliest start before due %v; first-start lateness p50 %v, p99 %v, max %v",
		skews, -v.earliest, pct(0.5).Round(time.Millisecond), pct(0.99).Round(time.Millisecond), v.maxLate.Round(time.Millisecond))
	for i, skew := range skews {
		name := "r" + strconv.Itoa(i)
		l := v.latenessBy[name]
		t.Logf("replica %s (clock %+v): first runs %d, lateness p50 %v, p99 %v", name, skew, len(l),
			percentile(l, 0.5).Round(time.Millisecond), percentile(l, 0.99).Round(time.Millisecond))
	}
	if len(v.problems) > 0 {
		t.Log(fmt.Sprintf("%d problems (first 50 below)", len(v.problems)))
	}
}

// percentile returns the p-th quantile of ds (sorting ds), or 0 for none.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[int(p*float64(len(ds)-1))]
}

// pause waits for d or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
