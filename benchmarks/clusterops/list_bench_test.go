// Package clusterops measures the cluster module's operations on a large
// store: listing a page of 100 pending tasks out of 1,000 and out of
// 1,000,000, at the start of the listing and from a cursor in its middle.
// Run it from the benchmarks folder (redis-server must be on PATH):
//
//	go test -run '^$' -bench . -benchtime 2000x ./clusterops/
package clusterops

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/go-stpe/scheduler/cluster"
	"github.com/redis/go-redis/v9"
)

// fill stores n pending tasks the way the cluster's schedule script does
// (a hash per task and its due time in the pending set, under the default
// prefix), written in pipelined batches since a million Schedule calls
// would take minutes. Every tenth task shares its due time with the one
// before, so the pages cross ties.
func fill(b *testing.B, c *redis.Client, n int) {
	b.Helper()
	ctx := context.Background()
	base := time.Now().Add(24 * time.Hour).UnixMicro()
	const batch = 10000
	for start := 0; start < n; start += batch {
		pipe := c.Pipeline()
		for i := start; i < min(start+batch, n); i++ {
			id := fmt.Sprintf("task-%07d", i)
			due := base + int64(i-i%10/9)*1000
			pipe.HSet(ctx, "{scheduler}:t:"+id, "kind", "k", "payload", "p", "due", strconv.FormatInt(due, 10),
				"max", "3", "attempt", "0", "lost", "0", "sum", "x", "fixed", "1")
			pipe.ZAdd(ctx, "{scheduler}:pending", redis.Z{Score: float64(due), Member: id})
		}
		if _, err := pipe.Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkListPage100(b *testing.B) {
	for _, n := range []int{1000, 1000000} {
		b.Run("tasks="+strconv.Itoa(n), func(b *testing.B) {
			c := startRedis(b)
			fill(b, c, n)
			node, err := cluster.New(c)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			// A cursor in the middle of the listing: page through to it
			// with pages of a tenth of the tasks (at most MaxPage).
			middle := ""
			for seen := 0; seen < n/2; {
				p, err := node.List(ctx, cluster.ListQuery{State: cluster.Pending, Cursor: middle, Limit: min(cluster.MaxPage, n/10)})
				if err != nil {
					b.Fatal(err)
				}
				seen += len(p.Tasks)
				middle = p.Next
			}
			for _, at := range []struct{ name, cursor string }{{"first", ""}, {"middle", middle}} {
				b.Run(at.name, func(b *testing.B) {
					for b.Loop() {
						p, err := node.List(ctx, cluster.ListQuery{State: cluster.Pending, Cursor: at.cursor, Limit: 100})
						if err != nil || len(p.Tasks) != 100 {
							b.Fatalf("%d tasks, %v", len(p.Tasks), err)
						}
					}
				})
			}
		})
	}
}
