package chaos

import (
	"flag"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster/internal/chaoskit"
	"github.com/go-stpe/scheduler/cluster/internal/redistest"
)

var durationFlag = flag.Duration("chaos.duration", 0, "how long the faults go on (default 60s, or CLUSTER_CHAOS_DURATION)")

// config is the chaos on Redis: the replica command built from ./replica,
// 60 s of faults unless told otherwise.
func config(t *testing.T) chaoskit.Config {
	return chaoskit.Config{
		Worker:   chaoskit.BuildCommand(t, "github.com/go-stpe/scheduler/cluster/internal/chaos/replica"),
		Duration: *durationFlag,
		Default:  60 * time.Second,
		Flaky:    true,
	}
}

// TestChaos runs the chaos on one redis-server, whose fault is a restart.
func TestChaos(t *testing.T) {
	chaoskit.Run(t, singleRedis{redistest.Start(t, redistest.Options{AOF: true})}, config(t))
}

// TestChaosOnRedisCluster runs the chaos on a Redis Cluster of three
// masters with a replica each, whose fault is the failover of a master.
func TestChaosOnRedisCluster(t *testing.T) {
	chaoskit.Run(t, clusterRedis{redistest.StartCluster(t, redistest.ClusterOptions{})}, config(t))
}
