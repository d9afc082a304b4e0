package cluster

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Keyspaces: the prefixes a Redis holds a keyspace of, found by their
// layout records (prefix:layout, written by the first node to start), so
// that a tool given a prefix with none can say which there are.

// keyspacesScanCount is the COUNT hint of each SCAN step.
const keyspacesScanCount = 1000

// Keyspaces returns the prefixes that have a keyspace in rdb (a layout
// record naming a layout version), sorted. On a Redis Cluster it scans
// every master. A keyspace whose tasks were only scheduled, by nodes
// never started, has no record yet and is not listed. It scans the whole
// keyspace of each server (SCAN, a step at a time), so it is for tools,
// not for a hot path. A Redis error is returned as "cluster: keyspaces:
// ..." wrapping it.
func Keyspaces(ctx context.Context, rdb redis.UniversalClient) ([]string, error) {
	var (
		mu    sync.Mutex // guards found: ForEachMaster scans the masters at once
		found []string
	)
	scan := func(ctx context.Context, c redis.Cmdable) error {
		iter := c.Scan(ctx, 0, layoutKey("*"), keyspacesScanCount).Iterator()
		for iter.Next(ctx) {
			key := iter.Val()
			version, err := c.HGet(ctx, key, "version").Result()
			if errors.Is(err, redis.Nil) || (err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE")) || version == "" {
				continue // a key of another application that ends in :layout
			}
			if err != nil {
				return err
			}
			mu.Lock()
			found = append(found, strings.TrimSuffix(key, layoutKey("")))
			mu.Unlock()
		}
		return iter.Err()
	}
	var err error
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return scan(ctx, c) })
	} else {
		err = scan(ctx, rdb)
	}
	if err != nil {
		return nil, failed("keyspaces", err)
	}
	slices.Sort(found)
	return slices.Compact(found), nil
}
