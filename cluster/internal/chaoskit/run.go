package chaoskit

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
)

// The settings every worker runs with, and the checks read.
const (
	lease = 3 * time.Second
	tick  = 500 * time.Millisecond
	// window is the workers' load window; sweep their sweep interval.
	window = 5 * time.Second
	sweep  = time.Second
	// backoff is the workers' fixed retry backoff: a retry starts no
	// sooner than this after the failed run ended, by the store's clock.
	backoff = 250 * time.Millisecond
)

// skews are the workers' clock errors, one worker each.
var skews = []time.Duration{0, 2 * time.Second, -2 * time.Second, 1500 * time.Millisecond}

// Store is the store under test, as the chaos sees it: how a worker
// reaches it, the producer's node on it, and the store's one fault.
type Store interface {
	// Describe names the store for the log.
	Describe() string
	// Reach starts, for one worker, a proxy to each of the store's
	// servers, and returns them with the worker command's flags that
	// reach the store through them.
	Reach(t testing.TB) ([]*Proxy, []string)
	// Producer returns the node that schedules and cancels; the test
	// stops it.
	Producer(t testing.TB) *cluster.Node
	// Fault injects the store's fault and returns its kind once the
	// store serves again.
	Fault(rng interface{ IntN(int) int }) (string, error)
}

// Config is one chaos run.
type Config struct {
	// Worker starts a worker process (Serve); Run gives it its flags
	// and the store's.
	Worker Command
	// Duration is how long faults are injected; 0 means the duration
	// CLUSTER_CHAOS_DURATION gives (a Go duration), else Default.
	Duration, Default time.Duration
	// Flaky makes one task in five of kind "flaky": its handler fails its
	// first two attempts, so that the retries are checked too.
	Flaky bool
}

// duration is how long faults are injected.
func (c Config) duration(t *testing.T) time.Duration {
	if c.Duration > 0 {
		return c.Duration
	}
	if v := os.Getenv("CLUSTER_CHAOS_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("CLUSTER_CHAOS_DURATION: %v", err)
		}
		return d
	}
	return c.Default
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

// slot is one worker position: its spec, its proxies to the store, and
// its current process.
type slot struct {
	spec    workerSpec
	proxies []*Proxy // one to each of the store's servers
	proc    *process
	n       int // incarnations started
}

// setCut cuts the slot's worker off from every server of the store
// (true), or lets it through again (false).
func (s *slot) setCut(cut bool) {
	for _, p := range s.proxies {
		p.SetCut(cut)
	}
}

// Run runs the chaos on st: it starts a worker process per skew, injects
// faults for the configured duration while a producer schedules and
// cancels, waits for the backlog to drain, and checks the ledger.
func Run(t *testing.T, st Store, cfg Config) {
	dur := cfg.duration(t)
	seed := chaosSeed(t)
	rng := rand.New(rand.NewPCG(seed, seed>>1|1))
	t.Logf("chaos for %v, seed %d (CLUSTER_CHAOS_SEED=%d replays the faults)", dur, seed, seed)
	t.Logf("on %s", st.Describe())
	ledgerDir := t.TempDir()
	h := &history{
		acked: map[string]time.Time{}, cancels: map[string]cancelRecord{}, ready: map[string]time.Time{},
		tick: tick, lease: lease, backoff: backoff, upBefore: window + 2*time.Second + sweep,
	}

	var slots []*slot
	for i, skew := range skews {
		s := &slot{}
		var reach []string
		s.proxies, reach = st.Reach(t)
		s.spec = workerSpec{cmd: cfg.Worker, name: "r" + strconv.Itoa(i), reach: reach, ledgerDir: ledgerDir, skew: skew}
		p, err := s.spec.start(0)
		if err != nil {
			t.Fatal(err)
		}
		s.proc, s.n = p, 1
		h.ready[s.spec.name] = time.Now()
		slots = append(slots, s)
	}
	// Stopped or not, every worker's stderr is logged if the test failed:
	// the verdict fails only after the workers stopped.
	t.Cleanup(func() {
		for _, s := range slots {
			if s.proc != nil {
				s.proc.signal(syscall.SIGCONT)
				s.proc.kill()
				if t.Failed() {
					t.Logf("worker %s stderr:\n%s", s.spec.name, s.proc.stderr)
				}
			}
		}
	})

	producer := st.Producer(t)
	defer producer.StopNow()
	for _, kind := range []string{kindWork, kindFlaky} {
		if err := producer.Handle(kind, func(context.Context, cluster.Task) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}

	chaosStart := time.Now()
	h.tickFrom = chaosStart
	ctx, stopProducing := context.WithCancel(context.Background())
	var mu sync.Mutex // guards h.acked, h.flaky and h.cancels while the producer runs
	var produced sync.WaitGroup
	produced.Go(func() { produce(ctx, producer, seed, cfg.Flaky, &mu, h) })

	for time.Since(chaosStart) < dur {
		f, err := inject(rng, slots, st)
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
	// the workers get generous time for the backlog the faults left.
	waitForDrain(t, ledgerDir, h, 3*time.Minute)
	for _, s := range slots {
		if err := s.proc.stop(); err != nil {
			t.Errorf("worker %s: %v", s.spec.name, err)
		}
	}
	c, err := producer.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c.Dead != 0 {
		t.Errorf("%d tasks dead: only the flaky kind fails, and within its retries, so only faults could have killed them", c.Dead)
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

// inject makes one fault, chosen at random, waits until it is over and
// returns it.
func inject(rng *rand.Rand, slots []*slot, st Store) (fault, error) {
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
		kind, err := st.Fault(rng)
		f.kind = kind
		if err != nil {
			return f, err
		}
	}
	f.end = time.Now()
	return f, nil
}

// pause waits for d or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
