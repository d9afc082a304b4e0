package chaos

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/go-stpe/scheduler/cluster/internal/chaoskit"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// The Redis the chaos test runs on: one redis-server with the AOF on
// (TestChaos), whose fault is a restart, or a Redis Cluster of three
// masters with one replica each (TestChaosOnRedisCluster), whose fault is
// the SIGKILL of a master chosen by the seed (the tasks' partitions are on
// every master): its replica takes over, and the killed server comes back
// as the new master's replica.
// There every Schedule and Cancel of the producer, and every periodic
// occurrence a replica stores, waits for one replica's acknowledgement
// (cluster.WithReplicaAcks), the guarantee that nothing acknowledged is
// lost across a failover.

// prefix is the test's key prefix; its hash tag is the stem of its
// partitions' tags.
const prefix = "{chaos}"

// singleRedis is one redis-server with appendfsync always.
type singleRedis struct{ srv *redistest.Server }

func (r singleRedis) Describe() string { return "one redis-server (AOF always)" }

func (r singleRedis) Reach(t testing.TB) ([]*chaoskit.Proxy, []string) {
	p := chaoskit.StartProxy(t, r.srv.Addr)
	return []*chaoskit.Proxy{p}, []string{"-redis", p.Addr()}
}

func (r singleRedis) Producer(t testing.TB) *cluster.Node {
	return producer(t, redis.NewClient(&redis.Options{Addr: r.srv.Addr, DialTimeout: 500 * time.Millisecond}))
}

func (r singleRedis) Fault(rng interface{ IntN(int) int }) (string, error) {
	r.srv.Kill()
	time.Sleep(time.Duration(rng.IntN(1500)) * time.Millisecond)
	return "redis-restart", r.srv.Restart()
}

// clusterRedis is a Redis Cluster of three masters with a replica each.
type clusterRedis struct{ c *redistest.Cluster }

// acks is how many replicas acknowledge each write a caller counts on.
const acks = 1

func (r clusterRedis) Describe() string {
	return fmt.Sprintf("a Redis Cluster of %d masters with one replica each (acks %d)", redistest.ClusterMasters, acks)
}

func (r clusterRedis) Reach(t testing.TB) ([]*chaoskit.Proxy, []string) {
	var ps []*chaoskit.Proxy
	var via []string
	for _, s := range r.c.Servers {
		p := chaoskit.StartProxy(t, s.Addr)
		ps = append(ps, p)
		via = append(via, s.Addr+"="+p.Addr())
	}
	return ps, []string{"-cluster", strings.Join(r.c.Addrs(), ","), "-via", strings.Join(via, ","), "-acks", fmt.Sprint(acks)}
}

func (r clusterRedis) Producer(t testing.TB) *cluster.Node {
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: r.c.Addrs(), DialTimeout: 500 * time.Millisecond})
	return producer(t, rdb, cluster.WithReplicaAcks(acks, time.Second))
}

// producer returns the producer's node on rdb, which it closes when t
// ends.
func producer(t testing.TB, rdb redis.UniversalClient, opts ...cluster.Option) *cluster.Node {
	t.Cleanup(func() { _ = rdb.Close() })
	n, err := cluster.New(rdb, append(opts, cluster.WithPrefix(prefix))...)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// fault kills a master the seed picks (the master of a random slot),
// waits for its replica to take over, restarts the killed server (it
// rejoins as the replica, without which no write is acknowledged) and
// waits until it is in sync.
func (r clusterRedis) Fault(rng interface{ IntN(int) int }) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	killed, err := r.c.KillMasterFor(ctx, fmt.Sprintf("chaos-fault-%d", rng.IntN(1<<20)))
	if err != nil {
		return "failover", err
	}
	if err := r.c.WaitHealthy(ctx); err != nil {
		return "failover", err
	}
	time.Sleep(time.Duration(rng.IntN(1000)) * time.Millisecond)
	if err := killed.Restart(); err != nil {
		return "failover", err
	}
	return "failover", r.c.WaitHealthy(ctx)
}
