// Command replica is one replica of the cluster module's chaos test
// (package chaos): a cluster.Node with a clock skewed by -skew, running the
// test's durable kind and a cluster-once periodic task, and writing every
// run to its ledger file. It stops gracefully on SIGTERM; the test also
// kills it (SIGKILL), pauses it (SIGSTOP) and cuts it off from Redis. It
// talks to one redis-server (-redis) or to a Redis Cluster (-cluster,
// with -via naming the proxy it reaches each server through).
//
// Ledger lines, one write each, are
//
//	<event> <id> <due µs> <at µs> <replica> <attempt> <lost>
//
// with event "start" when a handler starts, "end" when it has done its
// work and returns nil, "abort" when its ctx ended first; and
//
//	stall - <from µs> <to µs> <replica> 0 0
//
// when the process itself got no CPU for more than stallThreshold (a
// loaded machine can starve a process past its lease, which is a fault
// like a SIGSTOP). Times are the host's clock, which on one machine is
// Redis's clock (TIME) too.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-stpe/scheduler"
	"github.com/go-stpe/scheduler/cluster"
	"github.com/redis/go-redis/v9"
)

// Kinds the replica handles; the test schedules KindWork.
const (
	kindWork     = "work"
	periodicTick = "tick"
)

func main() {
	addr := flag.String("redis", "", "Redis address (the test's proxy)")
	clusterAddrs := flag.String("cluster", "", "comma-separated addresses of a Redis Cluster's servers; replaces -redis")
	via := flag.String("via", "", "comma-separated server=proxy pairs: a Redis Cluster server is reached through its proxy")
	acks := flag.Int("acks", 0, "replicas that must acknowledge each Schedule (cluster.WithReplicaAcks)")
	prefix := flag.String("prefix", "{chaos}", "key prefix")
	name := flag.String("name", "", "replica name written to the ledger")
	ledgerPath := flag.String("ledger", "", "ledger file")
	skew := flag.Duration("skew", 0, "how far the node's clock is off")
	lease := flag.Duration("lease", 3*time.Second, "lease")
	tick := flag.Duration("tick", 500*time.Millisecond, "period of the cluster-once periodic task")
	flag.Parse()
	rdb, err := client(*addr, *clusterAddrs, *via)
	if err != nil {
		fmt.Fprintln(os.Stderr, "replica:", err)
		os.Exit(2)
	}
	defer rdb.Close()
	if err := run(rdb, *prefix, *name, *ledgerPath, *skew, *lease, *tick, *acks); err != nil {
		fmt.Fprintln(os.Stderr, "replica:", err)
		os.Exit(1)
	}
}

// client returns a client of the redis-server at addr or, given the
// addresses of a Redis Cluster's servers, a cluster client that dials
// each server through its proxy. go-redis's own timeouts are left at their
// defaults (3 s reads, 3 retries): the node's lease-path deadlines must
// beat them.
func client(addr, clusterAddrs, via string) (redis.UniversalClient, error) {
	if clusterAddrs == "" {
		return redis.NewClient(&redis.Options{Addr: addr, PoolSize: 32, DialTimeout: 500 * time.Millisecond}), nil
	}
	proxies := map[string]string{}
	for _, pair := range strings.Split(via, ",") {
		server, proxy, ok := strings.Cut(pair, "=")
		if !ok {
			return nil, fmt.Errorf("-via: %q is not server=proxy", pair)
		}
		proxies[server] = proxy
	}
	var d net.Dialer
	return redis.NewClusterClient(&redis.ClusterOptions{
		Addrs: strings.Split(clusterAddrs, ","), PoolSize: 32, DialTimeout: 500 * time.Millisecond,
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if p, ok := proxies[addr]; ok {
				addr = p
			}
			return d.DialContext(ctx, network, addr)
		},
	}), nil
}

func run(rdb redis.UniversalClient, prefix, name, ledgerPath string, skew, lease, tick time.Duration, acks int) error {
	f, err := os.OpenFile(ledgerPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	led := &ledger{f: f, name: name}

	n, err := cluster.New(rdb,
		// On a Redis Cluster the periodic occurrences this node stores
		// must survive a failover like the producer's tasks.
		cluster.WithReplicaAcks(acks, time.Second),
		cluster.WithPrefix(prefix),
		cluster.WithClock(skewed{scheduler.SystemClock(), skew}),
		cluster.WithLease(lease),
		cluster.WithWindow(5*time.Second),
		cluster.WithSweepInterval(time.Second),
		cluster.WithBackoff(func(int) time.Duration { return 50 * time.Millisecond }))
	if err != nil {
		return err
	}
	if err := n.Handle(kindWork, led.handler); err != nil {
		return err
	}
	// Every occurrence is checked to run (MisfireRunEach): under the
	// default a tick held up by a fault would coalesce with later ones.
	if err := n.Periodic(periodicTick, everyTick(tick), led.handler, cluster.WithMisfire(cluster.MisfireRunEach)); err != nil {
		return err
	}
	stop := make(chan struct{})
	defer close(stop)
	go led.watchStalls(stop)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	if err := n.Start(context.Background()); err != nil {
		return err
	}
	fmt.Println("ready")
	<-sigs
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return n.Stop(ctx)
}

// ledger writes the replica's runs to its file.
type ledger struct {
	mu   sync.Mutex // guards writes to f, one line each
	f    *os.File
	name string
}

func (l *ledger) write(event string, t cluster.Task) {
	line := fmt.Sprintf("%s %s %d %d %s %d %d\n", event, t.ID, t.Due.UnixMicro(), time.Now().UnixMicro(), l.name, t.Attempt, t.Lost)
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.f.WriteString(line)
}

// stallThreshold is the longest gap between two ticks of watchStalls
// that is not written to the ledger as a stall.
const stallThreshold = 500 * time.Millisecond

// watchStalls ticks every 100 ms until stop is closed, and writes a stall
// whenever a tick comes more than stallThreshold after the one before.
func (l *ledger) watchStalls(stop <-chan struct{}) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		now := time.Now()
		if now.Sub(last) > stallThreshold {
			line := fmt.Sprintf("stall - %d %d %s 0 0\n", last.UnixMicro(), now.UnixMicro(), l.name)
			l.mu.Lock()
			_, _ = l.f.WriteString(line)
			l.mu.Unlock()
		}
		last = now
	}
}

// handler records its start, works for up to 200 ms, and records its end;
// it always succeeds unless its ctx ends first.
func (l *ledger) handler(ctx context.Context, t cluster.Task) error {
	l.write("start", t)
	select {
	case <-time.After(time.Duration(rand.IntN(200)) * time.Millisecond):
		l.write("end", t)
		return nil
	case <-ctx.Done():
		l.write("abort", t)
		return context.Cause(ctx)
	}
}

// skewed is the system clock off by a fixed amount.
type skewed struct {
	scheduler.Clock
	off time.Duration
}

func (c skewed) Now() time.Time { return c.Clock.Now().Add(c.off) }

// everyTick fires at every multiple of d.
func everyTick(d time.Duration) scheduler.Trigger {
	return scheduler.TriggerFunc(func(t time.Time) time.Time { return t.Truncate(d).Add(d) })
}
