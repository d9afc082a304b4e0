package redisdriver

import (
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/go-stpe/scheduler/cluster/driver"
	"github.com/go-stpe/scheduler/cluster/drivertest"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// The Redis driver passes the conformance suite on one redis-server and
// on a Redis Cluster of three masters, each started by the test.

func TestConformanceOnOneServer(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	rdb := srv.Client()
	t.Cleanup(func() { rdb.Close() })
	drivertest.Run(t, harness(rdb))
}

func TestConformanceOnARedisCluster(t *testing.T) {
	c := redistest.StartCluster(t, redistest.ClusterOptions{})
	rdb := c.Client()
	t.Cleanup(func() { rdb.Close() })
	drivertest.Run(t, harness(rdb))
}

// harness opens drivers on rdb, each on a prefix of its own.
func harness(rdb redis.UniversalClient) drivertest.Harness {
	var n atomic.Int64
	return drivertest.Harness{
		Open: func(t testing.TB, partitions int) driver.Driver {
			// A hash tag, as WithPrefix asks: the cluster-wide records share a slot.
			return New(rdb, Options{Prefix: "{conformance" + strconv.FormatInt(n.Add(1), 10) + "}", Partitions: partitions})
		},
		Same: func(t testing.TB, d driver.Driver) driver.Driver {
			return New(rdb, Options{Prefix: d.(*Driver).keys.Prefix, Partitions: d.Partitions()})
		},
	}
}
