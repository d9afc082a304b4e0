package redisconn_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/go-stpe/scheduler/cluster/redisconn"
	"github.com/redis/go-redis/v9"
)

// Real servers: each layout's client reaches a redis-server the test
// started, and writes and reads keys there.

// roundTrip writes and reads back a few keys that hash to different
// slots, so that on a Redis Cluster each lands on its own master.
func roundTrip(t *testing.T, rdb redis.UniversalClient) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		if err := rdb.Set(ctx, k, "v"+k, 0).Err(); err != nil {
			t.Fatalf("SET %s: %v", k, err)
		}
		if v, err := rdb.Get(ctx, k).Result(); err != nil || v != "v"+k {
			t.Fatalf("GET %s: %q, %v", k, v, err)
		}
	}
}

func TestOpenReachesAPasswordProtectedServer(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{Password: "s3cret"})
	roundTrip(t, open(t, redisconn.Config{Addr: "redis://:s3cret@" + srv.Addr + "/0"}))
	roundTrip(t, open(t, redisconn.Config{Addr: srv.Addr, Password: "s3cret"}))
	env := redisconn.FromEnv(func(k string) string {
		return map[string]string{"REDIS_URL": srv.Addr, "STPE_REDIS_PASSWORD": "s3cret"}[k]
	})
	roundTrip(t, open(t, env))

	rdb := open(t, redisconn.Config{Addr: "redis://:n0tit@" + srv.Addr + "/0", MaxRetries: -1})
	err := rdb.Ping(context.Background()).Err()
	if err == nil || !strings.Contains(err.Error(), "WRONGPASS") || strings.Contains(err.Error(), "n0tit") {
		t.Fatalf("a wrong password: %v", err)
	}
}

func TestOpenReachesARedisCluster(t *testing.T) {
	c := redistest.StartCluster(t, redistest.ClusterOptions{})
	addrs := c.Addrs()
	for _, cfg := range []redisconn.Config{
		{Addr: strings.Join(addrs[:2], ",")},
		{Addr: addrs[0], Cluster: true},
		{Addr: "redis+cluster://" + addrs[0] + "?addr=" + addrs[1]},
		{Addr: "redis://" + addrs[0], Cluster: true},
	} {
		rdb := open(t, cfg)
		if _, ok := rdb.(*redis.ClusterClient); !ok {
			t.Fatalf("%s: %T", cfg, rdb)
		}
		roundTrip(t, rdb)
	}
}

func TestOpenReachesTheMasterThroughSentinel(t *testing.T) {
	master := redistest.Start(t, redistest.Options{Password: "s3cret"})
	sentinel := redistest.StartSentinel(t, master, "mymaster")
	rdb := open(t, redisconn.Config{Addr: sentinel.Addr, SentinelMaster: "mymaster", Password: "s3cret"})
	roundTrip(t, rdb)
	// The write went to the master itself.
	direct := master.Client()
	defer direct.Close()
	if v, err := direct.Get(context.Background(), "a").Result(); err != nil || v != "va" {
		t.Fatalf("the master holds %q, %v", v, err)
	}
	roundTrip(t, open(t, redisconn.Config{Addr: "redis+sentinel://" + sentinel.Addr + "?master_name=mymaster&password=s3cret"}))
}
