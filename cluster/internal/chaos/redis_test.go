package chaos

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
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

// chaosRedis is the Redis under test and its one fault.
type chaosRedis interface {
	// proxies starts, for one replica, a proxy to each Redis server, and
	// returns them with the replica command's flags that reach Redis
	// through them.
	proxies(t *testing.T) ([]*proxy, []string)
	// client returns the producer's client and options.
	client() (redis.UniversalClient, []cluster.Option)
	// fault injects the Redis fault and returns its kind once Redis
	// serves again.
	fault(rng interface{ IntN(int) int }) (string, error)
	describe() string
}

// singleRedis is one redis-server with appendfsync always.
type singleRedis struct{ srv *redistest.Server }

func (r singleRedis) describe() string { return "one redis-server (AOF always)" }

func (r singleRedis) proxies(t *testing.T) ([]*proxy, []string) {
	p := startProxy(t, r.srv.Addr)
	return []*proxy{p}, []string{"-redis", p.addr()}
}

func (r singleRedis) client() (redis.UniversalClient, []cluster.Option) {
	return redis.NewClient(&redis.Options{Addr: r.srv.Addr, DialTimeout: 500 * time.Millisecond}), nil
}

func (r singleRedis) fault(rng interface{ IntN(int) int }) (string, error) {
	r.srv.Kill()
	time.Sleep(time.Duration(rng.IntN(1500)) * time.Millisecond)
	return "redis-restart", r.srv.Restart()
}

// clusterRedis is a Redis Cluster of three masters with a replica each.
type clusterRedis struct{ c *redistest.Cluster }

// acks is how many replicas acknowledge each write a caller counts on.
const acks = 1

func (r clusterRedis) describe() string {
	return fmt.Sprintf("a Redis Cluster of %d masters with one replica each (acks %d)", redistest.ClusterMasters, acks)
}

func (r clusterRedis) proxies(t *testing.T) ([]*proxy, []string) {
	var ps []*proxy
	var via []string
	for _, s := range r.c.Servers {
		p := startProxy(t, s.Addr)
		ps = append(ps, p)
		via = append(via, s.Addr+"="+p.addr())
	}
	return ps, []string{"-cluster", strings.Join(r.c.Addrs(), ","), "-via", strings.Join(via, ","), "-acks", fmt.Sprint(acks)}
}

func (r clusterRedis) client() (redis.UniversalClient, []cluster.Option) {
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: r.c.Addrs(), DialTimeout: 500 * time.Millisecond})
	return rdb, []cluster.Option{cluster.WithReplicaAcks(acks, time.Second)}
}

// fault kills a master the seed picks (the master of a random slot),
// waits for its replica to take over, restarts the killed server (it rejoins as the replica, without
// which no write is acknowledged) and waits until it is in sync.
func (r clusterRedis) fault(rng interface{ IntN(int) int }) (string, error) {
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
