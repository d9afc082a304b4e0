// Command replica is one worker of the cluster module's chaos test on
// Redis (package chaos): a cluster.Node on Redis that runs the chaos
// kinds and periodic task and writes every run to its ledger
// (chaoskit.Serve). It stops gracefully on SIGTERM; the test also kills it
// (SIGKILL), pauses it (SIGSTOP) and cuts it off from Redis. It talks to
// one redis-server (-redis) or to a Redis Cluster (-cluster, with -via
// naming the proxy it reaches each server through).
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/chaoskit"
	"github.com/redis/go-redis/v9"
)

func main() {
	var wf chaoskit.WorkerFlags
	wf.Register(flag.CommandLine)
	addr := flag.String("redis", "", "Redis address (the test's proxy)")
	clusterAddrs := flag.String("cluster", "", "comma-separated addresses of a Redis Cluster's servers; replaces -redis")
	via := flag.String("via", "", "comma-separated server=proxy pairs: a Redis Cluster server is reached through its proxy")
	acks := flag.Int("acks", 0, "replicas that must acknowledge each Schedule (cluster.WithReplicaAcks)")
	prefix := flag.String("prefix", "{chaos}", "key prefix")
	flag.Parse()
	rdb, err := client(*addr, *clusterAddrs, *via)
	if err != nil {
		fmt.Fprintln(os.Stderr, "replica:", err)
		os.Exit(2)
	}
	defer rdb.Close()
	err = chaoskit.Serve(wf, func(opts ...cluster.Option) (*cluster.Node, error) {
		return cluster.New(rdb, append(opts,
			// On a Redis Cluster the periodic occurrences this node
			// stores must survive a failover like the producer's tasks.
			cluster.WithReplicaAcks(*acks, time.Second),
			cluster.WithPrefix(*prefix))...)
	})
	if err != nil {
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
