package cluster

import (
	"context"

	"github.com/go-stpe/scheduler/cluster/internal/redisdriver"
	"github.com/redis/go-redis/v9"
)

// Keyspaces: the prefixes a Redis holds a keyspace of, found by their
// layout records (prefix:layout, written by the first node to start), so
// that a tool given a prefix with none can say which there are.

// Keyspaces returns the prefixes that have a keyspace in rdb (a layout
// record naming a layout version), sorted. On a Redis Cluster it scans
// every master. A keyspace whose tasks were only scheduled, by nodes
// never started, has no record yet and is not listed. It scans the whole
// keyspace of each server (SCAN, a step at a time), so it is for tools,
// not for a hot path. A Redis error is returned as "cluster: keyspaces:
// ..." wrapping it.
func Keyspaces(ctx context.Context, rdb redis.UniversalClient) ([]string, error) {
	found, err := redisdriver.Keyspaces(ctx, rdb)
	if err != nil {
		return nil, failed("keyspaces", err)
	}
	return found, nil
}
