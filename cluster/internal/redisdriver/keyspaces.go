package redisdriver

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// keyspacesScanCount is the COUNT hint of each SCAN step.
const keyspacesScanCount = 1000

// Keyspaces returns the prefixes that have a keyspace in rdb (a layout
// record, prefix:layout, naming a layout version), sorted. On a Redis
// Cluster it scans every master. It scans the whole keyspace of each
// server (SCAN, a step at a time), so it is for tools, not for a hot path.
func Keyspaces(ctx context.Context, rdb redis.UniversalClient) ([]string, error) {
	var (
		mu    sync.Mutex // guards found: ForEachMaster scans the masters at once
		found []string
	)
	suffix := Keys{}.Layout()
	scan := func(ctx context.Context, c redis.Cmdable) error {
		iter := c.Scan(ctx, 0, Keys{Prefix: "*"}.Layout(), keyspacesScanCount).Iterator()
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
			found = append(found, strings.TrimSuffix(key, suffix))
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
		return nil, err
	}
	slices.Sort(found)
	return slices.Compact(found), nil
}
